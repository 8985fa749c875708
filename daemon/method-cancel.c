/* method-cancel.c - `cancel`: a queued job ends at once, a running one is
 * signalled; a job that has ended already is returned as it is. */
#include <signal.h>

#include "bulk.h"
#include "exitcode.h"
#include "job.h"
#include "jobs.h"
#include "method.h"
#include "rpc.h"

/* The signal params name, SIGTERM when they name none. */
static int
cancel_signal(json_t *params)
{
	json_t *name = json_object_get(params, "signal");

	return name != NULL ?
	    exitcode_signal_number(json_string_value(name)) : SIGTERM;
}

static int
cancel_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	if (cancel_signal(params) < 0)
		return method_fail(err, RPC_INVALID_PARAMS, "signal",
		    "unknown signal \"%s\" (a name such as \"SIGINT\" or "
		    "\"INT\")", json_string_value(json_object_get(params,
		    "signal")));
	return bulk_check(ctx, params, err);
}

static enum bulk_verdict
cancel_act(struct bulk *b, struct job *job, struct method_err *err)
{
	(void)err;
	if (job_state_terminal(job->state))
		return BULK_SKIPPED;
	jobs_cancel(bulk_daemon(b), job, bulk_uid(b),
	    cancel_signal(bulk_params(b)));
	return BULK_ACTED;
}

static const struct bulk_op cancel_op = {
	.verb = "cancel",
	.act = cancel_act,
	.id_gives_job = true,
};

static void
cancel_handler(struct rpc_req *req, json_t *params)
{
	bulk_start(req, params, &cancel_op);
}

static const struct method_param cancel_params[] = {
	{ "id", PARAM_INTEGER, false, NULL },
	{ "filter", PARAM_OBJECT, false, NULL },
	{ "signal", PARAM_STRING, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_cancel = {
	.name = "cancel",
	.params = cancel_params,
	.check = cancel_check,
	.handler = cancel_handler,
};
