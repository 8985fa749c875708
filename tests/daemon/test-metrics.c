/* test-metrics.c - metrics and series on the job state machine driven on a
 * bare loop: the figures after known jobs, promtool's verdict, the window. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <jansson.h>

#include "job.h"
#include "jobs.h"
#include "machine.h"
#include "metrics.h"
#include "promtext.h"
#include "run.h"
#include "series.h"
#include "serieswait.h"
#include "store.h"
#include "timefmt.h"
#include "version.h"

#define ARGV(...)	((const char *const []){ __VA_ARGS__, NULL })
#define WAIT_FOR(fx, cond)	LOOP_WAIT_FOR(&(fx)->loop, cond)
#define NORMAL(name)	name "{priority=\"normal\"}"
#define FINISHED(state) \
	"triage_jobs_finished_total{priority=\"normal\",state=\"" state "\"}"

static int
setup(void **state)
{
	struct machine *m = machine_new("test-metrics");
	char *cause = NULL;

	if (m == NULL)
		return -1;
	if (metrics_init(&m->td, &cause) != 0 ||
	    series_init(&m->td, &cause) != 0) {
		free(cause);
		machine_free(m);
		return -1;
	}
	*state = m;
	return 0;
}

static int
teardown(void **state)
{
	struct machine *m = *state;
	struct machine_done *d = machine_after_commit(m);

	/* Nothing left to publish to the listeners about to go. */
	WAIT_FOR(m, d->called > 0);
	series_free(&m->td);
	metrics_free(&m->td);
	machine_free(m);
	return 0;
}

/* The exposition now, as a string; the caller's. */
static char *
scrape(struct machine *m)
{
	struct evbuffer *buf = evbuffer_new();
	size_t n;
	char *text;

	assert_non_null(buf);
	assert_int_equal(metrics_write(&m->td, buf), 0);
	n = evbuffer_get_length(buf);
	assert_non_null(text = malloc(n + 1));
	assert_int_equal(evbuffer_remove(buf, text, n), (int)n);
	text[n] = '\0';
	evbuffer_free(buf);
	return text;
}

/* Jobs whose ends are known: one succeeds (after 0.2 s: the others' runs
 * may each start and end within one millisecond), one fails, one fails
 * twice with a retry between, one runs until the test lets it go. */
struct known {
	uint64_t ok, bad, retried, held;
};

static void
run_known_jobs(struct machine *fx, struct known *k)
{
	struct job *job;

	/* Long enough that its run is more than the same millisecond. */
	k->ok = machine_submit(fx, machine_job(fx, ARGV("sleep", "0.2")));
	k->bad = machine_submit(fx, machine_job(fx, ARGV("sh", "-c",
	    "exit 3")));
	job = machine_job(fx, ARGV("sh", "-c", "exit 1"));
	job->retries = 1;
	k->retried = machine_submit(fx, job);
	WAIT_FOR(fx, machine_is(fx, k->ok, JOB_SUCCEEDED) &&
	    machine_is(fx, k->bad, JOB_FAILED) &&
	    machine_is(fx, k->retried, JOB_FAILED));
	k->held = machine_submit(fx, machine_gated(fx, 0));
	WAIT_FOR(fx, machine_is(fx, k->held, JOB_RUNNING));
}

static void
figures_follow_known_jobs(void **state)
{
	struct machine *fx = *state;
	const struct store_commit_stats *cs;
	struct known k;
	char *text;

	text = scrape(fx);
	promtext_assert(text, NORMAL("triage_jobs_queued"), 0);
	promtext_assert(text, NORMAL("triage_submissions_total"), 0);
	free(text);

	run_known_jobs(fx, &k);
	text = scrape(fx);
	promtext_assert(text, NORMAL("triage_submissions_total"), 4);
	promtext_assert(text, "triage_submissions_total{priority=\"high\"}", 0);
	/* The retried job had two grants. */
	promtext_assert(text, NORMAL("triage_dispatches_total"), 5);
	promtext_assert(text, NORMAL("triage_retries_total"), 1);
	promtext_assert(text, FINISHED("succeeded"), 1);
	promtext_assert(text, FINISHED("failed"), 2);
	promtext_assert(text, FINISHED("canceled"), 0);
	promtext_assert(text, NORMAL("triage_jobs_running"), 1);
	promtext_assert(text, NORMAL("triage_jobs_queued"), 0);
	promtext_assert(text, "triage_slots", 2);
	promtext_assert(text, "triage_slots_busy", 1);
	promtext_assert(text, "triage_workers", 2);
	/* Five starts waited; four runs ended, the first of the retried
	 * one's among them. */
	promtext_assert(text, NORMAL("triage_job_wait_seconds_count"), 5);
	promtext_assert(text,
	    "triage_job_wait_seconds_bucket{priority=\"normal\",le=\"+Inf\"}",
	    5);
	promtext_assert(text, NORMAL("triage_job_run_seconds_count"), 4);
	assert_true(promtext_value(text,
	    NORMAL("triage_job_run_seconds_sum")) > 0);
	/* Each run that ended has a peak: the retried job's first one too
	 * (without cgroups, its largest process's max RSS, at least the
	 * 1 MiB of a shell). None was killed for want of memory. */
	promtext_assert(text, NORMAL("triage_job_peak_memory_bytes_count"), 4);
	assert_true(promtext_value(text,
	    NORMAL("triage_job_peak_memory_bytes_sum")) >= 4 * 1048576.0);
	promtext_assert(text, "triage_job_peak_memory_bytes_bucket{priority="
	    "\"normal\",le=\"+Inf\"}", 4);
	assert_true(promtext_has(text, "triage_job_peak_memory_bytes_bucket{"
	    "priority=\"normal\",le=\"68719476736\"}"));
	promtext_assert(text, NORMAL("triage_jobs_oom_killed_total"), 0);
	cs = store_commit_stats(fx->td.store);
	assert_true(cs->commits > 0);
	promtext_assert(text, "triage_store_commits_total",
	    (double)cs->commits);
	promtext_assert(text, "triage_store_commit_failures_total", 0);
	promtext_assert(text, "triage_store_commit_seconds_count",
	    (double)cs->commits);
	assert_true(promtext_value(text, "process_resident_memory_bytes") > 0);
	assert_true(promtext_has(text, "triage_build_info{version=\""
	    TRIAGE_VERSION "\"}"));
	if (promtext_have_promtool())
		promtext_check(fx->loop.dir, text);
	free(text);

	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, k.held, JOB_SUCCEEDED));
	text = scrape(fx);
	promtext_assert(text, NORMAL("triage_jobs_running"), 0);
	promtext_assert(text, "triage_slots_busy", 0);
	promtext_assert(text, FINISHED("succeeded"), 2);
	promtext_assert(text, NORMAL("triage_job_run_seconds_count"), 5);
	promtext_assert(text, NORMAL("triage_job_peak_memory_bytes_count"), 5);
	free(text);
}

/*
 * An attempt killed for want of memory, as the end of a run in a cgroup
 * says it (out.oom), is counted under its priority with its peak, through
 * the module's entry point for a run's end: no job here can be killed so
 * for real (that takes a memory controller, which these machines' cgroup
 * v2 lacks; the VM's tests have one).
 */
static void
an_oom_kill_is_counted_with_its_peak(void **state)
{
	struct machine *fx = *state;
	struct run_outcome out;
	struct job *job;
	uint64_t id;
	char *text;
	double sum;

	id = machine_submit(fx, machine_job(fx, ARGV("true")));
	WAIT_FOR(fx, machine_is(fx, id, JOB_SUCCEEDED));
	job = store_get(fx->td.store, id);
	memset(&out, 0, sizeof out);
	out.state = JOB_FAILED;
	out.max_rss_kb = 1024;
	out.peak_memory = INT64_C(3) << 30;
	out.oom = true;
	metrics_run_ended(&fx->td, job, &out);
	text = scrape(fx);
	promtext_assert(text, NORMAL("triage_jobs_oom_killed_total"), 1);
	promtext_assert(text, "triage_jobs_oom_killed_total{priority="
	    "\"high\"}", 0);
	/* The real run's peak, and the cgroup's 3 GiB, not its max RSS. */
	promtext_assert(text, NORMAL("triage_job_peak_memory_bytes_count"), 2);
	promtext_assert(text, "triage_job_peak_memory_bytes_bucket{priority="
	    "\"normal\",le=\"2147483648\"}", 1);
	promtext_assert(text, "triage_job_peak_memory_bytes_bucket{priority="
	    "\"normal\",le=\"4294967296\"}", 2);
	if (promtext_have_promtool())
		promtext_check(fx->loop.dir, text);
	sum = promtext_value(text, NORMAL("triage_job_peak_memory_bytes_sum"));
	free(text);
	/* Without a cgroup's peak, the max RSS stands for it. */
	out.peak_memory = -1;
	out.oom = false;
	metrics_run_ended(&fx->td, job, &out);
	text = scrape(fx);
	promtext_assert(text, NORMAL("triage_jobs_oom_killed_total"), 1);
	promtext_assert(text, NORMAL("triage_job_peak_memory_bytes_count"), 3);
	promtext_assert(text, NORMAL("triage_job_peak_memory_bytes_sum"),
	    sum + 1024 * 1024);
	free(text);
}

/* A held job counts as queued and as held; canceled, as canceled. */
static void
held_and_canceled_jobs_are_counted(void **state)
{
	struct machine *fx = *state;
	struct job *job;
	uint64_t id;
	char *text;

	job = machine_job(fx, ARGV("true"));
	job->held = true;
	id = machine_submit(fx, job);
	WAIT_FOR(fx, machine_sub(fx, id)->called > 0);
	text = scrape(fx);
	promtext_assert(text, NORMAL("triage_jobs_queued"), 1);
	promtext_assert(text, NORMAL("triage_jobs_held"), 1);
	free(text);
	jobs_cancel(&fx->td, store_get(fx->td.store, id), 0, 15);
	WAIT_FOR(fx, machine_is(fx, id, JOB_CANCELED));
	text = scrape(fx);
	promtext_assert(text, NORMAL("triage_jobs_held"), 0);
	promtext_assert(text, FINISHED("canceled"), 1);
	/* It never started: no wait to count. */
	promtext_assert(text, NORMAL("triage_job_wait_seconds_count"), 0);
	free(text);
}

/* A reload that renumbers the priorities: the counts go with them. */
static void
counts_follow_their_priority_when_renumbered(void **state)
{
	struct machine *fx = *state;
	/* high, normal, low -> normal first, high second, low gone */
	const int map[] = { 1, 0, -1 };
	char *text;
	uint64_t id;

	id = machine_submit(fx, machine_job(fx, ARGV("true")));
	WAIT_FOR(fx, machine_is(fx, id, JOB_SUCCEEDED));
	metrics_reprioritize(&fx->td, 3, map);
	/* The config still names index 0 "high": normal's counts are there
	 * now, and index 1's are high's old ones. */
	text = scrape(fx);
	promtext_assert(text, "triage_submissions_total{priority=\"high\"}", 1);
	promtext_assert(text, NORMAL("triage_submissions_total"), 0);
	promtext_assert(text, "triage_submissions_total{priority=\"low\"}", 0);
	free(text);
}

static double
at(json_t *array, size_t i)
{
	json_t *v = json_array_get(array, i);

	assert_non_null(v);
	return json_number_value(v);
}

/* The window after the known jobs, then as it moves on without events:
 * the job still running holds its slot in every step that passes. */
static void
series_window_moves_on_lazily(void **state)
{
	struct machine *fx = *state;
	json_t *s, *busy, *disp;
	struct known k;
	int64_t t0;
	double sum = 0, end;
	size_t i;

	run_known_jobs(fx, &k);
	t0 = timefmt_now();
	assert_non_null(s = series_json(&fx->td));
	assert_int_equal(json_integer_value(json_object_get(s, "step")), 5);
	assert_int_equal(json_integer_value(json_object_get(s, "slots")), 2);
	end = json_number_value(json_object_get(s, "end"));
	assert_true(end > (double)t0 / 1000 &&
	    end <= (double)t0 / 1000 + 5.001);
	busy = json_object_get(s, "slots_busy");
	disp = json_object_get(s, "dispatched");
	assert_int_equal(json_array_size(busy), SERIES_STEPS);
	assert_int_equal(json_array_size(disp), SERIES_STEPS);
	for (i = 0; i < SERIES_STEPS; i++) {
		sum += at(disp, i);
		assert_true(at(busy, i) >= 0 && at(busy, i) <= 2);
	}
	assert_int_equal(sum, 5);
	serieswait_assert(s, "normal", 5);
	serieswait_assert(s, "high", 0);
	json_decref(s);

	/* Three steps on: the two whole steps between had the one slot
	 * all along, and nothing started. */
	assert_non_null(s = series_json_at(&fx->td, t0 + 3 * SERIES_STEP_MS));
	busy = json_object_get(s, "slots_busy");
	disp = json_object_get(s, "dispatched");
	assert_true(at(busy, SERIES_STEPS - 2) == 1.0);
	assert_true(at(busy, SERIES_STEPS - 3) == 1.0);
	assert_int_equal(at(disp, SERIES_STEPS - 2), 0);
	json_decref(s);

	/* A whole window on: the starts are out of it. */
	assert_non_null(s = series_json_at(&fx->td,
	    t0 + (SERIES_STEPS + 2) * SERIES_STEP_MS));
	busy = json_object_get(s, "slots_busy");
	disp = json_object_get(s, "dispatched");
	for (i = 0; i < SERIES_STEPS; i++) {
		assert_int_equal(at(disp, i), 0);
		if (i < SERIES_STEPS - 1)
			assert_true(at(busy, i) == 1.0);
	}
	serieswait_assert(s, "normal", 0);
	json_decref(s);

	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, k.held, JOB_SUCCEEDED));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(figures_follow_known_jobs,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    held_and_canceled_jobs_are_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    an_oom_kill_is_counted_with_its_peak, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    counts_follow_their_priority_when_renumbered, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(series_window_moves_on_lazily,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
