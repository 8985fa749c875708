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

/* Runs triage with argv (its argv[0] included) as tcli says. */
static int
tcli_run(const struct tdaemon *d, char **out, char **err, char **argv)
{
	char opath[400], epath[400];
	int status, fd;
	pid_t pid;

	snprintf(opath, sizeof opath, "%s/cli.out", d->dir);
	snprintf(epath, sizeof epath, "%s/cli.err", d->dir);
	if ((pid = fork()) == 0) {
		setenv("TRIAGE_SOCKET", d->sock, 1);
		if ((fd = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 ||
		    dup2(fd, 1) < 0)
			_exit(99);
		if ((fd = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 ||
		    dup2(fd, 2) < 0)
			_exit(99);
		execv(tbin("triage"), argv);
		_exit(98);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	*out = tslurp(opath);
	*err = tslurp(epath);
	return WEXITSTATUS(status);
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
tcli_assert_printed(char *out, char *err, const char *want)
{
	if (strcmp(out, want) != 0)
		fail_msg("printed \"%s\", not \"%s\" (stderr \"%s\")", out,
		    want, err);
	free(out);
	free(err);
}
