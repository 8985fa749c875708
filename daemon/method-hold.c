/* method-hold.c - `hold` and `release`: a queued job stays in its place
 * but is not dispatched, until released; anything else is left as it is. */
#include "conn.h"
#include "jobs.h"
#include "method.h"
#include "rpc.h"

/* Holds or releases the job params name, and answers with it once on disk. */
static void
hold_act(struct rpc_req *req, json_t *params, bool hold)
{
	struct triaged *td = rpc_daemon(req);
	uid_t by = conn_uid(req->conn);
	struct job *job;

	if ((job = method_job(req, params)) == NULL ||
	    !method_may_act(req, job, hold ? "hold" : "release"))
		return;
	if (hold)
		jobs_hold(td, job, by);
	else
		jobs_release(td, job, by);
	method_reply_durable(req, jobs_json(td, job));
}

static void
hold_handler(struct rpc_req *req, json_t *params)
{
	hold_act(req, params, true);
}

static void
release_handler(struct rpc_req *req, json_t *params)
{
	hold_act(req, params, false);
}

static const struct method_param hold_params[] = {
	{ "id", PARAM_INTEGER, true, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_hold = {
	.name = "hold",
	.params = hold_params,
	.check = method_check_id,
	.handler = hold_handler,
};

const struct method method_release = {
	.name = "release",
	.params = hold_params,
	.check = method_check_id,
	.handler = release_handler,
};
