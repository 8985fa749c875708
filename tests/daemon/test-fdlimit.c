/* test-fdlimit.c - triaged out of file descriptors, for real: it must not
 * spin on the pending connections, must recover, and says what it has. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "tsupport-clock.h"
#include "tsupport-proc.h"

/* The daemon's descriptor limit during the starvation: far below the
 * clients that come. */
#define FDLIMIT_DAEMON 64
#define FDLIMIT_CLIENTS 200
/* How long the starved daemon is watched, and the share of one CPU it may
 * use meanwhile: a spinning accept loop takes all of one (100%); a paused
 * one, retrying every 200 ms, next to nothing. Wide, for a noisy machine. */
#define FDLIMIT_WATCH_MS 2000
#define FDLIMIT_MAX_CPU_SHARE 0.20

/* utime + stime of pid, in ms, from /proc/PID/stat. */
static double
cpu_ms(pid_t pid)
{
	struct tsupport_proc_stat st;

	assert_int_equal(tsupport_proc_stat(pid, &st), 0);
	return (double)(st.utime + st.stime) * 1000.0 /
	    (double)sysconf(_SC_CLK_TCK);
}

/* A connection to path, left pending in its backlog if nobody accepts. */
static int
connect_to(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	assert_true(strlen(path) < sizeof sun.sun_path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0)
		fail_msg("connect: %s", strerror(errno));
	return fd;
}

/* How many lines of the daemon's log hold text. */
static int
log_count(const struct tdaemon *d, const char *text)
{
	char line[4096];
	int n = 0;
	FILE *f;

	assert_non_null(f = fopen(d->log, "r"));
	while (fgets(line, sizeof line, f) != NULL)
		n += strstr(line, text) != NULL;
	fclose(f);
	return n;
}

static void
test_out_of_descriptors_it_pauses_and_recovers(void **state)
{
	struct tdaemon *d = tdaemon_start("max_clients = 1024\n");
	struct triage_client *c = tconnect(d), *late;
	struct rlimit rl = { FDLIMIT_DAEMON, FDLIMIT_DAEMON };
	int fds[FDLIMIT_CLIENTS], i;
	double wall, cpu, t0, c0;
	json_t *res;

	(void)state;
	/* Our side of every connection. */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < FDLIMIT_CLIENTS + 64) {
		tdaemon_end(d, c);
		skip();
	}
	rl.rlim_cur = rl.rlim_max = FDLIMIT_DAEMON;
	assert_int_equal(prlimit(d->pid, RLIMIT_NOFILE, &rl, NULL), 0);
	for (i = 0; i < FDLIMIT_CLIENTS; i++)
		fds[i] = connect_to(d->sock);
	twait_log(d, "pausing new connections");

	/* Starved, with connections waiting: it must not spin on them... */
	t0 = tsupport_clock_ms_f();
	c0 = cpu_ms(d->pid);
	/* ...and still serves the clients it has. */
	json_decref(tcall(c, "stats", "{}"));
	poll(NULL, 0, FDLIMIT_WATCH_MS);
	cpu = cpu_ms(d->pid) - c0;
	wall = tsupport_clock_ms_f() - t0;
	print_message("out of descriptors with %d connections waiting: %.0f "
	    "ms of CPU in %.0f ms\n", FDLIMIT_CLIENTS, cpu, wall);
	if (cpu >= FDLIMIT_MAX_CPU_SHARE * wall)
		tdaemon_dump_log(d);
	assert_true(cpu < FDLIMIT_MAX_CPU_SHARE * wall);
	/* One warning for the whole episode, however many tries. */
	assert_int_equal(log_count(d, "pausing new connections"), 1);

	/* Once the clients go, a new one is served as ever. */
	for (i = 0; i < FDLIMIT_CLIENTS; i++)
		close(fds[i]);
	late = tconnect(d);
	res = tcall(late, "stats", "{}");
	assert_non_null(json_object_get(res, "slots"));
	json_decref(res);
	twait_log(d, "accepting clients again");
	triage_client_free(late);
	tdaemon_end(d, c);
}

/*
 * At start the daemon takes the hard limit, and says what it got; when
 * max_clients cannot fit in it, a warning names both. The daemon inherits
 * our limits: a hard limit of 512 stands for a service's LimitNOFILE=.
 */
static void
test_it_raises_its_limit_and_warns_when_too_low(void **state)
{
	struct rlimit saved, rl;
	struct tdaemon *d;
	char want[64];

	(void)state;
	if (twrapped()) {
		print_message("skipped: valgrind keeps the top fds for itself "
		    "and refuses to move the limits it shows\n");
		skip();
	}
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	if (saved.rlim_max < 512)
		skip();
	rl.rlim_cur = 256;
	rl.rlim_max = 512;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	d = tdaemon_start("max_clients = 1024\n");
	/* Root may have its own back; anyone else keeps 512, plenty here. */
	(void)setrlimit(RLIMIT_NOFILE, &saved);
	assert_int_equal(prlimit(d->pid, RLIMIT_NOFILE, NULL, &rl), 0);
	assert_int_equal((int)rl.rlim_cur, 512);
	assert_true(tlog_has(d, "descriptor limit: 512 (hard limit 512)"));
	snprintf(want, sizeof want, "max_clients is 1024 but the descriptor "
	    "limit is 512");
	assert_true(tlog_has(d, want));
	tdaemon_end(d, NULL);

	/* Room enough: not a word of warning. */
	d = tdaemon_start("max_clients = 100\n");
	assert_false(tlog_has(d, "max_clients is"));
	tdaemon_end(d, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_of_descriptors_it_pauses_and_recovers),
		cmocka_unit_test(test_it_raises_its_limit_and_warns_when_too_low),
	};

	return cmocka_run_group_tests_name("fdlimit", tests, NULL, NULL);
}
