/* test-capture.c - a job's capture files through a real triaged: each made
 * at its stream's first byte, a stream without one read as empty. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"
#include "cli.h"
#include "harness.h"

/* Small, so that a job passes it at once. */
#define MAX_OUTPUT 1000
/* How often a test's loop looks again at what it waits for. */
#define POLL_MS 10

static struct tdaemon *d;

/* normal keeps the head of a stream, tail its tail. */
static int
setup(void **state)
{
	*state = d = tdaemon_start("slots = 2\nkill_grace = 1s\n"
	    "max_output = 1000\ndefault_priority = normal\n"
	    "[priority.normal]\nrank = 10\n"
	    "[priority.tail]\nrank = 20\noutput_keep = tail\n");
	return 0;
}

static const char *
out_path(int64_t id, const char *stream)
{
	static char path[600];

	snprintf(path, sizeof path, "%s/output/%lld.%s", d->state,
	    (long long)id, stream);
	return path;
}

static bool
has_file(int64_t id, const char *stream)
{
	return access(out_path(id, stream), F_OK) == 0;
}

/* A page of output from offset (a new reference). */
static json_t *
page_at(struct triage_client *c, int64_t id, const char *stream,
    json_int_t offset)
{
	return tcall(c, "output", "{sI ss sI si}", "id", (json_int_t)id,
	    "stream", stream, "offset", offset, "limit", 1 << 20);
}

static bool
jbool(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* The stream reads as empty from its start: no byte, nothing dropped or
 * truncated, eof as given, of attempt. */
static void
assert_empty(struct triage_client *c, int64_t id, const char *stream, bool eof,
    json_int_t attempt)
{
	json_t *page = page_at(c, id, stream, 0);

	assert_string_equal(tjstr(page, "data"), "");
	assert_int_equal(tjint(page, "offset"), 0);
	assert_int_equal(tjint(page, "next_offset"), 0);
	assert_int_equal(tjint(page, "dropped"), 0);
	assert_int_equal(tjint(page, "attempt"), attempt);
	assert_false(jbool(page, "truncated"));
	if (eof)
		assert_true(jbool(page, "eof"));
	else
		assert_false(jbool(page, "eof"));
	json_decref(page);
	page = page_at(c, id, stream, -10);
	assert_int_equal(tjint(page, "offset"), 0);
	assert_string_equal(tjstr(page, "data"), "");
	json_decref(page);
}

/* Submits sh -c script (more params from a json_pack format of an object,
 * "{}" for none), waits for it to end in state; returns its id. */
static int64_t
run_sh(struct triage_client *c, const char *state, const char *script,
    const char *fmt, ...)
{
	json_t *params, *job;
	json_error_t err;
	va_list ap;
	int64_t id;

	va_start(ap, fmt);
	params = json_vpack_ex(&err, 0, fmt, ap);
	va_end(ap);
	if (params == NULL)
		fail_msg("json_pack: %s", err.text);
	json_object_set_new(params, "argv", json_pack("[sss]", "sh", "-c",
	    script));
	id = tsubmit(c, "O", params);
	json_decref(params);
	job = twait(c, id);
	assert_string_equal(tstate(job), state);
	json_decref(job);
	return id;
}

/* The whole of a short stream of a job that has ended. */
static void
assert_stream(struct triage_client *c, int64_t id, const char *stream,
    const char *want)
{
	json_t *page = page_at(c, id, stream, 0);

	assert_true(jbool(page, "eof"));
	assert_string_equal(tjstr(page, "data"), want);
	json_decref(page);
}

/* A stream the job never wrote to has no file, and reads as an empty
 * one; merge_output's stderr is such a stream. */
static void
test_silent_streams_have_no_file(void **state)
{
	struct triage_client *c = tconnect(d);
	int64_t id;

	(void)state;
	id = run_sh(c, "succeeded", "true", "{}");
	assert_false(has_file(id, "stdout"));
	assert_false(has_file(id, "stderr"));
	assert_empty(c, id, "stdout", true, 1);
	assert_empty(c, id, "stderr", true, 1);

	id = run_sh(c, "succeeded", "echo out", "{}");
	assert_true(has_file(id, "stdout"));
	assert_false(has_file(id, "stderr"));
	assert_stream(c, id, "stdout", "out\n");
	assert_empty(c, id, "stderr", true, 1);

	id = run_sh(c, "succeeded", "echo out; echo err >&2", "{sb}",
	    "merge_output", 1);
	assert_stream(c, id, "stdout", "out\nerr\n");
	assert_false(has_file(id, "stderr"));
	assert_empty(c, id, "stderr", true, 1);

	/* under tail too, and a failure writes nothing either */
	id = run_sh(c, "failed", "echo err >&2; exit 1", "{ss}", "priority",
	    "tail");
	assert_false(has_file(id, "stdout"));
	assert_empty(c, id, "stdout", true, 1);
	assert_stream(c, id, "stderr", "err\n");
	triage_client_free(c);
}

/* Waits until the stream of the running job reads want from offset 0. */
static void
wait_stream(struct triage_client *c, int64_t id, const char *stream,
    const char *want)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *page;
	bool same;

	for (;;) {
		page = page_at(c, id, stream, 0);
		same = strcmp(tjstr(page, "data"), want) == 0;
		json_decref(page);
		if (same)
			return;
		tcheck_deadline(deadline, "job %lld's %s to read \"%s\"",
		    (long long)id, stream, want);
		poll(NULL, 0, POLL_MS);
	}
}

/*
 * A job that writes only late: no file while it is silent, its streams
 * read as empty and not ended; a follower (output -f) started meanwhile
 * gets what it writes once the files appear, and ends with the job.
 */
static void
test_a_late_writer_is_followed(void **state)
{
	struct triage_client *c = tconnect(d);
	struct tcli_bg out, err;
	char script[1000], later[400], id_s[32], *o, *e;
	int64_t id;
	int rc;

	(void)state;

	/* tgate_sh's text is in a static buffer: one at a time */
	snprintf(later, sizeof later, "%s", tgate_sh(d, "later-gate"));
	snprintf(script, sizeof script, "%s; echo late; echo late-err >&2; "
	    "%s; echo later", tgate_sh(d, "late-gate"), later);
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	snprintf(id_s, sizeof id_s, "%lld", (long long)id);
	trunning_pid(c, id);
	assert_empty(c, id, "stdout", false, 1);
	assert_empty(c, id, "stderr", false, 1);
	assert_false(has_file(id, "stdout"));
	assert_false(has_file(id, "stderr"));
	tcli_start(d, &out, "follow-out", "output", "-f", id_s, NULL);
	tcli_start(d, &err, "follow-err", "output", "-f", "--stderr", id_s,
	    NULL);

	topen_gate(d, "late-gate");
	wait_stream(c, id, "stdout", "late\n");
	wait_stream(c, id, "stderr", "late-err\n");
	assert_true(has_file(id, "stdout"));
	assert_true(has_file(id, "stderr"));
	topen_gate(d, "later-gate");
	tassert_ends(c, id, "succeeded");
	rc = tcli_finish(&out, &o, &e);
	tcli_assert_said(rc, o, e, 0, "late\nlater\n", "");
	rc = tcli_finish(&err, &o, &e);
	tcli_assert_said(rc, o, e, 0, "late-err\n", "");
	triage_client_free(c);
}

/* Waits until attempt of the job runs. */
static void
wait_running_attempt(struct triage_client *c, int64_t id, json_int_t attempt)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *job;
	bool there;

	for (;;) {
		job = tget(c, id);
		there = tjint(job, "attempt") == attempt &&
		    strcmp(tstate(job), "running") == 0;
		json_decref(job);
		if (there)
			return;
		tcheck_deadline(deadline, "attempt %lld of job %lld to run",
		    (long long)attempt, (long long)id);
		poll(NULL, 0, POLL_MS);
	}
}

/*
 * Each attempt starts its streams afresh: an attempt that writes nothing
 * shows nothing of the last one's, while it runs and after, whether it
 * came of retries or of the retry method.
 */
static void
test_a_silent_retry_shows_nothing_of_the_last(void **state)
{
	struct triage_client *c = tconnect(d);
	char script[800];
	int64_t id;

	(void)state;
	snprintf(script, sizeof script, "if [ $TRIAGE_ATTEMPT = 1 ]; then "
	    "echo a1; echo e1 >&2; exit 1; fi; %s",
	    tgate_sh(d, "silent-gate.$TRIAGE_ATTEMPT"));
	id = tsubmit(c, "{s[sss] si}", "argv", "sh", "-c", script, "retries",
	    1);
	wait_running_attempt(c, id, 2);
	assert_empty(c, id, "stdout", false, 2);
	assert_empty(c, id, "stderr", false, 2);
	assert_false(has_file(id, "stdout"));
	assert_false(has_file(id, "stderr"));
	topen_gate(d, "silent-gate.2");
	tassert_ends(c, id, "succeeded");
	assert_empty(c, id, "stdout", true, 2);
	assert_empty(c, id, "stderr", true, 2);

	/* the same under tail, through the retry method */
	snprintf(script, sizeof script, "if [ $TRIAGE_ATTEMPT = 1 ]; then "
	    "seq 1 2000; seq 1 2000 >&2; exit 1; fi");
	id = run_sh(c, "failed", script, "{ss}", "priority", "tail");
	json_decref(tcall(c, "retry", "{sI}", "id", (json_int_t)id));
	tassert_ends(c, id, "succeeded");
	assert_empty(c, id, "stdout", true, 2);
	assert_empty(c, id, "stderr", true, 2);
	assert_false(has_file(id, "stdout"));
	assert_false(has_file(id, "stderr"));
	triage_client_free(c);
}

static off_t
file_size(int64_t id, const char *stream)
{
	struct stat st;

	assert_int_equal(stat(out_path(id, stream), &st), 0);
	return st.st_size;
}

/* max_output binds a file made late as one made early: the head under
 * normal, the tail under tail, with dropped exact. */
static void
test_bounds_hold(void **state)
{
	struct triage_client *c = tconnect(d);
	char *text;
	size_t len = 0, size = 2000 * 6 + 1;
	json_t *page;
	int64_t id;
	long i;

	(void)state;
	assert_non_null(text = malloc(size));
	for (i = 1; i <= 2000; i++)
		len += (size_t)snprintf(text + len, size - len, "%ld\n", i);

	id = run_sh(c, "succeeded", "seq 1 2000", "{}");
	page = page_at(c, id, "stdout", 0);
	assert_int_equal(tjint(page, "next_offset"), MAX_OUTPUT);
	assert_memory_equal(tjstr(page, "data"), text, MAX_OUTPUT);
	assert_true(jbool(page, "truncated"));
	assert_int_equal(tjint(page, "dropped"), 0);
	json_decref(page);
	assert_int_equal(file_size(id, "stdout"), MAX_OUTPUT);
	assert_false(has_file(id, "stderr"));

	id = run_sh(c, "succeeded", "seq 1 2000 >&2", "{ss}", "priority",
	    "tail");
	page = page_at(c, id, "stderr", 0);
	assert_int_equal(tjint(page, "next_offset"), MAX_OUTPUT);
	assert_int_equal(tjint(page, "dropped"), (json_int_t)len - MAX_OUTPUT);
	assert_memory_equal(tjstr(page, "data"), text + len - MAX_OUTPUT,
	    MAX_OUTPUT);
	assert_true(jbool(page, "truncated"));
	assert_true(jbool(page, "eof"));
	json_decref(page);
	assert_int_equal(file_size(id, "stderr"), MAX_OUTPUT);
	assert_false(has_file(id, "stdout"));
	assert_int_equal(access(out_path(id, "stderr.tmp"), F_OK), -1);
	assert_empty(c, id, "stdout", true, 1);
	free(text);
	triage_client_free(c);
}

/* output_keep = tail's check, made once as the daemon starts: a probe
 * file of the output directory takes the xattr, and goes. */
static void
test_xattr_check(void **state)
{
	char dir[400], probe[450];

	(void)state;
	snprintf(dir, sizeof dir, "%s/output", d->state);
	snprintf(probe, sizeof probe, "%s/.xattr-probe", dir);
	assert_int_equal(capture_xattr_check(dir), 0);
	assert_int_equal(access(probe, F_OK), -1);
	snprintf(dir, sizeof dir, "%s/no-such-dir", d->state);
	assert_int_equal(capture_xattr_check(dir), -1);
	assert_int_equal(errno, ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_silent_streams_have_no_file),
		cmocka_unit_test(test_a_late_writer_is_followed),
		cmocka_unit_test(test_a_silent_retry_shows_nothing_of_the_last),
		cmocka_unit_test(test_bounds_hold),
		cmocka_unit_test(test_xattr_check),
	};

	return cmocka_run_group_tests_name("capture", tests, setup,
	    tdaemon_group_teardown);
}
