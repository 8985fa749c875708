/* test-jobs-machine.c - the job state machine on a bare event_base with a real
 * store, semaphore, executor and pool: what it publishes, when, in order. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cmocka.h>

#include "job.h"
#include "jobs.h"
#include "machine.h"
#include "pool.h"
#include "psem.h"
#include "run.h"
#include "store.h"

#define ARGV(...)	((const char *const []){ __VA_ARGS__, NULL })
#define WAIT_FOR(fx, cond)	LOOP_WAIT_FOR(&(fx)->loop, cond)

/* Commits fail while the file size limit is 0: see fx_limit_fsize. */
static bool fsize_limited;
static struct rlimit fsize;

/* Commits work again (and the test's own output reaches its file). */
static void
fx_unlimit_fsize(struct machine *fx)
{
	if (!fsize_limited)
		return;
	setrlimit(RLIMIT_FSIZE, &fsize);
	signal(SIGXFSZ, SIG_DFL);
	fsize_limited = false;
	fx->loop.fail_cb = NULL;
}

/* A failing wait gets its message out first. */
static void
fsize_fail_cb(void *arg)
{
	fx_unlimit_fsize(arg);
}

static int
setup(void **state)
{
	return (*state = machine_new("test-jobs-machine")) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	fx_unlimit_fsize(*state);
	machine_free(*state);
	return 0;
}

/* ---- submission ---- */

/*
 * A submission is staged, and nobody hears of it until its commit is over:
 * then done_cb, then its queued event; it runs, and its changes come in
 * order, each once on disk (the listener checks the file).
 */
static void
test_submit_then_run(void **state)
{
	struct machine *fx = *state;
	struct machine_done *d;
	struct job *job;
	uint64_t id;

	job = machine_gated(fx, 0);
	id = machine_submit(fx, job);
	d = machine_sub(fx, id);
	assert_int_equal(jobs_staged(&fx->td, MACHINE_PRIO_NORMAL), 1);
	machine_assert_counts(fx, 0, 0, 0, 0, 0);
	assert_null(store_get(fx->td.store, id));
	assert_int_equal(d->called, 0);
	assert_int_equal(fx->nev, 0);

	WAIT_FOR(fx, d->called);
	assert_true(d->ok);
	assert_int_equal(d->nev, 0);	/* nothing told before it */
	assert_int_equal(jobs_staged(&fx->td, -1), 0);
	machine_assert_counts(fx, 1, 0, 0, 0, 0);
	WAIT_FOR(fx, machine_is(fx, id, JOB_QUEUED));
	machine_assert_event(machine_event(fx, id, 0), JOB_QUEUED,
	    JOB_QUEUED, 1);
	assert_true(machine_event(fx, id, 0)->seq > d->seq);

	WAIT_FOR(fx, machine_is(fx, id, JOB_RUNNING));
	machine_assert_event(machine_event(fx, id, 1), JOB_QUEUED,
	    JOB_RUNNING, 1);
	assert_true(machine_event(fx, id, 1)->pid > 0);
	assert_int_equal(machine_event(fx, id, 1)->pid, job->run->pid);
	machine_assert_counts(fx, 0, 1, 0, 0, 0);
	assert_int_equal(pool_busy(fx->td.pool), 1);

	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, id, JOB_SUCCEEDED));
	machine_assert_event(machine_event(fx, id, 2), JOB_RUNNING,
	    JOB_SUCCEEDED, 1);
	assert_int_equal(machine_nevents(fx, id), 3);
	machine_assert_counts(fx, 0, 0, 1, 0, 0);
	assert_int_equal(job->run->exit_code, 0);
	assert_null(job->run->reason);
	assert_false(run_has(fx->td.run, job));
}

/* Three jobs on two slots: the third waits its turn in the semaphore;
 * every running event has its pid, and the counters follow each step. */
static void
test_counts_follow_states(void **state)
{
	struct machine *fx = *state;
	uint64_t a, b, c;
	struct job *jc;
	int i;

	a = machine_submit(fx, machine_gated(fx, 0));
	b = machine_submit(fx, machine_gated(fx, 1));
	c = machine_submit(fx, jc = machine_gated(fx, 2));
	assert_int_equal(jobs_staged(&fx->td, -1), 3);
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING) &&
	    machine_is(fx, b, JOB_RUNNING));
	machine_assert_counts(fx, 1, 2, 0, 0, 0);
	assert_int_equal(psem_waiter_state(&jc->waiter), PSEM_QUEUED);
	assert_int_equal(machine_nevents(fx, c), 1);

	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, c, JOB_RUNNING));
	assert_true(machine_is(fx, a, JOB_SUCCEEDED));
	/* a's end was told before c took its slot */
	assert_true(machine_last(fx, a)->seq < machine_last(fx, c)->seq);
	machine_assert_counts(fx, 0, 2, 1, 0, 0);

	machine_open_gate(fx, 1, 4);
	machine_open_gate(fx, 2, 0);
	WAIT_FOR(fx, machine_is(fx, b, JOB_FAILED) &&
	    machine_is(fx, c, JOB_SUCCEEDED));
	machine_assert_counts(fx, 0, 0, 2, 1, 0);
	assert_string_equal(machine_last(fx, b)->reason,
	    "exited with status 4");
	for (i = 0; i < fx->nev; i++)
		if (fx->ev[i].to == JOB_RUNNING)
			assert_true(fx->ev[i].pid > 0);
	assert_int_equal(fx->nstarted, 3);
}

/* A job needing more slots than there are can never run: canceled, with a
 * reason, once it is on disk. */
static void
test_too_many_slots(void **state)
{
	struct machine *fx = *state;
	struct job *job = machine_job(fx, ARGV("true"));
	uint64_t id;

	job->slots = 3;
	id = machine_submit(fx, job);
	WAIT_FOR(fx, machine_is(fx, id, JOB_CANCELED));
	machine_assert_event(machine_event(fx, id, 0), JOB_QUEUED,
	    JOB_QUEUED, 1);
	machine_assert_event(machine_event(fx, id, 1), JOB_QUEUED,
	    JOB_CANCELED, 1);
	assert_non_null(strstr(machine_last(fx, id)->reason, "needs 3 slots"));
	assert_int_equal(fx->nstarted, 0);
	machine_assert_counts(fx, 0, 0, 0, 0, 1);
}

/* ---- barriers ---- */

/* A barrier, whose callback does not run inside the call. */
static struct machine_done *
fx_after_commit(struct machine *fx)
{
	struct machine_done *b = machine_after_commit(fx);

	assert_int_equal(b->called, 0);
	return b;
}

/*
 * jobs_after_commit's callback runs from the loop, never inside the call,
 * and after every change recorded before it has been published: here three
 * cancels waiting for their commit.
 */
static void
test_after_commit(void **state)
{
	struct machine *fx = *state;
	struct machine_done *b;
	struct job *job[3];
	uint64_t id[3];
	int i, nev;

	/* nothing pending: still not inside the call */
	b = fx_after_commit(fx);
	WAIT_FOR(fx, b->called);
	assert_int_equal(b->nev, 0);

	jobs_set_paused(&fx->td, MACHINE_PRIO_NORMAL, true, 0);
	for (i = 0; i < 3; i++)
		id[i] = machine_submit(fx,
		    job[i] = machine_job(fx, ARGV("true")));
	WAIT_FOR(fx, machine_is(fx, id[0], JOB_QUEUED) &&
	    machine_is(fx, id[1], JOB_QUEUED) &&
	    machine_is(fx, id[2], JOB_QUEUED));
	machine_assert_counts(fx, 3, 0, 0, 0, 0);

	nev = fx->nev;
	fx->in_call = true;
	for (i = 0; i < 3; i++)
		jobs_cancel(&fx->td, job[i], 1000, SIGTERM);
	fx->in_call = false;
	/* counted at once, told after the commit */
	machine_assert_counts(fx, 0, 0, 0, 0, 3);
	assert_int_equal(fx->nev, nev);
	b = fx_after_commit(fx);
	WAIT_FOR(fx, b->called);
	assert_int_equal(b->called, 1);
	assert_int_equal(b->nev, nev + 3);
	for (i = 0; i < 3; i++) {
		assert_true(machine_is(fx, id[i], JOB_CANCELED));
		assert_true(machine_last(fx, id[i])->seq < b->seq);
	}
	jobs_set_paused(&fx->td, MACHINE_PRIO_NORMAL, false, 0);
	assert_int_equal(fx->nstarted, 0);
}

/* Two barriers run in the order they were asked for, each after the
 * changes made before it, not those made between them. */
static void
test_after_commit_order(void **state)
{
	struct machine *fx = *state;
	struct machine_done *b1, *b2;
	struct job *j1, *j2;
	uint64_t id1, id2;

	jobs_set_paused(&fx->td, MACHINE_PRIO_NORMAL, true, 0);
	id1 = machine_submit(fx, j1 = machine_job(fx, ARGV("true")));
	id2 = machine_submit(fx, j2 = machine_job(fx, ARGV("true")));
	WAIT_FOR(fx, machine_is(fx, id1, JOB_QUEUED) &&
	    machine_is(fx, id2, JOB_QUEUED));

	fx->in_call = true;
	jobs_cancel(&fx->td, j1, 0, SIGTERM);
	fx->in_call = false;
	b1 = fx_after_commit(fx);
	fx->in_call = true;
	jobs_cancel(&fx->td, j2, 0, SIGTERM);
	fx->in_call = false;
	b2 = fx_after_commit(fx);
	WAIT_FOR(fx, b2->called);
	assert_int_equal(b1->called, 1);
	assert_true(machine_last(fx, id1)->seq < b1->seq);
	assert_true(b1->seq < b2->seq);
	assert_true(machine_last(fx, id2)->seq < b2->seq);
	jobs_set_paused(&fx->td, MACHINE_PRIO_NORMAL, false, 0);
}

/*
 * A barrier asked for while a submission is staged: the submission's
 * done_cb runs first, both with that commit, and the submission's queued
 * event is published before the barrier's callback (the submission kept
 * its place among the changes).
 */
static void
test_after_commit_staged_submission(void **state)
{
	struct machine *fx = *state;
	struct machine_done *b, *d;
	uint64_t id;

	jobs_set_paused(&fx->td, MACHINE_PRIO_NORMAL, true, 0);
	id = machine_submit(fx, machine_job(fx, ARGV("true")));
	d = machine_sub(fx, id);
	b = fx_after_commit(fx);
	WAIT_FOR(fx, b->called && machine_is(fx, id, JOB_QUEUED));
	assert_true(d->ok);
	assert_true(d->seq < b->seq);
	assert_true(machine_last(fx, id)->seq < b->seq);
	jobs_set_paused(&fx->td, MACHINE_PRIO_NORMAL, false, 0);
}

/* ---- retries and cancel ---- */

/*
 * A failing job with retries = 1: the executor says failed both times, and
 * jobs alone turns the first into another attempt, at the tail of its
 * queue, with a reason saying what happened to the first.
 */
static void
test_automatic_retry(void **state)
{
	struct machine *fx = *state;
	struct job *job = machine_job(fx, ARGV("sh", "-c", "exit 1"));
	uint64_t id;
	int i;

	job->retries = 1;
	id = machine_submit(fx, job);
	WAIT_FOR(fx, machine_is(fx, id, JOB_FAILED));
	assert_int_equal(machine_nevents(fx, id), 5);
	machine_assert_event(machine_event(fx, id, 0), JOB_QUEUED,
	    JOB_QUEUED, 1);
	machine_assert_event(machine_event(fx, id, 1), JOB_QUEUED,
	    JOB_RUNNING, 1);
	machine_assert_event(machine_event(fx, id, 2), JOB_RUNNING,
	    JOB_QUEUED, 2);
	assert_string_equal(machine_event(fx, id, 2)->reason,
	    "attempt 1 failed: exited with status 1");
	machine_assert_event(machine_event(fx, id, 3), JOB_QUEUED,
	    JOB_RUNNING, 2);
	machine_assert_event(machine_event(fx, id, 4), JOB_RUNNING,
	    JOB_FAILED, 2);
	assert_string_equal(machine_event(fx, id, 4)->reason,
	    "exited with status 1");
	assert_true(machine_event(fx, id, 1)->pid > 0);
	assert_true(machine_event(fx, id, 3)->pid > 0);
	/* what the executor said: failed, twice; never "queued" */
	assert_int_equal(fx->nout, 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(fx->out[i].id, id);
		assert_int_equal(fx->out[i].attempt, (unsigned)i + 1);
		assert_int_equal(fx->out[i].state, JOB_FAILED);
		assert_string_equal(fx->out[i].reason, "exited with status 1");
	}
	/* the requeue was told after the outcome that caused it */
	assert_true(fx->out[0].seq < machine_event(fx, id, 2)->seq);
	assert_int_equal(job->retries, 0);
	assert_int_equal(job->attempt, 2);
	assert_int_equal(job->run->exit_code, 1);
	machine_assert_counts(fx, 0, 0, 0, 1, 0);
}

/* A timed-out job with a retry left gets another attempt too. */
static void
test_timeout_retried(void **state)
{
	struct machine *fx = *state;
	struct job *job = machine_job(fx, ARGV("sleep", "100"));
	uint64_t id;

	job->retries = 1;
	job->timeout_ms = 200;
	id = machine_submit(fx, job);
	WAIT_FOR(fx, machine_is(fx, id, JOB_TIMED_OUT));
	assert_int_equal(machine_nevents(fx, id), 5);
	machine_assert_event(machine_event(fx, id, 2), JOB_RUNNING,
	    JOB_QUEUED, 2);
	assert_string_equal(machine_event(fx, id, 2)->reason,
	    "attempt 1 timed_out: timed out after 200ms");
	machine_assert_event(machine_event(fx, id, 4), JOB_RUNNING,
	    JOB_TIMED_OUT, 2);
	assert_string_equal(machine_last(fx, id)->reason,
	    "timed out after 200ms");
	assert_int_equal(fx->out[0].state, JOB_TIMED_OUT);
	assert_int_equal(jobs_count(&fx->td, -1, JOB_TIMED_OUT), 1);
}

/* A queued job, paused or waiting for slots, ends canceled at once, told
 * after its commit; it never runs. */
static void
test_cancel_queued(void **state)
{
	struct machine *fx = *state;
	struct job *holder, *waiting, *paused;
	struct machine_done *barrier;
	uint64_t a, b, c, p;

	/* waiting for slots: a holds both, b and c wait in turn */
	holder = machine_gated(fx, 0);
	holder->slots = 2;
	a = machine_submit(fx, holder);
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING));
	b = machine_submit(fx, waiting = machine_job(fx, ARGV("true")));
	c = machine_submit(fx, machine_job(fx, ARGV("true")));
	WAIT_FOR(fx, machine_is(fx, b, JOB_QUEUED) &&
	    machine_is(fx, c, JOB_QUEUED));
	assert_int_equal(psem_waiter_state(&waiting->waiter), PSEM_QUEUED);

	fx->in_call = true;
	jobs_cancel(&fx->td, waiting, 1234, SIGTERM);
	fx->in_call = false;
	WAIT_FOR(fx, machine_is(fx, b, JOB_CANCELED));
	machine_assert_event(machine_last(fx, b), JOB_QUEUED, JOB_CANCELED, 1);
	assert_string_equal(machine_last(fx, b)->reason,
	    "canceled by uid 1234");
	assert_int_equal(psem_waiter_state(&waiting->waiter), PSEM_IDLE);
	/* the slots go to c, not to the canceled b */
	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, c, JOB_SUCCEEDED));
	assert_int_equal(machine_nevents(fx, b), 2);
	assert_int_equal(waiting->run->pid, 0);

	/* paused */
	jobs_set_paused(&fx->td, MACHINE_PRIO_NORMAL, true, 0);
	p = machine_submit(fx, paused = machine_job(fx, ARGV("true")));
	WAIT_FOR(fx, machine_is(fx, p, JOB_QUEUED));
	assert_int_equal(psem_waiter_state(&paused->waiter), PSEM_QUEUED);
	fx->in_call = true;
	jobs_cancel(&fx->td, paused, 0, SIGTERM);
	/* terminal already: a second cancel changes nothing */
	jobs_cancel(&fx->td, paused, 0, SIGTERM);
	fx->in_call = false;
	WAIT_FOR(fx, machine_is(fx, p, JOB_CANCELED));
	jobs_set_paused(&fx->td, MACHINE_PRIO_NORMAL, false, 0);
	barrier = fx_after_commit(fx);
	WAIT_FOR(fx, barrier->called);
	assert_int_equal(machine_nevents(fx, p), 2);
	machine_assert_counts(fx, 0, 0, 2, 0, 2);
	assert_int_equal(fx->nstarted, 2);	/* a and c */
}

/*
 * Granted its slots, its start on its way to the disk (held, not handed to
 * a worker yet): a cancel gives the slots back and it never runs.
 */
static void
test_cancel_while_start_is_written(void **state)
{
	struct machine *fx = *state;
	struct job *job = machine_job(fx, ARGV("true"));
	struct machine_done *d, *barrier;
	uint64_t id;

	id = machine_submit(fx, job);
	d = machine_sub(fx, id);
	/* the turn that ran done_cb granted it; its start commits in the
	 * next one */
	WAIT_FOR(fx, d->called);
	assert_int_equal(psem_waiter_state(&job->waiter), PSEM_HELD);
	assert_true(job->run->begun);
	assert_false(run_has(fx->td.run, job));
	assert_int_equal(psem_available(fx->td.sem), 1);

	fx->in_call = true;
	jobs_cancel(&fx->td, job, 9, SIGTERM);
	fx->in_call = false;
	assert_int_equal(psem_available(fx->td.sem), 2);
	WAIT_FOR(fx, machine_is(fx, id, JOB_CANCELED));
	barrier = fx_after_commit(fx);
	WAIT_FOR(fx, barrier->called);
	assert_int_equal(machine_nevents(fx, id), 2);
	assert_string_equal(machine_last(fx, id)->reason, "canceled by uid 9");
	assert_false(run_has(fx->td.run, job));
	assert_int_equal(pool_busy(fx->td.pool), 0);
	assert_int_equal(fx->nstarted, 0);
	assert_int_equal(fx->nout, 0);
	machine_assert_counts(fx, 0, 0, 0, 0, 1);
}

/* A running job is stopped (SIGTERM to its group) and ends canceled. */
static void
test_cancel_running(void **state)
{
	struct machine *fx = *state;
	struct job *job = machine_gated(fx, 0);
	uint64_t id = machine_submit(fx, job);

	WAIT_FOR(fx, machine_is(fx, id, JOB_RUNNING));
	fx->in_call = true;
	jobs_cancel(&fx->td, job, 77, SIGTERM);
	fx->in_call = false;
	/* it still runs until its process has ended */
	assert_int_equal(job->state, JOB_RUNNING);
	WAIT_FOR(fx, machine_is(fx, id, JOB_CANCELED));
	machine_assert_event(machine_last(fx, id), JOB_RUNNING,
	    JOB_CANCELED, 1);
	assert_string_equal(machine_last(fx, id)->reason, "canceled by uid 77");
	assert_int_equal(job->run->signal, SIGTERM);
	machine_assert_counts(fx, 0, 0, 0, 0, 1);
}

/*
 * A failed job retried by hand: counted as queued at once, but told only
 * once its commit is over, after the retry's done_cb, as attempt 2; then
 * it runs again.
 */
static void
test_manual_retry(void **state)
{
	struct machine *fx = *state;
	struct job *job = machine_job(fx, ARGV("sh", "-c", "exit 2"));
	struct machine_done *d;
	char *cause = NULL;
	uint64_t id;
	int rc, nev;

	id = machine_submit(fx, job);
	d = &fx->retry[id];
	WAIT_FOR(fx, machine_is(fx, id, JOB_FAILED));
	assert_null(job->env);		/* dropped with the end */
	assert_int_equal(store_env(fx->td.store, job, &cause), 0);
	assert_non_null(job->env);

	nev = fx->nev;
	fx->in_call = true;
	rc = jobs_retry(&fx->td, job, MACHINE_PRIO_NORMAL, machine_done_cb, d);
	fx->in_call = false;
	assert_int_equal(rc, 0);
	assert_int_equal(job->attempt, 2);
	machine_assert_counts(fx, 1, 0, 0, 0, 0);
	assert_int_equal(fx->nev, nev);

	WAIT_FOR(fx, d->called);
	assert_true(d->ok);
	assert_int_equal(d->nev, nev);	/* not told before its commit */
	WAIT_FOR(fx, machine_nevents(fx, id) > 3);
	machine_assert_event(machine_event(fx, id, 3), JOB_FAILED,
	    JOB_QUEUED, 2);
	assert_true(machine_event(fx, id, 3)->seq > d->seq);
	assert_string_equal(machine_event(fx, id, 3)->reason, "");
	WAIT_FOR(fx, machine_is(fx, id, JOB_FAILED));
	machine_assert_event(machine_event(fx, id, 4), JOB_QUEUED,
	    JOB_RUNNING, 2);
	machine_assert_event(machine_event(fx, id, 5), JOB_RUNNING,
	    JOB_FAILED, 2);
	assert_int_equal(fx->nout, 2);
	machine_assert_counts(fx, 0, 0, 0, 1, 0);
}

/* ---- failing commits ---- */

/*
 * Commits fail for real from now on: a file size limit of 0 (SIGXFSZ
 * ignored, as the daemon does) makes every write to the database fail with
 * EFBIG, as a full disk would. Until fx_unlimit_fsize, the test's own
 * output to a file is lost too: observe, then assert after.
 */
static void
fx_limit_fsize(struct machine *fx)
{
	struct rlimit zero;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &fsize), 0);
	zero = (struct rlimit){ 0, fsize.rlim_max };
	signal(SIGXFSZ, SIG_IGN);
	fsize_limited = true;
	fx->loop.fail_cb = fsize_fail_cb;
	fx->loop.fail_arg = fx;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &zero), 0);
}

static void
sync_cb(const char *cause, void *arg)
{
	int *failed = arg;

	*failed = cause != NULL ? 1 : 2;
}

/* Waits for a commit of its own: 1 when it failed, 2 when it worked. */
static int
fx_commit(struct machine *fx)
{
	int result = 0;

	assert_int_equal(store_sync(fx->td.store, sync_cb, &result), 0);
	WAIT_FOR(fx, result != 0);
	return result;
}

/*
 * While commits fail, the job that ends meanwhile is not told of, and the
 * one its slots go to is not handed to a worker, until a commit succeeds;
 * then both happen, in order.
 */
static void
test_commit_failure_holds_everything(void **state)
{
	struct machine *fx = *state;
	struct job *ja, *jb;
	uint64_t a, b;
	int nev;

	/* a holds both slots; b waits for them */
	ja = machine_gated(fx, 0);
	ja->slots = 2;
	a = machine_submit(fx, ja);
	WAIT_FOR(fx, machine_is(fx, a, JOB_RUNNING));
	b = machine_submit(fx, jb = machine_job(fx, ARGV("true")));
	WAIT_FOR(fx, machine_is(fx, b, JOB_QUEUED));
	assert_int_equal(psem_waiter_state(&jb->waiter), PSEM_QUEUED);

	fx_limit_fsize(fx);
	nev = fx->nev;

	machine_open_gate(fx, 0, 0);
	/* a's end reported by the executor, b granted its slots */
	WAIT_FOR(fx, fx->nout == 1 && jb->run->begun);
	/* and commits failing since: two of our own, the store's retry
	 * between them */
	if (fx_commit(fx) != 1 || fx_commit(fx) != 1) {
		fx_unlimit_fsize(fx);
		fail_msg("a commit succeeded under RLIMIT_FSIZE 0");
	}
	{
		/* observed now, asserted once output works again */
		int told = fx->nev - nev, handed = run_has(fx->td.run, jb),
		    busy = (int)pool_busy(fx->td.pool),
		    started = fx->nstarted;
		enum job_state sb = jb->state;

		fx_unlimit_fsize(fx);
		assert_int_equal(told, 0);
		assert_int_equal(handed, 0);
		assert_int_equal(busy, 0);
		assert_int_equal(started, 1);	/* a only */
		assert_int_equal(sb, JOB_QUEUED);
	}
	/* counted already: the counters are memory's */
	assert_int_equal(jobs_count(&fx->td, -1, JOB_SUCCEEDED), 1);

	/* writable again: the next commit (the store retries on its own)
	 * lets everything through, in order */
	WAIT_FOR(fx, machine_is(fx, b, JOB_SUCCEEDED));
	machine_assert_event(machine_event(fx, a, 2), JOB_RUNNING,
	    JOB_SUCCEEDED, 1);
	assert_true(machine_event(fx, a, 2)->seq <
	    machine_event(fx, b, 1)->seq);
	machine_assert_event(machine_event(fx, b, 1), JOB_QUEUED,
	    JOB_RUNNING, 1);
	machine_assert_event(machine_event(fx, b, 2), JOB_RUNNING,
	    JOB_SUCCEEDED, 1);
	assert_int_equal(fx->nstarted, 2);
	machine_assert_counts(fx, 0, 0, 2, 0, 0);
}

/*
 * A retry whose commit fails: done_cb has the cause, the job is put back
 * as it was (failed, attempt 1, its reason), and nobody is told; once
 * commits work again, that is what the disk has.
 */
static void
test_commit_failure_undoes_retry(void **state)
{
	struct machine *fx = *state;
	struct job *job = machine_job(fx, ARGV("sh", "-c", "exit 2"));
	struct machine_done *d = NULL, *barrier;
	enum job_state disk_state;
	unsigned disk_attempt;
	char *cause = NULL;
	uint64_t id;
	int rc, nev, called = 0, ok = 1;

	id = machine_submit(fx, job);
	WAIT_FOR(fx, machine_is(fx, id, JOB_FAILED));
	assert_int_equal(store_env(fx->td.store, job, &cause), 0);
	d = &fx->retry[id];
	nev = fx->nev;

	fx_limit_fsize(fx);
	fx->in_call = true;
	rc = jobs_retry(&fx->td, job, MACHINE_PRIO_NORMAL, machine_done_cb, d);
	fx->in_call = false;
	if (rc == 0)
		WAIT_FOR(fx, d->called);
	called = d->called;
	ok = d->ok;
	fx_unlimit_fsize(fx);
	assert_int_equal(rc, 0);
	assert_int_equal(called, 1);
	assert_false(ok);
	assert_string_not_equal(d->cause, "");

	assert_int_equal(job->state, JOB_FAILED);
	assert_int_equal(job->attempt, 1);
	assert_string_equal(job->run->reason, "exited with status 2");
	assert_null(job->env);
	assert_int_equal(psem_waiter_state(&job->waiter), PSEM_IDLE);
	machine_assert_counts(fx, 0, 0, 0, 1, 0);
	/* the put-back job is what the next commit writes */
	barrier = fx_after_commit(fx);
	WAIT_FOR(fx, barrier->called);
	assert_int_equal(fx_commit(fx), 2);
	assert_int_equal(fx->nev, nev);
	assert_int_equal(machine_disk_row(fx, id, &disk_state,
	    &disk_attempt), 0);
	assert_int_equal(disk_state, JOB_FAILED);
	assert_int_equal(disk_attempt, 1);
	assert_int_equal(fx->nstarted, 1);
}

/* A submission whose commit fails is dropped: done_cb has the cause and no
 * job, nothing is told, and nothing counted. */
static void
test_commit_failure_drops_submission(void **state)
{
	struct machine *fx = *state;
	struct machine_done *d, *barrier;
	uint64_t id;
	int called, ok;

	fx_limit_fsize(fx);
	id = machine_submit(fx, machine_job(fx, ARGV("true")));
	d = machine_sub(fx, id);
	WAIT_FOR(fx, d->called);
	called = d->called;
	ok = d->ok;
	fx_unlimit_fsize(fx);
	assert_int_equal(called, 1);
	assert_false(ok);
	print_message("# cause: %s\n", d->cause);
	assert_string_not_equal(d->cause, "");
	assert_int_equal(jobs_staged(&fx->td, -1), 0);
	machine_assert_counts(fx, 0, 0, 0, 0, 0);
	assert_null(store_get(fx->td.store, id));
	barrier = fx_after_commit(fx);
	WAIT_FOR(fx, barrier->called);
	assert_int_equal(fx->nev, 0);
}

/* ---- reprioritizing (a reload) ---- */

/*
 * The priorities renumbered under a running job and a staged submission:
 * both follow, with their counts; a priority with jobs cannot go, and
 * nothing changes then.
 */
static void
test_reprioritize(void **state)
{
	struct machine *fx = *state;
	struct triaged *td = &fx->td;
	const int busy[3] = { 0, -1, 1 }, map[3] = { 2, 0, -1 };
	uint64_t g, s;

	g = machine_submit(fx, machine_gated(fx, 0));
	WAIT_FOR(fx, machine_is(fx, g, JOB_RUNNING));
	s = machine_submit(fx, machine_job(fx, ARGV("true")));
	assert_int_equal(jobs_staged(td, MACHINE_PRIO_NORMAL), 1);

	assert_int_equal(jobs_reprioritize(td, 2, busy), -1);
	assert_int_equal(psem_priorities(td->sem), 3);
	assert_int_equal(jobs_count(td, MACHINE_PRIO_NORMAL, JOB_RUNNING), 1);

	/* high -> 2, normal -> 0, low goes. */
	assert_int_equal(jobs_reprioritize(td, 3, map), 0);
	assert_int_equal(psem_priorities(td->sem), 3);
	assert_int_equal(jobs_count(td, 0, JOB_RUNNING), 1);
	assert_int_equal(jobs_count(td, 1, JOB_RUNNING), 0);
	assert_int_equal(jobs_staged(td, 0), 1);
	assert_int_equal(jobs_staged(td, 1), 0);
	assert_int_equal(store_get(td->store, g)->waiter.prio, 0);

	WAIT_FOR(fx, machine_sub(fx, s)->called);
	assert_int_equal(jobs_staged(td, -1), 0);
	assert_int_equal(store_get(td->store, s)->waiter.prio, 0);
	machine_open_gate(fx, 0, 0);
	WAIT_FOR(fx, machine_is(fx, g, JOB_SUCCEEDED) &&
	    machine_is(fx, s, JOB_SUCCEEDED));
	assert_int_equal(jobs_count(td, 0, JOB_SUCCEEDED), 2);
	assert_int_equal(jobs_count(td, -1, JOB_SUCCEEDED), 2);
	assert_int_equal(jobs_count(td, -1, JOB_RUNNING), 0);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_reprioritize),
		T(test_submit_then_run),
		T(test_counts_follow_states),
		T(test_too_many_slots),
		T(test_after_commit),
		T(test_after_commit_order),
		T(test_after_commit_staged_submission),
		T(test_automatic_retry),
		T(test_timeout_retried),
		T(test_cancel_queued),
		T(test_cancel_while_start_is_written),
		T(test_cancel_running),
		T(test_manual_retry),
		T(test_commit_failure_holds_everything),
		T(test_commit_failure_undoes_retry),
		T(test_commit_failure_drops_submission),
	};

	/* the pool's contract: a dead worker's socket is an error, not a
	 * signal */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
