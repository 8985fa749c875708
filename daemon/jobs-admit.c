/* jobs-admit.c - a job's way into the semaphore's queue, once on disk or
 * read back: the gate of what it runs after, and its begin_at. */
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
#include "resources.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"

void
jobs_set_gate(struct triaged *td, jobs_gate_cb cb, void *arg)
{
	td->jobs->gate = cb;
	td->jobs->gate_arg = arg;
}

void
jobs_acquire(struct triaged *td, struct job *job)
{
	unsigned cap;

	psem_waiter_order(&job->waiter, job->seq);
	/* What it wants as the config and the job are now: an update or a
	 * reload may have changed either since it last waited. */
	if (resources_want(td, job) != 0) {
		log_warnx("job %llu: %s", (unsigned long long)job->id,
		    job->run->reason);
		jobs_change(td, job, JOB_CANCELED);
		return;
	}
	switch (psem_acquire(td->sem, &job->waiter)) {
	case 1:
		jobs_begin(td, job);
		break;
	case 0:
		break;
	default:
		/* Submissions are checked against the semaphore; a job loaded
		 * from disk may need more than a changed config gives. */
		cap = td->cfg->priorities[job->waiter.prio].max_running;
		if (job->slots > psem_permits(td->sem) ||
		    (cap != 0 && job->slots > cap))
			job_set_reason(job, "it needs %u slots, and priority "
			    "%s can never give it that many", job->slots,
			    job->priority);
		else
			job_set_reason(job, "it asks for more memory or "
			    "resources than this daemon has");
		log_warnx("job %llu: %s", (unsigned long long)job->id,
		    job->run->reason);
		jobs_change(td, job, JOB_CANCELED);
		break;
	}
}

/* Arms the one timer for the earliest begin_at, or stops it. */
static void
jobs_begin_arm(struct triaged *td)
{
	struct jobs *js = td->jobs;
	struct job *first = beginq_first(&js->beginq);
	int64_t wait;
	struct timeval tv;

	if (first == NULL) {
		evtimer_del(js->begin_ev);
		return;
	}
	wait = first->extra->begin_at - timefmt_now();
	tv = timefmt_tv(wait > 0 ? (uint64_t)wait : 0);
	evtimer_add(js->begin_ev, &tv);
}

/* Free to go but for its begin_at: it waits in the queue of begin times. */
static void
jobs_begin_later(struct triaged *td, struct job *job)
{
	struct jobs *js = td->jobs;

	if (job->admit.begin_slot == 0 && beginq_add(&js->beginq, job) != 0) {
		/* Out of memory: early rather than never. */
		log_warnx("job %llu: out of memory: it starts before its "
		    "begin_at", (unsigned long long)job->id);
		jobs_acquire(td, job);
		return;
	}
	jobs_begin_arm(td);
}

/*
 * The jobs whose begin_at has come join the tails of their queues, in
 * begin order: from then on they wait like jobs just submitted. The wall
 * clock decides, as begin_at is wall-clock time: a timer that fires early
 * (the clock was set back) arms itself again.
 */
void
jobs_begin_cb(evutil_socket_t fd, short what, void *arg)
{
	struct triaged *td = arg;
	struct jobs *js = td->jobs;
	int64_t now = timefmt_now();
	struct job *job;

	(void)fd;
	(void)what;
	while ((job = beginq_first(&js->beginq)) != NULL &&
	    job->extra->begin_at <= now) {
		beginq_remove(&js->beginq, job);
		job->seq = js->next_seq++;
		store_update(td->store, job);
		jobs_try_acquire(td, job);
	}
	jobs_begin_arm(td);
}

/* Whether this node may run job: any may, but a job pinned to another. */
static bool
jobs_runs_here(const struct triaged *td, const struct job *job)
{
	return job->extra->pinned_node == NULL ||
	    strcmp(job->extra->pinned_node, td->cfg->cluster.node) == 0;
}

void
jobs_try_acquire(struct triaged *td, struct job *job)
{
	/* A job pinned to another node waits for that node's slots. */
	if (job->state != JOB_QUEUED || job->held || job->admit.gated ||
	    psem_waiter_state(&job->waiter) != PSEM_IDLE ||
	    !jobs_runs_here(td, job))
		return;
	if (job->extra->begin_at >= 0 && job->extra->begin_at > timefmt_now()) {
		jobs_begin_later(td, job);
		return;
	}
	jobs_acquire(td, job);
}

void
jobs_unqueue(struct triaged *td, struct job *job)
{
	if (psem_waiter_state(&job->waiter) == PSEM_QUEUED)
		psem_cancel(td->sem, &job->waiter);
	if (job->admit.begin_slot != 0) {
		beginq_remove(&td->jobs->beginq, job);
		jobs_begin_arm(td);
	}
}

void
jobs_enqueue(struct triaged *td, struct job *job)
{
	/* Free to go now: it joins the tail, and keeps that place across a
	 * restart. */
	job->admit.gated = false;
	job->seq = td->jobs->next_seq++;
	store_update(td->store, job);
	jobs_try_acquire(td, job);
}

void
jobs_admit(struct triaged *td, struct job *job)
{
	struct jobs *js = td->jobs;

	switch (js->gate != NULL ? js->gate(td, job, js->gate_arg) : 1) {
	case 1:
		jobs_try_acquire(td, job);
		break;
	case 0:
		job->admit.gated = true;
		break;
	default:
		jobs_change(td, job, JOB_CANCELED);
		break;
	}
}

void
jobs_loaded(struct triaged *td, struct job *job, unsigned prio)
{
	psem_waiter_init(&job->waiter, prio, job->slots);
	jobs_tally(td->jobs, job, prio, job->state, 1);
	if (job_state_terminal(job->state))
		store_forget_env(td->store, job);
}

/* A submission on its way to the disk, and its place among the changes
 * to publish, taken when it was made: its event goes out in that order. */
struct jobs_admission {
	TAILQ_ENTRY(jobs_admission) entry;
	struct job *job;
	struct triaged *td;
	jobs_done_cb done_cb;
	void *arg;
	struct jobs_item *queued;
};

static void
jobs_added_cb(struct job *job, bool ok, const char *cause, void *arg)
{
	static const struct timeval now = { 0, 0 };
	struct jobs_admission *a = arg;
	struct triaged *td = a->td;
	struct jobs *js = td->jobs;
	unsigned prio = job->waiter.prio;
	bool claimed;

	TAILQ_REMOVE(&js->admissions, a, entry);
	jobs_tally_staged(js, job, prio, -1);
	if ((claimed = job->run->begun))
		js->claimed_staged -= job->slots;
	if (!ok) {
		/* Its place is published as nothing (no job has its id), and
		 * keeps nothing behind it waiting. A key taken by another
		 * node is no fault: the submitter gets that node's job. */
		if (cause != store_key_taken)
			log_warnx("a new job could not be stored: %s", cause);
		a->queued->gen = 0;
		evtimer_add(js->publish_ev, &now);
		job_free(job);
		a->done_cb(td, NULL, cause, a->arg);
	} else {
		/* Its id: a store shared with other daemons gives it only
		 * with the commit. */
		a->queued->id = job->id;
		jobs_tally(js, job, prio, JOB_QUEUED, 1);
		/* Inserted begun (jobs_starts_at_once): admission decides,
		 * and the row of one it does not start is written back. */
		if (claimed)
			jobs_run(job)->begun = false;
		job_status_get(job, &a->queued->status);
		jobs_admit(td, job);
		if (claimed && job->state == JOB_QUEUED && !job->run->begun)
			store_update(td->store, job);
		a->done_cb(td, job, NULL, a->arg);
	}
	free(a);
}

/*
 * Whether new job would start here at once: slots free (those of the jobs
 * inserted begun before it, not yet stored, aside), nothing waiting for
 * them, and the job asking for nothing else and waiting for nothing.
 * In a cluster its insert is then its claim too (its row written begun on
 * this node): one commit before it runs, not two. A guess, on the safe
 * side: admission still decides once the job is stored.
 */
static bool
jobs_starts_at_once(const struct triaged *td, const struct job *job)
{
	unsigned p;

	if (!td->cfg->cluster.enabled || job->held || job->memory != 0 ||
	    job->extra->resources != NULL || job->extra->nafter != 0 ||
	    job->extra->nafter_any != 0 || job->extra->begin_at >= 0 ||
	    !jobs_runs_here(td, job) || psem_available(td->sem) <
	    td->jobs->claimed_staged + job->slots)
		return false;
	for (p = 0; p < psem_priorities(td->sem); p++)
		if (psem_first(td->sem, p) != NULL)
			return false;
	return true;
}

int
jobs_submit(struct triaged *td, struct job *job, unsigned prio,
    jobs_done_cb done_cb, void *arg)
{
	struct jobs_admission *a;

	if ((a = calloc(1, sizeof *a)) == NULL ||
	    (a->queued = calloc(1, sizeof *a->queued)) == NULL) {
		free(a);
		return -1;
	}
	a->td = td;
	a->done_cb = done_cb;
	a->arg = arg;
	job->submitted_at = timefmt_now();
	job->state = JOB_QUEUED;
	job->seq = td->jobs->next_seq++;
	psem_waiter_init(&job->waiter, prio, job->slots);
	if (store_add(td->store, job, jobs_added_cb, a) != 0) {
		free(a->queued);
		free(a);
		return -1;
	}
	jobs_tally_staged(td->jobs, job, prio, 1);
	/* Staged, its row is made at the turn's commit: begun, if so. */
	if (jobs_starts_at_once(td, job) &&
	    job_set_node(job, td->cfg->cluster.node) == 0) {
		jobs_run(job)->begun = true;
		td->jobs->claimed_staged += job->slots;
	}
	a->job = job;
	TAILQ_INSERT_TAIL(&td->jobs->admissions, a, entry);
	/* Its place among the changes to publish is taken now; its id and
	 * status once the commit is over. */
	a->queued->kind = JOBS_EVENT;
	a->queued->from = JOB_QUEUED;
	jobs_item_add(td, a->queued, store_generation(td->store));
	return 0;
}

bool
jobs_staged_key(const struct triaged *td, uid_t uid, const char *key)
{
	const struct jobs_admission *a;
	const struct job *job;

	TAILQ_FOREACH(a, &td->jobs->admissions, entry) {
		job = a->job;
		if (job->uid == uid && job->extra->key != NULL &&
		    strcmp(job->extra->key, key) == 0)
			return true;
	}
	return false;
}

void
jobs_renumber_admissions(struct triaged *td, const int *map)
{
	struct jobs_admission *a;

	TAILQ_FOREACH(a, &td->jobs->admissions, entry)
		a->job->waiter.prio = (unsigned)map[a->job->waiter.prio];
}
