/* test-bulk.c - acting on many jobs at once against a real triaged: filters,
 * cancel with a signal, retry and remove by id or filter, wait on ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

/* "parked" is paused: its jobs stay queued. */
static struct tdaemon *
start(void)
{
	struct tdaemon *d = tdaemon_start("[priority.parked]\nrank = 5\n"
	    "[priority.normal]\nrank = 10\n");
	struct triage_client *c = tconnect(d);

	json_decref(tcall(c, "pause", "{ss}", "priority", "parked"));
	triage_client_free(c);
	return d;
}

static int64_t
parked(struct triage_client *c, const char *name)
{
	return tsubmit(c, "{s[ss] ss ss}", "argv", "sleep", "60", "priority",
	    "parked", "name", name);
}

/* A job that has ended, as argv0 (true, false, pwd) does. */
static int64_t
ended(struct triage_client *c, const char *argv0, const char *name)
{
	int64_t id = tsubmit(c, "{s[s] ss}", "argv", argv0, "name", name);

	json_decref(twait(c, id));
	return id;
}

/* res's "ids" (or "jobs" ids) are exactly the n ids given, in order;
 * res is freed. */
static void
assert_ids(json_t *res, const char *key, int n, ...)
{
	json_t *got = json_object_get(res, key), *v;
	va_list ap;
	int i;

	if (json_array_size(got) != (size_t)n)
		fail_msg("%s: %zu ids, not %d: %s", key, json_array_size(got),
		    n, json_dumps(res, JSON_COMPACT));
	va_start(ap, n);
	for (i = 0; i < n; i++) {
		v = json_array_get(got, (size_t)i);
		if (json_is_object(v))
			v = json_object_get(v, "id");
		assert_int_equal(json_integer_value(v), va_arg(ap, int64_t));
	}
	va_end(ap);
	json_decref(res);
}

/* The state of the i-th job of a wait's {"jobs": [...]}. */
static const char *
nth_state(const json_t *res, size_t i)
{
	return tstate(json_array_get(json_object_get(res, "jobs"), i));
}

static void
assert_gone(struct triage_client *c, int64_t id)
{
	struct triage_error e;

	assert_int_equal(tcall_error(c, "get", &e, "{sI}", "id", id), -32001);
}

/* The call fails with -32602 naming field. */
static void
assert_bad(struct triage_client *c, const char *method, const char *field,
    const char *params)
{
	struct triage_error e;
	json_error_t jerr;
	json_t *p = json_loads(params, 0, &jerr), *res;

	assert_non_null(p);
	if ((res = triage_client_call(c, method, p, HARNESS_TIMEOUT_MS, &e))
	    != NULL)
		fail_msg("%s %s succeeded", method, params);
	if (e.code != -32602 || strcmp(e.field, field) != 0)
		fail_msg("%s %s: %d field \"%s\" (%s), not -32602 field \"%s\"",
		    method, params, e.code, e.field, e.message, field);
}

static void
test_bad_params_name_the_field(void **state)
{
	static const char *const methods[] = { "cancel", "retry", "remove" };
	static const struct {
		const char *params, *field;
	} bad[] = {
		{ "{}", "id" },
		{ "{\"id\":1,\"filter\":{}}", "filter" },
		{ "{\"filter\":[]}", "filter" },
		{ "{\"id\":0}", "id" },
		{ "{\"filter\":{\"bogus\":1}}", "filter.bogus" },
		{ "{\"filter\":{\"held\":true}}", "filter.held" },
		{ "{\"filter\":{\"state\":[\"nope\"]}}", "filter.state" },
		{ "{\"filter\":{\"state\":\"queued\"}}", "filter.state" },
		{ "{\"filter\":{\"ids\":[0]}}", "filter.ids" },
		{ "{\"filter\":{\"ids\":[\"1\"]}}", "filter.ids" },
		{ "{\"filter\":{\"ids\":3}}", "filter.ids" },
		{ "{\"filter\":{\"priority\":\"nope\"}}", "filter.priority" },
		{ "{\"filter\":{\"priority\":3}}", "filter.priority" },
		{ "{\"filter\":{\"labels\":{\"a\":1}}}", "filter.labels" },
		{ "{\"filter\":{\"labels\":[]}}", "filter.labels" },
		{ "{\"filter\":{\"name\":3}}", "filter.name" },
	};
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	size_t i, m;

	(void)state;
	for (m = 0; m < sizeof methods / sizeof methods[0]; m++)
		for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
			assert_bad(c, methods[m], bad[i].field, bad[i].params);
	assert_bad(c, "cancel", "signal", "{\"id\":1,\"signal\":\"NOPE\"}");
	assert_bad(c, "cancel", "signal", "{\"id\":1,\"signal\":9}");
	assert_bad(c, "wait", "id", "{}");
	assert_bad(c, "wait", "ids", "{\"id\":1,\"ids\":[1]}");
	assert_bad(c, "wait", "ids", "{\"ids\":[]}");
	assert_bad(c, "wait", "ids", "{\"ids\":[0]}");
	assert_bad(c, "wait", "ids", "{\"ids\":[\"1\"]}");
	assert_bad(c, "wait", "ids", "{\"ids\":1}");
	assert_bad(c, "list", "labels", "{\"labels\":{\"a\":1}}");
	assert_bad(c, "list", "labels", "{\"labels\":\"a\"}");
	assert_bad(c, "list", "held", "{\"held\":1}");
	assert_bad(c, "list", "name", "{\"name\":1}");
	/* Unknown jobs. */
	assert_int_equal(tcall_error(c, "wait", &e, "{s[II]}", "ids",
	    ended(c, "true", "t"), (json_int_t)999999), -32001);
	assert_string_equal(e.field, "ids");
	assert_int_equal(tcall_error(c, "cancel", &e, "{sI}", "id",
	    (json_int_t)999999), -32001);
	assert_int_equal(tcall_error(c, "retry", &e, "{sI}", "id",
	    (json_int_t)999999), -32001);
	assert_int_equal(tcall_error(c, "remove", &e, "{sI}", "id",
	    (json_int_t)999999), -32001);
	tdaemon_end(d, c);
}

static void
test_cancel_by_filter_selects_by_each_key(void **state)
{
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d);
	int64_t a1, b1, a2, t1, r1, q1, q2, q3;
	json_t *job;

	(void)state;
	a1 = parked(c, "alpha");
	b1 = parked(c, "beta");
	t1 = ended(c, "true", "alpha");
	r1 = tsubmit_gated_with(c, d, "r1", "{ss}", "name", "alpha");
	a2 = tsubmit(c, "{s[ss] ss ss}", "argv", "sleep", "60", "priority",
	    "normal", "name", "alpha");
	trunning_pid(c, r1);
	/* name and priority: both must match. */
	assert_ids(tcall(c, "cancel", "{s{ss ss}}", "filter", "name", "alpha",
	    "priority", "parked"), "ids", 1, a1);
	tassert_state(c, a1, "canceled");
	tassert_state(c, b1, "queued");
	/* ids: a job that ended is passed by, an unknown id is no error. */
	assert_ids(tcall(c, "cancel", "{s{s[III]}}", "filter", "ids", b1, t1,
	    (json_int_t)999999), "ids", 1, b1);
	tassert_state(c, t1, "succeeded");
	/* state: the running one only. */
	json_decref(tcall(c, "cancel", "{sI}", "id", a2));
	json_decref(twait(c, a2));
	assert_ids(tcall(c, "cancel", "{s{s[s]}}", "filter", "state",
	    "running"), "ids", 1, r1);
	job = twait(c, r1);
	assert_string_equal(tstate(job), "canceled");
	json_decref(job);
	/* Ascending, and on disk: the jobs show it at once. */
	q1 = parked(c, "q");
	q2 = parked(c, "q");
	q3 = parked(c, "q");
	assert_ids(tcall(c, "cancel", "{s{}}", "filter"), "ids", 3, q1, q2,
	    q3);
	tassert_state(c, q1, "canceled");
	tassert_state(c, q3, "canceled");
	/* Nothing left to cancel: an empty list, not an error. */
	assert_ids(tcall(c, "cancel", "{s{}}", "filter"), "ids", 0);
	tdaemon_end(d, c);
}

/* Waits until job id's stdout holds text, pacing with short waits. */
static void
wait_output(struct triage_client *c, int64_t id, const char *text)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *out;
	bool found;

	for (;;) {
		out = tcall(c, "output", "{sI ss}", "id", id, "stream",
		    "stdout");
		found = strstr(tjstr(out, "data"), text) != NULL;
		json_decref(out);
		if (found)
			return;
		tcheck_deadline(deadline, "\"%s\" from job %lld", text,
		    (long long)id);
		json_decref(tcall(c, "wait", "{sI sf}", "id", id, "timeout",
		    0.02));
	}
}

/* A job that says when it is ready for a signal, and which one it got. */
static int64_t
trapper(struct triage_client *c)
{
	return tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "trap 'echo got INT; exit 7' INT; trap 'echo got TERM; exit 8' "
	    "TERM; echo ready; while :; do sleep 0.05; done");
}

static void
test_cancel_sends_the_signal_named(void **state)
{
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d);
	json_t *job, *out;
	int64_t id;
	size_t i;
	static const char *const forms[] = { "id", "filter" };

	(void)state;
	for (i = 0; i < 2; i++) {
		id = trapper(c);
		wait_output(c, id, "ready");
		if (i == 0)
			json_decref(tcall(c, "cancel", "{sI ss}", "id", id,
			    "signal", "INT"));
		else
			assert_ids(tcall(c, "cancel", "{s{s[I]} ss}",
			    "filter", "ids", id, "signal", "SIGINT"), "ids",
			    1, id);
		job = twait(c, id);
		assert_string_equal(tstate(job), "canceled");
		json_decref(job);
		out = tcall(c, "output", "{sI ss}", "id", id, "stream",
		    "stdout");
		if (strstr(tjstr(out, "data"), "got INT") == NULL)
			fail_msg("cancel by %s: the job did not get SIGINT: %s",
			    forms[i], tjstr(out, "data"));
		json_decref(out);
	}
	/* SIGTERM when none is named. */
	id = trapper(c);
	wait_output(c, id, "ready");
	json_decref(tcall(c, "cancel", "{sI}", "id", id));
	json_decref(twait(c, id));
	wait_output(c, id, "got TERM");
	tdaemon_end(d, c);
}

static void
test_retry_by_filter_skips_what_cannot_be_retried(void **state)
{
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t f1, f2, s1, q1;
	json_t *job;

	(void)state;
	f1 = ended(c, "false", "f");
	f2 = ended(c, "false", "f");
	s1 = ended(c, "true", "s");
	q1 = parked(c, "q");
	assert_ids(tcall(c, "retry", "{s{s[sss]}}", "filter", "state",
	    "failed", "succeeded", "queued"), "ids", 2, f1, f2);
	job = twait(c, f1);
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	job = twait(c, f2);
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	assert_int_equal(tcall_error(c, "retry", &e, "{sI}", "id", s1),
	    -32005);
	assert_string_equal(e.field, "id");
	assert_int_equal(tcall_error(c, "retry", &e, "{sI}", "id", q1),
	    -32005);
	assert_ids(tcall(c, "retry", "{s{s[II]}}", "filter", "ids", s1, q1),
	    "ids", 0);
	/* The id form answers with the job, as in v1. */
	job = tcall(c, "retry", "{sI}", "id", f1);
	assert_int_equal(tjint(job, "id"), f1);
	assert_int_equal(tjint(job, "attempt"), 3);
	json_decref(job);
	json_decref(twait(c, f1));
	tdaemon_end(d, c);
}

static bool
output_file_exists(const struct tdaemon *d, int64_t id)
{
	char path[600];

	snprintf(path, sizeof path, "%s/output/%lld.stdout", d->state,
	    (long long)id);
	return access(path, F_OK) == 0;
}

static void
test_remove_deletes_ended_jobs_and_output_for_good(void **state)
{
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t t1, t2, t3, q1, next;
	json_t *list;

	(void)state;
	/* pwd writes, for a capture file to be there (a job that writes
	 * nothing has none) */
	t1 = ended(c, "pwd", "t");
	t2 = ended(c, "false", "t");
	t3 = ended(c, "pwd", "u");
	q1 = parked(c, "q");
	assert_true(output_file_exists(d, t1));
	assert_true(output_file_exists(d, t3));
	assert_ids(tcall(c, "remove", "{sI}", "id", t1), "ids", 1, t1);
	assert_gone(c, t1);
	assert_false(output_file_exists(d, t1));
	assert_int_equal(tcall_error(c, "remove", &e, "{sI}", "id", q1),
	    -32005);
	assert_string_equal(e.field, "id");
	assert_int_equal(tcall_error(c, "remove", &e, "{sI}", "id", t1),
	    -32001);
	/* The queued job is passed by. */
	assert_ids(tcall(c, "remove", "{s{}}", "filter"), "ids", 2, t2, t3);
	assert_false(output_file_exists(d, t3));
	tassert_state(c, q1, "queued");
	/* Durable: a restart does not bring them back, nor their ids. */
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	assert_gone(c, t1);
	assert_gone(c, t2);
	assert_gone(c, t3);
	list = tcall(c, "list", "{}");
	assert_ids(list, "jobs", 1, q1);
	next = tsubmit(c, "{s[s]}", "argv", "true");
	assert_true(next > q1);
	json_decref(twait(c, next));
	tdaemon_end(d, c);
}

/*
 * A job canceled and removed in one batch: its waits and watches hear its
 * end before it goes, and a wait on several jobs keeps its answer.
 */
static void
test_remove_leaves_no_wait_or_watch_behind(void **state)
{
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d), *waiter = tconnect(d);
	struct triage_client *watcher = tconnect(d);
	struct triage_error e;
	int64_t q, g, one, many, got;
	static const char fmt[] = "[{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"cancel\",\"params\":{\"id\":%lld}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"remove\","
	    "\"params\":{\"id\":%lld}}]\n";
	char line[256];
	json_t *msg, *res, *n;

	(void)state;
	q = parked(c, "q");
	g = tsubmit_gated(c, d, "g", false);
	json_decref(tcall(watcher, "watch", "{s[I]}", "ids", q));
	one = triage_client_send(waiter, "wait", json_pack("{sI}", "id", q),
	    &e);
	many = triage_client_send(waiter, "wait", json_pack("{s[II]}", "ids", q,
	    g), &e);
	assert_true(one > 0 && many > 0);
	/* Requests of a connection are taken in order: both are parked. */
	json_decref(tcall(waiter, "stats", "{}"));
	snprintf(line, sizeof line, fmt, (long long)q, (long long)q);
	assert_int_equal(client_send_raw(c, line, strlen(line)), 0);
	msg = client_read_message(c, HARNESS_TIMEOUT_MS, &e);
	assert_non_null(msg);
	assert_int_equal(json_array_size(msg), 2);
	assert_ids(json_incref(json_object_get(json_array_get(msg, 1),
	    "result")), "ids", 1, q);
	json_decref(msg);
	assert_gone(c, q);
	res = triage_client_recv(waiter, &got, HARNESS_TIMEOUT_MS, &e);
	assert_non_null(res);
	assert_int_equal(got, one);
	assert_string_equal(tstate(res), "canceled");
	json_decref(res);
	n = tnotification(watcher);
	assert_int_equal(tjint(n, "id"), q);
	assert_string_equal(tstate(n), "canceled");
	json_decref(n);
	topen_gate(d, "g");
	res = triage_client_recv(waiter, &got, HARNESS_TIMEOUT_MS, &e);
	assert_non_null(res);
	assert_int_equal(got, many);
	assert_string_equal(nth_state(res, 0), "canceled");
	assert_string_equal(nth_state(res, 1), "succeeded");
	assert_ids(res, "jobs", 2, q, g);
	triage_client_free(waiter);
	triage_client_free(watcher);
	tdaemon_end(d, c);
}

static void
test_wait_on_ids_answers_when_all_have_ended(void **state)
{
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t a, b, sent, got;
	json_t *res;

	(void)state;
	a = ended(c, "true", "a");
	b = tsubmit_gated(c, d, "b", false);
	trunning_pid(c, b);
	/* At the timeout: each as it is, in the order asked, repeats too. */
	res = tcall(c, "wait", "{s[III] sf}", "ids", b, a, b, "timeout", 0.05);
	assert_string_equal(nth_state(res, 0), "running");
	assert_string_equal(nth_state(res, 1), "succeeded");
	assert_ids(res, "jobs", 3, b, a, b);
	/* timeout 0: at once. */
	assert_ids(tcall(c, "wait", "{s[I] sf}", "ids", b, "timeout", 0.0),
	    "jobs", 1, b);
	sent = triage_client_send(c, "wait", json_pack("{s[II]}", "ids", a, b),
	    &e);
	assert_true(sent > 0);
	topen_gate(d, "b");
	res = triage_client_recv(c, &got, HARNESS_TIMEOUT_MS, &e);
	assert_non_null(res);
	assert_int_equal(got, sent);
	assert_string_equal(nth_state(res, 1), "succeeded");
	assert_ids(res, "jobs", 2, a, b);
	/* All ended already: at once. */
	assert_ids(tcall(c, "wait", "{s[II]}", "ids", b, a), "jobs", 2, b, a);
	tdaemon_end(d, c);
}

static void
test_list_by_name_and_held(void **state)
{
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d);
	int64_t one, two;

	(void)state;
	one = parked(c, "one");
	two = parked(c, "two");
	assert_ids(tcall(c, "list", "{ss}", "name", "one"), "jobs", 1, one);
	assert_ids(tcall(c, "list", "{sb ss}", "held", 0, "name", "two"),
	    "jobs", 1, two);
	assert_ids(tcall(c, "list", "{sb}", "held", 1), "jobs", 0);
	assert_ids(tcall(c, "list", "{ss ss}", "name", "on", "priority",
	    "parked"), "jobs", 0);
	json_decref(tcall(c, "hold", "{sI}", "id", two));
	assert_ids(tcall(c, "list", "{sb}", "held", 1), "jobs", 1, two);
	assert_ids(tcall(c, "list", "{sb}", "held", 0), "jobs", 1, one);
	tdaemon_end(d, c);
}

static int64_t
labelled(struct triage_client *c, json_t *labels)
{
	return tsubmit(c, "{s[ss] ss so}", "argv", "sleep", "60", "priority",
	    "parked", "labels", labels);
}

/* Every pair of a filter's labels must be among the job's. */
static void
test_filters_by_labels(void **state)
{
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d);
	int64_t j1, j2, j3, j4;

	(void)state;
	j1 = labelled(c, json_pack("{ss ss}", "team", "a", "env", "prod"));
	j2 = labelled(c, json_pack("{ss}", "team", "a"));
	j3 = labelled(c, json_pack("{ss}", "team", "b"));
	j4 = parked(c, "none");
	assert_ids(tcall(c, "list", "{s{ss}}", "labels", "team", "a"), "jobs",
	    2, j1, j2);
	assert_ids(tcall(c, "list", "{s{ss ss}}", "labels", "env", "prod",
	    "team", "a"), "jobs", 1, j1);
	assert_ids(tcall(c, "list", "{s{}}", "labels"), "jobs", 4, j1, j2, j3,
	    j4);
	assert_ids(tcall(c, "cancel", "{s{s{ss}}}", "filter", "labels", "team",
	    "c"), "ids", 0);
	assert_ids(tcall(c, "cancel", "{s{s{ss}}}", "filter", "labels", "team",
	    "a"), "ids", 2, j1, j2);
	tassert_state(c, j3, "queued");
	assert_ids(tcall(c, "retry", "{s{s{ss}}}", "filter", "labels", "env",
	    "prod"), "ids", 1, j1);
	json_decref(tcall(c, "cancel", "{sI}", "id", j1));
	assert_ids(tcall(c, "remove", "{s{s{ss} ss}}", "filter", "labels",
	    "team", "a", "priority", "parked"), "ids", 2, j1, j2);
	assert_gone(c, j1);
	tassert_state(c, j3, "queued");
	tdaemon_end(d, c);
}

/* hold and release by filter: what makes no sense (released, held, ended)
 * is skipped; both id and filter, or neither, are refused. */
static void
test_hold_and_release_by_filter(void **state)
{
	struct tdaemon *d = start();
	struct triage_client *c = tconnect(d);
	int64_t j1, j2, j3, done;

	(void)state;
	j1 = labelled(c, json_pack("{ss}", "batch", "x"));
	j2 = labelled(c, json_pack("{ss}", "batch", "x"));
	j3 = labelled(c, json_pack("{ss}", "batch", "y"));
	done = tsubmit(c, "{s[s]s{ss}}", "argv", "true", "labels", "batch",
	    "x");
	json_decref(twait(c, done));
	json_decref(tcall(c, "hold", "{sI}", "id", j2));
	assert_ids(tcall(c, "hold", "{s{s{ss}}}", "filter", "labels", "batch",
	    "x"), "ids", 1, j1);
	assert_ids(tcall(c, "list", "{sb}", "held", 1), "jobs", 2, j1, j2);
	assert_ids(tcall(c, "release", "{s{s[III]}}", "filter", "ids", j1, j3,
	    done), "ids", 1, j1);
	assert_ids(tcall(c, "release", "{s{}}", "filter"), "ids", 1, j2);
	assert_ids(tcall(c, "list", "{sb}", "held", 1), "jobs", 0);
	assert_bad(c, "hold", "id", "{}");
	assert_bad(c, "release", "filter", "{\"id\": 1, \"filter\": {}}");
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_params_name_the_field),
		cmocka_unit_test(test_cancel_by_filter_selects_by_each_key),
		cmocka_unit_test(test_cancel_sends_the_signal_named),
		cmocka_unit_test(
		    test_retry_by_filter_skips_what_cannot_be_retried),
		cmocka_unit_test(
		    test_remove_deletes_ended_jobs_and_output_for_good),
		cmocka_unit_test(test_remove_leaves_no_wait_or_watch_behind),
		cmocka_unit_test(test_wait_on_ids_answers_when_all_have_ended),
		cmocka_unit_test(test_list_by_name_and_held),
		cmocka_unit_test(test_filters_by_labels),
		cmocka_unit_test(test_hold_and_release_by_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
