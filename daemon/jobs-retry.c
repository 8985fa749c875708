/* jobs-retry.c - an ended job back in its queue as a new attempt, heard of
 * only once that is on disk, and put back as it was when it cannot be. */
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "psem.h"
#include "store.h"
#include "triaged.h"

/* A retry on its way to the disk, and the job as it was before. */
struct jobs_retrial {
	TAILQ_ENTRY(jobs_retrial) entry;
	struct triaged *td;
	uint64_t id;
	unsigned prio;			/* before */
	enum job_state state;
	struct job_status before;
	char *reason;
	json_t *result;			/* before's, a reference */
	jobs_done_cb done_cb;
	void *arg;
};

static void
jobs_retry_synced_cb(const char *cause, void *arg)
{
	struct jobs_retrial *r = arg;
	struct triaged *td = r->td;
	struct jobs *js = td->jobs;
	struct job *job = store_get(td->store, r->id);

	TAILQ_REMOVE(&js->retrials, r, entry);
	/* Canceled again meanwhile, say: nothing to queue or put back. */
	if (job != NULL && job->state == JOB_QUEUED &&
	    psem_waiter_state(&job->waiter) == PSEM_IDLE) {
		if (cause == NULL) {
			jobs_record(td, job, r->state, NULL,
			    store_generation(td->store) - 1);
			jobs_admit(td, job);
		} else {
			log_warnx("job %llu: its retry could not be stored: "
			    "%s", (unsigned long long)r->id, cause);
			jobs_tally(js, job, job->waiter.prio, JOB_QUEUED, -1);
			jobs_tally(js, job, r->prio, r->state, 1);
			job->waiter.prio = r->prio;
			/* It ran: the run it had is still its own. */
			if (job_status_set(job, &r->before) != 0)
				fatalx("job %llu: out of memory for its run",
				    (unsigned long long)r->id);
			free(jobs_run(job)->reason);
			jobs_run(job)->reason = r->reason;
			r->reason = NULL;
			json_decref(jobs_run(job)->result);
			jobs_run(job)->result = r->result;
			r->result = NULL;
			store_forget_env(td->store, job);
		}
	}
	r->done_cb(td, job, cause, r->arg);
	free(r->reason);
	json_decref(r->result);
	free(r);
}

int
jobs_retry(struct triaged *td, struct job *job, unsigned prio,
    jobs_done_cb done_cb, void *arg)
{
	struct jobs *js = td->jobs;
	struct jobs_retrial *r;

	if ((r = calloc(1, sizeof *r)) == NULL ||
	    (job->run->reason != NULL && (r->reason = strdup(job->run->reason))
	    == NULL) ||
	    store_sync(td->store, jobs_retry_synced_cb, r) != 0) {
		if (r != NULL)
			free(r->reason);
		free(r);
		return -1;
	}
	r->td = td;
	r->id = job->id;
	r->prio = job->waiter.prio;
	r->state = job->state;
	job_status_get(job, &r->before);
	r->result = json_incref(job->run->result);
	r->done_cb = done_cb;
	r->arg = arg;
	TAILQ_INSERT_TAIL(&js->retrials, r, entry);
	jobs_tally(js, job, job->waiter.prio, job->state, -1);
	jobs_tally(js, job, prio, JOB_QUEUED, 1);
	psem_waiter_init(&job->waiter, prio, job->slots);
	job_new_attempt(job);
	job_set_reason(job, NULL);
	job->state = JOB_QUEUED;
	job->seq = js->next_seq++;
	store_update(td->store, job);
	return 0;
}

void
jobs_renumber_retrials(struct triaged *td, const int *map)
{
	struct jobs_retrial *r;

	TAILQ_FOREACH(r, &td->jobs->retrials, entry)
		r->prio = map[r->prio] < 0 ? 0 : (unsigned)map[r->prio];
}
