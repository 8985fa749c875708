/* recover.c - the daemon's start from what the store kept: the jobs that
 * were running when it stopped, and every queue in its order. */
#include <stdint.h>
#include <stdlib.h>

#include "config.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "psem.h"
#include "recover.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"

static int
recover_cmp(const void *a, const void *b)
{
	const struct job *x = *(struct job *const *)a;
	const struct job *y = *(struct job *const *)b;

	if (x->waiter.prio != y->waiter.prio)
		return x->waiter.prio < y->waiter.prio ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A job that was running: another attempt, before everything queued. */
static void
recover_requeue(struct triaged *td, struct job *job)
{
	job->state = JOB_QUEUED;
	job_new_attempt(job);
	job_set_reason(job, NULL);
	store_update(td->store, job);
}

static void
recover_end(struct triaged *td, struct job *job, enum job_state state,
    const char *reason)
{
	job->state = state;
	job->finished_at = timefmt_now();
	job_set_reason(job, "%s", reason);
	job_drop_env(job);
	store_update(td->store, job);
}

int
recover_jobs(struct triaged *td)
{
	const enum config_shutdown mode = td->cfg->shutdown;
	size_t n = 0, nrun = 0, i, total = store_count(td->store);
	struct job **queued, **ran, *job;
	int64_t max_seq = 0, min_seq = 0;
	unsigned lost = 0;
	int prio;

	if ((queued = calloc(total + 1, sizeof *queued)) == NULL ||
	    (ran = calloc(total + 1, sizeof *ran)) == NULL) {
		free(queued);
		return -1;
	}
	for (job = store_next(td->store, 0); job != NULL;
	    job = store_next(td->store, job->id)) {
		if (job->seq > max_seq)
			max_seq = job->seq;
		if (job->seq < min_seq)
			min_seq = job->seq;
		prio = config_priority_find(td->cfg, job->priority);
		jobs_waiter_init(td, job, prio < 0 ? 0 : (unsigned)prio);
		if (job_state_terminal(job->state))
			job_drop_env(job);
		else if (prio < 0) {
			recover_end(td, job, JOB_CANCELED, "its priority is "
			    "not in the config any more");
			log_warnx("job %llu: canceled, its priority %s is not "
			    "in the config any more", (unsigned long long)job->id,
			    job->priority);
		} else if (job->state == JOB_RUNNING &&
		    mode != CONFIG_SHUTDOWN_REQUEUE) {
			recover_end(td, job, JOB_LOST,
			    "the daemon stopped while it ran");
			lost++;
		} else if (job->state == JOB_RUNNING)
			ran[nrun++] = job;
		else
			queued[n++] = job;
		td->counts[job->state]++;
	}
	td->next_seq = max_seq + 1;
	/* At the head, in the order they had: the last one first. */
	for (i = nrun; i > 0; i--) {
		job = ran[i - 1];
		td->counts[JOB_RUNNING]--;
		recover_requeue(td, job);
		job->seq = --min_seq;
		td->counts[JOB_QUEUED]++;
		queued[n++] = job;
	}
	qsort(queued, n, sizeof *queued, recover_cmp);

	/* Everything in place before anything is granted, so the first
	 * grants follow the policy, not the order of this loop. */
	for (i = 0; i < psem_priorities(td->sem); i++)
		psem_pause(td->sem, (unsigned)i);
	for (i = 0; i < n; i++)
		jobs_admit(td, queued[i]);
	for (i = 0; i < psem_priorities(td->sem); i++)
		psem_resume(td->sem, (unsigned)i);
	if (total > 0)
		log_notice("recovered %zu jobs: %zu queued, %zu of them back "
		    "from running, %u lost", total, n, nrun, lost);
	free(queued);
	free(ran);
	return 0;
}
