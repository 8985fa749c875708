/* test-queue.c - operating a queue over the wire (protocol v1.1): hold and
 * release in place, update, labels, begin_at, after_any, pending_reason. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "proc.h"
#include "timefmt.h"

/* One slot, so that a gated job blocks the rest behind it. */
#define ONE_SLOT "slots = 1\n[priority.high]\nrank = 0\n" \
	"[priority.normal]\nrank = 10\n[priority.low]\nrank = 20\n"

/* A job's position, -1 for null. */
static json_int_t
position(struct triage_client *c, int64_t id)
{
	json_t *job = tget(c, id);
	json_t *p = json_object_get(job, "position");
	json_int_t v = json_is_null(p) ? -1 : json_integer_value(p);

	json_decref(job);
	return v;
}

/* A job's pending_reason, "null" for null, in a static buffer. */
static const char *
pending(struct triage_client *c, int64_t id)
{
	static char buf[32];
	json_t *job = tget(c, id);
	json_t *r = json_object_get(job, "pending_reason");

	snprintf(buf, sizeof buf, "%s", json_is_null(r) ? "null" :
	    json_string_value(r));
	json_decref(job);
	return buf;
}

/* stats' held count of priority name, or of every job for NULL. */
static json_int_t
stats_held(struct triage_client *c, const char *name)
{
	json_t *st = tcall(c, "stats", "{}"), *p;
	json_int_t n = -1;
	size_t i;

	if (name == NULL)
		n = tjint(json_object_get(st, "jobs"), "held");
	json_array_foreach(json_object_get(st, "priorities"), i, p)
		if (name != NULL && strcmp(tjstr(p, "name"), name) == 0)
			n = tjint(p, "held");
	json_decref(st);
	return n;
}

static int64_t
submit_true(struct triage_client *c, const char *prio)
{
	return tsubmit(c, "{s[s]ss}", "argv", "true", "priority", prio);
}

/*
 * A held job keeps its place: the others' positions skip it, and release
 * puts it back where it was. Held counts in stats as queued and held.
 * Holding what is held, running or finished changes nothing.
 */
static void
test_hold_keeps_its_place(void **state)
{
	struct tdaemon *d = tdaemon_start(ONE_SLOT);
	struct triage_client *c = tconnect(d);
	int64_t gate, b, cc, dd;
	json_t *job, *st;

	(void)state;
	gate = tsubmit_gated(c, d, "go", false);
	(void)trunning_pid(c, gate);
	b = submit_true(c, "normal");
	cc = submit_true(c, "normal");
	dd = submit_true(c, "normal");
	assert_int_equal(position(c, cc), 1);

	job = tcall(c, "hold", "{sI}", "id", cc);
	assert_true(json_is_true(json_object_get(job, "held")));
	assert_true(json_is_null(json_object_get(job, "position")));
	assert_string_equal(tjstr(job, "pending_reason"), "held");
	assert_string_equal(tstate(job), "queued");
	json_decref(job);
	assert_int_equal(position(c, dd), 1);
	assert_int_equal(stats_held(c, "normal"), 1);
	assert_int_equal(stats_held(c, NULL), 1);
	st = tcall(c, "stats", "{}");
	assert_int_equal(tjint(json_object_get(st, "jobs"), "queued"), 3);
	json_decref(st);
	/* Again: nothing changes. */
	job = tcall(c, "hold", "{sI}", "id", cc);
	assert_true(json_is_true(json_object_get(job, "held")));
	json_decref(job);
	assert_int_equal(stats_held(c, "normal"), 1);

	job = tcall(c, "release", "{sI}", "id", cc);
	assert_false(json_is_true(json_object_get(job, "held")));
	assert_int_equal(tjint(job, "position"), 1);
	json_decref(job);
	assert_int_equal(position(c, dd), 2);
	assert_int_equal(stats_held(c, NULL), 0);
	/* The head too. */
	json_decref(tcall(c, "hold", "{sI}", "id", b));
	assert_int_equal(position(c, cc), 0);
	json_decref(tcall(c, "release", "{sI}", "id", b));
	assert_int_equal(position(c, b), 0);
	/* Releasing what is not held, holding what runs: as they are. */
	job = tcall(c, "release", "{sI}", "id", dd);
	assert_int_equal(tjint(job, "position"), 2);
	json_decref(job);
	job = tcall(c, "hold", "{sI}", "id", gate);
	assert_false(json_is_true(json_object_get(job, "held")));
	assert_string_equal(tstate(job), "running");
	json_decref(job);

	/* A held job never runs while held; released, it does. */
	json_decref(tcall(c, "hold", "{sI}", "id", dd));
	topen_gate(d, "go");
	tassert_ends(c, b, "succeeded");
	tassert_ends(c, cc, "succeeded");
	assert_string_equal(pending(c, dd), "held");
	json_decref(tcall(c, "release", "{sI}", "id", dd));
	tassert_ends(c, dd, "succeeded");
	job = tcall(c, "hold", "{sI}", "id", dd);
	assert_false(json_is_true(json_object_get(job, "held")));
	json_decref(job);
	tdaemon_end(d, c);
}

/* submit's hold, and a held job across a restart: still held, in place. */
static void
test_held_at_submit_and_across_restart(void **state)
{
	struct tdaemon *d = tdaemon_start(ONE_SLOT);
	struct triage_client *c = tconnect(d);
	int64_t gate, a, b;
	json_t *job;

	(void)state;
	gate = tsubmit_gated(c, d, "go", false);
	(void)trunning_pid(c, gate);
	a = tsubmit(c, "{s[s]sb}", "argv", "true", "hold", 1);
	b = submit_true(c, "normal");
	assert_true(theld(c, a));
	assert_int_equal(position(c, b), 0);
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	job = tget(c, a);
	assert_true(json_is_true(json_object_get(job, "held")));
	assert_string_equal(tjstr(job, "pending_reason"), "held");
	json_decref(job);
	assert_int_equal(stats_held(c, NULL), 1);
	/* The gate job came back first (shutdown = requeue): b behind it. */
	json_decref(tcall(c, "release", "{sI}", "id", a));
	assert_true(position(c, a) < position(c, b));
	topen_gate(d, "go");
	tassert_ends(c, a, "succeeded");
	tassert_ends(c, b, "succeeded");
	tdaemon_end(d, c);
}

/* Each pending_reason, in the order protocol.md gives them. */
static void
test_pending_reasons(void **state)
{
	struct tdaemon *d = tdaemon_start(ONE_SLOT);
	struct triage_client *c = tconnect(d);
	int64_t gate, capgate, queue, head, after, later, paused, capped;
	char when[TIMEFMT_RFC3339_LEN];

	(void)state;
	gate = tsubmit_gated(c, d, "go", false);
	(void)trunning_pid(c, gate);
	head = submit_true(c, "normal");
	queue = submit_true(c, "normal");
	after = tsubmit(c, "{s[s]s[I]}", "argv", "true", "after", gate);
	later = tsubmit(c, "{s[s]ss}", "argv", "true", "begin_at",
	    timefmt_rfc3339(timefmt_now() + 3600 * 1000, when));
	json_decref(tcall(c, "pause", "{ss}", "priority", "low"));
	paused = submit_true(c, "low");
	assert_string_equal(pending(c, head), "slots");
	assert_string_equal(pending(c, queue), "queue");
	assert_string_equal(pending(c, after), "after");
	assert_string_equal(pending(c, later), "begin_at");
	assert_string_equal(pending(c, paused), "paused");
	assert_int_equal(position(c, after), -1);
	assert_int_equal(position(c, later), -1);
	/* held comes before everything. */
	json_decref(tcall(c, "hold", "{sI}", "id", later));
	assert_string_equal(pending(c, later), "held");
	json_decref(tcall(c, "cancel", "{sI}", "id", later));
	json_decref(tcall(c, "resume", "{ss}", "priority", "low"));
	topen_gate(d, "go");
	tassert_ends(c, head, "succeeded");
	tassert_ends(c, paused, "succeeded");
	assert_string_equal(pending(c, head), "null");
	tdaemon_end(d, c);

	/* max_running: a slot is free, but the capped priority's one job
	 * runs already. */
	d = tdaemon_start("slots = 2\n[priority.capped]\nrank = 0\n"
	    "max_running = 1\n");
	c = tconnect(d);
	capgate = tsubmit_gated(c, d, "cap", false);
	(void)trunning_pid(c, capgate);
	capped = tsubmit(c, "{s[s]}", "argv", "true");
	assert_string_equal(pending(c, capped), "max_running");
	topen_gate(d, "cap");
	tassert_ends(c, capped, "succeeded");
	tdaemon_end(d, c);
}

/* A job that has its slots and has not started: queued, position 0,
 * waiting for nothing, on the node that holds its slots. */
static void
assert_starting(const json_t *job, const char *node)
{
	json_t *pos = json_object_get(job, "position");

	assert_string_equal(tstate(job), "queued");
	if (!json_is_integer(pos) || json_integer_value(pos) != 0)
		fail_msg("job %lld starting, at position %s",
		    (long long)tjint(job, "id"), json_is_null(pos) ? "null" :
		    "not 0");
	if (!json_is_null(json_object_get(job, "pending_reason")))
		fail_msg("job %lld starting, pending for %s",
		    (long long)tjint(job, "id"), tjstr(job, "pending_reason"));
	assert_string_equal(tjstr(job, "node"), node);
}

/* The job of id in a list result. */
static const json_t *
listed(const json_t *result, int64_t id)
{
	const json_t *job;
	size_t i;

	json_array_foreach(json_object_get(result, "jobs"), i, job)
		if (tjint(job, "id") == id)
			return job;
	fail_msg("job %lld not listed", (long long)id);
	return NULL;
}

/*
 * Granted, not started (issue 22): a job whose slots the semaphore gave
 * and whose process has not started is queued at position 0 with no
 * pending_reason, in every answer, and the others' positions do not count
 * it. The submit reply on an idle daemon is in that window; a job handed to
 * a stopped worker stays in it until the worker goes on.
 */
static void
test_granted_job_is_starting(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 2\n");
	struct triage_client *c = tconnect(d), *w = tconnect(d);
	json_t *st, *job, *x, *y, *list;
	pid_t workers[64];
	char node[256];
	int64_t a, z;
	int n, i;

	(void)state;
	st = tcall(c, "stats", "{}");
	snprintf(node, sizeof node, "%s", tjstr(st, "node"));
	json_decref(st);
	job = tcall(c, "submit", "{s[s]}", "argv", "true");
	assert_starting(job, node);
	a = tjint(job, "id");
	json_decref(job);
	job = tcall(c, "submit", "{s[s]}", "argv", "true");
	if (strcmp(tstate(job), "queued") == 0)
		assert_starting(job, node);
	tassert_ends(c, tjint(job, "id"), "succeeded");
	json_decref(job);
	tassert_ends(c, a, "succeeded");

	/* The workers stopped, the jobs given them wait there. */
	n = proc_find(d->pid, 0, PROC_LIVE, workers, 64);
	assert_true(n >= 2 && n <= 64);
	for (i = 0; i < n; i++)
		tstop(workers[i]);
	json_decref(tcall(w, "watch", "{}"));
	x = tcall(c, "submit", "{s[s]}", "argv", "true");
	assert_starting(x, node);
	y = tcall(c, "submit", "{s[s]}", "argv", "true");
	assert_starting(y, node);
	z = tsubmit(c, "{s[s]}", "argv", "true");
	job = tget(c, tjint(x, "id"));
	assert_starting(job, node);
	json_decref(job);
	list = tcall(c, "list", "{s[s]}", "state", "queued");
	assert_starting(listed(list, tjint(x, "id")), node);
	assert_starting(listed(list, tjint(y, "id")), node);
	assert_int_equal(tjint(listed(list, z), "position"), 0);
	assert_string_equal(tjstr(listed(list, z), "pending_reason"), "slots");
	json_decref(list);
	job = tnotification(w);
	assert_int_equal(tjint(job, "id"), tjint(x, "id"));
	assert_starting(job, node);
	json_decref(job);

	for (i = 0; i < n; i++)
		assert_int_equal(kill(workers[i], SIGCONT), 0);
	tassert_ends(c, tjint(x, "id"), "succeeded");
	tassert_ends(c, tjint(y, "id"), "succeeded");
	tassert_ends(c, z, "succeeded");
	json_decref(x);
	json_decref(y);
	triage_client_free(w);
	tdaemon_end(d, c);
}

/* begin_at: not before it, in begin order, given in any offset and told
 * in UTC; an impossible time is refused. */
static void
test_begin_at(void **state)
{
	struct tdaemon *d = tdaemon_start(NULL);
	struct triage_client *c = tconnect(d);
	char t1[TIMEFMT_RFC3339_LEN], t2[TIMEFMT_RFC3339_LEN];
	struct triage_error e;
	int64_t now = timefmt_now(), a, b, begin_a, begin_b, sa, sb;
	json_t *ja, *jb;

	(void)state;
	/* b's time is earlier than a's: b goes first. */
	a = tsubmit(c, "{s[s]ss}", "argv", "true", "begin_at",
	    timefmt_rfc3339(now + 1500, t1));
	b = tsubmit(c, "{s[s]ss}", "argv", "true", "begin_at",
	    timefmt_rfc3339(now + 700, t2));
	ja = twait(c, a);
	jb = twait(c, b);
	assert_string_equal(tstate(ja), "succeeded");
	assert_string_equal(tstate(jb), "succeeded");
	assert_string_equal(tjstr(ja, "begin_at"), t1);
	assert_int_equal(timefmt_parse(tjstr(ja, "begin_at"), &begin_a), 0);
	assert_int_equal(timefmt_parse(tjstr(jb, "begin_at"), &begin_b), 0);
	assert_int_equal(timefmt_parse(tjstr(ja, "started_at"), &sa), 0);
	assert_int_equal(timefmt_parse(tjstr(jb, "started_at"), &sb), 0);
	assert_true(sa >= begin_a);
	assert_true(sb >= begin_b);
	assert_true(sb <= sa);
	json_decref(ja);
	json_decref(jb);

	/* An offset is taken, and the time told in UTC. */
	ja = tcall(c, "submit", "{s[s]ss}", "argv", "true", "begin_at",
	    "2030-01-01T01:00:00+01:00");
	assert_string_equal(tjstr(ja, "begin_at"), "2030-01-01T00:00:00.000Z");
	assert_string_equal(tjstr(ja, "pending_reason"), "begin_at");
	json_decref(tcall(c, "cancel", "{sI}", "id", tjint(ja, "id")));
	json_decref(ja);
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]ss}", "argv",
	    "true", "begin_at", "2027-02-29T00:00:00Z"), -32602);
	assert_string_equal(e.field, "begin_at");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]ss}", "argv",
	    "true", "begin_at", "2027-01-01T00:00:00"), -32602);
	assert_string_equal(e.field, "begin_at");
	tdaemon_end(d, c);
}

/* A job waiting for its begin_at waits for it across a restart. */
static void
test_begin_at_survives_restart(void **state)
{
	struct tdaemon *d = tdaemon_start(NULL);
	struct triage_client *c = tconnect(d);
	char when[TIMEFMT_RFC3339_LEN];
	int64_t id, begin = timefmt_now() + 2000, started;
	json_t *job;

	(void)state;
	id = tsubmit(c, "{s[s]ss}", "argv", "true", "begin_at",
	    timefmt_rfc3339(begin, when));
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(timefmt_parse(tjstr(job, "started_at"), &started),
	    0);
	assert_true(started >= begin);
	json_decref(job);
	tdaemon_end(d, c);
}

/* after_any: goes once its jobs have ended, however they ended; after
 * cancels on a failure; unknown ids are refused. */
static void
test_after_any(void **state)
{
	struct tdaemon *d = tdaemon_start(NULL);
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t gate, fails, any, strict;
	json_t *job;

	(void)state;
	gate = tsubmit_gated(c, d, "go", false);
	fails = tsubmit(c, "{s[s]}", "argv", "false");
	any = tsubmit(c, "{s[s]s[II]}", "argv", "true", "after_any", fails,
	    gate);
	strict = tsubmit(c, "{s[s]s[I]}", "argv", "true", "after", fails);
	job = twait(c, fails);
	assert_string_equal(tstate(job), "failed");
	json_decref(job);
	job = twait(c, strict);
	assert_string_equal(tstate(job), "canceled");
	json_decref(job);
	assert_string_equal(pending(c, any), "after");
	job = tget(c, any);
	assert_int_equal(json_array_size(json_object_get(job, "after_any")),
	    2);
	json_decref(job);
	topen_gate(d, "go");
	tassert_ends(c, any, "succeeded");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s[i]}", "argv",
	    "true", "after_any", 999999), -32602);
	assert_string_equal(e.field, "after_any");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s[s]}", "argv",
	    "true", "after_any", "x"), -32602);
	assert_string_equal(e.field, "after_any");
	tdaemon_end(d, c);
}

/* labels: kept and told back, {} by default; each bound refused. */
static void
test_labels(void **state)
{
	struct tdaemon *d = tdaemon_start("max_labels = 2\n"
	    "max_label_value = 8\n");
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	json_t *job, *labels;
	char key[80];

	(void)state;
	job = tcall(c, "submit", "{s[s]s{ssss}}", "argv", "true", "labels",
	    "team", "infra", "ci.run-id_2", "");
	labels = json_object_get(job, "labels");
	assert_int_equal(json_object_size(labels), 2);
	assert_string_equal(tjstr(labels, "team"), "infra");
	assert_string_equal(tjstr(labels, "ci.run-id_2"), "");
	json_decref(job);
	job = tcall(c, "submit", "{s[s]}", "argv", "true");
	assert_true(json_is_object(json_object_get(job, "labels")));
	assert_int_equal(json_object_size(json_object_get(job, "labels")), 0);
	json_decref(job);

	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s{ssssss}}",
	    "argv", "true", "labels", "a", "1", "b", "2", "c", "3"), -32602);
	assert_string_equal(e.field, "labels");
	assert_string_equal(e.message, "\"labels\" has 3 labels; the limit "
	    "is 2 (max_labels)");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s{ss}}", "argv",
	    "true", "labels", "a", "123456789"), -32602);
	assert_string_equal(e.message, "label \"a\" has 9 bytes; the limit "
	    "is 8 (max_label_value)");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s{ss}}", "argv",
	    "true", "labels", "a b", "1"), -32602);
	assert_string_equal(e.field, "labels");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s{si}}", "argv",
	    "true", "labels", "a", 1), -32602);
	assert_string_equal(e.field, "labels");
	memset(key, 'k', 65);
	key[65] = '\0';
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s{ss}}", "argv",
	    "true", "labels", key, "1"), -32602);
	key[64] = '\0';
	json_decref(tcall(c, "submit", "{s[s]s{ss}}", "argv", "true",
	    "labels", key, "1"));
	tdaemon_end(d, c);
}

/*
 * update: what it changes is told back and kept across a restart; a new
 * priority puts the job at that queue's tail; a new begin_at takes it out
 * until then, null brings it back; only a queued job can be updated.
 */
static void
test_update(void **state)
{
	struct tdaemon *d = tdaemon_start(ONE_SLOT);
	struct triage_client *c = tconnect(d);
	char when[TIMEFMT_RFC3339_LEN];
	struct triage_error e;
	int64_t gate, a, b, x;
	json_t *job;

	(void)state;
	gate = tsubmit_gated(c, d, "go", false);
	(void)trunning_pid(c, gate);
	a = submit_true(c, "normal");
	b = submit_true(c, "low");
	x = submit_true(c, "low");
	job = tcall(c, "update", "{sI ss sf si s{ss}}", "id", x, "name",
	    "renamed", "timeout", 90.5, "retries", 3, "labels", "k", "v");
	assert_string_equal(tjstr(job, "name"), "renamed");
	assert_true(json_real_value(json_object_get(job, "timeout")) == 90.5);
	assert_int_equal(tjint(job, "retries"), 3);
	assert_string_equal(tjstr(json_object_get(job, "labels"), "k"), "v");
	/* Its place is its own still. */
	assert_int_equal(tjint(job, "position"), 2);
	json_decref(job);

	/* To normal: behind a, the tail there. */
	job = tcall(c, "update", "{sI ss}", "id", b, "priority", "normal");
	assert_string_equal(tjstr(job, "priority"), "normal");
	assert_int_equal(tjint(job, "position"), 1);
	json_decref(job);
	assert_int_equal(position(c, x), 2);

	job = tcall(c, "update", "{sI ss}", "id", a, "begin_at",
	    timefmt_rfc3339(timefmt_now() + 3600 * 1000, when));
	assert_string_equal(tjstr(job, "pending_reason"), "begin_at");
	assert_true(json_is_null(json_object_get(job, "position")));
	json_decref(job);
	job = tcall(c, "update", "{sI sn}", "id", a, "begin_at");
	assert_true(json_is_null(json_object_get(job, "begin_at")));
	assert_int_equal(tjint(job, "position"), 0);
	json_decref(job);
	/* labels {} clears them. */
	json_decref(tcall(c, "update", "{sI s{}}", "id", x, "labels"));

	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	job = tget(c, x);
	assert_string_equal(tjstr(job, "name"), "renamed");
	assert_int_equal(tjint(job, "retries"), 3);
	assert_int_equal(json_object_size(json_object_get(job, "labels")), 0);
	json_decref(job);
	job = tget(c, b);
	assert_string_equal(tjstr(job, "priority"), "normal");
	json_decref(job);

	/* Errors. */
	assert_int_equal(tcall_error(c, "update", &e, "{sI ss}", "id", gate,
	    "name", "n"), -32005);
	assert_int_equal(tcall_error(c, "update", &e, "{si ss}", "id", 999999,
	    "name", "n"), -32001);
	assert_int_equal(tcall_error(c, "update", &e, "{sI ss}", "id", x,
	    "priority", "nope"), -32602);
	assert_string_equal(e.field, "priority");
	assert_int_equal(tcall_error(c, "update", &e, "{sI ss}", "id", x,
	    "begin_at", "tomorrow"), -32602);
	assert_string_equal(e.field, "begin_at");
	assert_int_equal(tcall_error(c, "update", &e, "{sI si}", "id", x,
	    "retries", -1), -32602);
	assert_string_equal(e.field, "retries");
	assert_int_equal(tcall_error(c, "update", &e, "{sI ss}", "id", x,
	    "name", ""), -32602);
	assert_string_equal(e.field, "name");
	/* What update does not change is not a param of it. */
	assert_int_equal(tcall_error(c, "update", &e, "{sI si}", "id", x,
	    "slots", 1), -32602);
	topen_gate(d, "go");
	tassert_ends(c, a, "succeeded");
	tassert_ends(c, b, "succeeded");
	tassert_ends(c, x, "succeeded");
	assert_int_equal(tcall_error(c, "update", &e, "{sI ss}", "id", x,
	    "name", "n"), -32005);
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold_keeps_its_place),
		cmocka_unit_test(test_held_at_submit_and_across_restart),
		cmocka_unit_test(test_pending_reasons),
		cmocka_unit_test(test_granted_job_is_starting),
		cmocka_unit_test(test_begin_at),
		cmocka_unit_test(test_begin_at_survives_restart),
		cmocka_unit_test(test_after_any),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_update),
	};

	return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
