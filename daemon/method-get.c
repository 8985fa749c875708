/* method-get.c - `get`: one job object, to anyone who can connect. */
#include "jobs.h"
#include "method.h"
#include "rpc.h"

static void
get_handler(struct rpc_req *req, json_t *params)
{
	struct job *job;

	if ((job = method_job(req, params)) != NULL)
		rpc_reply(req, jobs_json(rpc_daemon(req), job));
}

static const struct method_param get_params[] = {
	{ "id", PARAM_INTEGER, true, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_get = {
	.name = "get",
	.params = get_params,
	.check = method_check_id,
	.handler = get_handler,
};
