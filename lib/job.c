/* job.c - the job: its states, its lifetime, and the job object that every
 * method returns (protocol.md, "The job object"). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "jsonw.h"
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

struct job *
job_new(void)
{
	struct job *job;

	if ((job = calloc(1, sizeof *job)) == NULL)
		return NULL;
	job->slots = 1;
	job->attempt = 1;
	job->submitted_at = job->started_at = job->finished_at = -1;
	job->exit_code = -1;
	job->user_time = job->system_time = -1;
	job->max_rss_kb = -1;
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

void
job_free(struct job *job)
{
	if (job == NULL)
		return;
	free(job->name);
	job_free_strv(job->argv);
	job_free_strv(job->env);
	free(job->cwd);
	free(job->priority);
	free(job->reason);
	free(job->after);
	free(job->after_any);
	json_decref(job->labels);
	free(job);
}

void
job_new_attempt(struct job *job)
{
	job->attempt++;
	job->pid = 0;
	job->exit_code = -1;
	job->signal = 0;
	job->started_at = job->finished_at = -1;
	job->user_time = job->system_time = -1;
	job->max_rss_kb = -1;
	job->stdout_truncated = job->stderr_truncated = false;
	job->stdout_dropped = job->stderr_dropped = 0;
	job->begun = false;
	job->start_ticks = 0;
}

void
job_status_get(const struct job *job, struct job_status *st)
{
	st->state = job->state;
	st->attempt = job->attempt;
	st->retries = job->retries;
	st->seq = job->seq;
	st->started_at = job->started_at;
	st->finished_at = job->finished_at;
	st->pid = job->pid;
	st->exit_code = job->exit_code;
	st->signal = job->signal;
	st->user_time = job->user_time;
	st->system_time = job->system_time;
	st->max_rss_kb = job->max_rss_kb;
	st->stdout_truncated = job->stdout_truncated;
	st->stderr_truncated = job->stderr_truncated;
	st->begun = job->begun;
	st->start_ticks = job->start_ticks;
	st->held = job->held;
	st->stdout_dropped = job->stdout_dropped;
	st->stderr_dropped = job->stderr_dropped;
}

void
job_status_set(struct job *job, const struct job_status *st)
{
	job->state = st->state;
	job->attempt = st->attempt;
	job->retries = st->retries;
	job->seq = st->seq;
	job->started_at = st->started_at;
	job->finished_at = st->finished_at;
	job->pid = st->pid;
	job->exit_code = st->exit_code;
	job->signal = st->signal;
	job->user_time = st->user_time;
	job->system_time = st->system_time;
	job->max_rss_kb = st->max_rss_kb;
	job->stdout_truncated = st->stdout_truncated;
	job->stderr_truncated = st->stderr_truncated;
	job->begun = st->begun;
	job->start_ticks = st->start_ticks;
	job->held = st->held;
	job->stdout_dropped = st->stdout_dropped;
	job->stderr_dropped = st->stderr_dropped;
}

void
job_drop_env(struct job *job)
{
	job_free_strv(job->env);
	job->env = NULL;
}

int
job_set_reason(struct job *job, const char *fmt, ...)
{
	char *reason = NULL;
	va_list ap;
	int n;

	if (fmt != NULL) {
		va_start(ap, fmt);
		n = vasprintf(&reason, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -1;
	}
	free(job->reason);
	job->reason = reason;
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

static json_t *
job_strv_json(char *const *v)
{
	json_t *arr = json_array();

	for (; arr != NULL && v != NULL && *v != NULL; v++)
		if (json_array_append_new(arr, json_string(*v)) != 0) {
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
	json_t *o = json_object();
	int rc = 0;

	if (o == NULL)
		return NULL;
	rc |= job_json_set(o, "id", json_integer((json_int_t)job->id));
	rc |= job_json_set(o, "name", json_string(job->name));
	rc |= job_json_set(o, "argv", job_strv_json(job->argv));
	rc |= job_json_set(o, "priority", json_string(job->priority));
	rc |= job_json_set(o, "state", json_string(job_state_name(job->state)));
	rc |= job_json_set(o, "slots", json_integer(job->slots));
	rc |= job_json_set(o, "exclusive", json_boolean(job->exclusive));
	rc |= job_json_set(o, "timeout", json_real((double)job->timeout_ms / 1000));
	rc |= job_json_set(o, "retries", json_integer(job->retries));
	rc |= job_json_set(o, "after", job_ids_json(job->after, job->nafter));
	rc |= job_json_set(o, "cwd", json_string(job->cwd));
	rc |= job_json_set(o, "uid", json_integer(job->uid));
	rc |= job_json_set(o, "gid", json_integer(job->gid));
	rc |= job_json_set(o, "submitted_at", job_time_json(job->submitted_at));
	rc |= job_json_set(o, "started_at", job_time_json(job->started_at));
	rc |= job_json_set(o, "finished_at", job_time_json(job->finished_at));
	rc |= job_json_set(o, "position", job_opt_int(position >= 0, position));
	rc |= job_json_set(o, "pid", job_opt_int(job->pid > 0, job->pid));
	rc |= job_json_set(o, "exit_code",
	    job_opt_int(job->exit_code >= 0, job->exit_code));
	rc |= job_json_set(o, "signal", job_signal_json(job->signal));
	rc |= job_json_set(o, "reason",
	    job->reason ? json_string(job->reason) : json_null());
	rc |= job_json_set(o, "attempt", json_integer(job->attempt));
	rc |= job_json_set(o, "user_time", job_opt_real(job->user_time));
	rc |= job_json_set(o, "system_time", job_opt_real(job->system_time));
	rc |= job_json_set(o, "max_rss_kb",
	    job_opt_int(job->max_rss_kb >= 0, job->max_rss_kb));
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

static void
job_time_text(struct jsonw *w, const char *key, int64_t ms)
{
	char buf[TIMEFMT_RFC3339_LEN];

	jsonw_key(w, key);
	if (ms < 0)
		jsonw_null(w);
	else
		jsonw_string(w, timefmt_rfc3339(ms, buf));
}

static void
job_opt_int_text(struct jsonw *w, const char *key, bool known, int64_t v)
{
	jsonw_key(w, key);
	if (known)
		jsonw_int(w, v);
	else
		jsonw_null(w);
}

static void
job_opt_real_text(struct jsonw *w, const char *key, double v)
{
	jsonw_key(w, key);
	if (v >= 0)
		jsonw_real(w, v);
	else
		jsonw_null(w);
}

/* A string that may be NULL (null then). */
static void
job_opt_string_text(struct jsonw *w, const char *key, const char *s)
{
	jsonw_key(w, key);
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
	char sig[WAITSTATUS_SIGNAME_MAX];

	jsonw_open(w);
	jsonw_key(w, "id");
	jsonw_int(w, (int64_t)job->id);
	jsonw_key(w, "name");
	jsonw_string(w, job->name);
	jsonw_key(w, "argv");
	jsonw_strv(w, job->argv);
	jsonw_key(w, "priority");
	jsonw_string(w, job->priority);
	jsonw_key(w, "state");
	jsonw_string(w, job_state_name(job->state));
	jsonw_key(w, "slots");
	jsonw_int(w, job->slots);
	jsonw_key(w, "exclusive");
	jsonw_bool(w, job->exclusive);
	jsonw_key(w, "timeout");
	jsonw_real(w, (double)job->timeout_ms / 1000);
	jsonw_key(w, "retries");
	jsonw_int(w, job->retries);
	jsonw_key(w, "after");
	jsonw_ids(w, job->after, job->nafter);
	jsonw_key(w, "cwd");
	jsonw_string(w, job->cwd);
	jsonw_key(w, "uid");
	jsonw_int(w, job->uid);
	jsonw_key(w, "gid");
	jsonw_int(w, job->gid);
	job_time_text(w, "submitted_at", job->submitted_at);
	job_time_text(w, "started_at", job->started_at);
	job_time_text(w, "finished_at", job->finished_at);
	job_opt_int_text(w, "position", position >= 0, position);
	job_opt_int_text(w, "pid", job->pid > 0, job->pid);
	job_opt_int_text(w, "exit_code", job->exit_code >= 0, job->exit_code);
	job_opt_string_text(w, "signal", job->signal > 0 ?
	    waitstatus_signame(job->signal, sig) : NULL);
	job_opt_string_text(w, "reason", job->reason);
	jsonw_key(w, "attempt");
	jsonw_int(w, job->attempt);
	job_opt_real_text(w, "user_time", job->user_time);
	job_opt_real_text(w, "system_time", job->system_time);
	job_opt_int_text(w, "max_rss_kb", job->max_rss_kb >= 0,
	    job->max_rss_kb);
	jsonw_key(w, "labels");
	if (job->labels != NULL)
		jsonw_json(w, job->labels);
	else
		jsonw_raw(w, "{}", 2);
	jsonw_key(w, "held");
	jsonw_bool(w, job->held);
	job_time_text(w, "begin_at", job->begin_at);
	jsonw_key(w, "after_any");
	jsonw_ids(w, job->after_any, job->nafter_any);
	jsonw_key(w, "nice");
	jsonw_int(w, job->nice);
	jsonw_key(w, "merge_output");
	jsonw_bool(w, job->merge_output);
	job_opt_string_text(w, "pending_reason", pending_reason);
	jsonw_close(w);
	return w->failed ? -1 : 0;
}
