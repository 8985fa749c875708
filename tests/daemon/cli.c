/* cli.c - the triage command run for the daemon tests as a user runs it:
 * a fork and exec of the built binary, its output into files. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

struct tdaemon *tcli_daemon;

int
tcli_setup(void **state)
{
	tcli_daemon = tdaemon_start("slots = 2\nkill_grace = 1s\n");
	*state = tcli_daemon;
	return 0;
}

char *
tslurp(const char *path)
{
	char *buf = calloc(1, 1 << 20);
	FILE *f = fopen(path, "r");

	assert_non_null(buf);
	assert_non_null(f);
	(void)!fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

/* Starts triage with argv (its argv[0] included) as tcli_start says. */
static void
tcli_spawn(const struct tdaemon *d, struct tcli_bg *bg, const char *tag,
    char **argv)
{
	int fd;

	snprintf(bg->out, sizeof bg->out, "%s/%s.out", d->dir, tag);
	snprintf(bg->err, sizeof bg->err, "%s/%s.err", d->dir, tag);
	if ((bg->pid = fork()) == 0) {
		/* A test that fails leaves none behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setenv("TRIAGE_SOCKET", d->sock, 1);
		if ((fd = open(bg->out, O_WRONLY | O_CREAT | O_TRUNC,
		    0600)) < 0 || dup2(fd, 1) < 0)
			_exit(99);
		if ((fd = open(bg->err, O_WRONLY | O_CREAT | O_TRUNC,
		    0600)) < 0 || dup2(fd, 2) < 0)
			_exit(99);
		execv(tbin("triage"), argv);
		_exit(98);
	}
	assert_true(bg->pid > 0);
}

int
tcli_finish(struct tcli_bg *bg, char **out, char **err)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	int status;
	pid_t got;

	while ((got = waitpid(bg->pid, &status, WNOHANG)) == 0) {
		if (tleft_ms(deadline) == 0) {
			kill(bg->pid, SIGKILL);
			waitpid(bg->pid, &status, 0);
			fail_msg("triage did not exit; stdout \"%s\", stderr "
			    "\"%s\"", tslurp(bg->out), tslurp(bg->err));
		}
		poll(NULL, 0, 10);
	}
	assert_int_equal(got, bg->pid);
	assert_true(WIFEXITED(status) || WIFSIGNALED(status));
	*out = tslurp(bg->out);
	*err = tslurp(bg->err);
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
}

/* Runs triage with argv (its argv[0] included) as tcli says. */
static int
tcli_run(const struct tdaemon *d, char **out, char **err, char **argv)
{
	struct tcli_bg bg;

	tcli_spawn(d, &bg, "cli", argv);
	return tcli_finish(&bg, out, err);
}

/* The args up to NULL into argv after "triage"; the child execs a copy. */
static void
tcli_args(char **argv, const char *arg, va_list ap)
{
	static char name[] = "triage";
	int n = 0;

	argv[n++] = name;
	for (; arg != NULL; arg = va_arg(ap, const char *)) {
		if (n == TCLI_MAX_ARGS)
			fail_msg("tcli: more than %d arguments", TCLI_MAX_ARGS);
		/* execv's argv is not const; the strings are not written. */
		argv[n++] = (char *)(uintptr_t)arg;
	}
	argv[n] = NULL;
}

int
tcli(const struct tdaemon *d, char **out, char **err, const char *arg, ...)
{
	char *argv[TCLI_MAX_ARGS + 1];
	va_list ap;

	va_start(ap, arg);
	tcli_args(argv, arg, ap);
	va_end(ap);
	return tcli_run(d, out, err, argv);
}

void
tcli_start(const struct tdaemon *d, struct tcli_bg *bg, const char *tag,
    const char *arg, ...)
{
	char *argv[TCLI_MAX_ARGS + 1];
	va_list ap;

	va_start(ap, arg);
	tcli_args(argv, arg, ap);
	va_end(ap);
	tcli_spawn(d, bg, tag, argv);
}

int
tcli_rc(const struct tdaemon *d, const char *arg, ...)
{
	char *argv[TCLI_MAX_ARGS + 1], *out, *err;
	va_list ap;
	int rc;

	va_start(ap, arg);
	tcli_args(argv, arg, ap);
	va_end(ap);
	rc = tcli_run(d, &out, &err, argv);
	free(out);
	free(err);
	return rc;
}

void
tcli_submitted(int rc, char **out, char **err, char id[32])
{
	char *end;

	if (rc != 0 || strtol(*out, &end, 10) <= 0 || strcmp(end, "\n") != 0)
		fail_msg("submit: exit %d, stdout \"%s\", stderr \"%s\"", rc,
		    *out, *err);
	snprintf(id, 32, "%ld", strtol(*out, NULL, 10));
	free(*out);
	free(*err);
}

json_t *
tcli_status(const struct tdaemon *d, const char *id)
{
	char *out, *err;
	json_t *job;

	assert_int_equal(tcli(d, &out, &err, "--json", "status", id, NULL), 0);
	if ((job = json_loads(out, 0, NULL)) == NULL)
		fail_msg("status --json %s: not JSON: \"%s\"", id, out);
	free(out);
	free(err);
	return job;
}

void
tcli_assert_said(int rc, char *out, char *err, int want_rc,
    const char *want_out, const char *want_err)
{
	if (rc != want_rc || strcmp(out, want_out) != 0 ||
	    strcmp(err, want_err) != 0)
		fail_msg("exit %d, stdout \"%s\", stderr \"%s\"; not exit %d, "
		    "stdout \"%s\", stderr \"%s\"", rc, out, err, want_rc,
		    want_out, want_err);
	free(out);
	free(err);
}

void
tcli_assert_printed(char *out, char *err, const char *want)
{
	if (strcmp(out, want) != 0)
		fail_msg("printed \"%s\", not \"%s\" (stderr \"%s\")", out,
		    want, err);
	free(out);
	free(err);
}
