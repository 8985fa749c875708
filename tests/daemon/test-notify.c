/* test-notify.c - systemd's two protocols as a real triaged speaks them,
 * without systemd: sd_notify messages, and a socket handed over (LISTEN_FDS). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

/* A datagram socket bound at path, as systemd's NOTIFY_SOCKET is. */
static int
notify_socket(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	assert_true(strlen(path) < sizeof sun.sun_path);
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	return fd;
}

/* Reads datagrams until one holds want (a line of it), for 30 s at most;
 * returns that datagram's text in buf. */
static void
notify_expect(int fd, const char *want, char *buf, size_t size)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	for (;;) {
		tcheck_deadline(deadline, "the notification %s", want);
		if (poll(&pfd, 1, tleft_ms(deadline)) != 1)
			continue;
		if ((n = recv(fd, buf, size - 1, 0)) < 0)
			fail_msg("recv: %s", strerror(errno));
		buf[n] = '\0';
		if (strstr(buf, want) != NULL)
			return;
	}
}

/* A connection to the daemon that starts on sock, within 30 s. */
static struct triage_client *
await_client(const char *sock)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	struct triage_client *c;
	char *cause = NULL;

	while ((c = triage_client_connect(sock, &cause)) == NULL) {
		free(cause);
		tcheck_deadline(deadline, "an answer on %s", sock);
		usleep(5000);
	}
	return c;
}

/*
 * Type=notify: READY=1 once listening, STATUS= with the queue figures as
 * they change, keep-alives when WatchdogSec= asks, RELOADING=1 and READY=1
 * around a reload, STOPPING=1 on SIGTERM.
 */
static void
test_notify_ready_status_watchdog_stopping(void **state)
{
	char dir[] = "/tmp/triage-notify-XXXXXX", path[300], buf[512];
	struct tdaemon *d;
	struct triage_client *c;
	int fd, watchdogs = 0;
	int64_t id;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/notify", dir);
	fd = notify_socket(path);
	setenv("NOTIFY_SOCKET", path, 1);
	setenv("WATCHDOG_USEC", "300000", 1);
	d = tdaemon_start(NULL);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	notify_expect(fd, "READY=1", buf, sizeof buf);
	notify_expect(fd, "STATUS=0 queued, 0 running, 0 of", buf, sizeof buf);
	c = tconnect(d);
	id = tsubmit_gated(c, d, "go", false);
	notify_expect(fd, "STATUS=0 queued, 1 running, 1 of", buf, sizeof buf);
	json_decref(tcall(c, "pause", "{ss}", "priority", "low"));
	notify_expect(fd, "; paused: low", buf, sizeof buf);
	/* Every 150 ms, whatever else happens. */
	while (watchdogs < 3) {
		notify_expect(fd, "WATCHDOG=1", buf, sizeof buf);
		watchdogs++;
	}
	/* A reload is bracketed: RELOADING=1 with the time, then READY=1. */
	kill(d->pid, SIGHUP);
	notify_expect(fd, "RELOADING=1\nMONOTONIC_USEC=", buf, sizeof buf);
	notify_expect(fd, "READY=1", buf, sizeof buf);
	topen_gate(d, "go");
	json_decref(twait(c, id));
	triage_client_free(c);
	kill(d->pid, SIGTERM);
	notify_expect(fd, "STOPPING=1", buf, sizeof buf);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_free(d);
	close(fd);
	unlink(path);
	rmdir(dir);
}

/* Starts triaged on conf with fds[0..n) as fds 3.. and LISTEN_FDS=n, as
 * systemd does for a socket unit; its stderr into log. Returns its pid. */
static pid_t
start_activated(const char *conf, const char *log, const int *fds, int n)
{
	char num[16];
	pid_t pid;
	int i, out;

	if ((pid = fork()) != 0) {
		assert_true(pid > 0);
		return pid;
	}
	setpgid(0, 0);
	out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (out < 0 || dup2(out, 2) < 0)
		_exit(126);
	/* Above the range first, so that moving one cannot clobber another. */
	for (i = 0; i < n; i++)
		if (dup2(fds[i], 100 + i) < 0)
			_exit(126);
	for (i = 0; i < n; i++)
		if (dup2(100 + i, 3 + i) < 0)
			_exit(126);
	snprintf(num, sizeof num, "%d", n);
	setenv("LISTEN_FDS", num, 1);
	snprintf(num, sizeof num, "%d", (int)getpid());
	setenv("LISTEN_PID", num, 1);
	unsetenv("TRIAGE_SOCKET");
	texec_triaged(conf);
}

static int
listening_socket(const char *path, int type)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	strcpy(sun.sun_path, path);
	assert_true((fd = socket(AF_UNIX, type, 0)) >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 16), 0);
	return fd;
}

/* Waits (30 s at most) for pid to exit; its wait status. */
static int
wait_exit(pid_t pid)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	int status;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		tcheck_deadline(deadline, "triaged %d to exit", (int)pid);
		usleep(5000);
	}
	return status;
}

/*
 * Socket activation: the daemon serves on the socket systemd made (it
 * binds nothing, and leaves the socket in place when it stops, for the
 * next start); handed the wrong number or kind of fds, it refuses, saying
 * what was wrong.
 */
static void
test_socket_activation(void **state)
{
	char dir[] = "/tmp/triage-act-XXXXXX", conf[300], sock[300], log[300];
	char other[300];
	struct triage_client *c = NULL;
	json_t *stats;
	struct stat st;
	int fds[2], status;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof conf, "%s/triage.conf", dir);
	snprintf(sock, sizeof sock, "%s/sock", dir);
	snprintf(other, sizeof other, "%s/other", dir);
	snprintf(log, sizeof log, "%s/log", dir);
	{
		FILE *f = fopen(conf, "w");

		assert_non_null(f);
		/* No socket key: activation's socket it must be. */
		fprintf(f, "[daemon]\nstate_dir = %s/state\nlog_level = debug\n",
		    dir);
		fclose(f);
	}
	fds[0] = listening_socket(sock, SOCK_STREAM);
	pid = start_activated(conf, log, fds, 1);
	c = await_client(sock);
	stats = tcall(c, "stats", "{}");
	json_decref(stats);
	json_decref(twait(c, tsubmit(c, "{s[s]}", "argv", "true")));
	triage_client_free(c);
	kill(pid, SIGTERM);
	status = wait_exit(pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* systemd's socket stays for the next start. */
	assert_int_equal(stat(sock, &st), 0);

	/* Two sockets: refused. */
	fds[1] = listening_socket(other, SOCK_STREAM);
	status = wait_exit(start_activated(conf, log, fds, 2));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	close(fds[1]);
	unlink(other);
	/* A datagram socket: refused. */
	fds[1] = listening_socket(other, SOCK_DGRAM);
	status = wait_exit(start_activated(conf, log, &fds[1], 1));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	{
		char text[8192];

		tread_text(log, text, sizeof text);
		if (strstr(text, "handed 2 sockets; triage.socket must pass "
		    "exactly one") == NULL ||
		    strstr(text, "which is not a listening Unix stream "
		    "socket") == NULL)
			fail_msg("the refusals were not said: %s", text);
	}
	close(fds[0]);
	close(fds[1]);
	tremove_dir(dir);
}

/*
 * Under journald (JOURNAL_STREAM names the very stream stderr is), each
 * line starts with its syslog priority, <5> for notice, <6> for info, so
 * that the journal records levels; log_level still drops what is below.
 */
static void
test_journal_priority_prefixes(void **state)
{
	char dir[] = "/tmp/triage-journal-XXXXXX", conf[300], sock[300];
	char log[300], env[64], text[8192];
	struct triage_client *c;
	struct stat st;
	FILE *f;
	pid_t pid;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof conf, "%s/triage.conf", dir);
	snprintf(sock, sizeof sock, "%s/sock", dir);
	snprintf(log, sizeof log, "%s/log", dir);
	assert_non_null(f = fopen(conf, "w"));
	fprintf(f, "[daemon]\nsocket = %s\nstate_dir = %s/state\n"
	    "log_level = info\n", sock, dir);
	fclose(f);
	assert_true((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600)) >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino);
	if ((pid = fork()) == 0) {
		if (dup2(fd, 2) < 0)
			_exit(126);
		setenv("JOURNAL_STREAM", env, 1);
		texec_triaged(conf);
	}
	assert_true(pid > 0);
	close(fd);
	c = await_client(sock);
	json_decref(twait(c, tsubmit(c, "{s[s]}", "argv", "true")));
	triage_client_free(c);
	kill(pid, SIGTERM);
	assert_true(WIFEXITED(wait_exit(pid)));
	tread_text(log, text, sizeof text);
	if (strstr(text, "<5>ready on ") == NULL ||
	    strstr(text, "<5>SIGTERM: stopping") == NULL ||
	    strstr(text, "triaged: ") != NULL || strstr(text, "<7>") != NULL)
		fail_msg("not journald's form: %s", text);
	tremove_dir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_ready_status_watchdog_stopping),
		cmocka_unit_test(test_socket_activation),
		cmocka_unit_test(test_journal_priority_prefixes),
	};

	return cmocka_run_group_tests_name("notify", tests, NULL, NULL);
}
