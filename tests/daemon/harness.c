/* harness.c - for the daemon tests: a real triaged on a temp socket and state
 * dir, in its own process group, and helpers to talk to it over the socket. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define HARNESS_TIMEOUT_MS 30000

const char *
tbin(const char *name)
{
	static char path[PATH_MAX + 64];
	char self[PATH_MAX];
	ssize_t n;

	/* build/tests/test-x -> build/bin/name (the asan tree likewise) */
	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) < 0)
		fail_msg("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(path, sizeof path, "%s/bin/%.32s", self, name);
	return path;
}

bool
tpid_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	p = fgets(buf, sizeof buf, f);
	fclose(f);
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return false;
	return p[2] != 'Z' && p[2] != 'X';
}

void
tdaemon_dump_log(const struct tdaemon *d)
{
	char line[1024];
	FILE *f;

	if ((f = fopen(d->log, "r")) == NULL)
		return;
	fprintf(stderr, "---- triaged log (%s) ----\n", d->log);
	while (fgets(line, sizeof line, f) != NULL)
		fputs(line, stderr);
	fprintf(stderr, "---- end of log ----\n");
	fclose(f);
}

static void
tsleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Starts triaged on d's config and waits until its socket answers. */
static void
tdaemon_launch(struct tdaemon *d)
{
	struct client *c;
	char *cause = NULL;
	int fd, status, i;

	if ((d->pid = fork()) == 0) {
		setpgid(0, 0);
		/* A test that dies takes its daemon along (and the daemon's
		 * workers follow it): nothing is left running. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		    0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		unsetenv("TRIAGE_SOCKET");
		unsetenv("TRIAGE_CONFIG");
		execl(tbin("triaged"), "triaged", "--config", d->conf,
		    (char *)NULL);
		_exit(127);
	}
	assert_true(d->pid > 0);
	setpgid(d->pid, d->pid);

	/* Ready once the socket answers; polled, never a fixed sleep. */
	for (i = 0; i < HARNESS_TIMEOUT_MS / 5; i++) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			tdaemon_dump_log(d);
			fail_msg("triaged exited before it was ready");
		}
		if ((c = client_connect(d->sock, &cause)) != NULL) {
			client_free(c);
			return;
		}
		free(cause);
		cause = NULL;
		tsleep_ms(5);
	}
	tdaemon_dump_log(d);
	fail_msg("triaged did not answer on %s", d->sock);
}

struct tdaemon *
tdaemon_start(const char *extra)
{
	struct tdaemon *d = calloc(1, sizeof *d);
	FILE *f;

	assert_non_null(d);
	snprintf(d->dir, sizeof d->dir, "/tmp/triage-test-XXXXXX");
	assert_non_null(mkdtemp(d->dir));
	snprintf(d->sock, sizeof d->sock, "%s/sock", d->dir);
	snprintf(d->conf, sizeof d->conf, "%s/triage.conf", d->dir);
	snprintf(d->log, sizeof d->log, "%s/log", d->dir);
	snprintf(d->state, sizeof d->state, "%s/state", d->dir);
	assert_non_null(f = fopen(d->conf, "w"));
	fprintf(f, "[daemon]\nsocket = %s\nstate_dir = %s\nlog_level = debug\n"
	    "%s\n", d->sock, d->state, extra ? extra : "");
	fclose(f);
	tdaemon_launch(d);
	return d;
}

void
tdaemon_restart(struct tdaemon *d)
{
	assert_int_equal(d->pid, 0);
	tdaemon_launch(d);
}

void
tdaemon_crash(struct tdaemon *d)
{
	assert_true(d->pid > 0);
	assert_int_equal(kill(d->pid, SIGKILL), 0);
	assert_int_equal(waitpid(d->pid, NULL, 0), d->pid);
	d->pid = 0;
}

int
tdaemon_stop(struct tdaemon *d)
{
	int status = 0, i;

	if (d->pid <= 0)
		return 0;
	kill(d->pid, SIGTERM);
	for (i = 0; i < HARNESS_TIMEOUT_MS / 5; i++) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				tdaemon_dump_log(d);
			return status;
		}
		tsleep_ms(5);
	}
	tdaemon_dump_log(d);
	fail_msg("triaged did not stop after SIGTERM");
	return -1;
}

void
tdaemon_end(struct tdaemon *d, struct client *c)
{
	client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_free(d);
}

void
tdaemon_free(struct tdaemon *d)
{
	char cmd[400];

	if (d == NULL)
		return;
	if (d->pid > 0) {
		kill(-d->pid, SIGKILL);
		waitpid(d->pid, NULL, 0);
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "harness: could not remove %s\n", d->dir);
	free(d);
}

struct client *
tconnect(const struct tdaemon *d)
{
	char *cause = NULL;
	struct client *c = client_connect(d->sock, &cause);

	if (c == NULL)
		fail_msg("%s", cause);
	return c;
}

static json_t *
tparams(const char *fmt, va_list ap)
{
	json_error_t err;
	json_t *p = json_vpack_ex(&err, 0, fmt, ap);

	if (p == NULL)
		fail_msg("bad test params %s: %s", fmt, err.text);
	return p;
}

json_t *
tcall(struct client *c, const char *method, const char *fmt, ...)
{
	struct client_error e;
	json_t *params, *res;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	if ((res = client_call(c, method, params, HARNESS_TIMEOUT_MS, &e)) == NULL)
		fail_msg("%s failed: %d %s", method, e.code, e.message);
	return res;
}

int
tcall_error(struct client *c, const char *method, struct client_error *e,
    const char *fmt, ...)
{
	json_t *params, *res;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	if ((res = client_call(c, method, params, HARNESS_TIMEOUT_MS, e)) != NULL) {
		char *s = json_dumps(res, JSON_COMPACT);

		fail_msg("%s succeeded but should not have: %s", method, s);
	}
	return e->code;
}

int64_t
tsubmit(struct client *c, const char *fmt, ...)
{
	struct client_error e;
	json_t *params, *res;
	int64_t id;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	if ((res = client_call(c, "submit", params, HARNESS_TIMEOUT_MS, &e)) == NULL)
		fail_msg("submit failed: %d %s", e.code, e.message);
	id = json_integer_value(json_object_get(res, "id"));
	assert_true(id > 0);
	json_decref(res);
	return id;
}

json_t *
twait(struct client *c, int64_t id)
{
	return tcall(c, "wait", "{sI}", "id", (json_int_t)id);
}

const char *
tstate(const json_t *job)
{
	return json_string_value(json_object_get(job, "state"));
}

json_t *
tnotification(struct client *c)
{
	struct client_error e;
	json_t *msg, *params;

	if ((msg = client_notification(c, HARNESS_TIMEOUT_MS, &e)) == NULL)
		fail_msg("no notification: %s", e.message);
	params = json_incref(json_object_get(msg, "params"));
	json_decref(msg);
	return params;
}

json_t *
tget(struct client *c, int64_t id)
{
	return tcall(c, "get", "{sI}", "id", (json_int_t)id);
}

json_int_t
tjint(const json_t *job, const char *key)
{
	return json_integer_value(json_object_get(job, key));
}

const char *
tjstr(const json_t *job, const char *key)
{
	return json_string_value(json_object_get(job, key));
}

/* These poll the daemon's state every 10 ms, for at most 30 s: waiting
 * for a job, never a fixed sleep standing in for one. */
pid_t
trunning_pid(struct client *c, int64_t id)
{
	json_t *job;
	pid_t pid = 0;
	int i;

	for (i = 0; i < HARNESS_TIMEOUT_MS / 10 && pid == 0; i++) {
		job = tcall(c, "get", "{sI}", "id", (json_int_t)id);
		if (strcmp(tstate(job), "running") == 0)
			pid = (pid_t)tjint(job, "pid");
		json_decref(job);
		if (pid == 0)
			tsleep_ms(10);
	}
	if (pid <= 0)
		fail_msg("job %lld never ran", (long long)id);
	return pid;
}

pid_t
toutput_pid(struct client *c, int64_t id)
{
	json_t *page;
	pid_t pid = 0;
	int i;

	for (i = 0; i < HARNESS_TIMEOUT_MS / 10 && pid == 0; i++) {
		page = tcall(c, "output", "{sIss}", "id", (json_int_t)id,
		    "stream", "stdout");
		pid = (pid_t)atoi(tjstr(page, "data"));
		json_decref(page);
		if (pid == 0)
			tsleep_ms(10);
	}
	if (pid <= 0)
		fail_msg("job %lld printed no pid", (long long)id);
	return pid;
}

void
twait_gone(pid_t pid)
{
	int i;

	for (i = 0; i < HARNESS_TIMEOUT_MS && tpid_alive(pid); i++)
		tsleep_ms(1);
	if (tpid_alive(pid))
		fail_msg("process %d is still there", (int)pid);
}

int64_t
tsubmit_gated(struct client *c, const struct tdaemon *d, const char *gate,
    bool deaf)
{
	char script[600];

	snprintf(script, sizeof script,
	    "%swhile [ ! -e %s/%s ]; do sleep 0.02; done",
	    deaf ? "trap '' TERM; " : "", d->dir, gate);
	return tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
}

void
topen_gate(const struct tdaemon *d, const char *gate)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", d->dir, gate);
	if ((f = fopen(path, "w")) == NULL)
		fail_msg("cannot create %s", path);
	fclose(f);
}

pid_t
tppid(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof buf, f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL)
		sscanf(p + 2, "%*c %d", &ppid);
	fclose(f);
	return (pid_t)ppid;
}

bool
tlog_has(const struct tdaemon *d, const char *text)
{
	char *buf = NULL;
	size_t len = 0;
	bool found;
	FILE *f;

	if ((f = fopen(d->log, "r")) == NULL)
		return false;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		fclose(f);
		return false;
	}
	fclose(f);
	found = strstr(buf, text) != NULL;
	free(buf);
	return found;
}

void
twait_log(const struct tdaemon *d, const char *text)
{
	int i;

	for (i = 0; i < HARNESS_TIMEOUT_MS / 10 && !tlog_has(d, text); i++)
		tsleep_ms(10);
	if (!tlog_has(d, text)) {
		tdaemon_dump_log(d);
		fail_msg("the log never said \"%s\"", text);
	}
}
