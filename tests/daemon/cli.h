/* cli.h - for the daemon tests: runs the real triage command against a test
 * daemon, as a user would, with its output and exit code captured. */
#ifndef TRIAGE_TEST_CLI_H
#define TRIAGE_TEST_CLI_H

#include "harness.h"

/*
 * The daemon of a test program's group, for its tests that run triage:
 * tcli_setup starts it (2 slots, a kill_grace of 1 s) as a cmocka group
 * setup, for tdaemon_group_teardown to stop.
 */
extern struct tdaemon *tcli_daemon;
int tcli_setup(void **state);
/* triage run on tcli_daemon: see tcli. */
#define cli(out, err, ...) tcli(tcli_daemon, out, err, __VA_ARGS__)
#define cli_rc(...) tcli_rc(tcli_daemon, __VA_ARGS__)

/* The most arguments tcli passes (more fail the test). */
#define TCLI_MAX_ARGS 30

/*
 * Runs triage with the NULL-terminated args, TRIAGE_SOCKET set to d's
 * socket, stdout and stderr into files of d's dir; returns its exit code
 * and sets *out and *err (allocated, the caller frees them).
 */
int tcli(const struct tdaemon *d, char **out, char **err, const char *arg,
    ...) __attribute__((sentinel));
/* A triage running in the background (tcli_start). */
struct tcli_bg {
	pid_t pid;
	char out[400];		/* the files of its stdout and stderr */
	char err[400];
};
/* Starts triage as tcli runs it, without waiting: its stdout and stderr
 * go to files of d's dir named after tag, which tslurp reads meanwhile. */
void tcli_start(const struct tdaemon *d, struct tcli_bg *bg, const char *tag,
    const char *arg, ...) __attribute__((sentinel));
/* Waits for it to exit (fails the test after the harness's timeout) and
 * returns as tcli does; killed by signal N: 128+N. */
int tcli_finish(struct tcli_bg *bg, char **out, char **err);
/* The same, freeing what it printed: its exit code alone. */
int tcli_rc(const struct tdaemon *d, const char *arg, ...)
    __attribute__((sentinel));
/* After a submit that must succeed (rc its exit code): its id, alone on
 * stdout, into id; frees *out and *err. */
void tcli_submitted(int rc, char **out, char **err, char id[32]);
/* The job object that triage --json status id prints. */
json_t *tcli_status(const struct tdaemon *d, const char *id);
/* Asserts what a triage run printed, exactly, and its exit code (rc,
 * what tcli returned); frees out and err. */
void tcli_assert_said(int rc, char *out, char *err, int want_rc,
    const char *want_out, const char *want_err);
/* Asserts that out is exactly want (the ids printed, one a line: "3\n4\n"),
 * then frees out and err. */
void tcli_assert_printed(char *out, char *err, const char *want);
/* Queues a job of the submit options given (held, paused or delayed, to
 * stay queued) that runs true; its id into id. Uses the caller's out and
 * err. */
#define tcli_queue(id, ...)						\
	tcli_submitted(cli(&out, &err, "submit", __VA_ARGS__, "--", "true",	\
	    NULL), &out, &err, (id))
/* The start of a small file, allocated and NUL-terminated (1 MiB at most). */
char *tslurp(const char *path);

#endif
