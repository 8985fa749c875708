/* test-cli.c - the triage command against a real triaged: what it prints
 * and the exit codes triage(1) promises. */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"

static void
test_submit_prints_the_id_alone(void **state)
{
	char *out, *err, *end;
	long id;

	(void)state;
	assert_int_equal(cli(&out, &err, "submit", "-n", "hello", "--", "echo",
	    "hi", NULL), 0);
	id = strtol(out, &end, 10);
	assert_true(id > 0);
	assert_string_equal(end, "\n");
	assert_string_equal(err, "");
	free(out);
	free(err);
}

/* --key: the second submit prints the first's id, says so on stderr, and
 * queues nothing; status shows the key; a bad key is a usage error. */
static void
test_submit_with_a_key_queues_once(void **state)
{
	char *out, *out2, *err, note[128], id[32];

	(void)state;
	assert_int_equal(cli(&out, &err, "submit", "--key", "cli-once", "--",
	    "true", NULL), 0);
	assert_string_equal(err, "");
	free(err);
	assert_int_equal(cli(&out2, &err, "submit", "--key", "cli-once", "--",
	    "false", NULL), 0);
	assert_string_equal(out2, out);
	snprintf(id, sizeof id, "%ld", strtol(out, NULL, 10));
	snprintf(note, sizeof note, "triage: job %s has this key already: "
	    "nothing new was queued\n", id);
	assert_string_equal(err, note);
	free(out2);
	free(err);
	assert_int_equal(cli(&out2, &err, "status", id, NULL), 0);
	assert_non_null(strstr(out2, "key:"));
	assert_non_null(strstr(out2, "cli-once"));
	free(out2);
	free(err);
	free(out);
	assert_int_equal(cli(&out, &err, "submit", "--key", "", "--", "true",
	    NULL), 2);
	assert_non_null(strstr(err, "--key must be 1 to 256 bytes"));
	free(out);
	free(err);
}

static void
test_wait_exit_codes(void **state)
{
	(void)state;
	assert_int_equal(cli_rc("submit", "--wait", "--", "true", NULL), 0);
	assert_int_equal(cli_rc("submit", "--wait", "--", "sh", "-c", "exit 3",
	    NULL), 3);
	assert_int_equal(cli_rc("submit", "--wait", "--", "sh", "-c",
	    "kill -9 $$", NULL), 128 + SIGKILL);
	assert_int_equal(cli_rc("submit", "--wait", "--timeout", "200ms",
	    "--", "sleep", "30", NULL), 124);
	assert_int_equal(cli_rc("submit", "--wait", "--",
	    "no-such-command-xyz", NULL), 127);
}

static void
test_cancel_then_wait_is_125(void **state)
{
	char *out, *err, id[32];

	(void)state;
	assert_int_equal(cli(&out, &err, "submit", "--", "sleep", "30", NULL),
	    0);
	snprintf(id, sizeof id, "%ld", strtol(out, NULL, 10));
	free(out);
	free(err);
	assert_int_equal(cli_rc("cancel", id, NULL), 0);
	assert_int_equal(cli_rc("wait", id, NULL), 125);
}

static void
test_status_list_and_json(void **state)
{
	char *out, *err, id[32], *line, *save;
	int n = 0;
	json_t *job;

	(void)state;
	assert_int_equal(cli(&out, &err, "submit", "-p", "low", "-n", "listed",
	    "--wait", "--", "sh", "-c", "echo out; echo err >&2", NULL), 0);
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "list", "--all", NULL), 0);
	assert_non_null(strstr(out, "ID"));
	assert_non_null(strstr(out, "PRIORITY"));
	assert_non_null(strstr(out, "listed"));
	free(out);
	free(err);

	/* --json: one job object a line, each parsing on its own. */
	assert_int_equal(cli(&out, &err, "--json", "list", "--all", NULL), 0);
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		assert_non_null(job = json_loads(line, 0, NULL));
		assert_true(json_integer_value(json_object_get(job, "id")) > 0);
		if (strcmp(json_string_value(json_object_get(job, "name")),
		    "listed") == 0)
			snprintf(id, sizeof id, "%lld", (long long)
			    json_integer_value(json_object_get(job, "id")));
		json_decref(job);
		n++;
	}
	assert_true(n >= 1);
	free(out);
	free(err);

	assert_int_equal(cli(&out, &err, "status", id, NULL), 0);
	assert_non_null(strstr(out, "succeeded"));
	assert_non_null(strstr(out, "low"));
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "output", id, NULL), 0);
	assert_string_equal(out, "out\n");
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "output", "--stderr", id, NULL), 0);
	assert_string_equal(out, "err\n");
	free(out);
	free(err);
}

/*
 * Reads the pipe fd into buf (len so far, kept NUL-terminated) until it
 * holds want, failing after HARNESS_TIMEOUT_MS; want NULL: until end of
 * file.
 */
static void
read_until(int fd, char *buf, size_t size, size_t *len, const char *want)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int ready;

	while (want == NULL || strstr(buf, want) == NULL) {
		if ((ready = poll(&pfd, 1, tleft_ms(deadline))) == 0)
			fail_msg("no \"%s\" after %d ms; got \"%s\"",
			    want ? want : "end of file", HARNESS_TIMEOUT_MS,
			    buf);
		assert_int_equal(ready, 1);
		n = read(fd, buf + *len, size - 1 - *len);
		assert_true(n >= 0);
		if (n == 0 && want == NULL)
			return;
		if (n == 0)
			fail_msg("end of file before \"%s\"; got \"%s\"", want,
			    buf);
		*len += (size_t)n;
		buf[*len] = '\0';
	}
}

/* Starts triage output -f id, its stdout into a pipe (*fd reads it), its
 * stderr into the file epath; returns its pid. */
static pid_t
follow(const char *id, const char *epath, int *fd)
{
	int fds[2], efd;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		setenv("TRIAGE_SOCKET", tcli_daemon->sock, 1);
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		if ((efd = open(epath, O_WRONLY | O_CREAT | O_TRUNC,
		    0600)) < 0 || dup2(efd, 2) < 0)
			_exit(99);
		execl(tbin("triage"), "triage", "output", "-f", id,
		    (char *)NULL);
		_exit(98);
	}
	assert_true(pid > 0);
	close(fds[1]);
	*fd = fds[0];
	return pid;
}

/* output -f of a running job: what it printed so far, then the rest as it
 * comes. The job waits at a gate until the follower has shown its first
 * line, so the follower is there while it runs. */
static void
test_output_follows_a_running_job(void **state)
{
	char script[1000], epath[400], buf[4096] = "";
	char *out, *err, id[32];
	size_t len = 0;
	int fd, status;
	pid_t pid;

	(void)state;
	snprintf(script, sizeof script, "echo one; %s; echo two",
	    tgate_sh(tcli_daemon, "follow-gate"));
	assert_int_equal(cli(&out, &err, "submit", "--", "sh", "-c", script,
	    NULL), 0);
	snprintf(id, sizeof id, "%ld", strtol(out, NULL, 10));
	free(out);
	free(err);
	snprintf(epath, sizeof epath, "%s/follow.err", tcli_daemon->dir);
	pid = follow(id, epath, &fd);
	read_until(fd, buf, sizeof buf, &len, "one\n");
	topen_gate(tcli_daemon, "follow-gate");
	read_until(fd, buf, sizeof buf, &len, NULL);
	close(fd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(buf, "one\ntwo\n");
}

/* output -f through a job's retries: each attempt's output in turn, with a
 * line on stderr where a new one starts. Each attempt waits at a gate until
 * the follower has shown its output, since a later attempt overwrites it. */
static void
test_output_follows_every_attempt(void **state)
{
	char script[1000], epath[400], buf[4096] = "", want[32], gate[32];
	char *out, *err, id[32];
	size_t len = 0;
	int status, fd, i;
	pid_t pid;

	(void)state;
	snprintf(script, sizeof script, "echo \"out $TRIAGE_ATTEMPT\"; %s; "
	    "exit 1", tgate_sh(tcli_daemon, "attempt-gate.$TRIAGE_ATTEMPT"));
	assert_int_equal(cli(&out, &err, "submit", "--retries", "2", "--",
	    "sh", "-c", script, NULL), 0);
	snprintf(id, sizeof id, "%ld", strtol(out, NULL, 10));
	free(out);
	free(err);

	snprintf(epath, sizeof epath, "%s/follow.err", tcli_daemon->dir);
	pid = follow(id, epath, &fd);
	for (i = 1; i <= 3; i++) {
		snprintf(want, sizeof want, "out %d\n", i);
		read_until(fd, buf, sizeof buf, &len, want);
		snprintf(gate, sizeof gate, "attempt-gate.%d", i);
		topen_gate(tcli_daemon, gate);
	}
	read_until(fd, buf, sizeof buf, &len, NULL);
	close(fd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(buf, "out 1\nout 2\nout 3\n");
	err = tslurp(epath);
	assert_string_equal(err, "--- attempt 2 ---\n--- attempt 3 ---\n");
	free(err);
	assert_int_equal(cli_rc("wait", id, NULL), 1);
}

static void
test_errors_and_their_exit_codes(void **state)
{
	char *out, *err;

	(void)state;
	assert_int_equal(cli(&out, &err, "cancel", "99999", NULL), 1);
	assert_int_equal(strncmp(err, "triage: ", 8), 0);
	assert_non_null(strstr(err, "99999"));
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "submit", NULL), 2);
	assert_int_equal(strncmp(err, "triage: ", 8), 0);
	free(out);
	free(err);
	assert_int_equal(cli_rc("frobnicate", NULL), 2);
	assert_int_equal(cli_rc("submit", "-p", "nope", "--", "true", NULL), 1);
	assert_int_equal(cli(&out, &err, "--socket", "/nonexistent/sock",
	    "list", NULL), 3);
	assert_non_null(strstr(err, "/nonexistent/sock"));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
	free(out);
	free(err);
}

/* An empty socket path is a mistake in the command line (an unset
 * variable, most likely), not a daemon that cannot be reached. */
static void
test_empty_socket_is_a_usage_error(void **state)
{
	char *out, *err;

	(void)state;
	assert_int_equal(cli(&out, &err, "--socket", "", "list", NULL), 2);
	assert_int_equal(strncmp(err, "triage: ", 8), 0);
	assert_non_null(strstr(err, "--socket"));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
	assert_string_equal(out, "");
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "stats", "--socket=", NULL), 2);
	assert_non_null(strstr(err, "--socket"));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
	free(out);
	free(err);
	assert_int_equal(cli_rc("submit", "--socket", "", "--", "true", NULL),
	    2);
}

static void
test_pause_resume_and_priorities(void **state)
{
	char *out, *err;

	(void)state;
	assert_int_equal(cli_rc("pause", "low", NULL), 0);
	assert_int_equal(cli(&out, &err, "priorities", NULL), 0);
	assert_non_null(strstr(out, "low"));
	assert_non_null(strstr(out, "yes"));
	free(out);
	free(err);
	assert_int_equal(cli_rc("resume", NULL), 0);
	assert_int_equal(cli(&out, &err, "priorities", NULL), 0);
	assert_null(strstr(out, "yes"));
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "stats", NULL), 0);
	assert_non_null(strstr(out, "slots"));
	free(out);
	free(err);
}

static void
test_watch_prints_a_line_per_change_when_not_a_terminal(void **state)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	struct triage_client *c = tconnect(tcli_daemon);
	struct pollfd pfd;
	char buf[8192] = "";
	size_t len = 0;
	ssize_t n;
	int fds[2];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		setenv("TRIAGE_SOCKET", tcli_daemon->sock, 1);
		dup2(fds[1], 1);
		close(fds[0]);
		execl(tbin("triage"), "triage", "watch", (char *)NULL);
		_exit(98);
	}
	close(fds[1]);
	/* It may not be watching yet when the first job goes: keep giving
	 * it jobs until their lines come. */
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	while (strstr(buf, "succeeded") == NULL) {
		tcheck_deadline(deadline, "a line of triage watch saying "
		    "succeeded; got \"%s\"", buf);
		if (poll(&pfd, 1, 100) == 0) {
			tsubmit(c, "{s[s]}", "argv", "true");
			continue;
		}
		n = read(fds[0], buf + len, sizeof buf - 1 - len);
		assert_true(n > 0);
		len += (size_t)n;
		buf[len] = '\0';
	}
	assert_non_null(strstr(buf, "true"));
	assert_int_equal(buf[len - 1], '\n');
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	triage_client_free(c);
}

static void
test_retries_after_and_retry(void **state)
{
	char *out, *err, first[32], second[32];
	json_t *job;

	(void)state;
	assert_int_equal(cli(&out, &err, "--json", "submit", "--retries", "2",
	    "--wait", "--", "sh", "-c", "exit 4", NULL), 4);
	/* The submitted job, then the finished one on the second line. */
	assert_non_null(strchr(out, '\n'));
	assert_non_null(job = json_loads(strchr(out, '\n') + 1, 0, NULL));
	assert_int_equal(json_integer_value(json_object_get(job, "attempt")), 3);
	snprintf(first, sizeof first, "%lld",
	    (long long)json_integer_value(json_object_get(job, "id")));
	json_decref(job);
	free(out);
	free(err);

	/* After a failed job: canceled, so wait says 125. */
	assert_int_equal(cli(&out, &err, "submit", "--after", first, "--",
	    "true", NULL), 0);
	snprintf(second, sizeof second, "%ld", strtol(out, NULL, 10));
	free(out);
	free(err);
	assert_int_equal(cli_rc("wait", second, NULL), 125);
	assert_int_equal(cli_rc("submit", "--after", "x,1", "--", "true",
	    NULL), 2);
	assert_int_equal(cli_rc("submit", "--after", "999999", "--", "true",
	    NULL), 1);

	/* retry: the failed one runs again (and fails again). */
	assert_int_equal(cli_rc("retry", first, NULL), 0);
	assert_int_equal(cli_rc("wait", first, NULL), 4);
	assert_int_equal(cli(&out, &err, "--json", "status", first, NULL), 0);
	assert_non_null(strstr(out, "\"attempt\":4"));
	free(out);
	free(err);
	/* A job that succeeded cannot be retried. */
	assert_int_equal(cli(&out, &err, "submit", "--wait", "--", "true",
	    NULL), 0);
	out[strcspn(out, "\n")] = '\0';
	snprintf(second, sizeof second, "%s", out);
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "retry", second, NULL), 1);
	assert_non_null(strstr(err, " has succeeded: only a job that failed"));
	free(out);
	free(err);
}

/* triage --help and triage(1) list every exit status the CLI uses, 4 of
 * reload included. */
static void
test_help_lists_every_exit_status(void **state)
{
	static const char *const codes[] = {
		"0", "1", "2", "3", "4", "124", "125", "126", "127", NULL,
	};
	const char *const *code;
	char *out, *err, *man, want[32];

	(void)state;
	assert_int_equal(cli(&out, &err, "--help", NULL), 0);
	man = tslurp("man/triage.1");
	for (code = codes; *code != NULL; code++) {
		snprintf(want, sizeof want, strlen(*code) == 1 ? "\n  %s  " :
		    " %s ", *code);
		if (strstr(out, want) == NULL)
			fail_msg("--help does not list exit status %s:\n%s",
			    *code, out);
		snprintf(want, sizeof want, "\n.B %s\n", *code);
		if (strstr(man, want) == NULL)
			fail_msg("triage(1) does not list exit status %s", *code);
	}
	free(man);
	free(out);
	free(err);
}

/* Whether line's value starts at column col (its key up to ':', then
 * blanks). */
static bool
value_at(const char *line, size_t col)
{
	size_t key = strcspn(line, ":") + 1;

	return key < col && strspn(line + key, " ") == col - key &&
	    line[col] != ' ';
}

/* The value of key ("attempt:") in status's output, in a static buffer;
 * "" when it is not there. */
static const char *
status_value(const char *out, const char *key)
{
	static char value[256];
	char want[64];
	const char *p;

	snprintf(want, sizeof want, "\n%s ", key);
	value[0] = '\0';
	if ((p = strstr(out, want)) != NULL) {
		p += strlen(want);
		p += strspn(p, " ");
		snprintf(value, sizeof value, "%.*s", (int)strcspn(p, "\n"), p);
	}
	return value;
}

/* status: one column of values, every time in local time, and the
 * retries that are left called so. */
static void
test_status_is_one_aligned_local_view(void **state)
{
	char *out, *err, id[32], *line, *save;
	size_t col;

	(void)state;
	assert_int_equal(cli(&out, &err, "submit", "--retries", "1", "--wait",
	    "--", "sh", "-c", "exit 4", NULL), 4);
	free(out);
	free(err);
	tcli_queue(id, "--delay", "1h", "--retries", "2");
	assert_int_equal(cli(&out, &err, "status", id, NULL), 0);
	if (strstr(out, "\nbegin_at:") == NULL ||
	    strstr(out, "\npending_reason:") == NULL ||
	    strstr(out, "\nretries left: ") == NULL)
		fail_msg("begin_at, pending_reason or retries left missing: %s",
		    out);
	/* RFC 3339 UTC ends in Z; the local form has none. */
	if (strstr(out, "Z\n") != NULL)
		fail_msg("a time in UTC among local ones: %s", out);
	col = strchr(out, ':') + 1 - out;
	col += strspn(out + col, " ");
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (!value_at(line, col))
			fail_msg("\"%s\" is not aligned at column %zu", line,
			    col);
	}
	free(out);
	free(err);
	assert_int_equal(cli_rc("cancel", id, NULL), 0);

	/* Retries counted down: none left after the last. */
	assert_int_equal(cli(&out, &err, "submit", "--retries", "1", "--wait",
	    "--", "sh", "-c", "exit 4", NULL), 4);
	out[strcspn(out, "\n")] = '\0';
	snprintf(id, sizeof id, "%s", out);
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "status", id, NULL), 0);
	if (strcmp(status_value(out, "attempt:"), "2") != 0 ||
	    strcmp(status_value(out, "retries left:"), "0") != 0)
		fail_msg("not attempt 2 with 0 retries left: %s", out);
	free(out);
	free(err);
}

/* Every command of triage(1), for the checks that concern them all. */
static const char *const cli_commands[] = {
	"submit", "status", "list", "wait", "cancel", "retry", "hold",
	"release", "freeze", "thaw", "update", "remove", "clean", "output",
	"watch", "stats", "priorities", "resources", "pause", "resume", NULL,
};

/* Asserts that out is cmd's help (and err empty), then frees both. */
static void
assert_help(char *out, char *err, const char *cmd)
{
	char want[64];

	snprintf(want, sizeof want, "usage: triage %s", cmd);
	if (strncmp(out, want, strlen(want)) != 0 || err[0] != '\0')
		fail_msg("%s: not its help: stdout \"%s\" stderr \"%s\"", cmd,
		    out, err);
	assert_non_null(strstr(out, "--help"));
	free(out);
	free(err);
}

/* With no daemon to reach, --help of every command still prints its help
 * and exits 0: nothing is run, so nothing fails to connect. */
static void
test_help_of_every_command_needs_no_daemon(void **state)
{
	const char *const *cmd;
	char *out, *err;

	(void)state;
	for (cmd = cli_commands; *cmd != NULL; cmd++) {
		assert_int_equal(cli(&out, &err, "--socket", "/nonexistent/sock",
		    *cmd, "--help", NULL), 0);
		assert_help(out, err, *cmd);
		assert_int_equal(cli(&out, &err, *cmd, "--socket",
		    "/nonexistent/sock", "-h", NULL), 0);
		assert_help(out, err, *cmd);
		/* After an option in error, and before or (but for submit,
		 * whose command starts at its first argument) after one. */
		assert_int_equal(cli(&out, &err, "--socket", "/nonexistent/sock",
		    *cmd, "--no-such-option", "--help", "1", NULL), 0);
		assert_help(out, err, *cmd);
		if (strcmp(*cmd, "submit") == 0)
			continue;
		assert_int_equal(cli(&out, &err, "--socket", "/nonexistent/sock",
		    *cmd, "--json", "1", "-h", NULL), 0);
		assert_help(out, err, *cmd);
	}
}

/* The commands that act do not, when asked for their help. */
static void
test_help_does_nothing_else(void **state)
{
	struct triage_client *c = tconnect(tcli_daemon);
	json_t *stats, *prio, *job, *jobs;
	char *out, *err, id[32];
	int64_t gated;
	size_t i, before;

	(void)state;
	assert_int_equal(cli(&out, &err, "pause", "--help", NULL), 0);
	assert_help(out, err, "pause");
	assert_int_equal(cli(&out, &err, "pause", "low", "-h", NULL), 0);
	assert_help(out, err, "pause");
	stats = tcall(c, "stats", "{}");
	json_array_foreach(json_object_get(stats, "priorities"), i, prio)
		assert_false(json_is_true(json_object_get(prio, "paused")));
	json_decref(stats);

	gated = tsubmit_gated(c, tcli_daemon, "help-gate", false);
	trunning_pid(c, gated);
	snprintf(id, sizeof id, "%lld", (long long)gated);
	assert_int_equal(cli(&out, &err, "cancel", "-h", id, NULL), 0);
	assert_help(out, err, "cancel");
	assert_int_equal(cli(&out, &err, "retry", id, "--help", NULL), 0);
	assert_help(out, err, "retry");
	job = tget(c, gated);
	assert_string_equal(tstate(job), "running");
	json_decref(job);

	/* It used to read a job id that was not there, and crash. */
	assert_int_equal(cli(&out, &err, "status", "--help", NULL), 0);
	assert_help(out, err, "status");
	assert_int_equal(cli(&out, &err, "stats", "--help", NULL), 0);
	assert_null(strstr(out, "slots:"));
	assert_help(out, err, "stats");
	assert_int_equal(cli(&out, &err, "--json", "list", "--help", NULL), 0);
	assert_help(out, err, "list");
	assert_int_equal(cli(&out, &err, "output", "-f", id, "--help", NULL),
	    0);
	assert_help(out, err, "output");
	assert_int_equal(cli(&out, &err, "wait", id, "-h", NULL), 0);
	assert_help(out, err, "wait");

	/* submit's --help submits nothing; after the command it is the
	 * command's own argument. */
	jobs = tcall(c, "list", "{}");
	before = json_array_size(json_object_get(jobs, "jobs"));
	json_decref(jobs);
	assert_int_equal(cli(&out, &err, "submit", "-p", "high", "--help",
	    "--", "true", NULL), 0);
	assert_help(out, err, "submit");
	jobs = tcall(c, "list", "{}");
	assert_int_equal(json_array_size(json_object_get(jobs, "jobs")),
	    before);
	json_decref(jobs);
	assert_int_equal(cli(&out, &err, "submit", "--wait", "sh", "-c",
	    "exit 5", "--help", NULL), 5);
	assert_null(strstr(out, "usage"));
	free(out);
	free(err);

	topen_gate(tcli_daemon, "help-gate");
	job = twait(c, gated);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	triage_client_free(c);
}

/* Asserts that triage with args is a usage error (2) whose one line names
 * want, and that it asked the daemon nothing (its socket is not there). */
#define assert_usage(want, ...) assert_usage_((want), __VA_ARGS__, NULL)
static void
assert_usage_(const char *want, const char *arg, ...)
{
	const char *argv[TCLI_MAX_ARGS];
	char *out, *err;
	va_list ap;
	int n = 0, rc;

	va_start(ap, arg);
	for (; arg != NULL && n < 12; arg = va_arg(ap, const char *))
		argv[n++] = arg;
	va_end(ap);
	for (; n < 12; n++)
		argv[n] = NULL;
	rc = cli(&out, &err, "--socket", "/nonexistent/sock", argv[0],
	    argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], argv[7],
	    argv[8], argv[9], argv[10], argv[11], NULL);
	if (rc != 2 || strstr(err, want) == NULL ||
	    strncmp(err, "triage: ", 8) != 0 ||
	    strchr(err, '\n') != err + strlen(err) - 1)
		fail_msg("%s ...: exit %d, stderr \"%s\", not a usage error "
		    "naming \"%s\"", argv[0], rc, err, want);
	assert_string_equal(out, "");
	free(out);
	free(err);
}

/* Every bad value of the options of protocol 1.1 is named, before any
 * request: exit 2 with the daemon nowhere. */
static void
test_bad_queue_options_are_usage_errors(void **state)
{
	(void)state;
	assert_usage("--at: \"25:00\" is not a time (HH:MM or RFC 3339)",
	    "submit", "--at", "25:00", "--", "true");
	assert_usage("--at: \"2026-12-01T08:00:00\" is not a time", "submit",
	    "--at", "2026-12-01T08:00:00", "true");
	assert_usage("--delay: \"10 m\" is not a duration", "submit",
	    "--delay", "10 m", "true");
	assert_usage("--delay: \"99999999d\"", "update", "1", "--delay",
	    "99999999d");
	assert_usage("one of --at and --delay", "submit", "--at", "10:00",
	    "--delay", "1m", "true");
	assert_usage("--label: \"team\" is not KEY=VALUE", "submit", "--label",
	    "team", "true");
	assert_usage("--label: \"a b=c\" is not KEY=VALUE", "list", "--label",
	    "a b=c");
	assert_usage("--nice '20' (0 to 19)", "submit", "--nice", "20", "true");
	assert_usage("--node 'a b' (1 to 64 of A-Z", "submit", "--node", "a b",
	    "true");
	assert_usage("--nice '-1'", "update", "3", "--nice", "-1");
	assert_usage("invalid --memory '1KiB' (a size of at least 1MiB: "
	    "512MiB, 4GiB)", "submit", "--memory", "1KiB", "true");
	assert_usage("invalid --memory '1.5GiB'", "submit", "--memory",
	    "1.5GiB", "true");
	assert_usage("invalid --memory '4G'", "update", "3", "--memory", "4G");
	assert_usage("invalid --mem '1KiB' (a size of at least 1MiB: "
	    "512MiB, 4GiB)", "submit", "--mem", "1KiB", "true");
	assert_usage("invalid --mem 'lots'", "update", "3", "--mem", "lots");
	assert_usage("invalid --gpus '0' (a count of at least 1)", "submit",
	    "--gpus", "0", "true");
	assert_usage("invalid --gpus 'two'", "update", "3", "--gpus", "two");
	assert_usage("--res: \"gpu\" is not NAME=N (NAME: a resource, 1 to 32 "
	    "of a-z 0-9 _ -; N: how many of its units, at least 1)", "submit",
	    "--res", "gpu", "true");
	assert_usage("--res: \"gpu=0\" is not NAME=N", "submit", "--res",
	    "gpu=0", "true");
	assert_usage("--res: \"gpu=-1\" is not NAME=N", "submit", "--res",
	    "gpu=-1", "true");
	assert_usage("--res: \"GPU=1\" is not NAME=N", "submit", "--res",
	    "GPU=1", "true");
	assert_usage("--res: \"=1\" is not NAME=N", "update", "3", "--res",
	    "=1");
	assert_usage("--res: \"abcdefghijklmnopqrstuvwxyz0123456=1\" is not "
	    "NAME=N", "submit", "--res",
	    "abcdefghijklmnopqrstuvwxyz0123456=1", "true");
	assert_usage("--res gpu=2: gpu is asked for twice (--gpus N is --res "
	    "gpu=N)", "submit", "--gpus", "1", "--res", "gpu=2", "true");
	assert_usage("--res lic=2: lic is asked for twice", "update", "3",
	    "--res", "lic=1", "--res", "lic=2");
	assert_usage("invalid --after-any 'x'", "submit", "--after-any", "x",
	    "true");
	assert_usage("nothing to change", "update", "3");
	assert_usage("give one job id", "update", "-p", "high");
	assert_usage("give job ids, or choose jobs", "cancel");
	assert_usage("give job ids, or choose jobs", "wait");
	assert_usage("give job ids, or choose jobs", "hold");
	assert_usage("invalid job id 'x'", "release", "x");
	assert_usage("unknown state 'done'", "remove", "--state", "done");
	assert_usage("--signal: unknown signal 'FOO'", "cancel", "--signal",
	    "FOO", "3");
	assert_usage("--state running: only finished jobs", "clean",
	    "--state", "running");
	assert_usage("unexpected argument '3'", "clean", "3");
	assert_usage("--both and --stderr", "output", "--both", "--stderr",
	    "3");
	assert_usage("--both and -f", "output", "--both", "-f", "3");
	assert_usage("invalid --tail '0'", "output", "--tail", "0", "3");
	assert_usage("give one job id, or none", "output", "3", "4");
	assert_usage("invalid job id '0'", "watch", "0");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit_prints_the_id_alone),
		cmocka_unit_test(test_submit_with_a_key_queues_once),
		cmocka_unit_test(test_wait_exit_codes),
		cmocka_unit_test(test_cancel_then_wait_is_125),
		cmocka_unit_test(test_status_list_and_json),
		cmocka_unit_test(test_output_follows_a_running_job),
		cmocka_unit_test(test_output_follows_every_attempt),
		cmocka_unit_test(test_errors_and_their_exit_codes),
		cmocka_unit_test(test_empty_socket_is_a_usage_error),
		cmocka_unit_test(test_pause_resume_and_priorities),
		cmocka_unit_test(test_watch_prints_a_line_per_change_when_not_a_terminal),
		cmocka_unit_test(test_retries_after_and_retry),
		cmocka_unit_test(test_help_of_every_command_needs_no_daemon),
		cmocka_unit_test(test_help_does_nothing_else),
		cmocka_unit_test(test_help_lists_every_exit_status),
		cmocka_unit_test(test_status_is_one_aligned_local_view),
		cmocka_unit_test(test_bad_queue_options_are_usage_errors),
	};

	return cmocka_run_group_tests_name("cli", tests, tcli_setup,
	    tdaemon_group_teardown);
}
