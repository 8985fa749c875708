/* jobs-changed.c - what another daemon sharing the store did to a job: this
 * daemon's counts, semaphore and runs follow the job's new row, and the
 * change is published like any other. */
#include <signal.h>
#include <string.h>

#include "config.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "psem.h"
#include "resources.h"
#include "run.h"
#include "store.h"
#include "triaged.h"

/* The job's priority by name; a name this daemon does not have (the
 * cluster's priorities are checked to be ours) counts under the first. */
static unsigned
jobs_changed_prio(const struct triaged *td, const struct job *job)
{
	int prio = config_priority_find(td->cfg, job->priority);

	return prio < 0 ? 0 : (unsigned)prio;
}

/* Whether the row says the attempt runs here: begun or running, on this
 * node. */
static bool
jobs_changed_ours(const struct triaged *td, const struct job *job)
{
	return (job->state == JOB_RUNNING ||
	    (job->state == JOB_QUEUED && job->run->begun)) &&
	    job->node != NULL && strcmp(job->node, td->cfg->cluster.node) == 0;
}

/* Whether the row says the attempt runs on another node, holding its
 * slots there. */
static bool
jobs_changed_there(const struct triaged *td, const struct job *job)
{
	return (job->state == JOB_RUNNING ||
	    (job->state == JOB_QUEUED && job->run->begun)) &&
	    job->node != NULL && strcmp(job->node, td->cfg->cluster.node) != 0;
}

/* Counts job's slots as held elsewhere in its priority (on), or no more:
 * max_running is the cluster's. */
static void
jobs_changed_elsewhere(struct triaged *td, struct job *job, bool on)
{
	struct psem_prio_stats st;
	unsigned prio = job->waiter.prio;

	if (job->shared.elsewhere == on ||
	    psem_prio_stats(td->sem, prio, &st) != 0)
		return;
	job->shared.elsewhere = on;
	psem_set_elsewhere(td->sem, prio, on ? st.elsewhere + job->slots :
	    st.elsewhere >= job->slots ? st.elsewhere - job->slots : 0);
}

/*
 * Its slots, and its share of the counters the cluster shares, counted as
 * held elsewhere or not as its row says. The counters are not let go of
 * and counted again around a change of the row as the slots are
 * (jobs_changed_updated): a grant in between would claim units that are
 * not free, for the database to refuse.
 */
void
jobs_count_elsewhere(struct triaged *td, struct job *job)
{
	bool there = jobs_changed_there(td, job);

	resources_elsewhere(td, job, there);
	jobs_changed_elsewhere(td, job, there);
}

/* Out of the semaphore and the queue of begin times: the row decides
 * afresh where it goes. */
static void
jobs_changed_unqueue(struct triaged *td, struct job *job)
{
	switch (psem_waiter_state(&job->waiter)) {
	case PSEM_QUEUED:
	case PSEM_GRANTED:
		psem_cancel(td->sem, &job->waiter);
		break;
	case PSEM_HELD:
		psem_release(td->sem, &job->waiter);
		break;
	case PSEM_IDLE:
		break;
	}
	jobs_unqueue(td, job);
}

/* A queued job nobody has begun waits its turn here too. */
static void
jobs_changed_admit(struct triaged *td, struct job *job)
{
	if (job->state == JOB_QUEUED && !job->run->begun)
		jobs_admit(td, job);
	else if (job_state_terminal(job->state))
		store_forget_env(td->store, job);
}

static void
jobs_changed_new(struct triaged *td, struct job *job)
{
	jobs_loaded(td, job, jobs_changed_prio(td, job));
	jobs_count_elsewhere(td, job);
	jobs_seen_seq(td, job->seq);
	jobs_changed_admit(td, job);
	jobs_record_change(td, job, job->state, NULL);
}

static void
jobs_changed_updated(struct triaged *td, struct job *job,
    const struct job_status *before)
{
	unsigned prio = jobs_changed_prio(td, job);

	jobs_drop_pending(td, job->id);
	jobs_changed_elsewhere(td, job, false);
	jobs_count_job(td, job, job->waiter.prio, before->state, before->held,
	    -1);
	jobs_count_job(td, job, prio, job->state, job->held, 1);
	jobs_seen_seq(td, job->seq);
	if (run_has(td->run, job)) {
		/* Its run here ends when the row says it is no longer
		 * ours; the run's end then only lets go of its slots. */
		if (!jobs_changed_ours(td, job) ||
		    job->attempt != before->attempt) {
			log_warnx("job %llu: taken from this node (now %s on "
			    "%s, attempt %u): its run here is killed",
			    (unsigned long long)job->id,
			    job_state_name(job->state),
			    job->node != NULL ? job->node : "no node",
			    job->attempt);
			job->shared.taken = true;
			run_stop(td->run, job, JOB_LOST, SIGKILL,
			    "taken by another node");
		}
	} else {
		jobs_changed_unqueue(td, job);
		job->waiter.prio = prio;
		jobs_changed_admit(td, job);
	}
	jobs_count_elsewhere(td, job);
	/* Listeners take a change that keeps the state for a submission:
	 * say what it is. */
	jobs_record_change(td, job, before->state,
	    before->state != job->state ? NULL :
	    before->held != job->held ? (job->held ? "held" : "released") :
	    before->frozen != job->frozen ? (job->frozen ? "frozen" :
	    "thawed") : "updated");
	if (job->shared.cancel.again) {
		job->shared.cancel.again = false;
		if (!job_state_terminal(job->state)) {
			log_notice("job %llu: canceled again: node %s changed "
			    "it before the cancel was written",
			    (unsigned long long)job->id, job->node != NULL ?
			    job->node : "?");
			jobs_cancel(td, job, job->shared.cancel.by,
			    job->shared.cancel.sig);
		}
	}
}

static void
jobs_changed_gone(struct triaged *td, struct job *job)
{
	jobs_drop_pending(td, job->id);
	/* Only ended jobs are removed; a run here would hold it. */
	if (run_has(td->run, job)) {
		log_warnx("job %llu: removed by another node while it runs "
		    "here", (unsigned long long)job->id);
		run_stop(td->run, job, JOB_LOST, SIGKILL, "removed");
	}
	jobs_changed_unqueue(td, job);
	jobs_changed_elsewhere(td, job, false);
	resources_elsewhere(td, job, false);
	jobs_count_job(td, job, job->waiter.prio, job->state, job->held, -1);
}

static void
jobs_changed_cb(struct job *job, enum store_change what,
    const struct job_status *before, void *arg)
{
	struct triaged *td = arg;

	switch (what) {
	case STORE_CHANGE_NEW:
		jobs_changed_new(td, job);
		break;
	case STORE_CHANGE_CLAIM_REFUSED:
		/* Our claim undone: its launch must not happen. */
		if (job->state == JOB_QUEUED && job->run->begun)
			jobs_run(job)->begun = false;
		/* FALLTHROUGH */
	case STORE_CHANGE_REFUSED:
		log_debug("job %llu: a write of it was refused (version %u): "
		    "another node changed it first", (unsigned long long)
		    job->id, job->store.version);
		/* What it was to do is off (a launch, events); its row,
		 * read back, says what it does now. A cancel of ours was
		 * answered: it is done again on that row. */
		jobs_drop_pending(td, job->id);
		job->shared.refused++;
		if (job->state == JOB_CANCELED && job->shared.cancel.sig != 0)
			job->shared.cancel.again = true;
		if (!run_has(td->run, job))
			jobs_changed_unqueue(td, job);
		break;
	case STORE_CHANGE_UPDATED:
		log_debug("job %llu: now %s%s, attempt %u, node %s, version %u",
		    (unsigned long long)job->id, job_state_name(job->state),
		    job->run->begun ? " (begun)" : "", job->attempt,
		    job->node != NULL ? job->node : "none", job->store.version);
		jobs_changed_updated(td, job, before);
		break;
	case STORE_CHANGE_GONE:
		jobs_changed_gone(td, job);
		break;
	}
}

/* Another node paused or resumed a priority: so does this one. */
static void
jobs_changed_paused_cb(const char *name, bool paused, void *arg)
{
	struct triaged *td = arg;
	int prio = config_priority_find(td->cfg, name);

	if (prio < 0)
		return;
	if (paused)
		psem_pause(td->sem, (unsigned)prio);
	else
		psem_resume(td->sem, (unsigned)prio);
	log_notice("%s %s by another node", paused ? "paused" : "resumed",
	    name);
}

void
jobs_follow_store(struct triaged *td)
{
	store_set_changed_cb(td->store, jobs_changed_cb, td);
	store_set_paused_cb(td->store, jobs_changed_paused_cb, td);
}

uint16_t
jobs_edit_mark(const struct job *job)
{
	return job->shared.refused;
}

bool
jobs_edit_undone(const struct job *job, uint16_t mark)
{
	return job->shared.refused != mark;
}
