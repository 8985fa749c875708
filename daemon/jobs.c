/* jobs.c - the job state machine: admit a submission to its queue, move jobs
 * through their states, and tell waiters and watchers of every change. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/event.h>

#include "config.h"
#include "deps.h"
#include "jobs.h"
#include "log.h"
#include "pool.h"
#include "psem.h"
#include "rpc.h"
#include "timefmt.h"
#include "run.h"
#include "shutdown.h"
#include "store.h"
#include "triaged.h"
#include "version.h"
#include "wait.h"
#include "watch.h"

/* The semaphore granted the job its slots: it leaves its queue. */
static void
jobs_grant_cb(struct psem_waiter *w, void *arg)
{
	struct job *job = (struct job *)((char *)w - offsetof(struct job, waiter));

	run_start(arg, job);
}

int
jobs_init(struct triaged *td, char **cause)
{
	const struct config *cfg = td->cfg;
	unsigned i;

	td->sem = psem_new(td->base, cfg->slots, cfg->npriorities,
	    psem_policy_find(cfg->policy));
	if (td->sem == NULL) {
		if (asprintf(cause, "cannot make the semaphore: %m") < 0)
			*cause = NULL;
		return -1;
	}
	for (i = 0; i < cfg->npriorities; i++) {
		psem_set_weight(td->sem, i, cfg->priorities[i].weight);
		psem_set_cap(td->sem, i, cfg->priorities[i].max_running);
	}
	return 0;
}

void
jobs_free(struct triaged *td)
{
	psem_free(td->sem);
	td->sem = NULL;
}

void
jobs_set_state(struct triaged *td, struct job *job, enum job_state state)
{
	int64_t now = timefmt_now();

	td->counts[job->state]--;
	td->counts[state]++;
	if (job->state == JOB_RUNNING) {
		td->running--;
		td->prio_running[job->waiter.prio]--;
	}
	if (state == JOB_RUNNING) {
		td->running++;
		td->prio_running[job->waiter.prio]++;
		job->started_at = now;
	}
	job->state = state;
	if (job_state_terminal(state)) {
		job->finished_at = now;
		/* It was written at insert; memory is for the living. */
		job_drop_env(job);
	}
	store_update(td->store, job);
	watch_notify(td, job);
	if (job_state_terminal(state)) {
		wait_job_ended(job);
		deps_job_ended(td, job);
		shutdown_check(td);
	}
}

void
jobs_enqueue(struct triaged *td, struct job *job)
{
	switch (psem_acquire(td->sem, &job->waiter)) {
	case 1:
		run_start(td, job);
		break;
	case 0:
		break;
	default:
		/* Submissions are checked against the semaphore; a job loaded
		 * from disk may need more than a changed config gives. */
		job_set_reason(job, "it needs %u slots, and priority %s can "
		    "never give it that many", job->slots, job->priority);
		log_warnx("job %llu: %s", (unsigned long long)job->id,
		    job->reason);
		jobs_set_state(td, job, JOB_CANCELED);
		break;
	}
}

void
jobs_waiter_init(struct triaged *td, struct job *job, unsigned prio)
{
	psem_waiter_init(&job->waiter, prio, job->slots, jobs_grant_cb, td);
}

void
jobs_admit(struct triaged *td, struct job *job)
{
	switch (deps_check(td, job)) {
	case 1:
		jobs_enqueue(td, job);
		break;
	case 0:
		td->prio_waiting[job->waiter.prio]++;
		log_debug("job %llu waits for %u others",
		    (unsigned long long)job->id, job->waiting_for);
		break;
	default:
		jobs_set_state(td, job, JOB_CANCELED);
		break;
	}
}

void
jobs_stop_waiting(struct triaged *td, struct job *job)
{
	if (job->waiting_for == 0)
		return;
	job->waiting_for = 0;
	td->prio_waiting[job->waiter.prio]--;
}

void
jobs_requeue(struct triaged *td, struct job *job, bool keep_place)
{
	job_new_attempt(job);
	if (!keep_place)
		job->seq = td->next_seq++;
	jobs_set_state(td, job, JOB_QUEUED);
}

/* A submission on its way to the disk, and the request to answer. */
struct jobs_admission {
	struct triaged *td;
	struct rpc_req *req;	/* NULL once its client has gone */
};

static void
jobs_admission_withdraw_cb(struct rpc_req *req, void *arg)
{
	struct jobs_admission *a = arg;

	(void)req;
	a->req = NULL;
}

static void
jobs_added_cb(struct job *job, bool ok, const char *cause, void *arg)
{
	struct jobs_admission *a = arg;
	struct triaged *td = a->td;

	td->prio_staged[job->waiter.prio]--;
	if (!ok) {
		log_warnx("a new job could not be stored: %s", cause);
		if (a->req != NULL)
			rpc_error(a->req, RPC_INTERNAL_ERROR, NULL,
			    "the job could not be stored: %s", cause);
		job_free(job);
	} else {
		td->counts[JOB_QUEUED]++;
		log_debug("job %llu queued at %s: %s",
		    (unsigned long long)job->id, job->priority, job->name);
		watch_notify(td, job);
		jobs_admit(td, job);
		if (a->req != NULL)
			rpc_reply(a->req, jobs_json(td, job));
	}
	free(a);
	/* Draining waits for staged jobs too: this one is settled. */
	shutdown_check(td);
}

int
jobs_submit(struct triaged *td, struct job *job, unsigned prio,
    struct rpc_req *req)
{
	struct jobs_admission *a;

	if ((a = calloc(1, sizeof *a)) == NULL)
		return -1;
	a->td = td;
	a->req = req;
	job->submitted_at = timefmt_now();
	job->state = JOB_QUEUED;
	job->seq = td->next_seq++;
	jobs_waiter_init(td, job, prio);
	if (store_add(td->store, job, jobs_added_cb, a) != 0) {
		free(a);
		return -1;
	}
	td->prio_staged[prio]++;
	rpc_defer(req, jobs_admission_withdraw_cb, a);
	return 0;
}

void
jobs_cancel(struct triaged *td, struct job *job, uid_t by)
{
	switch (job->state) {
	case JOB_QUEUED:
		/* Not in the semaphore when it waits for other jobs. */
		if (psem_waiter_state(&job->waiter) != PSEM_IDLE)
			psem_cancel(td->sem, &job->waiter);
		jobs_stop_waiting(td, job);
		job_set_reason(job, "canceled by uid %u", (unsigned)by);
		jobs_set_state(td, job, JOB_CANCELED);
		break;
	case JOB_RUNNING:
		run_stop(job, true, by);
		break;
	default:
		break;
	}
}

json_t *
jobs_json(struct triaged *td, const struct job *job)
{
	int64_t position = -1;

	if (job->state == JOB_QUEUED)
		position = psem_position(td->sem, &job->waiter);
	return job_to_json(job, position);
}

void
jobs_set_paused(struct triaged *td, int prio, bool paused, uid_t by)
{
	unsigned i;

	for (i = 0; i < psem_priorities(td->sem); i++) {
		if (prio >= 0 && i != (unsigned)prio)
			continue;
		if (paused)
			psem_pause(td->sem, i);
		else
			psem_resume(td->sem, i);
	}
	log_notice("%s %s by uid %u", paused ? "paused" : "resumed",
	    prio >= 0 ? td->cfg->priorities[prio].name : "every priority",
	    (unsigned)by);
}

unsigned
jobs_queued(const struct triaged *td)
{
	struct psem_prio_stats st;
	unsigned i, n = 0;

	for (i = 0; i < psem_priorities(td->sem); i++)
		if (psem_prio_stats(td->sem, i, &st) == 0)
			n += st.queued;
	return n;
}

json_t *
jobs_stats(struct triaged *td)
{
	const struct config *cfg = td->cfg;
	const struct config_priority *p;
	struct psem_prio_stats st;
	json_t *prios, *counts, *o;
	unsigned i;

	if ((prios = json_array()) == NULL)
		return NULL;
	for (i = 0; i < cfg->npriorities; i++) {
		p = &cfg->priorities[i];
		psem_prio_stats(td->sem, i, &st);
		json_array_append_new(prios, json_pack(
		    "{ss sI sI sI sI sI sI sb sI sI}",
		    "name", p->name,
		    "rank", (json_int_t)p->rank,
		    "queued", (json_int_t)st.queued,
		    "running", (json_int_t)td->prio_running[i],
		    "slots_busy", (json_int_t)st.held,
		    "max_queued", (json_int_t)p->max_queued,
		    "max_running", (json_int_t)p->max_running,
		    "paused", st.paused,
		    "dispatched", (json_int_t)st.dispatched,
		    "weight", (json_int_t)p->weight));
	}
	if ((counts = json_object()) == NULL) {
		json_decref(prios);
		return NULL;
	}
	for (i = 0; i < JOB_NSTATES; i++)
		json_object_set_new(counts, job_state_name(i),
		    json_integer((json_int_t)td->counts[i]));
	o = json_pack("{sI sI sI sI so so sf ss ss}",
	    "slots", (json_int_t)psem_permits(td->sem),
	    "slots_busy",
	    (json_int_t)(psem_permits(td->sem) - psem_available(td->sem)),
	    "workers", (json_int_t)pool_size(td->pool),
	    "workers_busy", (json_int_t)pool_busy(td->pool),
	    "priorities", prios,
	    "jobs", counts,
	    "uptime", (double)(triaged_mono_ms() - td->started_mono_ms) / 1000,
	    "version", TRIAGE_VERSION,
	    "policy", cfg->policy);
	return o;
}
