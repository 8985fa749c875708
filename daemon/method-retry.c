/* method-retry.c - `retry`: a job that failed, timed out, was canceled or
 * lost goes back to its queue as a new attempt, once that is on disk. */
#include <stdlib.h>

#include "bulk.h"
#include "config.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "method.h"
#include "rpc.h"
#include "store.h"
#include "triaged.h"

/* jobs_retry's word: on disk, or put back as it was. */
static void
retry_done_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	struct method_err err;

	(void)td;
	(void)job;
	if (cause == NULL) {
		bulk_settle(arg, BULK_ACTED, NULL);
		return;
	}
	method_fail(&err, RPC_INTERNAL_ERROR, NULL,
	    "the retry could not be stored: %s", cause);
	bulk_settle(arg, BULK_FAILED, &err);
}

static enum bulk_verdict
retry_act(struct bulk *b, struct job *job, struct method_err *err)
{
	struct triaged *td = bulk_daemon(b);
	struct bulk_token *token;
	char *cause = NULL;
	int prio;

	if (td->phase != TRIAGED_RUNNING) {
		method_fail(err, RPC_SHUTTING_DOWN, NULL, "the daemon is "
		    "shutting down: nothing is queued any more");
		return BULK_FAILED;
	}
	if (!job_state_terminal(job->state) || job->state == JOB_SUCCEEDED) {
		method_fail(err, RPC_WRONG_STATE, "id", "job %llu %s: only "
		    "a job that failed, timed out, was canceled or was lost "
		    "can be retried", (unsigned long long)job->id,
		    job_state_phrase(job->state));
		return BULK_SKIPPED;
	}
	if ((prio = config_priority_find(td->cfg, job->priority)) < 0) {
		method_fail(err, RPC_WRONG_STATE, "id", "job %llu's priority "
		    "%s is not in the config any more",
		    (unsigned long long)job->id, job->priority);
		return BULK_SKIPPED;
	}
	if (store_env(td->store, job, &cause) != 0) {
		log_warnx("job %llu: %s", (unsigned long long)job->id, cause);
		method_fail(err, RPC_INTERNAL_ERROR, NULL, "cannot read job "
		    "%llu's environment back: %s",
		    (unsigned long long)job->id, cause);
		free(cause);
		return BULK_FAILED;
	}
	if ((token = bulk_token(b, job)) == NULL ||
	    jobs_retry(td, job, (unsigned)prio, retry_done_cb, token) != 0) {
		free(token);
		method_fail(err, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return BULK_FAILED;
	}
	return BULK_PENDING;
}

static const struct bulk_op retry_op = {
	.verb = "retry",
	.act = retry_act,
	.id_gives_job = true,
	.done = "retried",
};

static void
retry_handler(struct rpc_req *req, json_t *params)
{
	bulk_start(req, params, &retry_op);
}

static const struct method_param retry_params[] = {
	{ "id", PARAM_INTEGER, false, NULL },
	{ "filter", PARAM_OBJECT, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_retry = {
	.name = "retry",
	.params = retry_params,
	.check = bulk_check,
	.handler = retry_handler,
};
