/* test-result.c - a job's result (protocol v1.3): what it writes to
 * TRIAGE_RESULT comes back in its job object, durable with its end. */
#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"

/* A job of one sh -c script, and its end. */
static json_t *
run_sh(struct triage_client *c, const char *script)
{
	int64_t id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);

	return twait(c, id);
}

/* The job's result as a plain string (fails when it is not one). */
static const char *
result_text(const json_t *job)
{
	const json_t *v = json_object_get(job, "result");

	if (!json_is_string(v))
		fail_msg("result is not a string: %s", json_dumps(job, 0));
	return json_string_value(v);
}

/* The job's result in its {"base64": ...} form. */
static const char *
result_base64(const json_t *job)
{
	const json_t *v = json_object_get(job, "result");

	if (!json_is_object(v) || json_object_size(v) != 1 ||
	    !json_is_string(json_object_get(v, "base64")))
		fail_msg("result is not {\"base64\": ...}: %s",
		    json_dumps(job, 0));
	return json_string_value(json_object_get(v, "base64"));
}

static void
assert_no_result(const json_t *job)
{
	if (json_object_get(job, "result") != NULL ||
	    json_object_get(job, "result_truncated") != NULL)
		fail_msg("a result where none was left: %s",
		    json_dumps(job, 0));
}

/* Waits until path exists. */
static void
wait_path(const char *path)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);

	while (access(path, F_OK) != 0) {
		tcheck_deadline(deadline, "%s never appeared", path);
		poll(NULL, 0, 10);
	}
}

/*
 * UTF-8 comes back as a string, by > and by >> (the job's children too),
 * and in every outcome: a failure, a signal. What ends with no result, or
 * an empty one, has none at all.
 */
static void
utf8_results_and_none(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	json_t *job;

	(void)state;
	job = run_sh(c, "echo 42 > \"$TRIAGE_RESULT\"");
	assert_string_equal(tstate(job), "succeeded");
	assert_string_equal(result_text(job), "42\n");
	assert_null(json_object_get(job, "result_truncated"));
	json_decref(job);

	/* The file is the job's as a file is: > truncates, >> appends,
	 * from any process of it. */
	job = run_sh(c, "echo long-first-value > \"$TRIAGE_RESULT\"; "
	    "printf 'caf\\303\\251' > \"$TRIAGE_RESULT\"; "
	    "sh -c 'printf \" ok\" >> \"$TRIAGE_RESULT\"'; exit 3");
	assert_string_equal(tstate(job), "failed");
	assert_string_equal(result_text(job), "caf\xc3\xa9 ok");
	json_decref(job);

	job = run_sh(c, "printf done > \"$TRIAGE_RESULT\"; kill -9 $$");
	assert_string_equal(tstate(job), "failed");
	assert_string_equal(tjstr(job, "signal"), "SIGKILL");
	assert_string_equal(result_text(job), "done");
	json_decref(job);

	job = run_sh(c, "echo nothing");
	assert_no_result(job);
	json_decref(job);
	job = run_sh(c, ": > \"$TRIAGE_RESULT\"");
	assert_no_result(job);
	json_decref(job);
	/* list has the same object. */
	job = tcall(c, "list", "{}");
	assert_string_equal(result_text(json_array_get(json_object_get(job,
	    "jobs"), 0)), "42\n");
	json_decref(job);
	tdaemon_end(d, c);
}

/* Bytes that are not UTF-8, or hold a NUL, come as {"base64": ...}. */
static void
binary_results_are_base64(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	json_t *job;

	(void)state;
	job = run_sh(c, "printf '\\377\\001' > \"$TRIAGE_RESULT\"");
	assert_string_equal(result_base64(job), "/wE=");
	json_decref(job);
	job = run_sh(c, "printf 'a\\000b' > \"$TRIAGE_RESULT\"");
	assert_string_equal(result_base64(job), "YQBi");
	json_decref(job);
	tdaemon_end(d, c);
}

/* Past max_result, the first max_result bytes and result_truncated; a
 * large result (past what a worker's message usually is) comes whole. */
static void
over_max_result_is_truncated(void **state)
{
	struct tdaemon *d = tdaemon_start("max_result = 1MiB\n");
	struct triage_client *c = tconnect(d);
	json_t *job;
	char script[256];
	const char *text;
	size_t i;

	(void)state;
	/* 1 MiB + 1 of "abcd...". */
	snprintf(script, sizeof script, "yes abcdefghijklmno | tr -d '\\n' | "
	    "head -c %d > \"$TRIAGE_RESULT\"", (1 << 20) + 1);
	job = run_sh(c, script);
	text = result_text(job);
	assert_int_equal(strlen(text), 1 << 20);
	for (i = 0; i < 1 << 20; i += 4096)
		assert_int_equal(text[i], "abcdefghijklmno"[i % 15]);
	assert_true(json_is_true(json_object_get(job, "result_truncated")));
	json_decref(job);

	snprintf(script, sizeof script, "head -c %d /dev/zero | tr '\\0' x "
	    "> \"$TRIAGE_RESULT\"", 1 << 20);
	job = run_sh(c, script);
	assert_int_equal(strlen(result_text(job)), 1 << 20);
	assert_null(json_object_get(job, "result_truncated"));
	json_decref(job);
	tdaemon_end(d, c);
}

/* max_result = 0: no TRIAGE_RESULT, not even the submitter's own; a
 * reload turns results on for the jobs started after it. */
static void
max_result_zero_means_no_variable(void **state)
{
	struct tdaemon *d = tdaemon_start("max_result = 0\n");
	struct triage_client *c = tconnect(d);
	int64_t id;
	json_t *job;

	(void)state;
	id = tsubmit(c, "{s[sss]s{ss}}", "argv", "sh", "-c",
	    "test -z \"${TRIAGE_RESULT+set}\" && test ! -e /dev/fd/10",
	    "env", "TRIAGE_RESULT", "/tmp/not-yours");
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_no_result(job);
	json_decref(job);

	tdaemon_rewrite(d, "log_level = debug\nmax_result = 4\n");
	json_decref(tcall(c, "reload", "{}"));
	job = run_sh(c, "test \"$TRIAGE_RESULT\" = /dev/fd/10 && "
	    "echo 12345 > \"$TRIAGE_RESULT\"");
	assert_string_equal(tstate(job), "succeeded");
	assert_string_equal(result_text(job), "1234");
	assert_true(json_is_true(json_object_get(job, "result_truncated")));
	json_decref(job);
	tdaemon_end(d, c);
}

/*
 * The result is in the reply to wait, and in the watch notification of
 * the end; canceled jobs keep theirs.
 */
static void
wait_and_watch_carry_it(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d), *w = tconnect(d);
	char script[1024], written[400];
	json_t *note, *job;
	int64_t id;

	(void)state;
	json_decref(tcall(w, "watch", "{}"));
	snprintf(script, sizeof script, "printf watched > \"$TRIAGE_RESULT\"; "
	    "%s", tgate_sh(d, "go"));
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	(void)trunning_pid(c, id);
	topen_gate(d, "go");
	job = twait(c, id);
	assert_string_equal(result_text(job), "watched");
	json_decref(job);
	for (;;) {
		note = tnotification(w);
		if (tjint(note, "id") == id &&
		    strcmp(tstate(note), "succeeded") == 0)
			break;
		/* Before its end, none. */
		assert_no_result(note);
		json_decref(note);
	}
	assert_string_equal(result_text(note), "watched");
	json_decref(note);

	snprintf(written, sizeof written, "%s/written", d->dir);
	snprintf(script, sizeof script, "printf partial > \"$TRIAGE_RESULT\"; "
	    "touch %s; exec sleep 300", written);
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	wait_path(written);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	job = twait(c, id);
	assert_string_equal(tstate(job), "canceled");
	assert_string_equal(result_text(job), "partial");
	json_decref(job);
	triage_client_free(w);
	tdaemon_end(d, c);
}

/* A kill -9 of the daemon once the end was told: the result is on disk
 * with it. */
static void
a_crash_keeps_it(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t id;

	(void)state;
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "printf '\\377kept' > \"$TRIAGE_RESULT\"; exit 1");
	job = twait(c, id);
	assert_string_equal(result_base64(job), "/2tlcHQ=");
	json_decref(job);
	triage_client_free(c);
	tdaemon_crash(d);
	tdaemon_restart(d);
	c = tconnect(d);
	job = tget(c, id);
	assert_string_equal(tstate(job), "failed");
	assert_string_equal(result_base64(job), "/2tlcHQ=");
	json_decref(job);
	tdaemon_end(d, c);
}

/* A new attempt starts without the last one's result: the retry method,
 * and an automatic retry. */
static void
a_retry_clears_it(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	char script[1024];
	json_t *job;
	int64_t id;

	(void)state;
	snprintf(script, sizeof script, "if [ $TRIAGE_ATTEMPT = 1 ]; then "
	    "echo first > \"$TRIAGE_RESULT\"; exit 1; fi; %s",
	    tgate_sh(d, "second"));
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	job = twait(c, id);
	assert_string_equal(tstate(job), "failed");
	assert_string_equal(result_text(job), "first\n");
	json_decref(job);
	job = tcall(c, "retry", "{sI}", "id", (json_int_t)id);
	json_decref(job);
	(void)trunning_pid(c, id);
	job = tget(c, id);
	assert_int_equal(tjint(job, "attempt"), 2);
	assert_no_result(job);
	json_decref(job);
	topen_gate(d, "second");
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_no_result(job);
	json_decref(job);

	/* retries = 1: attempt 1 fails with a result, attempt 2 leaves
	 * none. */
	id = tsubmit(c, "{s[sss]si}", "argv", "sh", "-c",
	    "if [ $TRIAGE_ATTEMPT = 1 ]; then echo first > "
	    "\"$TRIAGE_RESULT\"; exit 1; fi", "retries", 1);
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "attempt"), 2);
	assert_no_result(job);
	json_decref(job);
	tdaemon_end(d, c);
}

/* A job run as another user (a root daemon, run_as_submitter) writes its
 * result all the same: the memfd is anybody's to open. */
static void
another_user_writes_it(void **state)
{
	struct passwd *pw = getpwnam("nobody");
	struct tdaemon *d;
	struct triage_client *c;
	int status;
	json_t *job;
	pid_t pid;

	(void)state;
	if (geteuid() != 0 || pw == NULL) {
		print_message("skipped: needs root and a user nobody\n");
		skip();
	}
	d = tdaemon_start("socket_mode = 0666\n");
	assert_int_equal(chmod(d->dir, 0711), 0);
	if ((pid = fork()) == 0) {
		struct triage_error e;
		json_t *sub, *done;
		char *cause;
		int rc;

		if (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0 ||
		    (c = triage_client_connect(d->sock, &cause)) == NULL)
			_exit(2);
		sub = triage_client_call(c, "submit", json_pack("{s[sss]s:s}",
		    "argv", "sh", "-c", "id -u > \"$TRIAGE_RESULT\"; "
		    "sh -c 'echo child >> \"$TRIAGE_RESULT\"'", "cwd", "/"),
		    HARNESS_TIMEOUT_MS, &e);
		if (sub == NULL)
			_exit(3);
		done = triage_client_call(c, "wait", json_pack("{sI}", "id",
		    tjint(sub, "id")), HARNESS_TIMEOUT_MS, &e);
		rc = done != NULL && strcmp(tstate(done), "succeeded") == 0 ?
		    0 : 4;
		/* Nothing left behind: under make valgrind this child is
		 * memcheck's too, and a leak would be its exit status. */
		json_decref(sub);
		json_decref(done);
		triage_client_free(c);
		_exit(rc);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	c = tconnect(d);
	job = tget(c, 1);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the job as nobody: %s (status %#x)",
		    json_dumps(job, 0), status);
	assert_int_equal(tjint(job, "uid"), pw->pw_uid);
	{
		char want[64];

		snprintf(want, sizeof want, "%lu\nchild\n",
		    (unsigned long)pw->pw_uid);
		assert_string_equal(result_text(job), want);
	}
	json_decref(job);
	tdaemon_end(d, c);
}

/*
 * Orphaned workers: a job that ends while no daemon runs leaves its result
 * in its worker's end record; one that ends after the next daemon took
 * its worker over sends it there. Either way the result is the job's.
 */
static void
orphaned_workers_keep_it(void **state)
{
	struct tdaemon *d = tdaemon_start("shutdown = keep\n");
	struct triage_client *c = tconnect(d);
	char script[1024], rec[600];
	int64_t a, b;
	json_t *job;

	(void)state;
	snprintf(script, sizeof script, "%s; printf 'rec\\377' > "
	    "\"$TRIAGE_RESULT\"", tgate_sh(d, "a"));
	a = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	snprintf(script, sizeof script, "%s; printf adopted > "
	    "\"$TRIAGE_RESULT\"; exit 2", tgate_sh(d, "b"));
	b = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	(void)trunning_pid(c, a);
	(void)trunning_pid(c, b);
	triage_client_free(c);
	tdaemon_crash(d);

	/* a ends while no daemon runs: its worker records the end. */
	snprintf(rec, sizeof rec, "%s/adopt/%lld.1.end", d->state,
	    (long long)a);
	topen_gate(d, "a");
	wait_path(rec);
	tdaemon_restart(d);
	c = tconnect(d);
	job = twait(c, a);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "attempt"), 1);
	assert_string_equal(result_base64(job), "cmVj/w==");
	json_decref(job);

	/* b's worker was taken over by this daemon; b ends now. */
	topen_gate(d, "b");
	job = twait(c, b);
	assert_string_equal(tstate(job), "failed");
	assert_int_equal(tjint(job, "attempt"), 1);
	assert_string_equal(result_text(job), "adopted");
	json_decref(job);
	assert_true(tlog_has(d, "taken over from an earlier daemon"));
	tdaemon_end(d, c);
}

/* triage status shows it for people, --json as it came. */
static void
status_shows_it(void **state)
{
	struct tdaemon *d = tdaemon_start("max_result = 8\n");
	struct triage_client *c = tconnect(d);
	char id[32], *out, *err;
	json_t *job;
	int64_t n;
	int rc;

	(void)state;
	n = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "printf 'v=1\\033\\nand more' > \"$TRIAGE_RESULT\"");
	json_decref(twait(c, n));
	snprintf(id, sizeof id, "%lld", (long long)n);
	rc = tcli(d, &out, &err, "status", id, NULL);
	assert_int_equal(rc, 0);
	if (strstr(out, "result:           v=1\\x1b\\x0aand") == NULL ||
	    strstr(out, "result_truncated: yes") == NULL)
		fail_msg("status: \"%s\"", out);
	free(out);
	free(err);
	rc = tcli(d, &out, &err, "--json", "status", id, NULL);
	assert_int_equal(rc, 0);
	job = json_loads(out, 0, NULL);
	assert_non_null(job);
	assert_string_equal(result_text(job), "v=1\033\nand");
	json_decref(job);
	free(out);
	free(err);
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utf8_results_and_none),
		cmocka_unit_test(binary_results_are_base64),
		cmocka_unit_test(over_max_result_is_truncated),
		cmocka_unit_test(max_result_zero_means_no_variable),
		cmocka_unit_test(wait_and_watch_carry_it),
		cmocka_unit_test(a_crash_keeps_it),
		cmocka_unit_test(a_retry_clears_it),
		cmocka_unit_test(another_user_writes_it),
		cmocka_unit_test(orphaned_workers_keep_it),
		cmocka_unit_test(status_shows_it),
	};

	return cmocka_run_group_tests_name("result", tests, NULL, NULL);
}
