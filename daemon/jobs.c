/* jobs.c - the job state machine: its state and counts, each change of a
 * job's state, and what recovery sets up (jobs-*.c hold its other parts). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "beginq.h"
#include "config.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "psem.h"
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

int
jobs_init(struct triaged *td, char **cause)
{
	const struct config *cfg = td->cfg;
	struct jobs *js;
	unsigned i;

	if ((js = calloc(1, sizeof *js)) == NULL ||
	    (js->publish_ev = evtimer_new(td->base, jobs_publish_cb, td))
	    == NULL ||
	    (js->begin_ev = evtimer_new(td->base, jobs_begin_cb, td)) == NULL) {
		if (js != NULL && js->publish_ev != NULL)
			event_free(js->publish_ev);
		free(js);
		*cause = strdup("out of memory");
		return -1;
	}
	TAILQ_INIT(&js->items);
	TAILQ_INIT(&js->launches);
	TAILQ_INIT(&js->admissions);
	TAILQ_INIT(&js->retrials);
	js->durable = store_generation(td->store) - 1;
	td->jobs = js;
	td->sem = psem_new(td->base, cfg->slots, cfg->npriorities,
	    psem_policy_find(cfg->policy));
	if (td->sem == NULL) {
		if (asprintf(cause, "cannot make the semaphore: %m") < 0)
			*cause = NULL;
		jobs_free(td);
		return -1;
	}
	for (i = 0; i < cfg->npriorities; i++) {
		psem_set_weight(td->sem, i, cfg->priorities[i].weight);
		psem_set_cap(td->sem, i, cfg->priorities[i].max_running);
	}
	store_set_committed_cb(td->store, jobs_committed_cb, td);
	store_set_written_cb(td->store, jobs_written_cb, td);
	return 0;
}

void
jobs_free(struct triaged *td)
{
	struct jobs *js = td->jobs;
	struct jobs_item *it;

	if (js == NULL)
		return;
	store_set_committed_cb(td->store, NULL, NULL);
	store_set_written_cb(td->store, NULL, NULL);
	while ((it = TAILQ_FIRST(&js->items)) != NULL) {
		TAILQ_REMOVE(&js->items, it, entry);
		jobs_item_free(it);
	}
	while ((it = TAILQ_FIRST(&js->launches)) != NULL) {
		TAILQ_REMOVE(&js->launches, it, entry);
		jobs_item_free(it);
	}
	event_free(js->publish_ev);
	event_free(js->begin_ev);
	beginq_clear(&js->beginq);
	free(js->listeners);
	free(js->starting);
	uidcount_clear(&js->queued_by_uid);
	free(js);
	td->jobs = NULL;
	psem_free(td->sem);
	td->sem = NULL;
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
		job->gated = false;
		beginq_remove(&js->beginq, job);
	}
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
jobs_loaded(struct triaged *td, struct job *job, unsigned prio)
{
	psem_waiter_init(&job->waiter, prio, job->slots, jobs_grant_cb, td);
	jobs_tally(td->jobs, job, prio, job->state, 1);
	if (job_state_terminal(job->state))
		store_forget_env(td->store, job);
}

void
jobs_recover_begun(struct triaged *td, struct job *job, bool requeue,
    int64_t seq)
{
	if (requeue) {
		job_set_reason(job, NULL);
		job_new_attempt(job);
		job->seq = seq;
		jobs_change(td, job, JOB_QUEUED);
		return;
	}
	job_set_reason(job, "the daemon stopped while it ran");
	jobs_change(td, job, JOB_LOST);
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
