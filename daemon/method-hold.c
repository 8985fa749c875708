/* method-hold.c - `hold` and `release`: a queued job stays in its place
 * but is not dispatched, until released; anything else is left as it is. */
#include "bulk.h"
#include "jobs.h"
#include "method.h"
#include "rpc.h"

static enum bulk_verdict
hold_act(struct bulk *b, struct job *job, struct method_err *err)
{
	(void)err;
	return jobs_hold(bulk_daemon(b), job, bulk_uid(b)) ? BULK_ACTED :
	    BULK_SKIPPED;
}

static enum bulk_verdict
release_act(struct bulk *b, struct job *job, struct method_err *err)
{
	(void)err;
	return jobs_release(bulk_daemon(b), job, bulk_uid(b)) ? BULK_ACTED :
	    BULK_SKIPPED;
}

static const struct bulk_op hold_op = {
	.verb = "hold",
	.act = hold_act,
	.id_gives_job = true,
	.done = "held",
};

static const struct bulk_op release_op = {
	.verb = "release",
	.act = release_act,
	.id_gives_job = true,
	.done = "released",
};

static void
hold_handler(struct rpc_req *req, json_t *params)
{
	bulk_start(req, params, &hold_op);
}

static void
release_handler(struct rpc_req *req, json_t *params)
{
	bulk_start(req, params, &release_op);
}

static const struct method_param hold_params[] = {
	{ "id", PARAM_INTEGER, false, NULL },
	{ "filter", PARAM_OBJECT, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_hold = {
	.name = "hold",
	.params = hold_params,
	.check = bulk_check,
	.handler = hold_handler,
};

const struct method method_release = {
	.name = "release",
	.params = hold_params,
	.check = bulk_check,
	.handler = release_handler,
};
