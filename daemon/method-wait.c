/* method-wait.c - `wait`: answer when the job, or each of the jobs, ends,
 * or with them as they are once the timeout passes; the connection serves
 * others meanwhile. */
#include <math.h>
#include <stdlib.h>

#include "config.h"
#include "conn.h"
#include "filter.h"
#include "job.h"
#include "method.h"
#include "rpc.h"
#include "store.h"
#include "triaged.h"
#include "wait.h"

static int
wait_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	json_t *timeout = json_object_get(params, "timeout");
	json_t *ids = json_object_get(params, "ids"), *id;
	bool one = json_object_get(params, "id") != NULL;
	double secs = timeout ? json_number_value(timeout) : 0;
	size_t i;

	if (timeout != NULL && (!isfinite(secs) || secs < 0 ||
	    secs > 10.0 * 365 * 86400))
		return method_fail(err, RPC_INVALID_PARAMS, "timeout",
		    "\"timeout\" must be a number of seconds, 0 or more");
	if (one == (ids != NULL))
		return method_fail(err, RPC_INVALID_PARAMS, one ? "ids" : "id",
		    "give either \"id\" (one job) or \"ids\" (several), %s",
		    one ? "not both" : "one of them");
	if (one)
		return method_check_id(ctx, params, err);
	if (json_array_size(ids) == 0 ||
	    json_array_size(ids) > FILTER_MAX_IDS)
		return method_fail(err, RPC_INVALID_PARAMS, "ids", "\"ids\" "
		    "must hold from 1 to %d job ids", FILTER_MAX_IDS);
	json_array_foreach(ids, i, id)
		if (json_integer_value(id) <= 0 || !json_is_integer(id))
			return method_fail(err, RPC_INVALID_PARAMS, "ids",
			    "\"ids\" must hold positive integers (job ids)");
	return 0;
}

static void
wait_handler(struct rpc_req *req, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	json_t *timeout = json_object_get(params, "timeout");
	json_t *ids = json_object_get(params, "ids"), *id;
	double secs = timeout ? json_number_value(timeout) : 0;
	bool now = timeout != NULL && secs == 0, ended = true;
	uint64_t *v;
	size_t i, n = ids != NULL ? json_array_size(ids) : 1;
	struct job *job;

	if ((v = calloc(n, sizeof *v)) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	if (ids == NULL)
		v[0] = (uint64_t)json_integer_value(json_object_get(params,
		    "id"));
	json_array_foreach(ids, i, id)
		v[i] = (uint64_t)json_integer_value(id);
	for (i = 0; i < n; i++) {
		if ((job = store_get(td->store, v[i])) == NULL) {
			rpc_error(req, RPC_NO_SUCH_JOB, ids ? "ids" : "id",
			    "no job %llu", (unsigned long long)v[i]);
			free(v);
			return;
		}
		ended = ended && job_state_terminal(job->state);
	}
	if (!now && !ended &&
	    conn_npending(req->conn) >= td->cfg->max_waits) {
		rpc_limit(req, "max_waits", "this connection has %u requests "
		    "waiting already; the limit is %u (max_waits)",
		    conn_npending(req->conn), td->cfg->max_waits);
		free(v);
		return;
	}
	/* A timeout under a millisecond still means "do not wait long". What
	 * is answered at once waits for the disk, like any other answer. */
	if (wait_add(td, req, v, n, ids == NULL,
	    timeout ? (uint64_t)fmax(1, llround(secs * 1000)) : 0, now,
	    method_reply_durable) != 0)
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
	free(v);
}

static const struct method_param wait_params[] = {
	{ "id", PARAM_INTEGER, false, NULL },
	{ "ids", PARAM_ARRAY, false, "an array of job ids" },
	{ "timeout", PARAM_NUMBER, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_wait = {
	.name = "wait",
	.params = wait_params,
	.check = wait_check,
	.handler = wait_handler,
};
