/* method-list.c - `list`: jobs by id, filtered by state and priority,
 * a page at a time (limit, after_id). */
#include <stdbool.h>
#include <string.h>

#include "config.h"
#include "job.h"
#include "jobs.h"
#include "method.h"
#include "rpc.h"
#include "store.h"
#include "triaged.h"

#define LIST_DEFAULT_LIMIT 1000
#define LIST_MAX_LIMIT 100000

static void
list_handler(struct rpc_req *req, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	json_t *states = json_object_get(params, "state");
	json_t *limit = json_object_get(params, "limit");
	json_t *after = json_object_get(params, "after_id");
	bool want[JOB_NSTATES];
	json_int_t n = LIST_DEFAULT_LIMIT;
	uint64_t id = 0;
	json_t *jobs, *s;
	struct job *job;
	int prio, st;
	size_t i;

	if ((prio = method_priority(req, params)) == -2)
		return;
	for (i = 0; i < JOB_NSTATES; i++)
		want[i] = states == NULL;
	json_array_foreach(states, i, s) {
		if (!json_is_string(s) ||
		    (st = job_state_parse(json_string_value(s))) < 0) {
			rpc_error(req, RPC_INVALID_PARAMS, "state",
			    "\"state\" must hold state names (queued, running, "
			    "succeeded, failed, timed_out, canceled, lost)");
			return;
		}
		want[st] = true;
	}
	if (limit != NULL) {
		n = json_integer_value(limit);
		if (n < 1 || n > LIST_MAX_LIMIT) {
			rpc_error(req, RPC_INVALID_PARAMS, "limit",
			    "\"limit\" must be from 1 to %d", LIST_MAX_LIMIT);
			return;
		}
	}
	if (after != NULL) {
		if (json_integer_value(after) < 0) {
			rpc_error(req, RPC_INVALID_PARAMS, "after_id",
			    "\"after_id\" must be 0 or more");
			return;
		}
		id = (uint64_t)json_integer_value(after);
	}
	if ((jobs = json_array()) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	while (n > 0 && (job = store_next(td->store, id)) != NULL) {
		id = job->id;
		if (!want[job->state] || (prio >= 0 && strcmp(job->priority,
		    td->cfg->priorities[prio].name) != 0))
			continue;
		if (json_array_append_new(jobs, jobs_json(td, job)) != 0) {
			json_decref(jobs);
			rpc_error(req, RPC_INTERNAL_ERROR, NULL,
			    "out of memory");
			return;
		}
		n--;
	}
	rpc_reply(req, json_pack("{so}", "jobs", jobs));
}

static const struct method_param list_params[] = {
	{ "state", PARAM_ARRAY, false, "an array of state names" },
	{ "priority", PARAM_STRING, false, NULL },
	{ "limit", PARAM_INTEGER, false, NULL },
	{ "after_id", PARAM_INTEGER, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_list = {
	.name = "list",
	.params = list_params,
	.handler = list_handler,
};
