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

static void
retry_handler(struct rpc_req *req, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	struct method_later *later;
	struct job *job;
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
	if ((later = method_later(req, "the retry")) != NULL &&
	    jobs_retry(td, job, (unsigned)prio, method_later_done_cb,
	    later) != 0)
		method_later_done_cb(td, NULL, "out of memory", later);
}

static const struct method_param retry_params[] = {
	{ "id", PARAM_INTEGER, true, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_retry = {
	.name = "retry",
	.params = retry_params,
	.check = method_check_id,
	.handler = retry_handler,
};
