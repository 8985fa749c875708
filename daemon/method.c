/* method.c - the table of JSON-RPC methods, and what several of them need:
 * the job an "id" names, the priority a "priority" names, who may act. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "job.h"
#include "jobs.h"
#include "jsonw.h"
#include "membudget.h"
#include "method.h"
#include "psem.h"
#include "rpc.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"

static const struct method *const method_table[] = {
	&method_cancel,
	&method_freeze,
	&method_get,
	&method_hold,
	&method_list,
	&method_output,
	&method_pause,
	&method_release,
	&method_reload,
	&method_remove,
	&method_resume,
	&method_retry,
	&method_stats,
	&method_submit,
	&method_thaw,
	&method_update,
	&method_wait,
	&method_watch,
};

#define METHOD_COUNT (sizeof method_table / sizeof method_table[0])

size_t
method_count(void)
{
	return METHOD_COUNT;
}

const struct method *
method_find(const char *name)
{
	size_t i;

	for (i = 0; i < METHOD_COUNT; i++)
		if (strcmp(method_table[i]->name, name) == 0)
			return method_table[i];
	return NULL;
}

const struct method *
method_at(size_t i)
{
	return i < METHOD_COUNT ? method_table[i] : NULL;
}

static const char *
method_type_name(unsigned types)
{
	switch (types) {
	case PARAM_STRING:
		return "a string";
	case PARAM_INTEGER:
		return "an integer";
	case PARAM_NUMBER:
		return "a number";
	case PARAM_BOOLEAN:
		return "a boolean";
	case PARAM_ARRAY:
		return "an array";
	case PARAM_OBJECT:
		return "an object";
	default:
		return "of another type";
	}
}

/* Every key known, every type right, every required param there. */
static int
method_check_params(const struct method *m, json_t *params,
    struct method_err *err)
{
	const struct method_param *p;
	const char *key;
	json_t *value;

	json_object_foreach(params, key, value) {
		for (p = m->params; p->name != NULL; p++)
			if (strcmp(p->name, key) == 0)
				break;
		if (p->name == NULL)
			return method_fail(err, RPC_INVALID_PARAMS, key,
			    "%s has no param \"%s\"", m->name, key);
		if (!((1u << json_typeof(value)) & p->types))
			return method_fail(err, RPC_INVALID_PARAMS, p->name,
			    "%s: \"%s\" must be %s", m->name, key,
			    p->type_name ? p->type_name :
			    method_type_name(p->types));
	}
	for (p = m->params; p->name != NULL; p++)
		if (p->required && json_object_get(params, p->name) == NULL)
			return method_fail(err, RPC_INVALID_PARAMS, p->name,
			    "%s needs \"%s\"", m->name, p->name);
	return 0;
}

int
method_fail(struct method_err *err, int code, const char *field,
    const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->field = field;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return -1;
}

/* method_validate's work: the method whose checks params pass, or NULL
 * with err filled. */
static const struct method *
method_resolve(const struct method_ctx *ctx, const char *name,
    json_t *params, struct method_err *err)
{
	const struct method *m;
	json_t *empty = NULL;
	int rc;

	if ((m = method_find(name)) == NULL) {
		method_fail(err, RPC_METHOD_NOT_FOUND, NULL,
		    "unknown method \"%s\"", name);
		return NULL;
	}
	if (params != NULL && !json_is_object(params)) {
		method_fail(err, RPC_INVALID_PARAMS, "params",
		    "params must be an object of named params");
		return NULL;
	}
	if ((m->flags & METHOD_ADMIN) && !ctx->admin) {
		method_fail(err, RPC_PERMISSION_DENIED, NULL,
		    "%s is for admins only (root, the daemon's user, or "
		    "admin_group)", m->name);
		return NULL;
	}
	if (params == NULL && (params = empty = json_object()) == NULL) {
		method_fail(err, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return NULL;
	}
	rc = method_check_params(m, params, err);
	if (rc == 0 && m->check != NULL)
		rc = m->check(ctx, params, err);
	json_decref(empty);
	return rc == 0 ? m : NULL;
}

int
method_validate(const struct method_ctx *ctx, const char *name,
    json_t *params, struct method_err *err)
{
	return method_resolve(ctx, name, params, err) != NULL ? 0 : -1;
}

void
method_call(struct rpc_req *req, const char *name, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	struct method_ctx ctx = {
		.cfg = td->cfg,
		.uid = conn_uid(req->conn),
		.gid = conn_gid(req->conn),
		.admin = conn_is_admin(req->conn),
		.permits = psem_permits(td->sem),
		.memory_budget = td->memory_budget,
	};
	const struct method *m;
	struct method_err err;
	json_t *empty = NULL;

	if ((m = method_resolve(&ctx, name, params, &err)) == NULL) {
		rpc_error(req, err.code, err.field, "%s", err.message);
		return;
	}
	if (params == NULL && (params = empty = json_object()) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	m->handler(req, params);
	json_decref(empty);
}

int
method_check_id(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	json_t *id = json_object_get(params, "id");

	(void)ctx;
	if (id != NULL && json_integer_value(id) <= 0)
		return method_fail(err, RPC_INVALID_PARAMS, "id",
		    "\"id\" must be a positive integer");
	return 0;
}

struct job *
method_job(struct rpc_req *req, json_t *params)
{
	json_int_t id = json_integer_value(json_object_get(params, "id"));
	struct job *job;

	if ((job = store_get(rpc_daemon(req)->store, (uint64_t)id)) == NULL)
		rpc_error(req, RPC_NO_SUCH_JOB, "id", "no job %lld",
		    (long long)id);
	return job;
}

bool
method_may_act(struct rpc_req *req, const struct job *job, const char *what)
{
	if (conn_uid(req->conn) == job->uid || conn_is_admin(req->conn))
		return true;
	rpc_error(req, RPC_PERMISSION_DENIED, NULL,
	    "job %llu belongs to uid %u: only its owner or an admin may %s it",
	    (unsigned long long)job->id, (unsigned)job->uid, what);
	return false;
}

int
method_check_priority(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	const struct config *cfg = ctx->cfg;
	json_t *name = json_object_get(params, "priority");
	char known[CONFIG_PRIORITIES_MAX * (CONFIG_PRIORITY_NAME_MAX + 2)];
	size_t len = 0;
	unsigned i;

	if (name == NULL ||
	    config_priority_find(cfg, json_string_value(name)) >= 0)
		return 0;
	known[0] = '\0';
	for (i = 0; i < cfg->npriorities && len < sizeof known; i++)
		len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
		    i ? ", " : "", cfg->priorities[i].name);
	return method_fail(err, RPC_INVALID_PARAMS, "priority",
	    "unknown priority \"%s\" (configured: %s)",
	    json_string_value(name), known);
}

int
method_check_name(const struct config *cfg, json_t *params,
    struct method_err *err)
{
	json_t *name = json_object_get(params, "name");
	size_t len = json_string_length(name);

	if (name == NULL)
		return 0;
	if (len == 0)
		return method_fail(err, RPC_INVALID_PARAMS, "name",
		    "\"name\" must be 1 to %u bytes", cfg->max_name);
	if (len > cfg->max_name)
		return method_fail(err, RPC_INVALID_PARAMS, "name",
		    "\"name\" has %zu bytes; the limit is %u (max_name)", len,
		    cfg->max_name);
	return 0;
}

int
method_check_timeout(json_t *params, struct method_err *err)
{
	json_t *timeout = json_object_get(params, "timeout");
	double secs = json_number_value(timeout);

	if (timeout != NULL && (!isfinite(secs) || secs < 0 ||
	    secs > METHOD_TIMEOUT_MAX))
		return method_fail(err, RPC_INVALID_PARAMS, "timeout",
		    "\"timeout\" must be seconds from 0 to %.0f",
		    METHOD_TIMEOUT_MAX);
	return 0;
}

int
method_check_retries(json_t *params, struct method_err *err)
{
	json_t *retries = json_object_get(params, "retries");

	if (retries != NULL && (json_integer_value(retries) < 0 ||
	    json_integer_value(retries) > METHOD_RETRIES_MAX))
		return method_fail(err, RPC_INVALID_PARAMS, "retries",
		    "\"retries\" must be from 0 to %d", METHOD_RETRIES_MAX);
	return 0;
}

int
method_check_memory(const struct method_ctx *ctx, json_t *params,
    const struct config_priority *p, struct method_err *err)
{
	json_t *memory = json_object_get(params, "memory");
	char need[MEMBUDGET_WORDS_MAX], budget[MEMBUDGET_WORDS_MAX];
	json_int_t n = json_integer_value(memory);

	if (memory != NULL && n < METHOD_MEMORY_MIN)
		return method_fail(err, RPC_INVALID_PARAMS, "memory",
		    "\"memory\" must be bytes, at least %d (1MiB), not %lld",
		    METHOD_MEMORY_MIN, (long long)n);
	if (ctx->memory_budget == 0)
		return 0;
	/* Never admitted: better refused now than queued for ever. */
	membudget_words(ctx->memory_budget, false, budget, sizeof budget);
	if (memory != NULL && (uint64_t)n > ctx->memory_budget) {
		membudget_words((uint64_t)n, true, need, sizeof need);
		return method_fail(err, RPC_INVALID_PARAMS, "memory",
		    "memory %s is more than the memory budget, %s: it could "
		    "never start", need, budget);
	}
	if (memory == NULL && p != NULL && p->memory > ctx->memory_budget) {
		membudget_words(p->memory, true, need, sizeof need);
		return method_fail(err, RPC_INVALID_PARAMS, "memory",
		    "the memory of priority %s, %s, is more than the memory "
		    "budget, %s: its jobs could never start unless they give "
		    "a smaller \"memory\"", p->name, need, budget);
	}
	return 0;
}

/* "gpu, licence": the configured resources, for a message. */
static void
method_resource_names(const struct config *cfg, char *buf, size_t size)
{
	size_t len = 0;
	unsigned i;

	snprintf(buf, size, "none");
	for (i = 0; i < cfg->nresources && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
		    i ? ", " : "", cfg->resources[i].name);
}

/* One member of "resources": key a configured resource, v a count of
 * its units it has. */
static int
method_check_resource(const struct config *cfg, const char *key, json_t *v,
    struct method_err *err)
{
	char known[CONFIG_RESOURCES_MAX * (CONFIG_RESOURCE_NAME_MAX + 2)];
	const struct config_resource *r;
	const char *field = err->field_buf;
	int i;

	/* A name too long for the field is no resource's: the field is
	 * then the whole object. */
	if ((size_t)snprintf(err->field_buf, sizeof err->field_buf,
	    "resources.%s", key) >= sizeof err->field_buf)
		field = "resources";
	if ((i = config_resource_find(cfg, key)) == -1) {
		method_resource_names(cfg, known, sizeof known);
		if (strlen(key) > CONFIG_RESOURCE_NAME_MAX)
			return method_fail(err, RPC_INVALID_PARAMS, field,
			    "\"resources\" names a resource of %zu bytes, "
			    "longer than any resource's name (configured: %s)",
			    strlen(key), known);
		return method_fail(err, RPC_INVALID_PARAMS, field,
		    "unknown resource \"%s\" in \"resources\" (configured: "
		    "%s)", key, known);
	}
	r = &cfg->resources[i];
	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return method_fail(err, RPC_INVALID_PARAMS, field,
		    "\"%s\" must be a positive integer, how many of its "
		    "units the job needs", field);
	if ((uint64_t)json_integer_value(v) > r->count)
		return method_fail(err, RPC_INVALID_PARAMS, field,
		    "\"%s\" asks for %lld units, and %s has %llu: the job "
		    "could never start", field, (long long)json_integer_value(v),
		    r->name, (unsigned long long)r->count);
	return 0;
}

int
method_check_resources(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	json_t *resources = json_object_get(params, "resources"), *v;
	const char *key;

	json_object_foreach(resources, key, v)
		if (method_check_resource(ctx->cfg, key, v, err) != 0)
			return -1;
	return 0;
}

int
method_resources(json_t *params, json_t **resources)
{
	json_t *given = json_object_get(params, "resources");

	*resources = NULL;
	if (json_object_size(given) == 0)
		return 0;
	/* The job's own: the request's object goes with the request. */
	return (*resources = json_deep_copy(given)) == NULL ? -1 : 0;
}

int
method_check_nice(bool admin, json_t *nice, const struct config_priority *p,
    struct method_err *err)
{
	json_int_t n = json_integer_value(nice);

	if (nice == NULL)
		return 0;
	if (n < 0 || n > 19)
		return method_fail(err, RPC_INVALID_PARAMS, "nice",
		    "\"nice\" must be from 0 to 19");
	if (p != NULL && n < p->nice && !admin)
		return method_fail(err, RPC_INVALID_PARAMS, "nice",
		    "\"nice\" %lld is below priority %s's nice of %u: only "
		    "an admin may ask for that", (long long)n, p->name,
		    p->nice);
	return 0;
}

int
method_check_begin_at(json_t *params, struct method_err *err)
{
	json_t *begin_at = json_object_get(params, "begin_at");
	int64_t ms;

	if (!json_is_string(begin_at) ||
	    timefmt_parse(json_string_value(begin_at), &ms) == 0)
		return 0;
	return method_fail(err, RPC_INVALID_PARAMS, "begin_at",
	    "\"begin_at\" must be a time in RFC 3339 with an offset "
	    "(\"2026-11-22T10:00:00Z\", \"...+01:00\"): \"%.64s\" is not one",
	    json_string_value(begin_at));
}

int
method_priority(const struct config *cfg, json_t *params)
{
	json_t *name = json_object_get(params, "priority");

	return name == NULL ? -1 :
	    config_priority_find(cfg, json_string_value(name));
}

/* A request answered once jobs says how what it asked for went. */
struct method_later {
	struct rpc_req *req;	/* NULL once its client has gone */
	const char *what;	/* for the error: "the job", "the retry" */
	json_t *result;		/* the answer, when it is known already */
	/* An edit's: its job, the job's count of refused writes then, and
	 * what the edit did. */
	uint64_t id;
	uint16_t refused;
	const char *done;
};

static void
method_later_withdraw_cb(struct rpc_req *req, void *arg)
{
	struct method_later *l = arg;

	(void)req;
	l->req = NULL;
}

struct method_later *
method_later(struct rpc_req *req, const char *what)
{
	struct method_later *l;

	if ((l = calloc(1, sizeof *l)) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return NULL;
	}
	l->req = req;
	l->what = what;
	rpc_defer(req, method_later_withdraw_cb, l);
	return l;
}

/* The job object, written as text: a submit's reply is built for every
 * job, on the hottest path there is. */
static void
method_later_reply(struct triaged *td, struct rpc_req *req,
    const struct job *job)
{
	/* Kept for the next reply: a reply costs no allocation. */
	static struct jsonw w;
	const char *text;
	size_t len;

	jsonw_reset(&w);
	if (job != NULL && jobs_write_json(td, job, &w) == 0 &&
	    (text = jsonw_text(&w, &len)) != NULL) {
		rpc_reply_text(req, text, len);
		return;
	}
	/* Not UTF-8, say: the object then fails just as it would. */
	rpc_reply(req, job != NULL ? jobs_json(td, job) : NULL);
}

void
method_later_done_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	struct method_later *l = arg;

	if (l->req != NULL) {
		if (cause != NULL)
			rpc_error(l->req, RPC_INTERNAL_ERROR, NULL,
			    "%s could not be stored: %s", l->what, cause);
		else if (l->result != NULL) {
			rpc_reply(l->req, l->result);
			l->result = NULL;
		} else
			method_later_reply(td, l->req, job);
	}
	json_decref(l->result);
	free(l);
}

void
method_fail_refused(struct method_err *err, const struct job *job,
    const char *done)
{
	method_fail(err, RPC_WRONG_STATE, "id", "job %llu was changed by "
	    "another node as this was written (it is %s now%s%s): it was not "
	    "%s; try again", (unsigned long long)job->id,
	    job_state_name(job->state), job->node != NULL ? ", on " : "",
	    job->node != NULL ? job->node : "", done);
}

static void
method_edit_done_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	struct method_later *l = arg;
	struct method_err err;

	job = store_get(td->store, l->id);
	if (l->req != NULL && cause == NULL && job == NULL) {
		/* Removed meanwhile, by another node. */
		rpc_error(l->req, RPC_NO_SUCH_JOB, "id", "no job %llu",
		    (unsigned long long)l->id);
		l->req = NULL;
	} else if (l->req != NULL && cause == NULL &&
	    jobs_edit_undone(job, l->refused)) {
		method_fail_refused(&err, job, l->done);
		rpc_error(l->req, err.code, err.field, "%s", err.message);
		l->req = NULL;
	}
	method_later_done_cb(td, job, cause, l);
}

void
method_reply_edit(struct rpc_req *req, struct job *job, const char *done)
{
	struct triaged *td = rpc_daemon(req);
	struct method_later *l;

	if (!store_pending(td->store)) {
		rpc_reply(req, jobs_json(td, job));
		return;
	}
	if ((l = method_later(req, "the change")) == NULL)
		return;
	l->id = job->id;
	l->refused = jobs_edit_mark(job);
	l->done = done;
	if (jobs_after_commit(td, method_edit_done_cb, l) != 0)
		method_later_done_cb(td, NULL, "out of memory", l);
}

void
method_reply_durable(struct rpc_req *req, json_t *result)
{
	struct triaged *td = rpc_daemon(req);
	struct method_later *l;

	if (!store_pending(td->store) || result == NULL) {
		rpc_reply(req, result);
		return;
	}
	if ((l = method_later(req, "the reply")) == NULL) {
		json_decref(result);
		return;
	}
	l->result = result;
	if (jobs_after_commit(td, method_later_done_cb, l) != 0)
		method_later_done_cb(td, NULL, "out of memory", l);
}
