/* method-cancel.c - `cancel`: a queued job ends at once, a running one is
 * signalled; a job that has ended already is returned as it is. */
#include <signal.h>

#include "conn.h"
#include "jobs.h"
#include "method.h"
#include "rpc.h"

static void
cancel_handler(struct rpc_req *req, json_t *params)
{
	struct job *job;

	if ((job = method_job(req, params)) == NULL ||
	    !method_may_act(req, job, "cancel"))
		return;
	jobs_cancel(rpc_daemon(req), job, conn_uid(req->conn), SIGTERM);
	/* A queued job's end is on its way to the disk: told once there. */
	method_reply_durable(req, jobs_json(rpc_daemon(req), job));
}

static const struct method_param cancel_params[] = {
	{ "id", PARAM_INTEGER, true, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_cancel = {
	.name = "cancel",
	.params = cancel_params,
	.check = method_check_id,
	.handler = cancel_handler,
};
