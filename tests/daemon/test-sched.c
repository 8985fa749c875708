/* test-sched.c - dispatch order through a real triaged: priorities with
 * saturated slots, exclusive and multi-slot jobs, max_running, the weighted
 * policy, pause and resume. The order is read from `watch` notifications,
 * which the daemon sends at each state change as it makes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define MAXJOBS 256

/* One job's part in a run, as the notifications tell it. */
struct seen {
	int64_t id;
	char priority[33];
	int slots;
	int start;		/* index of its running event, -1 none */
	int end;		/* index of its terminal event */
};

struct story {
	struct seen jobs[MAXJOBS];
	int njobs;
	int events;
	int max_busy;		/* most slots held at once */
	int max_running[4];	/* per priority index in prios */
	const char *const *prios;
	bool exclusive_overlap;	/* an exclusive job ran beside another */
};

static struct seen *
story_job(struct story *s, int64_t id)
{
	int i;

	for (i = 0; i < s->njobs; i++)
		if (s->jobs[i].id == id)
			return &s->jobs[i];
	return NULL;
}

/* Reads notifications until every one of the n ids has ended. */
static void
story_read(struct story *s, struct client *w, const int64_t *ids, int n,
    int total_slots)
{
	int busy = 0, running[4] = { 0 }, excl_running = 0, nrunning = 0;
	int ended = 0, i, p;
	struct seen *j;
	json_t *job;
	const char *state;

	for (i = 0; i < n; i++) {
		s->jobs[s->njobs].id = ids[i];
		s->jobs[s->njobs].start = s->jobs[s->njobs].end = -1;
		s->njobs++;
	}
	while (ended < n) {
		job = tnotification(w);
		j = story_job(s, json_integer_value(json_object_get(job, "id")));
		state = tstate(job);
		if (j == NULL || strcmp(state, "queued") == 0) {
			json_decref(job);
			continue;
		}
		snprintf(j->priority, sizeof j->priority, "%s",
		    json_string_value(json_object_get(job, "priority")));
		j->slots = (int)json_integer_value(json_object_get(job, "slots"));
		for (p = 0; s->prios != NULL && s->prios[p] != NULL; p++)
			if (strcmp(s->prios[p], j->priority) == 0)
				break;
		if (strcmp(state, "running") == 0) {
			j->start = s->events++;
			busy += j->slots;
			nrunning++;
			if (j->slots == total_slots)
				excl_running++;
			if (s->prios != NULL && s->prios[p] != NULL &&
			    ++running[p] > s->max_running[p])
				s->max_running[p] = running[p];
			if (busy > s->max_busy)
				s->max_busy = busy;
			if (excl_running > 0 && nrunning > 1)
				s->exclusive_overlap = true;
		} else {
			j->end = s->events++;
			if (j->start >= 0) {
				busy -= j->slots;
				nrunning--;
				if (j->slots == total_slots)
					excl_running--;
				if (s->prios != NULL && s->prios[p] != NULL)
					running[p]--;
			}
			assert_string_equal(state, "succeeded");
			ended++;
		}
		json_decref(job);
	}
}

static struct client *
watcher(struct tdaemon *d)
{
	struct client *w = tconnect(d);

	json_decref(tcall(w, "watch", "{}"));
	return w;
}

static void
test_priorities_dispatch_in_order_with_slots_saturated(void **state)
{
	static const char *const prios[] = { "low", "normal", "high", "low",
	    "high", "normal", "high", "low" };
	static const int expect[] = { 2, 4, 6, 1, 5, 0, 3, 7 };
	struct tdaemon *d = tdaemon_start("slots = 1\n");
	struct client *c = tconnect(d), *w = watcher(d);
	struct story s = { .njobs = 0 };
	int64_t ids[8];
	json_t *job;
	int i;

	(void)state;
	json_decref(tcall(c, "pause", "{}"));
	for (i = 0; i < 8; i++)
		ids[i] = tsubmit(c, "{s[s]ss}", "argv", "true", "priority",
		    prios[i]);
	/* Positions while paused: the order they will go in. */
	for (i = 0; i < 8; i++) {
		job = tcall(c, "get", "{sI}", "id", (json_int_t)ids[expect[i]]);
		assert_int_equal(json_integer_value(json_object_get(job,
		    "position")), i);
		json_decref(job);
	}
	json_decref(tcall(c, "resume", "{}"));
	story_read(&s, w, ids, 8, 1);
	for (i = 0; i < 8; i++)
		assert_int_equal(s.jobs[expect[i]].start, 2 * i);
	assert_int_equal(s.max_busy, 1);
	client_free(w);
	tdaemon_end(d, c);
}

static void
test_exclusive_and_multislot_without_barging_or_overlap(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 4\n");
	struct client *c = tconnect(d), *w = watcher(d);
	struct story s = { .njobs = 0 };
	int64_t ids[9];
	int i;

	(void)state;
	json_decref(tcall(c, "pause", "{}"));
	ids[0] = tsubmit(c, "{s[ss]}", "argv", "sleep", "0.3");
	ids[1] = tsubmit(c, "{s[ss]si}", "argv", "sleep", "0.3", "slots", 2);
	ids[2] = tsubmit(c, "{s[ss]sb}", "argv", "sleep", "0.2",
	    "exclusive", 1);
	/* Behind the exclusive one: they fit beside the first two, but
	 * must not barge ahead of it. */
	ids[3] = tsubmit(c, "{s[s]}", "argv", "true");
	ids[4] = tsubmit(c, "{s[s]ss}", "argv", "true", "priority", "low");
	ids[5] = tsubmit(c, "{s[ss]si}", "argv", "sleep", "0.1", "slots", 3);
	ids[6] = tsubmit(c, "{s[ss]}", "argv", "sleep", "0.1");
	ids[7] = tsubmit(c, "{s[s]sb}", "argv", "true", "exclusive", 1);
	ids[8] = tsubmit(c, "{s[ss]si}", "argv", "sleep", "0.1", "slots", 4);
	json_decref(tcall(c, "resume", "{}"));
	story_read(&s, w, ids, 9, 4);

	assert_true(s.jobs[2].start > s.jobs[0].end);
	assert_true(s.jobs[2].start > s.jobs[1].end);
	for (i = 3; i < 9; i++)
		assert_true(s.jobs[i].start > s.jobs[2].end);
	assert_false(s.exclusive_overlap);
	assert_true(s.max_busy <= 4);
	assert_int_equal(s.max_busy, 4);	/* 3 + 1 did share */
	client_free(w);
	tdaemon_end(d, c);
}

static void
test_max_running_caps_one_priority_while_others_proceed(void **state)
{
	static const char *const prios[] = { "batch", "normal", NULL };
	struct tdaemon *d = tdaemon_start("slots = 4\n"
	    "[priority.normal]\nrank = 10\n"
	    "[priority.batch]\nrank = 20\nmax_running = 1\n");
	struct client *c = tconnect(d), *w = watcher(d);
	struct story s = { .prios = prios };
	int64_t ids[8];
	int i;

	(void)state;
	json_decref(tcall(c, "pause", "{}"));
	for (i = 0; i < 5; i++)
		ids[i] = tsubmit(c, "{s[ss]ss}", "argv", "sleep", "0.1",
		    "priority", "batch");
	for (; i < 8; i++)
		ids[i] = tsubmit(c, "{s[ss]ss}", "argv", "sleep", "0.2",
		    "priority", "normal");
	json_decref(tcall(c, "resume", "{}"));
	story_read(&s, w, ids, 8, 4);
	assert_int_equal(s.max_running[0], 1);
	assert_int_equal(s.max_running[1], 3);
	/* The normal ones did not wait behind the capped batch queue. */
	for (i = 5; i < 8; i++)
		assert_true(s.jobs[i].start < s.jobs[0].end);
	client_free(w);
	tdaemon_end(d, c);
}

static void
test_weighted_policy_shares_dispatches_by_weight(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 1\npolicy = weighted\n"
	    "[priority.big]\nrank = 0\nweight = 3\n"
	    "[priority.small]\nrank = 10\nweight = 1\n");
	struct client *c = tconnect(d), *w = watcher(d);
	struct story s = { .njobs = 0 };
	int64_t ids[80];
	int i, k, big = 0;

	(void)state;
	json_decref(tcall(c, "pause", "{}"));
	for (i = 0; i < 80; i++)
		ids[i] = tsubmit(c, "{s[s]ss}", "argv", "true", "priority",
		    i % 2 ? "small" : "big");
	json_decref(tcall(c, "resume", "{}"));
	story_read(&s, w, ids, 80, 1);
	/* While both are backlogged (the first 40 dispatches: big has 40),
	 * big gets 3 of every 4. */
	for (k = 0; k < 40; k++)
		for (i = 0; i < 80; i++)
			if (s.jobs[i].start == 2 * k && i % 2 == 0)
				big++;
	assert_int_equal(big, 30);
	client_free(w);
	tdaemon_end(d, c);
}

static void
test_pause_keeps_jobs_queued_and_resume_runs_them(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 2\n");
	struct client *c = tconnect(d);
	json_t *res, *prio, *job;
	int64_t a, b;
	size_t i;

	(void)state;
	res = tcall(c, "pause", "{ss}", "priority", "low");
	json_array_foreach(json_object_get(res, "priorities"), i, prio)
		assert_int_equal(json_is_true(json_object_get(prio, "paused")),
		    strcmp(json_string_value(json_object_get(prio, "name")),
		    "low") == 0);
	json_decref(res);
	a = tsubmit(c, "{s[s]ss}", "argv", "true", "priority", "low");
	b = tsubmit(c, "{s[s]}", "argv", "true");
	job = twait(c, b);	/* normal is not paused */
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	job = tcall(c, "wait", "{sIsf}", "id", (json_int_t)a, "timeout", 0.3);
	assert_string_equal(tstate(job), "queued");
	assert_int_equal(json_integer_value(json_object_get(job, "position")), 0);
	json_decref(job);
	res = tcall(c, "stats", "{}");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(res,
	    "jobs"), "queued")), 1);
	assert_int_equal(json_integer_value(json_object_get(res, "slots_busy")),
	    0);
	json_decref(res);
	json_decref(tcall(c, "resume", "{ss}", "priority", "low"));
	job = twait(c, a);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	tdaemon_end(d, c);
}

/* A priority's "running" counts jobs; "slots_busy" the slots they hold. */
static void
test_stats_count_running_jobs_and_their_slots(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 4\n");
	struct client *c = tconnect(d);
	json_t *stats, *prio;
	int64_t id;
	size_t i;

	(void)state;
	id = tsubmit(c, "{s[ss]si}", "argv", "sleep", "300", "slots", 3);
	trunning_pid(c, id);
	stats = tcall(c, "stats", "{}");
	assert_int_equal(json_integer_value(json_object_get(stats,
	    "slots_busy")), 3);
	json_array_foreach(json_object_get(stats, "priorities"), i, prio) {
		if (strcmp(json_string_value(json_object_get(prio, "name")),
		    "normal") != 0)
			continue;
		assert_int_equal(json_integer_value(json_object_get(prio,
		    "running")), 1);
		assert_int_equal(json_integer_value(json_object_get(prio,
		    "slots_busy")), 3);
	}
	json_decref(stats);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	json_decref(twait(c, id));
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priorities_dispatch_in_order_with_slots_saturated),
		cmocka_unit_test(test_exclusive_and_multislot_without_barging_or_overlap),
		cmocka_unit_test(test_max_running_caps_one_priority_while_others_proceed),
		cmocka_unit_test(test_weighted_policy_shares_dispatches_by_weight),
		cmocka_unit_test(test_pause_keeps_jobs_queued_and_resume_runs_them),
		cmocka_unit_test(test_stats_count_running_jobs_and_their_slots),
	};

	return cmocka_run_group_tests_name("sched", tests, NULL, NULL);
}
