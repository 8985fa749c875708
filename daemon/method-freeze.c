/* method-freeze.c - `freeze` and `thaw`: a running job's processes stop
 * where they are, keeping what the job holds, until thawed; anything else
 * is left as it is. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "bulk.h"
#include "job.h"
#include "jobs.h"
#include "method.h"
#include "rpc.h"

/* Freezes (freeze) or thaws job for the bulk b. */
static enum bulk_verdict
freeze_act_as(struct bulk *b, struct job *job, bool freeze,
    struct method_err *err)
{
	struct triaged *td = bulk_daemon(b);

	/* Another node's run: only that node's daemon reaches its
	 * processes. */
	if (jobs_runs_elsewhere(td, job)) {
		method_fail(err, RPC_WRONG_STATE, NULL, "job %llu runs on node "
		    "%s: only that node's daemon can %s it",
		    (unsigned long long)job->id, job->node,
		    freeze ? "freeze" : "thaw");
		return BULK_SKIPPED;
	}
	switch (jobs_freeze(td, job, freeze, bulk_uid(b))) {
	case 1:
		return BULK_ACTED;
	case 0:
		return BULK_SKIPPED;
	default:
		method_fail(err, RPC_INTERNAL_ERROR, NULL, "job %llu could not "
		    "be %s: %s", (unsigned long long)job->id,
		    freeze ? "frozen" : "thawed", strerror(errno));
		return BULK_FAILED;
	}
}

static enum bulk_verdict
freeze_act(struct bulk *b, struct job *job, struct method_err *err)
{
	return freeze_act_as(b, job, true, err);
}

static enum bulk_verdict
thaw_act(struct bulk *b, struct job *job, struct method_err *err)
{
	return freeze_act_as(b, job, false, err);
}

static const struct bulk_op freeze_op = {
	.verb = "freeze",
	.act = freeze_act,
	.id_gives_job = true,
	.done = "frozen",
};

static const struct bulk_op thaw_op = {
	.verb = "thaw",
	.act = thaw_act,
	.id_gives_job = true,
	.done = "thawed",
};

static void
freeze_handler(struct rpc_req *req, json_t *params)
{
	bulk_start(req, params, &freeze_op);
}

static void
thaw_handler(struct rpc_req *req, json_t *params)
{
	bulk_start(req, params, &thaw_op);
}

static const struct method_param freeze_params[] = {
	{ "id", PARAM_INTEGER, false, NULL },
	{ "filter", PARAM_OBJECT, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_freeze = {
	.name = "freeze",
	.params = freeze_params,
	.check = bulk_check,
	.handler = freeze_handler,
};

const struct method method_thaw = {
	.name = "thaw",
	.params = freeze_params,
	.check = bulk_check,
	.handler = thaw_handler,
};
