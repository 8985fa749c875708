/* method-retry.c - `retry`: a job that failed, timed out, was canceled or
 * lost goes back to its queue as a new attempt, once that is on disk. */
#include <stdlib.h>

#include "config.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "method.h"
#include "rpc.h"
#include "store.h"
#include "triaged.h"

/* A retry on its way to the disk. */
struct retry {
	struct rpc_req *req;	/* NULL once its client has gone */
};

static void
retry_withdraw_cb(struct rpc_req *req, void *arg)
{
	struct retry *r = arg;

	(void)req;
	r->req = NULL;
}

static void
retry_done_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	struct retry *r = arg;

	if (r->req != NULL) {
		if (cause != NULL)
			rpc_error(r->req, RPC_INTERNAL_ERROR, NULL,
			    "the retry could not be stored: %s", cause);
		else
			rpc_reply(r->req, job != NULL ? jobs_json(td, job) :
			    NULL);
	}
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
	    jobs_retry(td, job, (unsigned)prio, retry_done_cb, r) != 0) {
		free(r);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	r->req = req;
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
