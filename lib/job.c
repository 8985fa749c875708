/* job.c - the job: its states, its lifetime, and the job object that every
 * method returns (protocol.md, "The job object"). */
#include <errno.h>
#include <stdarg.h>
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
	.exit_code = -1,
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
	job->submitted_at = -1;
	job->begin_at = -1;
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
	struct job_run *run;

	if (job == NULL)
		return;
	if ((run = job_run_own(job)) != NULL) {
		free(run->reason);
		free(run);
	}
	free(job->name);
	free(job->argv);
	intern_strv_drop(job->env);
	intern_str_drop(job->cwd);
	intern_str_drop(job->priority);
	intern_str_drop(job->node);
	intern_str_drop(job->pinned_node);
	intern_str_drop(job->user);
	free(job->after);
	free(job->after_any);
	json_decref(job->labels);
	slab_free(&job_slab, job);
}

void
job_new_attempt(struct job *job)
{
	struct job_run *run = job_run_own(job);
	char *reason;

	job->attempt++;
	if (run == NULL)
		return;
	reason = run->reason;
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
	st->run = *job->run;
	st->run.reason = NULL;
}

bool
job_run_is_none(const struct job_run *r)
{
	const struct job_run *z = &job_run_none;

	return r->started_at == z->started_at &&
	    r->finished_at == z->finished_at && r->user_time == z->user_time &&
	    r->system_time == z->system_time &&
	    r->max_rss_kb == z->max_rss_kb &&
	    r->start_ticks == z->start_ticks &&
	    r->stdout_dropped == z->stdout_dropped &&
	    r->stderr_dropped == z->stderr_dropped && r->pid == z->pid &&
	    r->exit_code == z->exit_code && r->signal == z->signal &&
	    r->stdout_truncated == z->stdout_truncated &&
	    r->stderr_truncated == z->stderr_truncated && r->begun == z->begun;
}

int
job_status_set(struct job *job, const struct job_status *st)
{
	struct job_run *run = job_run_own(job);
	char *reason;

	job->state = st->state;
	job->attempt = st->attempt;
	job->retries = st->retries;
	job->seq = st->seq;
	job->held = st->held;
	if (run == NULL && job_run_is_none(&st->run))
		return 0;
	if (run == NULL && (run = job_run_edit(job)) == NULL)
		return -1;
	reason = run->reason;
	*run = st->run;
	run->reason = reason;
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
	job->shared.cancel = old.shared.cancel;
	job->shared.refused = old.shared.refused;
	job->store.replaced = old.store.replaced + 1;
	job->store.version = old.store.version;
	*from = old;
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
	return job_set_shared(&job->pinned_node, node);
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
 * is always a string of the job object. Out of memory it stays without,
 * and its object fails to be written. */
static void
job_name_escape(struct job *job)
{
	const char *base = job_default_name(job);

	if (job->name == NULL && !bytestr_utf8(base, strlen(base)))
		job->name = bytestr_escape(base, false);
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

void
job_set_name(struct job *job, char *name)
{
	free(job->name);
	job->name = name;
	if (name != NULL && job->argv != NULL &&
	    strcmp(name, job_default_name(job)) == 0) {
		free(name);
		job->name = NULL;
	}
	job_name_escape(job);
}

const char *
job_name(const struct job *job)
{
	return job->name != NULL ? job->name : job_default_name(job);
}

int
job_set_reason(struct job *job, const char *fmt, ...)
{
	struct job_run *run;
	char *reason = NULL, *escaped;
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
		/* A path in it may not be UTF-8, and the job object must
		 * still be written. */
		if (!bytestr_utf8(reason, (size_t)n)) {
			escaped = bytestr_escape(reason, false);
			free(reason);
			if ((reason = escaped) == NULL)
				return -1;
		}
	}
	if ((run = job_run_edit(job)) == NULL) {
		free(reason);
		return -1;
	}
	free(run->reason);
	run->reason = reason;
	return 0;
}

static json_t *
job_time_json(int64_t ms)
{
	char buf[TIMEFMT_RFC3339_LEN];

	if (ms < 0)
		return json_null();
	return json_string(timefmt_rfc3339(ms, buf));
}

/* Byte strings: what is not UTF-8 as {"base64": ...} (bytestr.h). */
static json_t *
job_strv_json(char *const *v)
{
	json_t *arr = json_array();

	for (; arr != NULL && v != NULL && *v != NULL; v++)
		if (json_array_append_new(arr, bytestr_json(*v)) != 0) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

/* Steals value; a NULL value (out of memory) fails the whole object. */
static int
job_json_set(json_t *obj, const char *key, json_t *value)
{
	return value == NULL ? -1 : json_object_set_new(obj, key, value);
}

static json_t *
job_opt_int(bool known, json_int_t v)
{
	return known ? json_integer(v) : json_null();
}

static json_t *
job_opt_string(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *
job_opt_real(double v)
{
	return v >= 0 ? json_real(v) : json_null();
}

static json_t *
job_signal_json(int signo)
{
	char name[WAITSTATUS_SIGNAME_MAX];

	if (signo <= 0)
		return json_null();
	return json_string(waitstatus_signame(signo, name));
}

static json_t *
job_ids_json(const uint64_t *ids, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr != NULL && i < n; i++)
		if (json_array_append_new(arr,
		    json_integer((json_int_t)ids[i])) != 0) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

json_t *
job_to_json(const struct job *job, int64_t position,
    const char *pending_reason)
{
	const struct job_run *run = job->run;
	json_t *o = json_object();
	int rc = 0;

	if (o == NULL)
		return NULL;
	rc |= job_json_set(o, "id", json_integer((json_int_t)job->id));
	rc |= job_json_set(o, "name", json_string(job_name(job)));
	rc |= job_json_set(o, "argv", job_strv_json(job->argv));
	rc |= job_json_set(o, "priority", json_string(job->priority));
	rc |= job_json_set(o, "node", job_opt_string(job->node));
	rc |= job_json_set(o, "pinned_node", job_opt_string(job->pinned_node));
	rc |= job_json_set(o, "state", json_string(job_state_name(job->state)));
	rc |= job_json_set(o, "slots", json_integer(job->slots));
	rc |= job_json_set(o, "exclusive", json_boolean(job->exclusive));
	rc |= job_json_set(o, "timeout", json_real((double)job->timeout_ms / 1000));
	rc |= job_json_set(o, "retries", json_integer(job->retries));
	rc |= job_json_set(o, "after", job_ids_json(job->after, job->nafter));
	rc |= job_json_set(o, "cwd", bytestr_json(job->cwd));
	rc |= job_json_set(o, "uid", json_integer(job->uid));
	rc |= job_json_set(o, "gid", json_integer(job->gid));
	rc |= job_json_set(o, "submitted_at", job_time_json(job->submitted_at));
	rc |= job_json_set(o, "started_at", job_time_json(run->started_at));
	rc |= job_json_set(o, "finished_at", job_time_json(run->finished_at));
	rc |= job_json_set(o, "position", job_opt_int(position >= 0, position));
	rc |= job_json_set(o, "pid", job_opt_int(run->pid > 0, run->pid));
	rc |= job_json_set(o, "exit_code",
	    job_opt_int(run->exit_code >= 0, run->exit_code));
	rc |= job_json_set(o, "signal", job_signal_json(run->signal));
	rc |= job_json_set(o, "reason", job_opt_string(run->reason));
	rc |= job_json_set(o, "attempt", json_integer(job->attempt));
	rc |= job_json_set(o, "user_time", job_opt_real(run->user_time));
	rc |= job_json_set(o, "system_time", job_opt_real(run->system_time));
	rc |= job_json_set(o, "max_rss_kb",
	    job_opt_int(run->max_rss_kb >= 0, run->max_rss_kb));
	/* Shared, not copied: labels are replaced whole, never edited. */
	rc |= job_json_set(o, "labels", job->labels != NULL ?
	    json_incref(job->labels) : json_object());
	rc |= job_json_set(o, "held", json_boolean(job->held));
	rc |= job_json_set(o, "begin_at", job_time_json(job->begin_at));
	rc |= job_json_set(o, "after_any",
	    job_ids_json(job->after_any, job->nafter_any));
	rc |= job_json_set(o, "nice", json_integer(job->nice));
	rc |= job_json_set(o, "merge_output", json_boolean(job->merge_output));
	rc |= job_json_set(o, "pending_reason", pending_reason != NULL ?
	    json_string(pending_reason) : json_null());
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ,"k": before the value of key k (a literal): the keys of the job object
 * go out as constants, not through jsonw_key. */
#define JOB_KEY(w, k) jsonw_raw((w), ",\"" k "\":", sizeof(k) + 3)

static void
job_time_text(struct jsonw *w, int64_t ms)
{
	char buf[TIMEFMT_RFC3339_LEN];

	if (ms < 0)
		jsonw_null(w);
	else
		jsonw_string(w, timefmt_rfc3339(ms, buf));
}

static void
job_opt_int_text(struct jsonw *w, bool known, int64_t v)
{
	if (known)
		jsonw_int(w, v);
	else
		jsonw_null(w);
}

static void
job_opt_real_text(struct jsonw *w, double v)
{
	if (v >= 0)
		jsonw_real(w, v);
	else
		jsonw_null(w);
}

/* A string that may be NULL (null then). */
static void
job_opt_string_text(struct jsonw *w, const char *s)
{
	if (s != NULL)
		jsonw_string(w, s);
	else
		jsonw_null(w);
}

/* Keep in step with job_to_json: test-job compares the two, field by
 * field, for every kind of value. */
int
job_write_json(const struct job *job, int64_t position,
    const char *pending_reason, struct jsonw *w)
{
	const struct job_run *run = job->run;
	char sig[WAITSTATUS_SIGNAME_MAX];

	jsonw_raw(w, "{\"id\":", 6);
	jsonw_int(w, (int64_t)job->id);
	JOB_KEY(w, "name");
	jsonw_string(w, job_name(job));
	JOB_KEY(w, "argv");
	bytestr_write_strv(w, job->argv);
	JOB_KEY(w, "priority");
	jsonw_string(w, job->priority);
	JOB_KEY(w, "node");
	job_opt_string_text(w, job->node);
	JOB_KEY(w, "pinned_node");
	job_opt_string_text(w, job->pinned_node);
	JOB_KEY(w, "state");
	jsonw_string(w, job_state_name(job->state));
	JOB_KEY(w, "slots");
	jsonw_int(w, job->slots);
	JOB_KEY(w, "exclusive");
	jsonw_bool(w, job->exclusive);
	JOB_KEY(w, "timeout");
	jsonw_real(w, (double)job->timeout_ms / 1000);
	JOB_KEY(w, "retries");
	jsonw_int(w, job->retries);
	JOB_KEY(w, "after");
	jsonw_ids(w, job->after, job->nafter);
	JOB_KEY(w, "cwd");
	bytestr_write(w, job->cwd);
	JOB_KEY(w, "uid");
	jsonw_int(w, job->uid);
	JOB_KEY(w, "gid");
	jsonw_int(w, job->gid);
	JOB_KEY(w, "submitted_at");
	job_time_text(w, job->submitted_at);
	JOB_KEY(w, "started_at");
	job_time_text(w, run->started_at);
	JOB_KEY(w, "finished_at");
	job_time_text(w, run->finished_at);
	JOB_KEY(w, "position");
	job_opt_int_text(w, position >= 0, position);
	JOB_KEY(w, "pid");
	job_opt_int_text(w, run->pid > 0, run->pid);
	JOB_KEY(w, "exit_code");
	job_opt_int_text(w, run->exit_code >= 0, run->exit_code);
	JOB_KEY(w, "signal");
	job_opt_string_text(w, run->signal > 0 ?
	    waitstatus_signame(run->signal, sig) : NULL);
	JOB_KEY(w, "reason");
	job_opt_string_text(w, run->reason);
	JOB_KEY(w, "attempt");
	jsonw_int(w, job->attempt);
	JOB_KEY(w, "user_time");
	job_opt_real_text(w, run->user_time);
	JOB_KEY(w, "system_time");
	job_opt_real_text(w, run->system_time);
	JOB_KEY(w, "max_rss_kb");
	job_opt_int_text(w, run->max_rss_kb >= 0, run->max_rss_kb);
	JOB_KEY(w, "labels");
	if (job->labels != NULL)
		jsonw_json(w, job->labels);
	else
		jsonw_raw(w, "{}", 2);
	JOB_KEY(w, "held");
	jsonw_bool(w, job->held);
	JOB_KEY(w, "begin_at");
	job_time_text(w, job->begin_at);
	JOB_KEY(w, "after_any");
	jsonw_ids(w, job->after_any, job->nafter_any);
	JOB_KEY(w, "nice");
	jsonw_int(w, job->nice);
	JOB_KEY(w, "merge_output");
	jsonw_bool(w, job->merge_output);
	JOB_KEY(w, "pending_reason");
	job_opt_string_text(w, pending_reason);
	jsonw_raw(w, "}", 1);
	return w->failed ? -1 : 0;
}
