/* bench-beanstalk.c - for the submit benchmark: a beanstalkd with its binlog
 * in a temp dir, fed by build/bin/ref-beanstalk, never left behind. */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-beanstalk.h"
#include "bench-why.h"
#include "bench-daemon.h"
#include "tsupport-child.h"
#include "tsupport-clock.h"
#include "tsupport-dir.h"
#include "tsupport-proc.h"

#define BENCH_BEANSTALK_TIMEOUT_MS 10000
#define BENCH_BEANSTALK_POLL_MS 5

/* A port free on 127.0.0.1 now (the kernel's pick). 0, or -1 with errno. */
static int
bench_beanstalk_port(char *port, size_t size)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof sin;
	int fd, rc = -1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0) {
		snprintf(port, size, "%u", (unsigned)ntohs(sin.sin_port));
		rc = 0;
	}
	close(fd);
	return rc;
}

static bool
bench_beanstalk_answers(const struct bench_beanstalk *b)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	bool ok;
	int fd;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)atoi(b->port));
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return false;
	ok = connect(fd, (struct sockaddr *)&sin, sizeof sin) == 0;
	close(fd);
	return ok;
}

/* Waits until it accepts connections; 0, or -1 with *cause set. */
static int
bench_beanstalk_ready(struct bench_beanstalk *b, const char *log,
    char **cause)
{
	char line[256] = "";
	FILE *f;
	int i;

	for (i = 0; i < BENCH_BEANSTALK_TIMEOUT_MS / BENCH_BEANSTALK_POLL_MS;
	    i++) {
		/* Left a zombie: reaped only once the guard has forgotten
		 * it. */
		if (tsupport_child_exited(b->pid, NULL) == 1) {
			if ((f = fopen(log, "r")) != NULL) {
				if (fgets(line, sizeof line, f) == NULL)
					line[0] = '\0';
				fclose(f);
			}
			line[strcspn(line, "\n")] = '\0';
			bench_why_alloc(cause, "beanstalkd exited at "
			    "once (%s); `make bench-build` installs it",
			    line[0] != '\0' ? line : "no message");
			return -1;
		}
		if (bench_daemon_interrupted() != 0) {
			*cause = strdup("interrupted");
			return -1;
		}
		if (bench_beanstalk_answers(b))
			return 0;
		tsupport_clock_sleep_ms(BENCH_BEANSTALK_POLL_MS);
	}
	bench_why_alloc(cause, "beanstalkd did not answer on port %s "
	    "within %d s", b->port, BENCH_BEANSTALK_TIMEOUT_MS / 1000);
	return -1;
}

struct bench_beanstalk *
bench_beanstalk_start(const char *parent, char **cause)
{
	static char name[] = "beanstalkd", l[] = "-l", addr[] = "127.0.0.1",
	    p[] = "-p", bopt[] = "-b";
	char binlog[300], log[300];
	struct tsupport_err err;
	struct bench_beanstalk *b;
	char *argv[] = { name, l, addr, p, NULL, bopt, binlog, NULL };
	struct tsupport_child c = {
		.path = name, .argv = argv, .search = true, .leader = true,
		.log = log, .deathsig = SIGKILL,
		.mask = bench_daemon_child_mask(),
	};

	*cause = NULL;
	if ((b = calloc(1, sizeof *b)) == NULL) {
		*cause = strdup("out of memory");
		return NULL;
	}
	if (tsupport_dir_make(b->dir, sizeof b->dir, parent,
	    "triage-bench-beanstalkd", &err) == -1) {
		*cause = strdup(err.msg);
		free(b);
		return NULL;
	}
	snprintf(binlog, sizeof binlog, "%s/binlog", b->dir);
	snprintf(log, sizeof log, "%s/log", b->dir);
	if (mkdir(binlog, 0700) == -1 ||
	    bench_beanstalk_port(b->port, sizeof b->port) == -1) {
		bench_why_alloc(cause, "cannot set up beanstalkd: %s",
		    strerror(errno));
		goto fail;
	}
	argv[4] = b->port;
	if ((b->pid = tsupport_child_spawn(&c, &err)) == -1) {
		b->pid = 0;
		*cause = strdup(err.msg);
		goto fail;
	}
	bench_daemon_guard_group(b->pid);
	if (bench_beanstalk_ready(b, log, cause) == -1)
		goto fail;
	return b;
fail:
	bench_beanstalk_free(b);
	return NULL;
}

int
bench_beanstalk_load(const struct bench_beanstalk *b, uint64_t n,
    unsigned window, unsigned nconn, struct bench_load_result *r)
{
	char ref[PATH_MAX + 16], jobs[32], win[16], conns[16], out[256];
	unsigned long long ok, errors;
	long long ready;
	double seconds;
	int p[2], status;
	size_t len = 0;
	ssize_t got;
	pid_t pid;

	memset(r, 0, sizeof *r);
	r->jobs = n;
	if (tsupport_proc_beside("ref-beanstalk", 0, ref, sizeof ref) == -1 ||
	    access(ref, X_OK) == -1) {
		snprintf(r->error, sizeof r->error, "cannot run ref-beanstalk: "
		    "%s", strerror(errno));
		return -1;
	}
	snprintf(jobs, sizeof jobs, "%" PRIu64, n);
	snprintf(win, sizeof win, "%u", window);
	snprintf(conns, sizeof conns, "%u", nconn);
	if (pipe2(p, O_CLOEXEC) == -1 || (pid = fork()) == -1) {
		snprintf(r->error, sizeof r->error, "cannot run ref-beanstalk: "
		    "%s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (dup2(p[1], 1) == -1)
			_exit(127);
		(void)sigprocmask(SIG_SETMASK, bench_daemon_child_mask(), NULL);
		execl(ref, "ref-beanstalk", "127.0.0.1", b->port, jobs, win,
		    conns, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (len < sizeof out - 1 && ((got = read(p[0], out + len,
	    sizeof out - 1 - len)) > 0 || (got == -1 && errno == EINTR)))
		if (got > 0)
			len += (size_t)got;
	out[len] = '\0';
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		continue;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    sscanf(out, "ok %llu errors %llu seconds %lf ready %lld", &ok,
	    &errors, &seconds, &ready) != 4) {
		snprintf(r->error, sizeof r->error, "ref-beanstalk failed "
		    "(its message is above)");
		return -1;
	}
	r->ok = ok;
	r->errors = errors;
	r->seconds = seconds;
	if (errors > 0)
		snprintf(r->error, sizeof r->error, "%llu puts failed", errors);
	/* What it acknowledged and does not hold it lost. */
	if (ready < 0 || (unsigned long long)ready < ok)
		r->not_queued = ok - (ready < 0 ? 0 : (uint64_t)ready);
	return 0;
}

void
bench_beanstalk_free(struct bench_beanstalk *b)
{
	struct tsupport_err err;

	if (b == NULL)
		return;
	if (b->pid > 0) {
		bench_daemon_kill_other(b->pid);
		(void)tsupport_child_reap(b->pid, false, NULL);
	}
	if (tsupport_dir_remove(b->dir, &err) == -1)
		fprintf(stderr, "bench: %s\n", err.msg);
	free(b);
}
