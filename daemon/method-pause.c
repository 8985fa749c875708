/* method-pause.c - `pause`: a priority (or all) keeps taking submissions
 * but dispatches nothing; running jobs go on. Admins only. */
#include "conn.h"
#include "jobs.h"
#include "method.h"
#include "notify.h"
#include "rpc.h"
#include "triaged.h"

static void
pause_handler(struct rpc_req *req, json_t *params)
{
	int prio = method_priority(rpc_daemon(req)->cfg, params);

	jobs_set_paused(rpc_daemon(req), prio, true, conn_uid(req->conn));
	notify_changed(rpc_daemon(req));
	/* Answered once the pause state is on disk, kept across restarts. */
	method_reply_durable(req, method_stats_result(rpc_daemon(req)));
}

static const struct method_param pause_params[] = {
	{ "priority", PARAM_STRING, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_pause = {
	.name = "pause",
	.params = pause_params,
	.check = method_check_priority,
	.flags = METHOD_ADMIN,
	.handler = pause_handler,
};
