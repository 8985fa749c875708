/* method-resume.c - `resume`: a paused priority (or all) dispatches again,
 * at once if slots are free. Admins only. */
#include "conn.h"
#include "jobs.h"
#include "method.h"
#include "notify.h"
#include "rpc.h"
#include "triaged.h"

static void
resume_handler(struct rpc_req *req, json_t *params)
{
	int prio = method_priority(rpc_daemon(req)->cfg, params);

	jobs_set_paused(rpc_daemon(req), prio, false, conn_uid(req->conn));
	notify_changed(rpc_daemon(req));
	/* Answered once the pause state is on disk, kept across restarts. */
	method_reply_durable(req, method_stats_result(rpc_daemon(req)));
}

static const struct method_param resume_params[] = {
	{ "priority", PARAM_STRING, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_resume = {
	.name = "resume",
	.params = resume_params,
	.check = method_check_priority,
	.flags = METHOD_ADMIN,
	.handler = resume_handler,
};
