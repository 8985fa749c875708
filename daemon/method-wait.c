/* method-wait.c - `wait`: answer when the job ends, or with the job as it
 * is once the timeout passes; the connection serves others meanwhile. */
#include <math.h>

#include "config.h"
#include "conn.h"
#include "job.h"
#include "jobs.h"
#include "method.h"
#include "rpc.h"
#include "triaged.h"
#include "wait.h"

static int
wait_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	json_t *timeout = json_object_get(params, "timeout");
	double secs = timeout ? json_number_value(timeout) : 0;

	if (timeout != NULL && (!isfinite(secs) || secs < 0 ||
	    secs > 10.0 * 365 * 86400))
		return method_fail(err, RPC_INVALID_PARAMS, "timeout",
		    "\"timeout\" must be a number of seconds, 0 or more");
	return method_check_id(ctx, params, err);
}

static void
wait_handler(struct rpc_req *req, json_t *params)
{
	json_t *timeout = json_object_get(params, "timeout");
	double secs = timeout ? json_number_value(timeout) : 0;
	struct job *job;

	if ((job = method_job(req, params)) == NULL)
		return;
	if (job_state_terminal(job->state) || (timeout != NULL && secs == 0)) {
		method_reply_durable(req, jobs_json(rpc_daemon(req), job));
		return;
	}
	if (conn_npending(req->conn) >= rpc_daemon(req)->cfg->max_waits) {
		rpc_limit(req, "max_waits", "this connection has %u requests "
		    "waiting already; the limit is %u (max_waits)",
		    conn_npending(req->conn), rpc_daemon(req)->cfg->max_waits);
		return;
	}
	/* A timeout under a millisecond still means "do not wait long". */
	if (wait_add(rpc_daemon(req), req, job,
	    timeout ? (uint64_t)fmax(1, llround(secs * 1000)) : 0) != 0)
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
}

static const struct method_param wait_params[] = {
	{ "id", PARAM_INTEGER, true, NULL },
	{ "timeout", PARAM_NUMBER, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_wait = {
	.name = "wait",
	.params = wait_params,
	.check = wait_check,
	.handler = wait_handler,
};
