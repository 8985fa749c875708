/* method-retry.c - `retry`: a job that failed, timed out, was canceled or
 * lost goes back to its queue as a new attempt, once that is on disk. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "method.h"
#include "psem.h"
#include "rpc.h"
#include "store.h"
#include "triaged.h"

/* The job as it was, to put back if the retry cannot be written. */
struct retry {
	struct triaged *td;
	struct rpc_req *req;	/* NULL once its client has gone */
	uint64_t id;
	struct job before;
	char *reason;
};

static void
retry_withdraw_cb(struct rpc_req *req, void *arg)
{
	struct retry *r = arg;

	(void)req;
	r->req = NULL;
}

static void
retry_restore(struct triaged *td, struct job *job, struct retry *r)
{
	job->attempt = r->before.attempt;
	job->pid = r->before.pid;
	job->exit_code = r->before.exit_code;
	job->signal = r->before.signal;
	job->started_at = r->before.started_at;
	job->user_time = r->before.user_time;
	job->system_time = r->before.system_time;
	job->max_rss_kb = r->before.max_rss_kb;
	job->stdout_truncated = r->before.stdout_truncated;
	job->stderr_truncated = r->before.stderr_truncated;
	job->seq = r->before.seq;
	free(job->reason);
	job->reason = r->reason;
	r->reason = NULL;
	jobs_set_state(td, job, r->before.state);
	job->finished_at = r->before.finished_at;
}

static void
retry_synced_cb(const char *cause, void *arg)
{
	struct retry *r = arg;
	struct job *job = store_get(r->td->store, r->id);

	/* Canceled again meanwhile: nothing to put in the queue. */
	if (job != NULL && job->state == JOB_QUEUED &&
	    psem_waiter_state(&job->waiter) == PSEM_IDLE) {
		if (cause == NULL)
			jobs_admit(r->td, job);
		else {
			log_warnx("job %llu: its retry could not be stored: "
			    "%s", (unsigned long long)r->id, cause);
			retry_restore(r->td, job, r);
		}
	}
	if (r->req != NULL) {
		if (cause != NULL)
			rpc_error(r->req, RPC_INTERNAL_ERROR, NULL,
			    "the retry could not be stored: %s", cause);
		else
			rpc_reply(r->req, job != NULL ?
			    jobs_json(r->td, job) : NULL);
	}
	free(r->reason);
	free(r);
}

static void
retry_handler(struct rpc_req *req, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	struct job *job;
	struct retry *r;
	char *cause = NULL;
	int prio;

	if ((job = method_job(req, params)) == NULL ||
	    !method_may_act(req, job, "retry"))
		return;
	if (td->phase != TRIAGED_RUNNING) {
		rpc_error(req, RPC_SHUTTING_DOWN, NULL,
		    "the daemon is shutting down: nothing is queued any more");
		return;
	}
	if (!job_state_terminal(job->state) || job->state == JOB_SUCCEEDED) {
		rpc_error(req, RPC_WRONG_STATE, "id", "job %llu is %s: only a "
		    "job that failed, timed out, was canceled or was lost can "
		    "be retried", (unsigned long long)job->id,
		    job_state_name(job->state));
		return;
	}
	if ((prio = config_priority_find(td->cfg, job->priority)) < 0) {
		rpc_error(req, RPC_WRONG_STATE, "id", "job %llu's priority %s "
		    "is not in the config any more",
		    (unsigned long long)job->id, job->priority);
		return;
	}
	if (store_env(td->store, job, &cause) != 0) {
		log_warnx("job %llu: %s", (unsigned long long)job->id, cause);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "cannot read the job's "
		    "environment back: %s", cause);
		free(cause);
		return;
	}
	if ((r = calloc(1, sizeof *r)) == NULL ||
	    (job->reason != NULL && (r->reason = strdup(job->reason)) == NULL) ||
	    store_sync(td->store, retry_synced_cb, r) != 0) {
		if (r != NULL)
			free(r->reason);
		free(r);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	r->td = td;
	r->req = req;
	r->id = job->id;
	r->before = *job;
	jobs_waiter_init(td, job, (unsigned)prio);
	job_set_reason(job, NULL);
	jobs_requeue(td, job, false);
	rpc_defer(req, retry_withdraw_cb, r);
}

static const struct method_param retry_params[] = {
	{ "id", PARAM_INTEGER, true, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_retry = {
	.name = "retry",
	.params = retry_params,
	.handler = retry_handler,
};
