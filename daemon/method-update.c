/* method-update.c - `update`: changes a queued job's priority, name, limits,
 * labels, begin time, nice, memory or resources, checked as a submission's
 * are. */
#include <string.h>

#include "config.h"
#include "conn.h"
#include "job.h"
#include "jobs.h"
#include "labels.h"
#include "method.h"
#include "rpc.h"
#include "timefmt.h"
#include "triaged.h"

static int
update_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	json_t *labels = json_object_get(params, "labels");

	if (method_check_id(ctx, params, err) != 0 ||
	    method_check_priority(ctx, params, err) != 0 ||
	    method_check_name(ctx->cfg, params, err) != 0 ||
	    method_check_timeout(params, err) != 0 ||
	    method_check_retries(params, err) != 0 ||
	    method_check_nice(ctx->admin, json_object_get(params, "nice"),
	    NULL, err) != 0 ||
	    method_check_begin_at(params, err) != 0 ||
	    method_check_memory(ctx, params, NULL, err) != 0 ||
	    method_check_resources(ctx, params, err) != 0)
		return -1;
	if (labels != NULL &&
	    labels_check(ctx->cfg, labels, "labels", err) != 0)
		return -1;
	return 0;
}

/*
 * A new priority: -1 when it is the job's own (nothing moves), else its
 * index, after checking that the job fits it (its slots under max_running,
 * room under max_queued). -2 after answering req.
 */
static int
update_priority(struct rpc_req *req, json_t *params, const struct job *job)
{
	struct triaged *td = rpc_daemon(req);
	const struct config_priority *p;
	unsigned queued;
	int prio = method_priority(td->cfg, params);

	if (prio < 0 || (unsigned)prio == job->waiter.prio)
		return -1;
	p = &td->cfg->priorities[prio];
	if (p->max_running != 0 && job->slots > p->max_running) {
		rpc_error(req, RPC_INVALID_PARAMS, "priority",
		    "priority %s may hold at most %u slots (max_running), so "
		    "job %llu, which needs %u, could never run there",
		    p->name, p->max_running, (unsigned long long)job->id,
		    job->slots);
		return -2;
	}
	queued = jobs_count(td, prio, JOB_QUEUED) + jobs_staged(td, prio);
	if (queued >= p->max_queued) {
		rpc_error(req, RPC_QUEUE_FULL, "priority",
		    "priority %s is full: %u job%s queued (max_queued)",
		    p->name, queued, queued == 1 ? "" : "s");
		return -2;
	}
	return prio;
}

/*
 * nice, against the priority the job will have (its own, or prio): the
 * same rule as at submit. A new priority without a nice gives the job that
 * priority's, as a submission there would get. 0, or -1 answered.
 */
static int
update_nice(struct rpc_req *req, json_t *params, const struct job *job,
    int prio, struct jobs_update *u)
{
	const struct config *cfg = rpc_daemon(req)->cfg;
	const struct config_priority *p =
	    &cfg->priorities[prio >= 0 ? (unsigned)prio : job->waiter.prio];
	json_t *nice = json_object_get(params, "nice");
	struct method_err err;

	if (nice == NULL) {
		if ((u->has_nice = prio >= 0))
			u->nice = (int)p->nice;
		return 0;
	}
	if (method_check_nice(conn_is_admin(req->conn), nice, p, &err) != 0) {
		rpc_error(req, err.code, err.field, "%s", err.message);
		return -1;
	}
	u->has_nice = true;
	u->nice = (int)json_integer_value(nice);
	return 0;
}

static void
update_handler(struct rpc_req *req, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	json_t *timeout = json_object_get(params, "timeout");
	json_t *retries = json_object_get(params, "retries");
	json_t *begin_at = json_object_get(params, "begin_at");
	json_t *memory = json_object_get(params, "memory");
	struct jobs_update u = { .prio = -1 };
	struct job *job;

	if ((job = method_job(req, params)) == NULL ||
	    !method_may_act(req, job, "update"))
		return;
	if (!jobs_editable(job)) {
		rpc_error(req, RPC_WRONG_STATE, NULL, "job %llu %s: only a "
		    "queued job can be updated", (unsigned long long)job->id,
		    job->state == JOB_QUEUED ? "is starting" :
		    job_state_phrase(job->state));
		return;
	}
	if ((u.prio = update_priority(req, params, job)) == -2 ||
	    update_nice(req, params, job, u.prio, &u) != 0)
		return;
	u.name = json_string_value(json_object_get(params, "name"));
	if ((u.has_timeout = timeout != NULL))
		u.timeout_ms = (uint64_t)(json_number_value(timeout) * 1000 +
		    0.5);
	if ((u.has_retries = retries != NULL))
		u.retries = (unsigned)json_integer_value(retries);
	u.labels = json_object_get(params, "labels");
	/* A new priority leaves it: a job's memory is a limit it was given,
	 * as its timeout is, which a move must not take away. */
	if ((u.has_memory = memory != NULL))
		u.memory = (uint64_t)json_integer_value(memory);
	if ((u.has_begin_at = begin_at != NULL)) {
		u.begin_at = -1;
		if (json_is_string(begin_at))
			(void)timefmt_parse(json_string_value(begin_at),
			    &u.begin_at);
	}
	/* The resources it asks for replace the old ones whole ({}: none):
	 * a copy of the request's, which goes with the request. */
	if (json_object_get(params, "resources") != NULL &&
	    (u.resources = json_deep_copy(json_object_get(params,
	    "resources"))) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	if (jobs_update(td, job, &u, conn_uid(req->conn)) != 0) {
		json_decref(u.resources);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	json_decref(u.resources);
	method_reply_edit(req, job, "updated");
}

static const struct method_param update_params[] = {
	{ "id", PARAM_INTEGER, true, NULL },
	{ "priority", PARAM_STRING, false, NULL },
	{ "name", PARAM_STRING, false, NULL },
	{ "timeout", PARAM_NUMBER, false, NULL },
	{ "retries", PARAM_INTEGER, false, NULL },
	{ "labels", PARAM_OBJECT, false, "an object of strings" },
	{ "begin_at", PARAM_STRING | PARAM_NULL, false, "a string or null" },
	{ "nice", PARAM_INTEGER, false, NULL },
	{ "memory", PARAM_INTEGER, false, "an integer (bytes)" },
	{ "resources", PARAM_OBJECT, false, "an object of resource names to "
	  "counts" },
	{ NULL, 0, false, NULL },
};

const struct method method_update = {
	.name = "update",
	.params = update_params,
	.check = update_check,
	.handler = update_handler,
};
