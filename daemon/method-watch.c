/* method-watch.c - `watch`: from now on, a `job` notification for every
 * state change of the jobs named (or of one priority, or of all). */
#include <stdlib.h>

#include "config.h"
#include "method.h"
#include "rpc.h"
#include "triaged.h"
#include "watch.h"

static int
watch_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	json_t *ids = json_object_get(params, "ids"), *id;
	size_t i;

	if (method_check_priority(ctx, params, err) != 0)
		return -1;
	json_array_foreach(ids, i, id)
		if (json_integer_value(id) <= 0)
			return method_fail(err, RPC_INVALID_PARAMS, "ids",
			    "\"ids\" must hold positive integers");
	return 0;
}

static void
watch_handler(struct rpc_req *req, json_t *params)
{
	json_t *ids = json_object_get(params, "ids"), *id;
	unsigned max = rpc_daemon(req)->cfg->max_watches;
	int prio = method_priority(rpc_daemon(req)->cfg, params);
	uint64_t *v = NULL;
	struct watch *w;
	size_t i;

	if (json_array_size(ids) > 0 &&
	    (v = calloc(json_array_size(ids), sizeof *v)) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	json_array_foreach(ids, i, id)
		v[i] = (uint64_t)json_integer_value(id);
	w = watch_new(v, json_array_size(ids), prio >= 0 ?
	    rpc_daemon(req)->cfg->priorities[prio].name : NULL);
	free(v);
	if (w == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	switch (watch_add(req->conn, w, max)) {
	case 0:
		break;
	case -2:
		watch_free(w);
		rpc_limit(req, "max_watches", "this connection has %u watches "
		    "already; the limit is %u (max_watches)", max, max);
		return;
	default:
		watch_free(w);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	rpc_reply(req, json_object());
}

static const struct method_param watch_params[] = {
	{ "ids", PARAM_ARRAY, false, "an array of job ids" },
	{ "priority", PARAM_STRING, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_watch = {
	.name = "watch",
	.params = watch_params,
	.check = watch_check,
	.handler = watch_handler,
};
