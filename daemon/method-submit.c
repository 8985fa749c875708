/* method-submit.c - `submit`: check a submission to the letter, fill in the
 * defaults from the config and the submitter, and queue the new job. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytestr.h"
#include "cluster.h"
#include "config.h"
#include "conn.h"
#include "job.h"
#include "jobs.h"
#include "labels.h"
#include "log.h"
#include "method.h"
#include "nodename.h"
#include "passwd.h"
#include "psem.h"
#include "rpc.h"
#include "store.h"
#include "submit-key.h"
#include "timefmt.h"
#include "triaged.h"

#define SUBMIT_AFTER_MAX 1000

/* Who the job runs as: what its defaults come from. */
struct submit_user {
	char name[256];
	char home[4096];
	char shell[4096];
	const char *cwd;	/* the default: home when it is a directory */
};

/*
 * The passwd entry of the user a job will run as: 0, or -1 after answering
 * req (no such user, or a failed lookup). The last one is kept a little
 * while: a busy submitter would otherwise cost an NSS lookup (a read of
 * /etc/passwd, or a trip to a directory server) per job.
 */
#define SUBMIT_USER_TTL_MS 10000

/* Points *u at the entry, kept until the next call (not copied: it is
 * over 8 KiB, and every submission asks). */
static int
submit_user(struct rpc_req *req, uid_t uid, const struct submit_user **u)
{
	static struct submit_user cached;
	static uid_t cached_uid;
	static uint64_t cached_at;
	uint64_t now = timefmt_mono_ms();
	char *name = NULL, *home = NULL, *shell = NULL;
	struct stat st;

	*u = &cached;
	if (cached_at != 0 && cached_uid == uid &&
	    now - cached_at < SUBMIT_USER_TTL_MS)
		return 0;
	cached_at = 0;
	if (passwd_lookup(uid, &name, &home, &shell) != 0) {
		/* initgroups, HOME and the rest need the entry; a job with
		 * none would run half set up. */
		if (errno == ENOENT)
			rpc_error(req, RPC_PERMISSION_DENIED, NULL,
			    "uid %u has no entry in the password database: "
			    "its jobs cannot run as a user the system does "
			    "not know", (unsigned)uid);
		else
			rpc_error(req, RPC_INTERNAL_ERROR, NULL,
			    "cannot look up uid %u in the password "
			    "database: %s", (unsigned)uid, strerror(errno));
		return -1;
	}
	snprintf(cached.name, sizeof cached.name, "%s", name);
	snprintf(cached.home, sizeof cached.home, "%s",
	    home[0] == '/' ? home : "/");
	snprintf(cached.shell, sizeof cached.shell, "%s", shell);
	free(name);
	free(home);
	free(shell);
	/* protocol.md: the home directory, else / (a user whose home was
	 * never made still gets to run). */
	cached.cwd = stat(cached.home, &st) == 0 && S_ISDIR(st.st_mode) ?
	    cached.home : "/";
	cached_uid = uid;
	cached_at = now;
	return 0;
}

/* A param over a config limit: "FIELD" has N UNITS; the limit is LIMIT
 * (KEY). Returns -1. */
static int
submit_over(struct method_err *err, const char *field, uint64_t n,
    const char *units, uint64_t limit, const char *key)
{
	return method_fail(err, RPC_INVALID_PARAMS, field,
	    "\"%s\" has %llu %s; the limit is %llu (%s)", field,
	    (unsigned long long)n, units, (unsigned long long)limit, key);
}

/*
 * The kernel's bound on one string of argv or of the environment, its NUL
 * included (MAX_ARG_STRLEN, 32 pages of 4 KiB): past it execve fails with
 * E2BIG, whatever the totals, so such a job is refused at submit rather
 * than failed at its start.
 */
#define SUBMIT_MAX_ARG_STRLEN 131072

/* One string of argv (what "argv", i) or env ("env", i a name), with n
 * bytes and its NUL: -1 past SUBMIT_MAX_ARG_STRLEN. */
static int
submit_check_strlen(struct method_err *err, const char *field,
    const char *what, uint64_t n)
{
	if (n <= SUBMIT_MAX_ARG_STRLEN)
		return 0;
	return method_fail(err, RPC_INVALID_PARAMS, field,
	    "%s of \"%s\" has %llu bytes; the kernel runs no command with a "
	    "string over %d bytes (MAX_ARG_STRLEN)", what, field,
	    (unsigned long long)n, SUBMIT_MAX_ARG_STRLEN);
}

/*
 * v, a byte string (bytestr.h: a string, or {"base64": ...} for bytes that
 * are not UTF-8) without NUL: 0 with its length in *n, and its bytes in
 * *out when out is not NULL (allocated); -1 with *why. A plain string is
 * checked without a copy: most are.
 */
static int
submit_bytes(const json_t *v, size_t *n, char **out, const char **why)
{
	char *bytes;

	if (out == NULL && json_is_string(v) && memchr(json_string_value(v),
	    '\0', json_string_length(v)) == NULL) {
		*n = json_string_length(v);
		return 0;
	}
	if (bytestr_from_json(v, &bytes, why) == -1) {
		if (errno == ENOMEM)
			*why = "could not be read: out of memory";
		return -1;
	}
	*n = strlen(bytes);
	if (out != NULL)
		*out = bytes;
	else
		free(bytes);
	return 0;
}

/* A byte string refused: field (err->field_buf, made from the format) and
 * why. Returns -1. */
static int submit_bytes_fail(struct method_err *, const char *, const char *,
    ...) __attribute__((format(printf, 3, 4)));
static int
submit_bytes_fail(struct method_err *err, const char *why, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->field_buf, sizeof err->field_buf, fmt, ap);
	va_end(ap);
	return method_fail(err, RPC_INVALID_PARAMS, err->field_buf,
	    "\"%s\" %s: give a string, or {\"base64\": \"...\"} for bytes "
	    "that are not UTF-8, without NUL", err->field_buf, why);
}

/* argv: non-empty byte strings, within max_argv and max_argv_bytes. */
static int
submit_check_argv(const struct config *cfg, json_t *argv,
    struct method_err *err)
{
	size_t i, len, n = json_array_size(argv);
	uint64_t bytes = 0;
	const char *why;
	char what[32];
	json_t *s;

	if (n == 0)
		return method_fail(err, RPC_INVALID_PARAMS, "argv",
		    "\"argv\" must not be empty");
	if (n > cfg->max_argv)
		return submit_over(err, "argv", n, "elements", cfg->max_argv,
		    "max_argv");
	json_array_foreach(argv, i, s) {
		if (submit_bytes(s, &len, NULL, &why) == -1)
			return submit_bytes_fail(err, why, "argv[%zu]", i);
		if (len == 0)
			return submit_bytes_fail(err, "is empty", "argv[%zu]",
			    i);
		/* The name of the element only for the error. */
		if (len + 1 > SUBMIT_MAX_ARG_STRLEN) {
			snprintf(what, sizeof what, "element %zu", i);
			return submit_check_strlen(err, "argv", what, len + 1);
		}
		bytes += len + 1;
	}
	if (bytes > cfg->max_argv_bytes)
		return submit_over(err, "argv", bytes, "bytes",
		    cfg->max_argv_bytes, "max_argv_bytes");
	return 0;
}

/* env: names without '=', byte string values, within max_env and
 * max_env_bytes. */
static int
submit_check_env(const struct config *cfg, json_t *env,
    struct method_err *err)
{
	uint64_t bytes = 0, n;
	const char *key, *why;
	char what[40];
	json_t *value;
	size_t len;

	if (json_object_size(env) > cfg->max_env)
		return submit_over(err, "env", json_object_size(env),
		    "variables", cfg->max_env, "max_env");
	json_object_foreach(env, key, value) {
		if (key[0] == '\0' || strchr(key, '=') != NULL)
			return method_fail(err, RPC_INVALID_PARAMS, "env",
			    "\"env\" names must be non-empty and without '=': "
			    "\"%s\"", key);
		if (submit_bytes(value, &len, NULL, &why) == -1)
			return submit_bytes_fail(err, why, "env.%s", key);
		n = strlen(key) + 1 + len + 1;
		if (n > SUBMIT_MAX_ARG_STRLEN) {
			snprintf(what, sizeof what, "variable %.16s%s", key,
			    strlen(key) > 16 ? "..." : "");
			return submit_check_strlen(err, "env", what, n);
		}
		bytes += n;
	}
	if (bytes > cfg->max_env_bytes)
		return submit_over(err, "env", bytes, "bytes",
		    cfg->max_env_bytes, "max_env_bytes");
	return 0;
}

/* cwd: an absolute path, a byte string. */
static int
submit_check_cwd(json_t *cwd, struct method_err *err)
{
	const char *why;
	char *path;
	size_t len;
	int rc = 0;

	if (submit_bytes(cwd, &len, &path, &why) == -1)
		return submit_bytes_fail(err, why, "cwd");
	if (path[0] != '/')
		rc = method_fail(err, RPC_INVALID_PARAMS, "cwd",
		    "\"cwd\" must be an absolute path");
	free(path);
	return rc;
}

/* slots, exclusive and timeout, against the priority's limits. */
static int
submit_check_limits(const struct method_ctx *ctx, json_t *params,
    const struct config_priority *p, struct method_err *err)
{
	json_t *slots = json_object_get(params, "slots");
	bool exclusive = json_is_true(json_object_get(params, "exclusive"));
	json_int_t n = exclusive ? ctx->permits : 1;

	if (exclusive && slots != NULL)
		return method_fail(err, RPC_INVALID_PARAMS, "slots",
		    "give \"slots\" or \"exclusive\", not both");
	if (slots != NULL) {
		n = json_integer_value(slots);
		if (n < 1 || n > ctx->permits)
			return method_fail(err, RPC_INVALID_PARAMS, "slots",
			    "\"slots\" must be from 1 to %u", ctx->permits);
	}
	if (p->max_running != 0 && n > p->max_running)
		return method_fail(err, RPC_INVALID_PARAMS,
		    exclusive ? "exclusive" : "slots",
		    "priority %s may hold at most %u slots (max_running), "
		    "so a job needing %u could never run", p->name,
		    p->max_running, (unsigned)n);
	return method_check_timeout(params, err);
}

/* The shape of a list of job ids, "after" or "after_any" (whether its jobs
 * exist is the handler's). */
static int
submit_check_ids(json_t *params, const char *field, struct method_err *err)
{
	json_t *ids = json_object_get(params, field), *id;
	size_t i;

	if (json_array_size(ids) > SUBMIT_AFTER_MAX)
		return method_fail(err, RPC_INVALID_PARAMS, field,
		    "\"%s\" may name at most %d jobs", field,
		    SUBMIT_AFTER_MAX);
	json_array_foreach(ids, i, id)
		if (!json_is_integer(id) || json_integer_value(id) <= 0)
			return method_fail(err, RPC_INVALID_PARAMS, field,
			    "\"%s\" must hold job ids", field);
	return 0;
}

/* retries, and the shapes of after and after_any. */
static int
submit_check_followups(json_t *params, struct method_err *err)
{
	if (method_check_retries(params, err) != 0 ||
	    submit_check_ids(params, "after", err) != 0 ||
	    submit_check_ids(params, "after_any", err) != 0)
		return -1;
	return 0;
}

/* labels and begin_at (protocol v1.1); hold needs no more than its type. */
static int
submit_check_queueing(const struct config *cfg, json_t *params,
    struct method_err *err)
{
	json_t *labels = json_object_get(params, "labels");

	if (labels != NULL && labels_check(cfg, labels, "labels", err) != 0)
		return -1;
	return method_check_begin_at(params, err);
}

/* node: a name of the form, and a node there is. Without a cluster the
 * only node is this daemon. */
static int
submit_check_node(const struct config *cfg, json_t *params,
    struct method_err *err)
{
	json_t *node = json_object_get(params, "node");
	const char *name;

	if (node == NULL)
		return 0;
	name = json_string_value(node);
	if (!nodename_valid(name))
		return method_fail(err, RPC_INVALID_PARAMS, "node", "\"node\" "
		    "must be a node name: %s", NODENAME_FORM);
	/* A cluster's nodes are the store's to know (submit_handler). */
	if (!cfg->cluster.enabled && strcmp(name, cfg->cluster.node) != 0)
		return method_fail(err, RPC_INVALID_PARAMS, "node", "no node "
		    "%s in this cluster (this daemon is %s)", name,
		    cfg->cluster.node);
	return 0;
}

static int
submit_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	const struct config *cfg = ctx->cfg;
	json_t *cwd = json_object_get(params, "cwd");
	json_t *env = json_object_get(params, "env");
	int prio;

	if (method_check_priority(ctx, params, err) != 0)
		return -1;
	if ((prio = method_priority(cfg, params)) == -1)
		prio = (int)cfg->default_priority;
	if (submit_check_limits(ctx, params, &cfg->priorities[prio],
	    err) != 0 || submit_check_followups(params, err) != 0 ||
	    method_check_nice(ctx->admin, json_object_get(params, "nice"),
	    &cfg->priorities[prio], err) != 0 ||
	    submit_check_queueing(cfg, params, err) != 0 ||
	    submit_check_node(cfg, params, err) != 0 ||
	    submit_check_argv(cfg, json_object_get(params, "argv"), err) != 0)
		return -1;
	if (method_check_name(cfg, params, err) != 0 ||
	    submit_key_check(params, err) != 0 ||
	    method_check_memory(ctx, params, &cfg->priorities[prio],
	    err) != 0 || method_check_resources(ctx, params, err) != 0)
		return -1;
	if (cwd != NULL && submit_check_cwd(cwd, err) != 0)
		return -1;
	if (env != NULL && submit_check_env(cfg, env, err) != 0)
		return -1;
	return 0;
}

/* A NULL-terminated copy of argv's byte strings (checked), or NULL when
 * out of memory. */
static char **
submit_argv(json_t *argv)
{
	size_t i, len, n = json_array_size(argv);
	const char *why;
	char **v;
	json_t *s;

	if ((v = calloc(n + 1, sizeof *v)) == NULL)
		return NULL;
	json_array_foreach(argv, i, s)
		if (submit_bytes(s, &len, &v[i], &why) == -1) {
			job_free_strv(v);
			return NULL;
		}
	return v;
}

/* An allocated "K=V", or NULL. */
static char *
submit_var(const char *key, const char *value)
{
	size_t k = strlen(key), v = strlen(value);
	char *s;

	if ((s = malloc(k + v + 2)) == NULL)
		return NULL;
	memcpy(s, key, k);
	s[k] = '=';
	memcpy(s + k + 1, value, v + 1);
	return s;
}

/* "K=V" strings from the env object, or the minimal environment; NULL
 * when out of memory. */
static char **
submit_env(json_t *env, const struct submit_user *u)
{
	const char *key, *why;
	size_t i = 0, len;
	json_t *value;
	char **v, *bytes;

	if (env == NULL) {
		if ((v = calloc(6, sizeof *v)) == NULL)
			return NULL;
		if ((v[0] = submit_var("PATH", "/usr/local/bin:/usr/bin:/bin"))
		    == NULL || (v[1] = submit_var("HOME", u->home)) == NULL ||
		    (v[2] = submit_var("USER", u->name)) == NULL ||
		    (v[3] = submit_var("LOGNAME", u->name)) == NULL ||
		    (v[4] = submit_var("SHELL", u->shell)) == NULL)
			goto nomem;
		return v;
	}
	if ((v = calloc(json_object_size(env) + 1, sizeof *v)) == NULL)
		return NULL;
	json_object_foreach(env, key, value) {
		/* Checked: only memory can run out. */
		if (submit_bytes(value, &len, &bytes, &why) == -1)
			goto nomem;
		v[i] = submit_var(key, bytes);
		free(bytes);
		if (v[i++] == NULL)
			goto nomem;
	}
	return v;
nomem:
	job_free_strv(v);
	return NULL;
}

/* slots, exclusive, timeout and the queue's room. 0, or -1 answered. */
static int
submit_limits(struct rpc_req *req, json_t *params, unsigned prio,
    struct job *job)
{
	struct triaged *td = rpc_daemon(req);
	const struct config_priority *p = &td->cfg->priorities[prio];
	json_t *slots = json_object_get(params, "slots");
	json_t *timeout = json_object_get(params, "timeout");
	unsigned queued;

	job->exclusive = json_is_true(json_object_get(params, "exclusive"));
	if (job->exclusive)
		job->slots = psem_permits(td->sem);
	else if (slots != NULL)
		job->slots = (unsigned)json_integer_value(slots);
	job->timeout_ms = p->timeout_ms;
	if (timeout != NULL)
		job->timeout_ms =
		    (uint64_t)llround(json_number_value(timeout) * 1000);
	/* Queued, or on their way to disk. */
	queued = jobs_count(td, (int)prio, JOB_QUEUED) +
	    jobs_staged(td, (int)prio);
	if (queued >= p->max_queued) {
		rpc_error(req, RPC_QUEUE_FULL, "priority",
		    "priority %s is full: %u job%s queued (max_queued)",
		    p->name, queued, queued == 1 ? "" : "s");
		return -1;
	}
	/* One user's backlog must leave room in the queues for others. */
	queued = jobs_queued_by(td, job->uid);
	if (queued >= td->cfg->max_queued_per_user) {
		rpc_limit(req, "max_queued_per_user", "uid %u has %u job%s "
		    "queued; the limit is %u (max_queued_per_user)",
		    (unsigned)job->uid, queued, queued == 1 ? "" : "s",
		    td->cfg->max_queued_per_user);
		return -1;
	}
	return 0;
}

/* The jobs of param field, which must exist, into *ids and *n. 0, or -1
 * answered. */
static int
submit_ids(struct rpc_req *req, json_t *params, const char *field,
    uint64_t **ids, size_t *n)
{
	struct triaged *td = rpc_daemon(req);
	json_t *arr = json_object_get(params, field), *id;
	size_t i;

	if (json_array_size(arr) == 0)
		return 0;
	if ((*ids = calloc(json_array_size(arr), sizeof **ids)) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return -1;
	}
	json_array_foreach(arr, i, id) {
		if (store_get(td->store, (uint64_t)json_integer_value(id))
		    == NULL) {
			rpc_error(req, RPC_INVALID_PARAMS, field,
			    "\"%s\" names job %lld, which does not exist",
			    field, (long long)json_integer_value(id));
			return -1;
		}
		(*ids)[(*n)++] = (uint64_t)json_integer_value(id);
	}
	return 0;
}

/* retries, and the jobs of after and after_any. 0, or -1 answered. */
static int
submit_followups(struct rpc_req *req, json_t *params, unsigned prio,
    struct job *job)
{
	struct triaged *td = rpc_daemon(req);
	json_t *retries = json_object_get(params, "retries");

	job->retries = retries != NULL ?
	    (unsigned)json_integer_value(retries) :
	    td->cfg->priorities[prio].retries;
	uint64_t *after = NULL, *after_any = NULL;
	size_t nafter = 0, nafter_any = 0;
	struct job_extra *extra;

	if (submit_ids(req, params, "after", &after, &nafter) != 0 ||
	    submit_ids(req, params, "after_any", &after_any,
	    &nafter_any) != 0)
		goto fail;
	if (after == NULL && after_any == NULL)
		return 0;
	/* Ids go in the job's extra, made for them. */
	if ((extra = job_extra_edit(job)) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		goto fail;
	}
	extra->after = after;
	extra->after_any = after_any;
	/* A request holds far fewer ids than 2^32. */
	extra->nafter = (uint32_t)nafter;
	extra->nafter_any = (uint32_t)nafter_any;
	return 0;
fail:
	free(after);
	free(after_any);
	return -1;
}

/* labels, hold and begin_at, which the check has passed. 0, or -1 out of
 * memory (for the job's extra, where labels and begin_at go). */
static int
submit_queueing(json_t *params, struct job *job)
{
	json_t *labels = json_object_get(params, "labels");
	json_t *begin_at = json_object_get(params, "begin_at");
	struct job_extra *extra;

	job->held = json_is_true(json_object_get(params, "hold"));
	if (json_object_size(labels) == 0 && begin_at == NULL)
		return 0;
	if ((extra = job_extra_edit(job)) == NULL)
		return -1;
	if (json_object_size(labels) > 0)
		extra->labels = json_incref(labels);
	if (begin_at != NULL)
		(void)timefmt_parse(json_string_value(begin_at),
		    &extra->begin_at);
	return 0;
}

/* The idempotency key, in the job's extra. 0, or -1 out of memory. */
static int
submit_key(json_t *params, struct job *job)
{
	json_t *key = json_object_get(params, "key");
	struct job_extra *extra;

	if (key == NULL)
		return 0;
	if ((extra = job_extra_edit(job)) == NULL ||
	    (extra->key = strdup(json_string_value(key))) == NULL)
		return -1;
	return 0;
}

/* name, cwd, env, argv. 0, or -1 answered. */
static int
submit_strings(struct rpc_req *req, json_t *params, struct job *job,
    const struct submit_user *u)
{
	json_t *name = json_object_get(params, "name");
	json_t *cwd = json_object_get(params, "cwd");
	char *copy = NULL, **env, **argv, *path = NULL;
	const char *why;
	size_t len;
	int rc;

	if ((argv = submit_argv(json_object_get(params, "argv"))) == NULL ||
	    job_set_argv(job, argv) != 0)
		goto nomem;
	/* No name is argv[0]'s basename, which the job does not store. */
	if (name != NULL && (copy = strdup(json_string_value(name))) == NULL)
		goto nomem;
	if (job_set_name(job, copy) != 0)
		goto nomem;
	if (cwd != NULL && submit_bytes(cwd, &len, &path, &why) == -1)
		goto nomem;
	rc = job_set_cwd(job, cwd != NULL ? path : u->cwd);
	free(path);
	if (rc != 0 ||
	    (env = submit_env(json_object_get(params, "env"), u)) == NULL ||
	    job_set_env(job, env) != 0)
		goto nomem;
	return 0;
nomem:
	rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
	return -1;
}

/* The job's process: its nice and memory (the priority's by default),
 * whether stderr joins stdout, and the resources it needs. 0, or -1 out of
 * memory. */
static int
submit_process(json_t *params, const struct config_priority *p,
    struct job *job)
{
	json_t *nice = json_object_get(params, "nice");
	json_t *memory = json_object_get(params, "memory");

	job->nice = nice != NULL ? (int)json_integer_value(nice) :
	    (int)p->nice;
	job->memory = memory != NULL ? (uint64_t)json_integer_value(memory) :
	    p->memory;
	json_t *resources;
	struct job_extra *extra;

	job->merge_output = json_is_true(json_object_get(params,
	    "merge_output"));
	if (method_resources(params, &resources) != 0)
		return -1;
	if (resources == NULL)
		return 0;
	if ((extra = job_extra_edit(job)) == NULL) {
		json_decref(resources);
		return -1;
	}
	extra->resources = resources;
	return 0;
}

static void
submit_handler(struct rpc_req *req, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	uid_t uid = conn_uid(req->conn);
	const char *key = json_string_value(json_object_get(params, "key"));
	const struct submit_user *user;
	jobs_done_cb done_cb;
	struct job *job;
	json_t *node;
	void *later;
	int prio;

	if (td->phase != TRIAGED_RUNNING) {
		rpc_error(req, RPC_SHUTTING_DOWN, NULL,
		    "the daemon is shutting down: no new submissions");
		return;
	}
	if ((prio = method_priority(td->cfg, params)) == -1)
		prio = (int)td->cfg->default_priority;
	if (td->uid == 0 && !td->cfg->run_as_submitter && uid != 0) {
		rpc_error(req, RPC_PERMISSION_DENIED, NULL,
		    "this daemon runs every job as root (run_as_submitter = "
		    "no), so it takes jobs from root only");
		return;
	}
	/* A key that names a job already: that job is the answer. */
	if (key != NULL && submit_key_found(req, uid, key))
		return;
	if ((job = job_new()) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	job->uid = uid;
	job->gid = conn_gid(req->conn);
	/* The defaults are those of whoever the job will run as: the
	 * submitter for a root daemon, else the daemon's own user. */
	if (submit_user(req, td->uid == 0 && td->cfg->run_as_submitter ?
	    uid : td->uid, &user) != 0)
		goto fail;
	if (submit_limits(req, params, (unsigned)prio, job) != 0 ||
	    submit_followups(req, params, (unsigned)prio, job) != 0 ||
	    submit_strings(req, params, job, user) != 0)
		goto fail;
	if (submit_process(params, &td->cfg->priorities[prio], job) != 0 ||
	    submit_queueing(params, job) != 0 || submit_key(params, job) != 0) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		goto fail;
	}
	node = json_object_get(params, "node");
	if (node != NULL && !cluster_has_node(td, json_string_value(node))) {
		rpc_error(req, RPC_INVALID_PARAMS, "node", "no node %s in this "
		    "cluster (this daemon is %s)", json_string_value(node),
		    td->cfg->cluster.node);
		goto fail;
	}
	/* Whom it runs as, by name too: a cluster's node looks the name up
	 * where it runs the job. */
	if (td->uid == 0 && td->cfg->run_as_submitter &&
	    job_set_user(job, user->name) != 0) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		goto fail;
	}
	if (job_set_priority(job, td->cfg->priorities[prio].name) != 0 ||
	    (node != NULL &&
	    job_set_pinned_node(job, json_string_value(node)) != 0)) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		goto fail;
	}
	/* The answer comes once the job is on disk; with a key, it may be
	 * another node's job. */
	done_cb = key != NULL ? submit_key_added_cb : method_later_done_cb;
	if ((later = key != NULL ? submit_key_later(req, job) :
	    (void *)method_later(req, "the job")) == NULL)
		goto fail;
	if (jobs_submit(td, job, (unsigned)prio, done_cb, later) != 0) {
		done_cb(td, NULL, "out of memory", later);
		goto fail;
	}
	return;
fail:
	job_free(job);
}

static const struct method_param submit_params[] = {
	{ "argv", PARAM_ARRAY, true, "a non-empty array of non-empty strings "
	  "(or {\"base64\": \"...\"})" },
	{ "priority", PARAM_STRING, false, NULL },
	{ "name", PARAM_STRING, false, NULL },
	{ "cwd", PARAM_STRING | PARAM_OBJECT, false,
	  "a string, or {\"base64\": \"...\"}" },
	{ "env", PARAM_OBJECT, false, "an object of strings" },
	{ "timeout", PARAM_NUMBER, false, NULL },
	{ "slots", PARAM_INTEGER, false, NULL },
	{ "exclusive", PARAM_BOOLEAN, false, NULL },
	{ "retries", PARAM_INTEGER, false, NULL },
	{ "after", PARAM_ARRAY, false, NULL },
	{ "nice", PARAM_INTEGER, false, NULL },
	{ "merge_output", PARAM_BOOLEAN, false, NULL },
	{ "labels", PARAM_OBJECT, false, "an object of strings" },
	{ "hold", PARAM_BOOLEAN, false, NULL },
	{ "begin_at", PARAM_STRING, false, NULL },
	{ "after_any", PARAM_ARRAY, false, NULL },
	{ "node", PARAM_STRING, false, NULL },
	{ "memory", PARAM_INTEGER, false, "an integer (bytes)" },
	{ "resources", PARAM_OBJECT, false, "an object of resource names to "
	  "counts" },
	{ "key", PARAM_STRING, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_submit = {
	.name = "submit",
	.params = submit_params,
	.check = submit_check,
	.handler = submit_handler,
};
