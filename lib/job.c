/* job.c - the job: its states, its lifetime, and the job object that every
 * method returns (protocol.md, "The job object"). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytestr.h"
#include "intern.h"
#include "job.h"
#include "jsonw.h"
#include "slab.h"
#include "timefmt.h"
#include "waitstatus.h"

static const char *const job_state_names[JOB_NSTATES] = {
	[JOB_QUEUED] = "queued",
	[JOB_RUNNING] = "running",
	[JOB_SUCCEEDED] = "succeeded",
	[JOB_FAILED] = "failed",
	[JOB_TIMED_OUT] = "timed_out",
	[JOB_CANCELED] = "canceled",
	[JOB_LOST] = "lost",
};

const char *
job_state_name(enum job_state state)
{
	if ((unsigned)state >= JOB_NSTATES)
		return "unknown";
	return job_state_names[state];
}

/* A job "is running" but "has succeeded": said of a job in messages. */
static const char *const job_state_phrases[JOB_NSTATES] = {
	[JOB_QUEUED] = "is queued",
	[JOB_RUNNING] = "is running",
	[JOB_SUCCEEDED] = "has succeeded",
	[JOB_FAILED] = "has failed",
	[JOB_TIMED_OUT] = "has timed out",
	[JOB_CANCELED] = "was canceled",
	[JOB_LOST] = "was lost",
};

const char *
job_state_phrase(enum job_state state)
{
	if ((unsigned)state >= JOB_NSTATES)
		return "is in an unknown state";
	return job_state_phrases[state];
}

int
job_state_parse(const char *name)
{
	int i;

	for (i = 0; i < JOB_NSTATES; i++)
		if (strcmp(job_state_names[i], name) == 0)
			return i;
	return -1;
}

bool
job_state_terminal(enum job_state state)
{
	return state != JOB_QUEUED && state != JOB_RUNNING;
}

const struct job_run job_run_none = {
	.started_at = -1,
	.finished_at = -1,
	.user_time = -1,
	.system_time = -1,
	.max_rss_kb = -1,
	.peak_memory = -1,
	.exit_code = -1,
};

const struct job_extra job_extra_none = {
	.begin_at = -1,
};

/* Every job's struct: a queued job is most of the daemon's memory. */
static struct slab job_slab = {
	.size = (sizeof(struct job) + 7) & ~(size_t)7,
};

struct job *
job_new(void)
{
	struct job *job;

	if ((job = slab_alloc(&job_slab)) == NULL)
		return NULL;
	job->run = &job_run_none;
	job->slots = 1;
	job->attempt = 1;
	job->extra = &job_extra_none;
	job->submitted_at = -1;
	return job;
}

void
job_free_strv(char **v)
{
	char **p;

	if (v == NULL)
		return;
	for (p = v; *p != NULL; p++)
		free(*p);
	free(v);
}

/* The job's own run, or NULL while it shares job_run_none. */
static struct job_run *
job_run_own(const struct job *job)
{
	/* Not a cast of const away from job_run_none: a run of its own was
	 * allocated, and is reached through the job that owns it. */
	return job->run == &job_run_none ? NULL :
	    (struct job_run *)(uintptr_t)job->run;
}

/* The job's own extra, or NULL while it shares job_extra_none. */
static struct job_extra *
job_extra_own(const struct job *job)
{
	/* As job_run_own: not a cast of const away from job_extra_none. */
	return job->extra == &job_extra_none ? NULL :
	    (struct job_extra *)(uintptr_t)job->extra;
}

struct job_extra *
job_extra_edit(struct job *job)
{
	struct job_extra *extra = job_extra_own(job);

	if (extra != NULL)
		return extra;
	if ((extra = malloc(sizeof *extra)) == NULL)
		return NULL;
	*extra = job_extra_none;
	job->extra = extra;
	return extra;
}

bool
job_extra_is_none(const struct job_extra *e)
{
	return e->name == NULL && e->pinned_node == NULL &&
	    e->after == NULL && e->after_any == NULL && e->labels == NULL &&
	    e->resources == NULL && e->devices == NULL &&
	    e->begin_at == job_extra_none.begin_at && e->key == NULL &&
	    e->nafter == 0 &&
	    e->nafter_any == 0;
}

void
job_extra_clear(struct job_extra *e)
{
	free(e->name);
	intern_str_drop(e->pinned_node);
	free(e->after);
	free(e->after_any);
	free(e->key);
	json_decref(e->labels);
	json_decref(e->resources);
	json_decref(e->devices);
	*e = job_extra_none;
}

struct job_run *
job_run_edit(struct job *job)
{
	struct job_run *run = job_run_own(job);

	if (run != NULL)
		return run;
	if ((run = malloc(sizeof *run)) == NULL)
		return NULL;
	*run = job_run_none;
	job->run = run;
	return run;
}

void
job_free(struct job *job)
{
	struct job_extra *extra;
	struct job_run *run;

	if (job == NULL)
		return;
	if ((run = job_run_own(job)) != NULL) {
		free(run->reason);
		free(run->cgroup);
		json_decref(run->result);
		free(run);
	}
	if ((extra = job_extra_own(job)) != NULL) {
		job_extra_clear(extra);
		free(extra);
	}
	free(job->argv);
	intern_strv_drop(job->env);
	intern_str_drop(job->cwd);
	intern_str_drop(job->priority);
	intern_str_drop(job->node);
	intern_str_drop(job->user);
	json_decref(job->shared.held_elsewhere);
	/* What it wanted of the semaphore (daemon/resources.c). */
	free(job->waiter.need);
	slab_free(&job_slab, job);
}

void
job_new_attempt(struct job *job)
{
	struct job_extra *extra = job_extra_own(job);
	struct job_run *run = job_run_own(job);
	char *reason;

	job->attempt++;
	/* The units the last attempt held are not the next one's (a job
	 * with none shares job_extra_none's NULL). */
	if (extra != NULL) {
		json_decref(extra->devices);
		extra->devices = NULL;
	}
	if (run == NULL)
		return;
	reason = run->reason;
	free(run->cgroup);
	json_decref(run->result);
	*run = job_run_none;
	run->reason = reason;
}

void
job_status_get(const struct job *job, struct job_status *st)
{
	st->state = job->state;
	st->attempt = job->attempt;
	st->retries = job->retries;
	st->seq = job->seq;
	st->held = job->held;
	st->frozen = job->frozen;
	st->run = *job->run;
	st->run.reason = NULL;
	st->run.cgroup = NULL;
	st->run.result = NULL;
}

bool
job_run_is_none(const struct job_run *r)
{
	const struct job_run *z = &job_run_none;

	return r->started_at == z->started_at &&
	    r->finished_at == z->finished_at && r->user_time == z->user_time &&
	    r->system_time == z->system_time &&
	    r->max_rss_kb == z->max_rss_kb &&
	    r->peak_memory == z->peak_memory && r->oom == z->oom &&
	    r->start_ticks == z->start_ticks &&
	    r->stdout_dropped == z->stdout_dropped &&
	    r->stderr_dropped == z->stderr_dropped && r->pid == z->pid &&
	    r->exit_code == z->exit_code && r->signal == z->signal &&
	    r->stdout_truncated == z->stdout_truncated &&
	    r->stderr_truncated == z->stderr_truncated && r->begun == z->begun &&
	    r->result_truncated == z->result_truncated;
}

int
job_status_set(struct job *job, const struct job_status *st)
{
	struct job_run *run = job_run_own(job);
	char *reason, *cgroup;
	json_t *result;

	job->state = st->state;
	job->attempt = st->attempt;
	job->retries = st->retries;
	job->seq = st->seq;
	job->held = st->held;
	job->frozen = st->frozen;
	if (run == NULL && job_run_is_none(&st->run))
		return 0;
	if (run == NULL && (run = job_run_edit(job)) == NULL)
		return -1;
	reason = run->reason;
	cgroup = run->cgroup;
	result = run->result;
	*run = st->run;
	run->reason = reason;
	run->cgroup = cgroup;
	run->result = result;
	return 0;
}

void
job_take_stored(struct job *job, struct job *from)
{
	struct job old = *job;

	/* Whole, then the daemon's own fields back: what from held is the
	 * job's now, and from holds the job's old allocations, to free. */
	*job = *from;
	job->waiter = old.waiter;
	job->admit.begin_slot = old.admit.begin_slot;
	job->admit.gated = old.admit.gated;
	job->shared.taken = old.shared.taken;
	job->shared.elsewhere = old.shared.elsewhere;
	job->shared.held_elsewhere = old.shared.held_elsewhere;
	job->shared.cancel = old.shared.cancel;
	job->shared.refused = old.shared.refused;
	job->store.replaced = old.store.replaced + 1;
	job->store.version = old.store.version;
	*from = old;
	/* The job keeps what its waiter wants, and what is counted of it
	 * elsewhere; from read none. */
	from->waiter.need = NULL;
	from->shared.held_elsewhere = NULL;
}

void
job_drop_env(struct job *job)
{
	intern_strv_drop(job->env);
	job->env = NULL;
}

/* Puts a shared copy of s in *field, for the one before. */
static int
job_set_shared(const char **field, const char *s)
{
	const char *copy = NULL;

	if (s != NULL && (copy = intern_str(s)) == NULL)
		return -1;
	intern_str_drop(*field);
	*field = copy;
	return 0;
}

int
job_set_cwd(struct job *job, const char *cwd)
{
	return job_set_shared(&job->cwd, cwd);
}

int
job_set_priority(struct job *job, const char *priority)
{
	return job_set_shared(&job->priority, priority);
}

int
job_set_node(struct job *job, const char *node)
{
	return job_set_shared(&job->node, node);
}

int
job_set_pinned_node(struct job *job, const char *node)
{
	struct job_extra *extra;

	/* None for a job that has none: nothing to make. */
	if (node == NULL && job->extra->pinned_node == NULL)
		return 0;
	if ((extra = job_extra_edit(job)) == NULL)
		return -1;
	return job_set_shared(&extra->pinned_node, node);
}

int
job_set_user(struct job *job, const char *user)
{
	return job_set_shared(&job->user, user);
}

int
job_set_env(struct job *job, char **env)
{
	char *const *copy = NULL;

	if (env != NULL) {
		copy = intern_strv(env);
		job_free_strv(env);
		if (copy == NULL)
			return -1;
	}
	intern_strv_drop(job->env);
	job->env = copy;
	return 0;
}

/* argv[0]'s basename, as protocol.md names a job by default. */
static const char *
job_default_name(const struct job *job)
{
	const char *base;

	if (job->argv == NULL || job->argv[0] == NULL)
		return "";
	if ((base = strrchr(job->argv[0], '/')) != NULL && base[1] != '\0')
		return base + 1;
	return job->argv[0];
}

/* A job without a name of its own whose default is not UTF-8 (file names
 * are bytes) is named that with each bad byte written \xNN, kept: a name
 * is always a string of the job object. Out of memory (for the name, or
 * its extra) it stays without, and its object fails to be written. */
static void
job_name_escape(struct job *job)
{
	const char *base = job_default_name(job);
	struct job_extra *extra;

	if (job->extra->name == NULL && !bytestr_utf8(base, strlen(base)) &&
	    (extra = job_extra_edit(job)) != NULL)
		extra->name = bytestr_escape(base, false);
}

char **
job_strv_pack(char *const *v)
{
	size_t n, bytes = 0, len, i;
	char **packed, *p;

	for (n = 0; v[n] != NULL; n++)
		bytes += strlen(v[n]) + 1;
	if ((packed = malloc((n + 1) * sizeof *packed + bytes)) == NULL)
		return NULL;
	p = (char *)&packed[n + 1];
	for (i = 0; i < n; i++) {
		len = strlen(v[i]) + 1;
		packed[i] = memcpy(p, v[i], len);
		p += len;
	}
	packed[n] = NULL;
	return packed;
}

int
job_set_argv(struct job *job, char **argv)
{
	char **packed = argv != NULL ? job_strv_pack(argv) : NULL;
	bool failed = argv != NULL && packed == NULL;

	job_free_strv(argv);
	if (failed)
		return -1;
	free(job->argv);
	job->argv = packed;
	job_name_escape(job);
	return 0;
}

int
job_set_name(struct job *job, char *name)
{
	struct job_extra *extra;

	if (name != NULL && job->argv != NULL &&
	    strcmp(name, job_default_name(job)) == 0) {
		free(name);
		name = NULL;
	}
	/* None for a job that has none: nothing to make. */
	if (name == NULL && job->extra->name == NULL) {
		job_name_escape(job);
		return 0;
	}
	if ((extra = job_extra_edit(job)) == NULL) {
		free(name);
		return -1;
	}
	free(extra->name);
	extra->name = name;
	job_name_escape(job);
	return 0;
}

const char *
job_name(const struct job *job)
{
	return job->extra->name != NULL ? job->extra->name :
	    job_default_name(job);
}

/* Puts text (from malloc, taken; NULL clears) into the run's string at
 * offset field, each byte of what is not UTF-8 written \xNN: a path in it
 * may not be UTF-8, and the job object must still be written. 0, or -1 out
 * of memory with nothing changed. */
static int
job_set_run_text(struct job *job, size_t field, char *text)
{
	struct job_run *run;
	char *escaped, **dest;

	if (text != NULL && !bytestr_utf8(text, strlen(text))) {
		escaped = bytestr_escape(text, false);
		free(text);
		if ((text = escaped) == NULL)
			return -1;
	}
	if ((run = job_run_edit(job)) == NULL) {
		free(text);
		return -1;
	}
	dest = (char **)((char *)run + field);
	free(*dest);
	*dest = text;
	return 0;
}

int
job_set_reason(struct job *job, const char *fmt, ...)
{
	char *reason = NULL;
	va_list ap;
	int n;

	if (fmt == NULL && job->run->reason == NULL)
		return 0;
	if (fmt != NULL) {
		va_start(ap, fmt);
		n = vasprintf(&reason, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -1;
	}
	return job_set_run_text(job, offsetof(struct job_run, reason),
	    reason);
}

int
job_set_cgroup(struct job *job, const char *path)
{
	char *copy = NULL;

	if (path == NULL && job->run->cgroup == NULL)
		return 0;
	if (path != NULL && (copy = strdup(path)) == NULL)
		return -1;
	return job_set_run_text(job, offsetof(struct job_run, cgroup), copy);
}

int
job_set_result(struct job *job, const char *s, size_t n, bool truncated)
{
	struct job_run *run;
	json_t *v = NULL;

	if (n == 0 && job->run->result == NULL && !job->run->result_truncated)
		return 0;
	if ((run = job_run_edit(job)) == NULL)
		return -1;
	json_decref(run->result);
	run->result = NULL;
	run->result_truncated = false;
	if (n == 0)
		return 0;
	if ((v = bytestr_json_bytes(s, n)) == NULL)
		return -1;
	run->result = v;
	run->result_truncated = truncated;
	return 0;
}

/*
 * Where job_put sends the members of the job object: text appended to w
 * (the wire's, jsonw.h) or, when w is NULL, members set in the object o.
 * Each value has its two forms side by side below, and job_put lists the
 * members once, for both: the text is the object's dump, byte for byte.
 * Building the object beside the text keeps job_to_json as fast as it
 * was: reading the text back with jansson takes it five times as long.
 */
struct job_out {
	struct jsonw	*w;
	json_t		*o;
	bool		 failed;
};

/* Starts member key: true when it goes out as text (its value next). */
static bool
job_put_text(struct job_out *out, const char *key)
{
	if (out->w == NULL)
		return false;
	jsonw_key(out->w, key);
	return true;
}

/* Sets member key of the object to value (stolen); NULL, out of memory,
 * fails the object. */
static void
job_put_json(struct job_out *out, const char *key, json_t *value)
{
	if (json_object_set_new(out->o, key, value) != 0)
		out->failed = true;
}

static void
job_put_null(struct job_out *out, const char *key)
{
	if (job_put_text(out, key))
		jsonw_null(out->w);
	else
		job_put_json(out, key, json_null());
}

static void
job_put_int(struct job_out *out, const char *key, int64_t v)
{
	if (job_put_text(out, key))
		jsonw_int(out->w, v);
	else
		job_put_json(out, key, json_integer((json_int_t)v));
}

/* The integer when known, else null. */
static void
job_put_opt_int(struct job_out *out, const char *key, bool known, int64_t v)
{
	if (known)
		job_put_int(out, key, v);
	else
		job_put_null(out, key);
}

static void
job_put_bool(struct job_out *out, const char *key, bool v)
{
	if (job_put_text(out, key))
		jsonw_bool(out->w, v);
	else
		job_put_json(out, key, json_boolean(v));
}

/* A real, or null when v is negative (not measured). */
static void
job_put_real(struct job_out *out, const char *key, double v)
{
	if (v < 0)
		job_put_null(out, key);
	else if (job_put_text(out, key))
		jsonw_real(out->w, v);
	else
		job_put_json(out, key, json_real(v));
}

/* A string; NULL, or one that is not UTF-8, fails both forms. */
static void
job_put_string(struct job_out *out, const char *key, const char *s)
{
	if (job_put_text(out, key))
		jsonw_string(out->w, s);
	else
		job_put_json(out, key, json_string(s));
}

/* A string, or null for NULL. */
static void
job_put_opt_string(struct job_out *out, const char *key, const char *s)
{
	if (s != NULL)
		job_put_string(out, key, s);
	else
		job_put_null(out, key);
}

/* A time in ms since the epoch as RFC 3339, or null when negative. */
static void
job_put_time(struct job_out *out, const char *key, int64_t ms)
{
	char buf[TIMEFMT_RFC3339_LEN];

	job_put_opt_string(out, key, ms < 0 ? NULL : timefmt_rfc3339(ms, buf));
}

/* A byte string (bytestr.h): what is not UTF-8 as {"base64": ...}. */
static void
job_put_bytes(struct job_out *out, const char *key, const char *s)
{
	if (job_put_text(out, key))
		bytestr_write(out->w, s);
	else
		job_put_json(out, key, bytestr_json(s));
}

/* An array of byte strings; NULL is an empty one. */
static void
job_put_strv(struct job_out *out, const char *key, char *const *v)
{
	json_t *arr;

	if (job_put_text(out, key)) {
		bytestr_write_strv(out->w, v);
		return;
	}
	arr = json_array();
	for (; arr != NULL && v != NULL && *v != NULL; v++)
		if (json_array_append_new(arr, bytestr_json(*v)) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	job_put_json(out, key, arr);
}

static void
job_put_ids(struct job_out *out, const char *key, const uint64_t *ids,
    size_t n)
{
	json_t *arr;
	size_t i;

	if (job_put_text(out, key)) {
		jsonw_ids(out->w, ids, n);
		return;
	}
	arr = json_array();
	for (i = 0; arr != NULL && i < n; i++)
		if (json_array_append_new(arr,
		    json_integer((json_int_t)ids[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	job_put_json(out, key, arr);
}

/* An object of the job's (labels, resources, devices), {} when NULL.
 * Shared, not copied, by the object: each is replaced whole, never
 * edited. */
static void
job_put_object(struct job_out *out, const char *key, json_t *obj)
{
	if (!job_put_text(out, key))
		job_put_json(out, key, obj != NULL ? json_incref(obj) :
		    json_object());
	else if (obj != NULL)
		jsonw_json(out->w, obj);
	else
		jsonw_raw(out->w, "{}", 2);
}

/* A value of the job's own, shared by the object, never copied: each is
 * replaced whole, never edited (the result's byte string). */
static void
job_put_value(struct job_out *out, const char *key, json_t *v)
{
	if (job_put_text(out, key))
		jsonw_json(out->w, v);
	else
		job_put_json(out, key, json_incref(v));
}

/* The members of the job object, in protocol.md's order. */
static void
job_put(struct job_out *out, const struct job *job, int64_t position,
    const char *pending_reason)
{
	const struct job_run *run = job->run;
	char sig[WAITSTATUS_SIGNAME_MAX];

	job_put_int(out, "id", (int64_t)job->id);
	job_put_string(out, "name", job_name(job));
	job_put_strv(out, "argv", job->argv);
	job_put_string(out, "priority", job->priority);
	job_put_opt_string(out, "node", job->node);
	job_put_opt_string(out, "pinned_node", job->extra->pinned_node);
	job_put_string(out, "state", job_state_name(job->state));
	job_put_int(out, "slots", job->slots);
	job_put_bool(out, "exclusive", job->exclusive);
	job_put_real(out, "timeout", (double)job->timeout_ms / 1000);
	job_put_int(out, "retries", job->retries);
	job_put_ids(out, "after", job->extra->after, job->extra->nafter);
	job_put_bytes(out, "cwd", job->cwd);
	job_put_int(out, "uid", job->uid);
	job_put_int(out, "gid", job->gid);
	job_put_time(out, "submitted_at", job->submitted_at);
	job_put_time(out, "started_at", run->started_at);
	job_put_time(out, "finished_at", run->finished_at);
	job_put_opt_int(out, "position", position >= 0, position);
	job_put_opt_int(out, "pid", run->pid > 0, run->pid);
	job_put_opt_int(out, "exit_code", run->exit_code >= 0,
	    run->exit_code);
	job_put_opt_string(out, "signal", run->signal > 0 ?
	    waitstatus_signame(run->signal, sig) : NULL);
	job_put_opt_string(out, "reason", run->reason);
	job_put_int(out, "attempt", job->attempt);
	job_put_real(out, "user_time", run->user_time);
	job_put_real(out, "system_time", run->system_time);
	job_put_opt_int(out, "max_rss_kb", run->max_rss_kb >= 0,
	    run->max_rss_kb);
	job_put_object(out, "labels", job->extra->labels);
	job_put_bool(out, "held", job->held);
	job_put_time(out, "begin_at", job->extra->begin_at);
	job_put_ids(out, "after_any", job->extra->after_any,
	    job->extra->nafter_any);
	job_put_int(out, "nice", job->nice);
	job_put_bool(out, "merge_output", job->merge_output);
	job_put_opt_string(out, "pending_reason", pending_reason);
	/* Protocol v1.2. */
	job_put_opt_int(out, "memory", job->memory != 0,
	    (int64_t)job->memory);
	job_put_object(out, "resources", job->extra->resources);
	job_put_object(out, "devices", job->extra->devices);
	job_put_bool(out, "frozen", job->frozen);
	job_put_opt_int(out, "peak_memory", run->peak_memory >= 0,
	    run->peak_memory);
	job_put_bool(out, "oom", run->oom);
	job_put_opt_string(out, "cgroup", run->cgroup);
	/* Protocol v1.3; a result there only when the attempt left one. */
	job_put_opt_string(out, "key", job->extra->key);
	if (run->result != NULL)
		job_put_value(out, "result", run->result);
	if (run->result_truncated)
		job_put_bool(out, "result_truncated", true);
}

json_t *
job_to_json(const struct job *job, int64_t position,
    const char *pending_reason)
{
	struct job_out out = { .o = json_object() };

	if (out.o == NULL)
		return NULL;
	job_put(&out, job, position, pending_reason);
	if (out.failed) {
		json_decref(out.o);
		return NULL;
	}
	return out.o;
}

int
job_write_json(const struct job *job, int64_t position,
    const char *pending_reason, struct jsonw *w)
{
	struct job_out out = { .w = w };

	jsonw_open(w);
	job_put(&out, job, position, pending_reason);
	jsonw_close(w);
	return w->failed ? -1 : 0;
}
