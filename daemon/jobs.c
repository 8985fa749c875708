/* jobs.c - the job state machine's state: its counts, and each change of a
 * job's state, recorded to publish (jobs-*.c hold its other parts). */
#include <errno.h>

#include "beginq.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "uidcount.h"

struct job_run *
jobs_run(struct job *job)
{
	struct job_run *run = job_run_edit(job);

	if (run == NULL)
		fatalx("job %llu: out of memory for its run",
		    (unsigned long long)job->id);
	return run;
}

void
jobs_tally(struct jobs *js, const struct job *job, unsigned prio,
    enum job_state state, int delta)
{
	js->counts[prio][state] += (unsigned)delta;
	if (state == JOB_QUEUED && job->held)
		js->held[prio] += (unsigned)delta;
	/* Out of memory, a count stays short, and errs on the lenient side. */
	if (state == JOB_QUEUED)
		(void)uidcount_add(&js->queued_by_uid, job->uid, delta);
}

void
jobs_tally_staged(struct jobs *js, const struct job *job, unsigned prio,
    int delta)
{
	js->staged[prio] += (unsigned)delta;
	(void)uidcount_add(&js->queued_by_uid, job->uid, delta);
}

void
jobs_change(struct triaged *td, struct job *job, enum job_state to)
{
	struct jobs *js = td->jobs;
	enum job_state from = job->state;
	unsigned prio = job->waiter.prio;
	int64_t now = timefmt_now();

	jobs_tally(js, job, prio, from, -1);
	if (to != JOB_QUEUED) {
		/* Held and begin_at keep a queued job out: nothing else. */
		job->held = false;
		job->admit.gated = false;
		beginq_remove(&js->beginq, job);
	}
	/* Only a running job is frozen: its run has ended. */
	if (to != JOB_RUNNING)
		job->frozen = false;
	jobs_tally(js, job, prio, to, 1);
	if (to == JOB_RUNNING)
		jobs_run(job)->started_at = now;
	job->state = to;
	if (job_state_terminal(to)) {
		jobs_run(job)->finished_at = now;
		/* It was written at insert; memory is for the living. */
		store_forget_env(td->store, job);
	}
	if (to == JOB_RUNNING)
		store_update_nosync(td->store, job);
	else
		store_update(td->store, job);
	jobs_record(td, job, from, NULL, jobs_gen(td));
}

void
jobs_set_held(struct triaged *td, struct job *job, bool held)
{
	if (job->held == held)
		return;
	jobs_tally(td->jobs, job, job->waiter.prio, job->state, -1);
	job->held = held;
	jobs_tally(td->jobs, job, job->waiter.prio, job->state, 1);
}

void
jobs_move(struct triaged *td, struct job *job, unsigned prio)
{
	struct jobs *js = td->jobs;

	jobs_tally(js, job, job->waiter.prio, job->state, -1);
	job->waiter.prio = prio;
	jobs_tally(js, job, prio, job->state, 1);
	job->seq = js->next_seq++;
}

void
jobs_edited(struct triaged *td, struct job *job, const char *change)
{
	store_update(td->store, job);
	jobs_record(td, job, job->state, change, jobs_gen(td));
}

void
jobs_count_job(struct triaged *td, struct job *job, unsigned prio,
    enum job_state state, bool held, int delta)
{
	bool now = job->held;

	job->held = held;
	jobs_tally(td->jobs, job, prio, state, delta);
	job->held = now;
}

void
jobs_seen_seq(struct triaged *td, int64_t seq)
{
	if (seq >= td->jobs->next_seq)
		td->jobs->next_seq = seq + 1;
}

void
jobs_set_next_seq(struct triaged *td, int64_t seq)
{
	td->jobs->next_seq = seq;
}

int
jobs_forget(struct triaged *td, uint64_t id)
{
	struct job *job = store_get(td->store, id);
	unsigned prio;
	enum job_state state;

	if (job == NULL) {
		errno = ENOENT;
		return -1;
	}
	prio = job->waiter.prio;
	state = job->state;
	jobs_tally(td->jobs, job, prio, state, -1);
	if (store_remove(td->store, id) != 0) {
		jobs_tally(td->jobs, job, prio, state, 1);
		return -1;
	}
	return 0;
}
