/* tsupport-daemon.c - for tests and benchmarks: a real triaged on a socket
 * and state dir of a temp dir: its config, its readiness, its stop. */
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triage/client.h"
#include "tsupport-child.h"
#include "tsupport-clock.h"
#include "tsupport-daemon.h"

/* How often readiness is polled. */
#define TSUPPORT_DAEMON_POLL_MS 5

int
tsupport_daemon_conf(const char *conf, const char *sock, const char *state,
    struct tsupport_err *err, const char *fmt, ...)
{
	va_list ap;
	FILE *f;
	int rc;

	if ((f = fopen(conf, "w")) == NULL)
		return tsupport_err_set(err, "cannot write %s: %s", conf,
		    strerror(errno));
	rc = fprintf(f, "[daemon]\nsocket = %s\nstate_dir = %s\n", sock,
	    state);
	va_start(ap, fmt);
	if (rc >= 0)
		rc = vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) == EOF || rc < 0)
		return tsupport_err_set(err, "cannot write %s: %s", conf,
		    strerror(errno));
	return 0;
}

int
tsupport_daemon_ready(pid_t pid, const char *sock, int timeout_ms,
    struct tsupport_err *err)
{
	int64_t deadline = tsupport_clock_ms() + timeout_ms;
	char *cause = NULL;
	struct triage_client *c;
	int status, rc;

	for (;;) {
		if ((rc = tsupport_child_exited(pid, &status)) == -1)
			return tsupport_err_set(err, "waitid: %s",
			    strerror(errno));
		if (rc == 1 && WIFEXITED(status))
			return tsupport_err_set(err, "triaged exited with "
			    "status %d before it was ready",
			    WEXITSTATUS(status));
		if (rc == 1)
			return tsupport_err_set(err, "triaged was killed by "
			    "signal %d before it was ready", WTERMSIG(status));
		if ((c = triage_client_connect(sock, &cause)) != NULL) {
			triage_client_free(c);
			return 0;
		}
		free(cause);
		cause = NULL;
		if (tsupport_clock_left_ms(deadline) == 0)
			return tsupport_err_set(err, "triaged did not answer "
			    "on %s within %d s", sock, timeout_ms / 1000);
		tsupport_clock_sleep_ms(TSUPPORT_DAEMON_POLL_MS);
	}
}

int
tsupport_daemon_stop(pid_t pid, int timeout_ms, struct tsupport_err *err)
{
	if (kill(pid, SIGTERM) == -1)
		return tsupport_err_set(err, "cannot stop triaged: %s",
		    strerror(errno));
	if (tsupport_child_wait(pid, timeout_ms, NULL) == 0)
		return 0;
	if (errno == ETIMEDOUT)
		return tsupport_err_set(err, "triaged did not exit within %d s "
		    "of SIGTERM", timeout_ms / 1000);
	return tsupport_err_set(err, "waitid: %s", strerror(errno));
}
