/* test-sched.c - dispatch order through a real triaged: priorities with
 * saturated slots, exclusive and multi-slot jobs, max_running, the weighted
 * policy, pause and resume. Order and overlap are read from `watch`
 * notifications, which the daemon sends at each state change as it makes
 * it; jobs are held running by gate files, never by sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "tsupport-clock.h"

#define MAXJOBS 256
/* The most a story may take to reach what a test waits for: each
 * notification has 30 s, but a stream of others must not go on for ever. */
#define STORY_TIMEOUT_MS (60000 * tslow())

/* One job's part in a run, as the notifications tell it. */
struct seen {
	int64_t id;
	char priority[33];
	int slots;
	int start;		/* index of its running event, -1 none */
	int end;		/* index of its terminal event, -1 none */
};

/* A run told by a watching connection, read as far as a test needs. */
struct story {
	struct triage_client *w;
	struct seen jobs[MAXJOBS];
	int njobs;
	int events;
	int ended;
	int total_slots;
	const char *const *prios;
	int busy, nrunning, excl_running, running[4];
	int max_busy;		/* most slots held at once */
	int max_running[4];	/* per priority index in prios */
	bool exclusive_overlap;	/* an exclusive job ran beside another */
};

/* Watches d, whose slots are total_slots, counting running jobs per
 * priority of prios (NULL-ended; NULL for none). */
static void
story_begin(struct story *s, struct tdaemon *d, int total_slots,
    const char *const *prios)
{
	memset(s, 0, sizeof *s);
	s->total_slots = total_slots;
	s->prios = prios;
	s->w = tconnect(d);
	json_decref(tcall(s->w, "watch", "{}"));
}

static void
story_end(struct story *s)
{
	triage_client_free(s->w);
}

/* From now on the story follows these jobs (others' events are skipped). */
static void
story_follow(struct story *s, const int64_t *ids, int n)
{
	int i;

	assert_true(s->njobs + n <= MAXJOBS);
	for (i = 0; i < n; i++) {
		s->jobs[s->njobs].id = ids[i];
		s->jobs[s->njobs].start = s->jobs[s->njobs].end = -1;
		s->njobs++;
	}
}

static struct seen *
story_job(struct story *s, int64_t id)
{
	int i;

	for (i = 0; i < s->njobs; i++)
		if (s->jobs[i].id == id)
			return &s->jobs[i];
	return NULL;
}

/* Reads the next notification and adds it to the story. */
static void
story_step(struct story *s)
{
	struct seen *j;
	json_t *job;
	const char *state;
	int p;

	job = tnotification(s->w);
	j = story_job(s, json_integer_value(json_object_get(job, "id")));
	state = tstate(job);
	if (j == NULL || strcmp(state, "queued") == 0) {
		json_decref(job);
		return;
	}
	snprintf(j->priority, sizeof j->priority, "%s",
	    json_string_value(json_object_get(job, "priority")));
	j->slots = (int)json_integer_value(json_object_get(job, "slots"));
	for (p = 0; s->prios != NULL && s->prios[p] != NULL; p++)
		if (strcmp(s->prios[p], j->priority) == 0)
			break;
	if (strcmp(state, "running") == 0) {
		j->start = s->events++;
		s->busy += j->slots;
		s->nrunning++;
		if (j->slots == s->total_slots)
			s->excl_running++;
		if (s->prios != NULL && s->prios[p] != NULL &&
		    ++s->running[p] > s->max_running[p])
			s->max_running[p] = s->running[p];
		if (s->busy > s->max_busy)
			s->max_busy = s->busy;
		if (s->excl_running > 0 && s->nrunning > 1)
			s->exclusive_overlap = true;
	} else {
		j->end = s->events++;
		if (j->start >= 0) {
			s->busy -= j->slots;
			s->nrunning--;
			if (j->slots == s->total_slots)
				s->excl_running--;
			if (s->prios != NULL && s->prios[p] != NULL)
				s->running[p]--;
		}
		assert_string_equal(state, "succeeded");
		s->ended++;
	}
	json_decref(job);
}

/* Reads on until job id has started running (ended, if ended is set);
 * at once if it already has. */
static void
story_until(struct story *s, int64_t id, bool ended)
{
	int64_t deadline = tsupport_clock_ms() + STORY_TIMEOUT_MS;
	struct seen *j = story_job(s, id);

	assert_non_null(j);
	while (ended ? j->end < 0 : j->start < 0) {
		if (tsupport_clock_ms() > deadline)
			fail_msg("job %lld never %s", (long long)id,
			    ended ? "ended" : "ran");
		story_step(s);
	}
}

/* Reads on until every job followed has ended. */
static void
story_until_all_ended(struct story *s)
{
	int64_t deadline = tsupport_clock_ms() + STORY_TIMEOUT_MS;

	while (s->ended < s->njobs) {
		if (tsupport_clock_ms() > deadline)
			fail_msg("%d of %d jobs never ended",
			    s->njobs - s->ended, s->njobs);
		story_step(s);
	}
}

static void
test_priorities_dispatch_in_order_with_slots_saturated(void **state)
{
	static const char *const prios[] = { "low", "normal", "high", "low",
	    "high", "normal", "high", "low" };
	static const int expect[] = { 2, 4, 6, 1, 5, 0, 3, 7 };
	struct tdaemon *d = tdaemon_start("slots = 1\n");
	struct triage_client *c = tconnect(d);
	struct story s;
	int64_t ids[8];
	json_t *job;
	int i;

	(void)state;
	story_begin(&s, d, 1, NULL);
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
	story_follow(&s, ids, 8);
	json_decref(tcall(c, "resume", "{}"));
	story_until_all_ended(&s);
	/* One slot: each job starts and ends before the next starts. */
	for (i = 0; i < 8; i++)
		assert_int_equal(s.jobs[expect[i]].start, 2 * i);
	assert_int_equal(s.max_busy, 1);
	story_end(&s);
	tdaemon_end(d, c);
}

static void
test_exclusive_and_multislot_without_barging_or_overlap(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 4\n");
	struct triage_client *c = tconnect(d);
	struct story s;
	int64_t ids[9];
	int i;

	(void)state;
	story_begin(&s, d, 4, NULL);
	json_decref(tcall(c, "pause", "{}"));
	ids[0] = tsubmit_gated(c, d, "g0", false);
	ids[1] = tsubmit_gated_with(c, d, "g1", "{si}", "slots", 2);
	ids[2] = tsubmit_gated_with(c, d, "g2", "{sb}", "exclusive", 1);
	/* Behind the exclusive one: they fit beside the first two, but
	 * must not barge ahead of it. */
	ids[3] = tsubmit(c, "{s[s]}", "argv", "true");
	ids[4] = tsubmit(c, "{s[s]ss}", "argv", "true", "priority", "low");
	ids[5] = tsubmit_gated_with(c, d, "g5", "{si}", "slots", 3);
	ids[6] = tsubmit_gated(c, d, "g6", false);
	ids[7] = tsubmit(c, "{s[s]sb}", "argv", "true", "exclusive", 1);
	ids[8] = tsubmit(c, "{s[s]si}", "argv", "true", "slots", 4);
	story_follow(&s, ids, 9);
	json_decref(tcall(c, "resume", "{}"));

	/* 0 and 1 hold 3 slots: one is free, but 2 needs all four. Each
	 * "still queued" is asked once the events it must wait behind were
	 * read: an early, plain failure for a job that jumped the queue (one
	 * dispatched only after the answer still shows in the story, which
	 * the test checks at its end). */
	story_until(&s, ids[0], false);
	story_until(&s, ids[1], false);
	tassert_state(c, ids[2], "queued");
	tassert_state(c, ids[3], "queued");
	topen_gate(d, "g0");
	story_until(&s, ids[0], true);
	tassert_state(c, ids[3], "queued");
	topen_gate(d, "g1");
	story_until(&s, ids[2], false);
	/* 2 holds the daemon alone until its gate opens. */
	tassert_state(c, ids[3], "queued");
	topen_gate(d, "g2");
	/* Then 3 (1 slot) and 5 (3 slots) go, and 6 takes the slot 3
	 * leaves: 5 and 6 run side by side until their gates open. */
	story_until(&s, ids[5], false);
	story_until(&s, ids[6], false);
	topen_gate(d, "g5");
	topen_gate(d, "g6");
	story_until_all_ended(&s);

	assert_true(s.jobs[2].start > s.jobs[0].end);
	assert_true(s.jobs[2].start > s.jobs[1].end);
	for (i = 3; i < 9; i++)
		assert_true(s.jobs[i].start > s.jobs[2].end);
	assert_false(s.exclusive_overlap);
	assert_true(s.max_busy <= 4);
	/* 3 + 1 did share. */
	assert_true(s.jobs[6].start < s.jobs[5].end);
	assert_true(s.jobs[5].start < s.jobs[6].end);
	story_end(&s);
	tdaemon_end(d, c);
}

static void
test_max_running_caps_one_priority_while_others_proceed(void **state)
{
	static const char *const prios[] = { "batch", "normal", NULL };
	struct tdaemon *d = tdaemon_start("slots = 4\n"
	    "[priority.normal]\nrank = 10\n"
	    "[priority.batch]\nrank = 20\nmax_running = 1\n");
	struct triage_client *c = tconnect(d);
	struct story s;
	char gate[16];
	int64_t ids[8];
	int i;

	(void)state;
	story_begin(&s, d, 4, prios);
	json_decref(tcall(c, "pause", "{}"));
	for (i = 0; i < 5; i++) {
		snprintf(gate, sizeof gate, "g%d", i);
		ids[i] = tsubmit_gated_with(c, d, gate, "{ss}", "priority",
		    "batch");
	}
	for (; i < 8; i++) {
		snprintf(gate, sizeof gate, "g%d", i);
		ids[i] = tsubmit_gated_with(c, d, gate, "{ss}", "priority",
		    "normal");
	}
	story_follow(&s, ids, 8);
	json_decref(tcall(c, "resume", "{}"));
	/* One batch job and the three normal ones fill the four slots. */
	story_until(&s, ids[0], false);
	for (i = 5; i < 8; i++)
		story_until(&s, ids[i], false);
	/* With the normal ones done three slots are free, yet batch has
	 * its one job running already. */
	for (i = 5; i < 8; i++) {
		snprintf(gate, sizeof gate, "g%d", i);
		topen_gate(d, gate);
		story_until(&s, ids[i], true);
	}
	tassert_state(c, ids[1], "queued");
	for (i = 0; i < 5; i++) {
		snprintf(gate, sizeof gate, "g%d", i);
		topen_gate(d, gate);
	}
	story_until_all_ended(&s);
	assert_int_equal(s.max_running[0], 1);
	assert_int_equal(s.max_running[1], 3);
	/* The normal ones did not wait behind the capped batch queue. */
	for (i = 5; i < 8; i++)
		assert_true(s.jobs[i].start < s.jobs[0].end);
	story_end(&s);
	tdaemon_end(d, c);
}

static void
test_weighted_policy_shares_dispatches_by_weight(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 1\npolicy = weighted\n"
	    "[priority.big]\nrank = 0\nweight = 3\n"
	    "[priority.small]\nrank = 10\nweight = 1\n");
	struct triage_client *c = tconnect(d);
	struct story s;
	int64_t ids[80];
	int i, k, big = 0;

	(void)state;
	story_begin(&s, d, 1, NULL);
	json_decref(tcall(c, "pause", "{}"));
	for (i = 0; i < 80; i++)
		ids[i] = tsubmit(c, "{s[s]ss}", "argv", "true", "priority",
		    i % 2 ? "small" : "big");
	story_follow(&s, ids, 80);
	json_decref(tcall(c, "resume", "{}"));
	story_until_all_ended(&s);
	/* While both are backlogged (the first 40 dispatches: big has 40),
	 * big gets 3 of every 4. */
	for (k = 0; k < 40; k++)
		for (i = 0; i < 80; i++)
			if (s.jobs[i].start == 2 * k && i % 2 == 0)
				big++;
	assert_int_equal(big, 30);
	story_end(&s);
	tdaemon_end(d, c);
}

static void
test_pause_keeps_jobs_queued_and_resume_runs_them(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 2\n");
	struct triage_client *c = tconnect(d);
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
	/* There were two free slots and a came first: had low not been
	 * paused, a would have been dispatched no later than b. */
	job = tget(c, a);
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
	struct triage_client *c = tconnect(d);
	struct story s;
	json_t *stats, *prio;
	int64_t id;
	size_t i;

	(void)state;
	story_begin(&s, d, 4, NULL);
	id = tsubmit_gated_with(c, d, "go", "{si}", "slots", 3);
	story_follow(&s, &id, 1);
	story_until(&s, id, false);
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
	topen_gate(d, "go");
	story_until_all_ended(&s);
	story_end(&s);
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
