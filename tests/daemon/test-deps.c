/* test-deps.c - `after` through the job state machine, on a bare event_base
 * with a real store, semaphore, executor and pool: wait, run, or cancel. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "job.h"
#include "jobs.h"
#include "machine.h"
#include "psem.h"
#include "run.h"
#include "store.h"

#define ARGV(...)	((const char *const []){ __VA_ARGS__, NULL })
#define WAIT_FOR(fx, cond)	LOOP_WAIT_FOR(&(fx)->loop, cond)

static int
setup(void **state)
{
	return (*state = machine_new("test-deps")) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	machine_free(*state);
	return 0;
}

/* Runs the loop until every change made so far has been published, and
 * what deps did about it too. */
static void
fx_settle(struct machine *fx)
{
	struct machine_done *b = machine_after_commit(fx);

	WAIT_FOR(fx, b->called);
	fx->nbarrier--;
	*b = (struct machine_done){ .m = fx };
}

/* job runs after the n jobs of ids. */
static struct job *
fx_after(struct job *job, size_t n, const uint64_t *ids)
{
	struct job_extra *extra = job_extra_edit(job);

	assert_non_null(extra);
	assert_non_null(extra->after = calloc(n, sizeof *extra->after));
	memcpy(extra->after, ids, n * sizeof *ids);
	extra->nafter = n;
	return job;
}

static struct job *
fx_job_after(struct machine *fx, const char *const *argv, uint64_t after)
{
	return fx_after(machine_job(fx, argv), 1, &after);
}

static void
fx_cancel(struct machine *fx, struct job *job, uid_t by)
{
	fx->in_call = true;
	jobs_cancel(&fx->td, job, by, SIGTERM);
	fx->in_call = false;
}

/* jobs_retry by hand, into priority normal, once its environment is read
 * back; returns its done record. */
static struct machine_done *
fx_retry(struct machine *fx, struct job *job)
{
	struct machine_done *d = &fx->retry[job->id];
	char *cause = NULL;
	int rc;

	if (job->env == NULL && store_env(fx->td.store, job, &cause) != 0)
		fail_msg("store_env: %s", cause);
	*d = (struct machine_done){ .m = fx, .id = job->id };
	fx->in_call = true;
	rc = jobs_retry(&fx->td, job, MACHINE_PRIO_NORMAL, machine_done_cb, d);
	fx->in_call = false;
	assert_int_equal(rc, 0);
	return d;
}

/* Waiting for its targets: queued, outside the semaphore, never started. */
static void
assert_waiting(const struct machine *fx, const struct job *job)
{
	assert_int_equal(job->state, JOB_QUEUED);
	assert_true(machine_is(fx, job->id, JOB_QUEUED));
	assert_int_equal(psem_waiter_state(&job->waiter), PSEM_IDLE);
	assert_false(job->run->begun);
	assert_int_equal(job->run->pid, 0);
	assert_false(run_has(fx->td.run, job));
}

/* ---- waiting, then running or canceled ---- */

/* A job after a running one waits (the gate says 0), outside the
 * semaphore, and runs once that one has succeeded, not before it is
 * told. */
static void
test_after_success_waits_then_runs(void **state)
{
	struct machine *fx = *state;
	struct job *jb;
	uint64_t a, b;

	a = machine_submit(fx, machine_gated(fx, 0));
	b = machine_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING));
	fx_settle(fx);
	assert_waiting(fx, jb);
	assert_int_equal(machine_nevents(fx, b), 1);
	/* a free slot is not taken: one slot busy of two */
	assert_int_equal(psem_available(fx->td.sem), 1);
	machine_assert_counts(fx, 1, 1, 0, 0, 0);

	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, b, JOB_SUCCEEDED));
	machine_assert_event(machine_event(fx, b, 1), JOB_QUEUED,
	    JOB_RUNNING, 1);
	assert_true(machine_last(fx, a)->seq < machine_event(fx, b, 1)->seq);
	machine_assert_event(machine_last(fx, a), JOB_RUNNING,
	    JOB_SUCCEEDED, 1);
	assert_int_equal(machine_nevents(fx, b), 3);
	assert_int_equal(fx->nstarted, 2);
	machine_assert_counts(fx, 0, 0, 2, 0, 0);
}

/* After a failing job: canceled, with a reason naming it; never run. */
static void
test_after_failure_cancels(void **state)
{
	struct machine *fx = *state;
	char want[128];
	struct job *jb;
	uint64_t a, b;

	a = machine_submit(fx, machine_gated(fx, 0));
	b = machine_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING) &&
	    machine_is(fx, b, JOB_QUEUED));
	machine_open_gate(fx, 0, 3);
	WAIT_FOR(fx, machine_is(fx, b, JOB_CANCELED));
	assert_true(machine_is(fx, a, JOB_FAILED));
	machine_assert_event(machine_last(fx, b), JOB_QUEUED, JOB_CANCELED, 1);
	snprintf(want, sizeof want, "job %llu, which it runs after, ended "
	    "failed", (unsigned long long)a);
	assert_string_equal(machine_last(fx, b)->reason, want);
	assert_string_equal(jb->run->reason, want);
	assert_true(machine_last(fx, a)->seq < machine_last(fx, b)->seq);
	assert_int_equal(fx->nstarted, 1);
	machine_assert_counts(fx, 0, 0, 0, 1, 1);
}

/* A target that fails, then succeeds on its automatic retry: the job
 * after it waits for the final outcome, not the first. */
static void
test_after_target_retried(void **state)
{
	struct machine *fx = *state;
	struct job *ja, *jb;
	uint64_t a, b;

	ja = machine_gated(fx, 0);
	ja->retries = 1;
	a = machine_submit(fx, ja);
	b = machine_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING));
	machine_open_gate(fx, 0, 1);
	WAIT_FOR(fx, machine_nevents(fx, a) == 4 &&
	    machine_is(fx, a, JOB_RUNNING));
	fx_settle(fx);
	assert_waiting(fx, jb);
	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, b, JOB_SUCCEEDED));
	assert_int_equal(machine_last(fx, a)->attempt, 2);
	assert_true(machine_is(fx, a, JOB_SUCCEEDED));
}

/* After two: one ending leaves it waiting for the other. */
static void
test_after_two(void **state)
{
	struct machine *fx = *state;
	struct job *jc;
	uint64_t a, b, c, ab[2];

	a = machine_submit(fx, machine_gated(fx, 0));
	b = machine_submit(fx, machine_gated(fx, 1));
	ab[0] = a;
	ab[1] = b;
	c = machine_submit(fx,
	    jc = fx_after(machine_job(fx, ARGV("true")), 2, ab));
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING) &&
	    machine_is(fx, b, JOB_RUNNING));
	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, a, JOB_SUCCEEDED));
	fx_settle(fx);
	assert_waiting(fx, jc);
	machine_open_gate(fx, 1, 0);
	WAIT_FOR(fx, machine_is(fx, c, JOB_SUCCEEDED));
	assert_int_equal(machine_nevents(fx, c), 3);
	assert_true(machine_last(fx, b)->seq < machine_event(fx, c, 1)->seq);
}

/*
 * A chain of 200 jobs, each after the one before, behind a first that
 * fails: all 200 are canceled, in the order of the chain, each told in
 * turn (the next one is still queued when a cancel is told: deps cancels
 * it only on hearing of this one, not by recursing down the chain), from a
 * flat stack (the listener never runs inside itself, and every cancel is
 * told from the same frame depth).
 */
static void
test_chain_of_200(void **state)
{
	struct machine *fx = *state;
	uint64_t first, id, prev;
	const struct machine_ev *e, *before = NULL;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	char want[128];
	int i;

	first = machine_submit(fx, machine_job(fx, ARGV("sh", "-c", "exit 1")));
	prev = first;
	for (i = 0; i < 200; i++)
		prev = machine_submit(fx, fx_job_after(fx, ARGV("true"), prev));
	assert_int_equal(prev, first + 200);
	WAIT_FOR(fx, machine_is(fx, prev, JOB_CANCELED));
	assert_true(machine_is(fx, first, JOB_FAILED));
	for (id = first + 1; id <= first + 200; id++) {
		assert_int_equal(machine_nevents(fx, id), 2);
		e = machine_last(fx, id);
		machine_assert_event(e, JOB_QUEUED, JOB_CANCELED, 1);
		snprintf(want, sizeof want, "job %llu, which it runs after, "
		    "ended %s", (unsigned long long)(id - 1),
		    id == first + 1 ? "failed" : "canceled");
		assert_string_equal(e->reason, want);
		if (before != NULL)
			assert_true(before->seq < e->seq);
		if (id < first + 200)
			assert_int_equal(e->next_state, JOB_QUEUED);
		before = e;
		lo = e->frame < lo ? e->frame : lo;
		hi = e->frame > hi ? e->frame : hi;
	}
	print_message("# listener frames within %lu bytes\n",
	    (unsigned long)(hi - lo));
	/* a recursion would add a few frames per link: 200 links, far more
	 * than this */
	assert_true(hi - lo < 1024);
	assert_int_equal(fx->nstarted, 1);
	machine_assert_counts(fx, 0, 0, 0, 1, 200);
}

/* After a job nobody knows (pruned, say): canceled at once, saying so. */
static void
test_after_unknown(void **state)
{
	struct machine *fx = *state;
	uint64_t b;

	b = machine_submit(fx, fx_job_after(fx, ARGV("true"), 200));
	WAIT_FOR(fx, machine_is(fx, b, JOB_CANCELED));
	machine_assert_event(machine_event(fx, b, 0), JOB_QUEUED,
	    JOB_QUEUED, 1);
	machine_assert_event(machine_event(fx, b, 1), JOB_QUEUED,
	    JOB_CANCELED, 1);
	assert_string_equal(machine_last(fx, b)->reason,
	    "job 200, which it runs after, is no longer known");
	assert_int_equal(fx->nstarted, 0);
}

/* After a job that has ended already: succeeded, it runs at once;
 * otherwise it is canceled at once. */
static void
test_after_ended(void **state)
{
	struct machine *fx = *state;
	uint64_t a, f, b, c;
	char want[128];

	a = machine_submit(fx, machine_job(fx, ARGV("true")));
	f = machine_submit(fx, machine_job(fx, ARGV("false")));
	WAIT_FOR(fx, machine_is(fx, a, JOB_SUCCEEDED) &&
	    machine_is(fx, f, JOB_FAILED));
	b = machine_submit(fx, fx_job_after(fx, ARGV("true"), a));
	c = machine_submit(fx, fx_job_after(fx, ARGV("true"), f));
	WAIT_FOR(fx, machine_is(fx, b, JOB_SUCCEEDED) &&
	    machine_is(fx, c, JOB_CANCELED));
	assert_int_equal(machine_nevents(fx, b), 3);
	assert_int_equal(machine_nevents(fx, c), 2);
	snprintf(want, sizeof want, "job %llu, which it runs after, ended "
	    "failed", (unsigned long long)f);
	assert_string_equal(machine_last(fx, c)->reason, want);
	assert_int_equal(fx->nstarted, 3);
}

/* ---- canceled and retried while waiting ---- */

/*
 * A waiting job canceled: it ends canceled by whoever asked, and its
 * target's end later changes nothing for it.
 */
static void
test_waiting_canceled(void **state)
{
	struct machine *fx = *state;
	struct job *jb;
	uint64_t a, b;

	a = machine_submit(fx, machine_gated(fx, 0));
	b = machine_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING) &&
	    machine_is(fx, b, JOB_QUEUED));
	fx_cancel(fx, jb, 5);
	WAIT_FOR(fx, machine_is(fx, b, JOB_CANCELED));
	assert_string_equal(machine_last(fx, b)->reason, "canceled by uid 5");
	machine_open_gate(fx, 0, 3);
	WAIT_FOR(fx, machine_is(fx, a, JOB_FAILED));
	fx_settle(fx);
	assert_int_equal(machine_nevents(fx, b), 2);
	assert_string_equal(jb->run->reason, "canceled by uid 5");
	assert_int_equal(fx->nstarted, 1);
	machine_assert_counts(fx, 0, 0, 0, 1, 1);
}

/*
 * Registrations know their attempt: c waits for a and b; canceled, then
 * retried, it registers again. When a ends, the first attempt's wait must
 * not count for the second: c still waits for b, and runs once, after it.
 */
static void
test_canceled_retried_counted_once(void **state)
{
	struct machine *fx = *state;
	struct machine_done *d;
	uint64_t a, b, c, ab[2];
	struct job *jc;

	a = machine_submit(fx, machine_gated(fx, 0));
	b = machine_submit(fx, machine_gated(fx, 1));
	ab[0] = a;
	ab[1] = b;
	c = machine_submit(fx,
	    jc = fx_after(machine_job(fx, ARGV("true")), 2, ab));
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING) &&
	    machine_is(fx, b, JOB_RUNNING) &&
	    machine_is(fx, c, JOB_QUEUED));
	fx_cancel(fx, jc, 5);
	WAIT_FOR(fx, machine_is(fx, c, JOB_CANCELED));
	d = fx_retry(fx, jc);
	WAIT_FOR(fx, d->called && machine_nevents(fx, c) == 3);
	assert_true(d->ok);
	machine_assert_event(machine_last(fx, c), JOB_CANCELED, JOB_QUEUED, 2);
	fx_settle(fx);
	assert_waiting(fx, jc);

	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, a, JOB_SUCCEEDED));
	fx_settle(fx);
	/* one of its two targets has ended: it still waits */
	assert_waiting(fx, jc);
	assert_int_equal(machine_nevents(fx, c), 3);

	machine_open_gate(fx, 1, 0);
	WAIT_FOR(fx, machine_is(fx, c, JOB_SUCCEEDED));
	assert_int_equal(machine_nevents(fx, c), 5);
	machine_assert_event(machine_event(fx, c, 3), JOB_QUEUED,
	    JOB_RUNNING, 2);
	assert_true(machine_last(fx, b)->seq < machine_event(fx, c, 3)->seq);
	assert_int_equal(fx->nstarted, 3);
	machine_assert_counts(fx, 0, 0, 3, 0, 0);
}

/* The same with the cancel and the retry in one turn: the cancel of the
 * first attempt is told after the second has registered, and must not
 * take the second's registration with it. */
static void
test_cancel_and_retry_in_one_turn(void **state)
{
	struct machine *fx = *state;
	struct machine_done *d;
	struct job *jb;
	uint64_t a, b;

	a = machine_submit(fx, machine_gated(fx, 0));
	b = machine_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING) &&
	    machine_is(fx, b, JOB_QUEUED));
	fx_cancel(fx, jb, 5);
	d = fx_retry(fx, jb);
	WAIT_FOR(fx, d->called);
	fx_settle(fx);
	assert_int_equal(machine_nevents(fx, b), 3);
	machine_assert_event(machine_event(fx, b, 1), JOB_QUEUED,
	    JOB_CANCELED, 1);
	machine_assert_event(machine_event(fx, b, 2), JOB_CANCELED,
	    JOB_QUEUED, 2);
	assert_waiting(fx, jb);

	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, b, JOB_SUCCEEDED));
	assert_int_equal(machine_nevents(fx, b), 5);
	assert_int_equal(fx->nstarted, 2);
}

/* A job canceled because its target failed, retried: its target is still
 * failed, so it is canceled again at once. */
static void
test_retry_after_failed_target(void **state)
{
	struct machine *fx = *state;
	struct machine_done *d;
	struct job *jb;
	uint64_t a, b;

	a = machine_submit(fx, machine_job(fx, ARGV("false")));
	b = machine_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, machine_is(fx, b, JOB_CANCELED));
	d = fx_retry(fx, jb);
	WAIT_FOR(fx, d->called && machine_nevents(fx, b) == 4);
	machine_assert_event(machine_event(fx, b, 2), JOB_CANCELED,
	    JOB_QUEUED, 2);
	machine_assert_event(machine_event(fx, b, 3), JOB_QUEUED,
	    JOB_CANCELED, 2);
	assert_int_equal(fx->nstarted, 1);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_after_success_waits_then_runs),
		T(test_after_failure_cancels),
		T(test_after_target_retried),
		T(test_after_two),
		T(test_chain_of_200),
		T(test_after_unknown),
		T(test_after_ended),
		T(test_waiting_canceled),
		T(test_canceled_retried_counted_once),
		T(test_cancel_and_retry_in_one_turn),
		T(test_retry_after_failed_target),
	};

	/* the pool's contract: a dead worker's socket is an error, not a
	 * signal */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
