/* db-row.c - a job as a row of the jobs table and back: SQL NULL for what the
 * job keeps as unknown, JSON for argv, env, after and labels, and checks on
 * reading. */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "db-private.h"
#include "intern.h"
#include "job.h"
#include "jsonw.h"
#include "nodename.h"

/* Columns of SELECT id, DB_ROW_COLUMNS; parameter ?N is column N - 1. */
enum db_row_column {
	DB_ROW_ID,
	DB_ROW_NAME,
	DB_ROW_ARGV,
	DB_ROW_ENV,
	DB_ROW_CWD,
	DB_ROW_PRIORITY,
	DB_ROW_STATE,
	DB_ROW_SLOTS,
	DB_ROW_EXCLUSIVE,
	DB_ROW_TIMEOUT_MS,
	DB_ROW_RETRIES,
	DB_ROW_SEQ,
	DB_ROW_AFTER,
	DB_ROW_UID,
	DB_ROW_GID,
	DB_ROW_SUBMITTED_AT,
	DB_ROW_STARTED_AT,
	DB_ROW_FINISHED_AT,
	DB_ROW_PID,
	DB_ROW_EXIT_CODE,
	DB_ROW_SIGNAL,
	DB_ROW_REASON,
	DB_ROW_ATTEMPT,
	DB_ROW_USER_TIME,
	DB_ROW_SYSTEM_TIME,
	DB_ROW_MAX_RSS_KB,
	DB_ROW_STDOUT_TRUNCATED,
	DB_ROW_STDERR_TRUNCATED,
	DB_ROW_BEGUN,
	DB_ROW_START_TICKS,
	DB_ROW_LABELS,
	DB_ROW_HELD,
	DB_ROW_BEGIN_AT,
	DB_ROW_AFTER_ANY,
	DB_ROW_NICE,
	DB_ROW_MERGE_OUTPUT,
	DB_ROW_STDOUT_DROPPED,
	DB_ROW_STDERR_DROPPED,
	DB_ROW_NODE,
	DB_ROW_PINNED_NODE,
};

/* Binding stops at the first failure, whose code is kept for the message
 * (sqlite3_errmsg would be reset by later bindings). */
struct db_row_binder {
	sqlite3_stmt *st;
	int rc;
	int base;	/* parameters before the row's: rows of one INSERT */
};

static void
db_row_bind_int(struct db_row_binder *b, int col, int64_t v)
{
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_int64(b->st, b->base + col + 1, v);
}

static void
db_row_bind_null(struct db_row_binder *b, int col)
{
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_null(b->st, b->base + col + 1);
}

static void
db_row_bind_opt_int(struct db_row_binder *b, int col, bool known, int64_t v)
{
	if (known)
		db_row_bind_int(b, col, v);
	else
		db_row_bind_null(b, col);
}

/* Negative is unknown. */
static void
db_row_bind_opt_real(struct db_row_binder *b, int col, double v)
{
	if (v < 0)
		db_row_bind_null(b, col);
	else if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_double(b->st, b->base + col + 1,
		    v);
}

/* Borrows s, which outlives the statement's use; NULL binds NULL. */
static void
db_row_bind_text(struct db_row_binder *b, int col, const char *s)
{
	if (s == NULL)
		db_row_bind_null(b, col);
	else if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_text(b->st, b->base + col + 1, s,
		    -1,
		    SQLITE_STATIC);
}

/* Takes s, which SQLite frees once done with it, even on failure. */
static void
db_row_bind_owned(struct db_row_binder *b, int col, char *s)
{
	if (b->rc != SQLITE_OK)
		free(s);
	else if (s == NULL)
		db_row_bind_null(b, col);
	else
		b->rc = sqlite3_bind_text(b->st, b->base + col + 1, s,
		    -1, free);
}

/* The text w holds as an allocated string for SQLite, or NULL when a
 * string was not UTF-8 or memory ran out. */
static char *
db_row_written(struct jsonw *w)
{
	const char *text;
	size_t len;
	char *s;

	if ((text = jsonw_text(w, &len)) == NULL || (s = malloc(len + 1))
	    == NULL)
		return NULL;
	memcpy(s, text, len);
	s[len] = '\0';
	return s;
}

/* v as a compact JSON array of strings (NULL v gives "[]"); NULL when a
 * string is not UTF-8 or memory runs out. Written as text, with no JSON
 * object between: every new job stores two of them. */
static char *
db_row_strv_json(struct jsonw *w, char *const *v)
{
	jsonw_reset(w);
	jsonw_strv(w, v);
	return db_row_written(w);
}

/* The ids as a compact JSON array; NULL when memory runs out. */
static char *
db_row_ids_json(struct jsonw *w, const uint64_t *ids, size_t n)
{
	jsonw_reset(w);
	jsonw_ids(w, ids, n);
	return db_row_written(w);
}

/* ids, which SQLite must hold as integers: 0, or -1 naming what. */
static int
db_row_ids_check(const struct job *job, const char *what,
    const uint64_t *ids, size_t n, char **cause)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == 0 || ids[i] > INT64_MAX)
			return db_fail(cause, "cannot store job %" PRIu64
			    ": %s holds id %" PRIu64 ", out of range",
			    job->id, what, ids[i]);
	return 0;
}

/* The JSON columns written once, which may fail before any binding. */
static int
db_row_bind_json(struct db_row_binder *b, const struct job *job,
    char **cause)
{
	/* Kept for the next row: the text is copied out of it. */
	static struct jsonw w;
	char *argv, *env, *after = NULL, *after_any = NULL;

	if (db_row_ids_check(job, "after", job->after, job->nafter,
	    cause) == -1 || db_row_ids_check(job, "after_any",
	    job->after_any, job->nafter_any, cause) == -1)
		return -1;
	argv = db_row_strv_json(&w, job->argv);
	env = db_row_strv_json(&w, job->env);
	if (job->nafter > 0)
		after = db_row_ids_json(&w, job->after, job->nafter);
	if (job->nafter_any > 0)
		after_any = db_row_ids_json(&w, job->after_any,
		    job->nafter_any);
	if (argv == NULL || env == NULL || (job->nafter > 0 && after == NULL) ||
	    (job->nafter_any > 0 && after_any == NULL)) {
		free(argv);
		free(env);
		free(after);
		free(after_any);
		return db_fail(cause, "cannot store job %" PRIu64 ": argv or "
		    "env is not UTF-8, or out of memory", job->id);
	}
	db_row_bind_owned(b, DB_ROW_ARGV, argv);
	db_row_bind_owned(b, DB_ROW_ENV, env);
	db_row_bind_owned(b, DB_ROW_AFTER, after);
	db_row_bind_owned(b, DB_ROW_AFTER_ANY, after_any);
	return 0;
}

int
db_row_bind(sqlite3_stmt *st, const struct job *job, bool all, char **cause)
{
	return db_row_bind_at(st, 0, job, all, cause);
}

int
db_row_bind_at(sqlite3_stmt *st, int base, const struct job *job, bool all,
    char **cause)
{
	struct db_row_binder b = { st, SQLITE_OK, base };
	char *labels = NULL;

	/* SQLite integers are signed 64 bits. */
	if (job->id == 0 || job->id > INT64_MAX ||
	    job->timeout_ms > INT64_MAX ||
	    job->run->stdout_dropped > INT64_MAX ||
	    job->run->stderr_dropped > INT64_MAX)
		return db_fail(cause, "cannot store job %" PRIu64 ": id, "
		    "timeout or dropped bytes out of range", job->id);
	if (job->labels != NULL && json_object_size(job->labels) > 0 &&
	    (labels = json_dumps(job->labels, JSON_COMPACT)) == NULL)
		return db_fail(cause, "cannot store job %" PRIu64 ": its "
		    "labels are not UTF-8, or out of memory", job->id);
	db_row_bind_int(&b, DB_ROW_ID, (int64_t)job->id);
	if (all) {
		if (db_row_bind_json(&b, job, cause) == -1) {
			free(labels);
			return -1;
		}
		db_row_bind_text(&b, DB_ROW_CWD, job->cwd);
		db_row_bind_int(&b, DB_ROW_SLOTS, job->slots);
		db_row_bind_int(&b, DB_ROW_EXCLUSIVE, job->exclusive);
		db_row_bind_int(&b, DB_ROW_UID, job->uid);
		db_row_bind_int(&b, DB_ROW_GID, job->gid);
		db_row_bind_opt_int(&b, DB_ROW_SUBMITTED_AT,
		    job->submitted_at >= 0, job->submitted_at);
		db_row_bind_int(&b, DB_ROW_MERGE_OUTPUT, job->merge_output);
		db_row_bind_text(&b, DB_ROW_PINNED_NODE, job->pinned_node);
	}
	db_row_bind_text(&b, DB_ROW_NAME, job_name(job));
	db_row_bind_text(&b, DB_ROW_PRIORITY, job->priority);
	db_row_bind_int(&b, DB_ROW_TIMEOUT_MS, (int64_t)job->timeout_ms);
	db_row_bind_text(&b, DB_ROW_STATE, job_state_name(job->state));
	db_row_bind_int(&b, DB_ROW_RETRIES, job->retries);
	db_row_bind_int(&b, DB_ROW_SEQ, job->seq);
	db_row_bind_opt_int(&b, DB_ROW_STARTED_AT, job->run->started_at >= 0,
	    job->run->started_at);
	db_row_bind_opt_int(&b, DB_ROW_FINISHED_AT, job->run->finished_at >= 0,
	    job->run->finished_at);
	db_row_bind_opt_int(&b, DB_ROW_PID, job->run->pid > 0, job->run->pid);
	db_row_bind_opt_int(&b, DB_ROW_EXIT_CODE, job->run->exit_code >= 0,
	    job->run->exit_code);
	db_row_bind_opt_int(&b, DB_ROW_SIGNAL, job->run->signal > 0,
	    job->run->signal);
	db_row_bind_text(&b, DB_ROW_REASON, job->run->reason);
	db_row_bind_int(&b, DB_ROW_ATTEMPT, job->attempt);
	db_row_bind_opt_real(&b, DB_ROW_USER_TIME, job->run->user_time);
	db_row_bind_opt_real(&b, DB_ROW_SYSTEM_TIME, job->run->system_time);
	db_row_bind_opt_int(&b, DB_ROW_MAX_RSS_KB, job->run->max_rss_kb >= 0,
	    job->run->max_rss_kb);
	db_row_bind_int(&b, DB_ROW_STDOUT_TRUNCATED,
	    job->run->stdout_truncated);
	db_row_bind_int(&b, DB_ROW_STDERR_TRUNCATED,
	    job->run->stderr_truncated);
	db_row_bind_int(&b, DB_ROW_BEGUN, job->run->begun);
	db_row_bind_opt_int(&b, DB_ROW_START_TICKS, job->run->start_ticks > 0,
	    (int64_t)job->run->start_ticks);
	db_row_bind_owned(&b, DB_ROW_LABELS, labels);
	db_row_bind_int(&b, DB_ROW_HELD, job->held);
	db_row_bind_opt_int(&b, DB_ROW_BEGIN_AT, job->begin_at >= 0,
	    job->begin_at);
	db_row_bind_int(&b, DB_ROW_NICE, job->nice);
	db_row_bind_int(&b, DB_ROW_STDOUT_DROPPED,
	    (int64_t)job->run->stdout_dropped);
	db_row_bind_int(&b, DB_ROW_STDERR_DROPPED,
	    (int64_t)job->run->stderr_dropped);
	db_row_bind_text(&b, DB_ROW_NODE, job->node);
	if (b.rc != SQLITE_OK)
		return db_fail(cause, "cannot store job %" PRIu64 ": %s",
		    job->id, sqlite3_errstr(b.rc));
	return 0;
}

/* What is wrong with the row being read, for the message. */
struct db_row_reader {
	sqlite3_stmt *st;
	char why[256];
};

static int
db_row_bad(struct db_row_reader *r, int col, const char *what)
{
	const char *name = sqlite3_column_name(r->st, col);

	snprintf(r->why, sizeof r->why, "column %s %s",
	    name != NULL ? name : "?", what);
	return -1;
}

static int
db_row_oom(struct db_row_reader *r)
{
	snprintf(r->why, sizeof r->why, "out of memory");
	return -1;
}

/* A NOT NULL integer column, within [min, max], into *v. */
static int
db_row_int(struct db_row_reader *r, int col, int64_t min, int64_t max,
    int64_t *v)
{
	char what[64];

	if (sqlite3_column_type(r->st, col) != SQLITE_INTEGER)
		return db_row_bad(r, col, "is not an integer");
	*v = sqlite3_column_int64(r->st, col);
	if (*v < min || *v > max) {
		snprintf(what, sizeof what, "is out of range (%" PRId64 ")",
		    *v);
		return db_row_bad(r, col, what);
	}
	return 0;
}

/* A column where NULL means unknown, which is if_null in the job. */
static int
db_row_opt_int(struct db_row_reader *r, int col, int64_t min, int64_t max,
    int64_t if_null, int64_t *v)
{
	if (sqlite3_column_type(r->st, col) == SQLITE_NULL) {
		*v = if_null;
		return 0;
	}
	return db_row_int(r, col, min, max, v);
}

/* A REAL column, NULL meaning unknown, -1 in the job. */
static int
db_row_opt_real(struct db_row_reader *r, int col, double *v)
{
	switch (sqlite3_column_type(r->st, col)) {
	case SQLITE_NULL:
		*v = -1;
		return 0;
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		*v = sqlite3_column_double(r->st, col);
		if (*v < 0)
			return db_row_bad(r, col, "is negative");
		return 0;
	default:
		return db_row_bad(r, col, "is not a number");
	}
}

/* A TEXT column, borrowed until the next step; NULL for SQL NULL when
 * nullable. */
static int
db_row_text_ref(struct db_row_reader *r, int col, bool nullable,
    const char **s)
{
	int type = sqlite3_column_type(r->st, col);

	*s = NULL;
	if (type == SQLITE_NULL && nullable)
		return 0;
	if (type != SQLITE_TEXT)
		return db_row_bad(r, col, "is not text");
	if ((*s = (const char *)sqlite3_column_text(r->st, col)) == NULL)
		return db_row_oom(r);
	/* A C string ends at the first NUL; the job would lose the rest. */
	if (strlen(*s) != (size_t)sqlite3_column_bytes(r->st, col))
		return db_row_bad(r, col, "holds a NUL byte");
	return 0;
}

/* A TEXT column, copied into *out (NULL for SQL NULL when nullable). */
static int
db_row_text(struct db_row_reader *r, int col, bool nullable, char **out)
{
	const char *s;

	if (db_row_text_ref(r, col, nullable, &s) == -1)
		return -1;
	if (s != NULL && (*out = strdup(s)) == NULL)
		return db_row_oom(r);
	return 0;
}

/* A TEXT column of JSON whose top is an array, a new reference in *arr;
 * NULL when the column is NULL and nullable. */
static int
db_row_json_array(struct db_row_reader *r, int col, bool nullable,
    json_t **arr)
{
	json_error_t err;
	const char *s;

	*arr = NULL;
	if (db_row_text_ref(r, col, nullable, &s) == -1)
		return -1;
	if (s == NULL)
		return 0;
	if ((*arr = json_loads(s, 0, &err)) == NULL) {
		if (json_error_code(&err) == json_error_out_of_memory)
			return db_row_oom(r);
		return db_row_bad(r, col, "is not JSON");
	}
	if (!json_is_array(*arr)) {
		json_decref(*arr);
		*arr = NULL;
		return db_row_bad(r, col, "is not a JSON array");
	}
	return 0;
}

/* A JSON array of strings into a new NULL-terminated vector (empty, not
 * NULL, for []). */
static int
db_row_strv(struct db_row_reader *r, int col, char ***out)
{
	json_t *arr, *elem;
	char **v;
	size_t i;
	int rc = -1;

	if (db_row_json_array(r, col, false, &arr) == -1)
		return -1;
	if ((v = calloc(json_array_size(arr) + 1, sizeof *v)) == NULL) {
		rc = db_row_oom(r);
		goto out;
	}
	*out = v;	/* the job frees what was copied so far */
	json_array_foreach(arr, i, elem) {
		if (!json_is_string(elem)) {
			rc = db_row_bad(r, col, "holds a non-string");
			goto out;
		}
		if ((v[i] = strdup(json_string_value(elem))) == NULL) {
			rc = db_row_oom(r);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(arr);
	return rc;
}

/*
 * The usual JSON array of strings, as json_dumps writes it, without
 * jansson: no escapes, only printable ASCII, no spaces. Returns 1 with *out
 * a new vector in one allocation (job_strv_pack's), 0 when s is anything
 * else (for jansson to read), -1 out of memory.
 */
static int
db_row_strv_plain(const char *s, char ***out)
{
	size_t n = 0, bytes = 0, i;
	const char *p = s + 1;
	char **v, *dst;

	if (*s != '[')
		return 0;
	while (*p != ']') {
		if (*p++ != '"')
			return 0;
		for (; *p != '"'; p++, bytes++)
			if (*p == '\\' || *p < 0x20 || *p > 0x7e)
				return 0;
		p++;
		bytes++;
		n++;
		if (*p == ',' && p[1] == '"')
			p++;
		else if (*p != ']')
			return 0;
	}
	if (p[1] != '\0')
		return 0;
	if ((v = malloc((n + 1) * sizeof *v + bytes)) == NULL)
		return -1;
	dst = (char *)&v[n + 1];
	for (p = s + 1, i = 0; i < n; i++) {
		v[i] = dst;
		for (p++; *p != '"'; p++)
			*dst++ = *p;
		*dst++ = '\0';
		p += 2;		/* the quote, and the comma or bracket */
	}
	v[n] = NULL;
	*out = v;
	return 1;
}

/* A JSON array of strings into a new vector in one allocation (see
 * job_strv_pack). */
static int
db_row_strv_packed(struct db_row_reader *r, int col, char ***out)
{
	char **v = NULL;
	const char *s;
	int rc;

	if (db_row_text_ref(r, col, false, &s) == -1)
		return -1;
	if ((rc = db_row_strv_plain(s, out)) != 0)
		return rc == 1 ? 0 : db_row_oom(r);
	rc = db_row_strv(r, col, &v);
	if (rc == 0 && (*out = job_strv_pack(v)) == NULL)
		rc = db_row_oom(r);
	job_free_strv(v);
	return rc;
}

/* The job's shared environment from column col: the one of the row before
 * when the text is the same, as it mostly is. */
static int
db_row_env_shared(struct db_row_reader *r, int col, struct job *job,
    struct db_row_cache *cache)
{
	char **v = NULL;
	const char *s;
	char *text;

	if (db_row_text_ref(r, col, false, &s) == -1)
		return -1;
	if (cache->env != NULL && strcmp(cache->env_text, s) == 0) {
		job->env = intern_strv_hold(cache->env);
		return 0;
	}
	if (db_row_strv_packed(r, col, &v) == -1)
		return -1;
	job->env = intern_strv(v);
	free(v);
	if (job->env == NULL || (text = strdup(s)) == NULL)
		return db_row_oom(r);
	free(cache->env_text);
	intern_strv_drop(cache->env);
	cache->env_text = text;
	cache->env = intern_strv_hold(job->env);
	return 0;
}

/* A shared copy of s in *field (job->cwd, job->priority): the one in *last
 * when it is the same, as it mostly is. 0, or -1 out of memory. */
static int
db_row_shared(const char **field, const char *s, const char **last)
{
	if (*last != NULL && strcmp(*last, s) == 0) {
		*field = intern_str_hold(*last);
		return 0;
	}
	if ((*field = intern_str(s)) == NULL)
		return -1;
	intern_str_drop(*last);
	*last = intern_str_hold(*field);
	return 0;
}

void
db_row_cache_clear(struct db_row_cache *cache)
{
	free(cache->env_text);
	intern_strv_drop(cache->env);
	intern_str_drop(cache->cwd);
	intern_str_drop(cache->priority);
	intern_str_drop(cache->node);
	intern_str_drop(cache->pinned_node);
	memset(cache, 0, sizeof *cache);
}

/* A JSON array of job ids, or NULL, into *ids and *n (NULL and 0 for none). */
static int
db_row_ids(struct db_row_reader *r, int col, uint64_t **ids, uint32_t *n)
{
	json_t *arr, *elem;
	size_t i;
	int rc = -1;

	if (db_row_json_array(r, col, true, &arr) == -1)
		return -1;
	if (arr == NULL || json_array_size(arr) == 0) {
		rc = 0;
		goto out;
	}
	if ((*ids = calloc(json_array_size(arr), sizeof **ids)) == NULL) {
		rc = db_row_oom(r);
		goto out;
	}
	json_array_foreach(arr, i, elem) {
		if (!json_is_integer(elem) || json_integer_value(elem) < 1) {
			rc = db_row_bad(r, col, "holds something not a job id");
			goto out;
		}
		(*ids)[i] = (uint64_t)json_integer_value(elem);
		*n = (uint32_t)(i + 1);	/* a row holds far fewer */
	}
	rc = 0;
out:
	json_decref(arr);
	return rc;
}

/* A JSON object of strings, or NULL, into *labels (NULL for none). */
static int
db_row_labels(struct db_row_reader *r, int col, json_t **labels)
{
	json_error_t err;
	const char *s, *key;
	json_t *value;

	if (db_row_text_ref(r, col, true, &s) == -1)
		return -1;
	if (s == NULL)
		return 0;
	if ((*labels = json_loads(s, 0, &err)) == NULL) {
		if (json_error_code(&err) == json_error_out_of_memory)
			return db_row_oom(r);
		return db_row_bad(r, col, "is not JSON");
	}
	if (!json_is_object(*labels))
		return db_row_bad(r, col, "is not a JSON object");
	json_object_foreach(*labels, key, value)
		if (!json_is_string(value))
			return db_row_bad(r, col, "holds a non-string");
	return 0;
}

/* A node's name or NULL (schema version 6), shared like cwd. */
static int
db_row_node(struct db_row_reader *r, int col, const char **field,
    const char **last)
{
	const char *s;

	if (db_row_text_ref(r, col, true, &s) == -1)
		return -1;
	if (s == NULL)
		return 0;
	if (!nodename_valid(s))
		return db_row_bad(r, col, "is not a node name");
	if (db_row_shared(field, s, last) == -1)
		return db_row_oom(r);
	return 0;
}

/* The columns of protocol v1.1 (schema version 5). */
static int
db_row_fill_v11(struct db_row_reader *r, struct job *job,
    struct job_run *run)
{
	int64_t v;

	if (db_row_labels(r, DB_ROW_LABELS, &job->labels) == -1 ||
	    db_row_ids(r, DB_ROW_AFTER_ANY, &job->after_any,
	    &job->nafter_any) == -1 ||
	    db_row_opt_int(r, DB_ROW_BEGIN_AT, 0, INT64_MAX, -1,
	    &job->begin_at) == -1)
		return -1;
	if (db_row_int(r, DB_ROW_HELD, 0, 1, &v) == -1)
		return -1;
	job->held = v;
	if (db_row_int(r, DB_ROW_NICE, 0, 19, &v) == -1)
		return -1;
	job->nice = (int8_t)v;
	if (db_row_int(r, DB_ROW_MERGE_OUTPUT, 0, 1, &v) == -1)
		return -1;
	job->merge_output = v;
	if (db_row_int(r, DB_ROW_STDOUT_DROPPED, 0, INT64_MAX, &v) == -1)
		return -1;
	run->stdout_dropped = (uint64_t)v;
	if (db_row_int(r, DB_ROW_STDERR_DROPPED, 0, INT64_MAX, &v) == -1)
		return -1;
	run->stderr_dropped = (uint64_t)v;
	return 0;
}

/* Every column but id into job, and what its runs left into *run; -1 with
 * r->why. */
static int
db_row_fill(struct db_row_reader *r, struct job *job, struct job_run *run,
    struct db_row_cache *cache)
{
	const char *state, *cwd, *priority, *name;
	int64_t v;
	int s;

	/* argv first: the name is stored only when it is not argv's. */
	if (db_row_strv_packed(r, DB_ROW_ARGV, &job->argv) == -1 ||
	    db_row_text_ref(r, DB_ROW_NAME, false, &name) == -1)
		return -1;
	if (strcmp(name, job_name(job)) != 0 &&
	    (job->name = strdup(name)) == NULL)
		return db_row_oom(r);
	if (db_row_text_ref(r, DB_ROW_STATE, false, &state) == -1)
		return -1;
	if ((s = job_state_parse(state)) == -1) {
		snprintf(r->why, sizeof r->why, "unknown state \"%.64s\"",
		    state);
		return -1;
	}
	job->state = (enum job_state)s;
	/* An ended job's environment stays on disk (job_drop_env). */
	if (!job_state_terminal(job->state) &&
	    db_row_env_shared(r, DB_ROW_ENV, job, cache) == -1)
		return -1;
	if (db_row_text_ref(r, DB_ROW_CWD, false, &cwd) == -1 ||
	    db_row_text_ref(r, DB_ROW_PRIORITY, false, &priority) == -1)
		return -1;
	if (db_row_shared(&job->cwd, cwd, &cache->cwd) == -1 ||
	    db_row_shared(&job->priority, priority, &cache->priority) == -1)
		return db_row_oom(r);

	if (db_row_int(r, DB_ROW_SLOTS, 0, UINT16_MAX, &v) == -1)
		return -1;
	job->slots = (uint16_t)v;
	if (db_row_int(r, DB_ROW_EXCLUSIVE, 0, 1, &v) == -1)
		return -1;
	job->exclusive = v;
	if (db_row_int(r, DB_ROW_TIMEOUT_MS, 0, INT64_MAX, &v) == -1)
		return -1;
	job->timeout_ms = (uint64_t)v;
	if (db_row_int(r, DB_ROW_RETRIES, 0, UINT_MAX, &v) == -1)
		return -1;
	job->retries = (unsigned)v;
	/* Version 2 gave every old row seq = id; NULL can only be a row
	 * written by hand since, and id is its natural place. */
	if (db_row_opt_int(r, DB_ROW_SEQ, INT64_MIN, INT64_MAX,
	    (int64_t)job->id, &v) == -1)
		return -1;
	job->seq = v;
	if (db_row_ids(r, DB_ROW_AFTER, &job->after, &job->nafter) == -1)
		return -1;
	if (db_row_int(r, DB_ROW_UID, 0, UINT32_MAX, &v) == -1)
		return -1;
	job->uid = (uid_t)v;
	if (db_row_int(r, DB_ROW_GID, 0, UINT32_MAX, &v) == -1)
		return -1;
	job->gid = (gid_t)v;

	if (db_row_opt_int(r, DB_ROW_SUBMITTED_AT, 0, INT64_MAX, -1,
	    &job->submitted_at) == -1 ||
	    db_row_opt_int(r, DB_ROW_STARTED_AT, 0, INT64_MAX, -1,
	    &run->started_at) == -1 ||
	    db_row_opt_int(r, DB_ROW_FINISHED_AT, 0, INT64_MAX, -1,
	    &run->finished_at) == -1)
		return -1;
	if (db_row_opt_int(r, DB_ROW_PID, 0, INT_MAX, 0, &v) == -1)
		return -1;
	run->pid = (pid_t)v;
	if (db_row_opt_int(r, DB_ROW_EXIT_CODE, 0, INT_MAX, -1, &v) == -1)
		return -1;
	run->exit_code = (int)v;
	if (db_row_opt_int(r, DB_ROW_SIGNAL, 0, INT_MAX, 0, &v) == -1)
		return -1;
	run->signal = (int)v;
	if (db_row_text(r, DB_ROW_REASON, true, &run->reason) == -1)
		return -1;
	if (db_row_int(r, DB_ROW_ATTEMPT, 0, UINT_MAX, &v) == -1)
		return -1;
	job->attempt = (unsigned)v;
	if (db_row_opt_real(r, DB_ROW_USER_TIME, &run->user_time) == -1 ||
	    db_row_opt_real(r, DB_ROW_SYSTEM_TIME, &run->system_time) == -1 ||
	    db_row_opt_int(r, DB_ROW_MAX_RSS_KB, 0, INT64_MAX, -1,
	    &run->max_rss_kb) == -1)
		return -1;
	if (db_row_int(r, DB_ROW_STDOUT_TRUNCATED, 0, 1, &v) == -1)
		return -1;
	run->stdout_truncated = v;
	if (db_row_int(r, DB_ROW_STDERR_TRUNCATED, 0, 1, &v) == -1)
		return -1;
	run->stderr_truncated = v;
	if (db_row_int(r, DB_ROW_BEGUN, 0, 1, &v) == -1)
		return -1;
	run->begun = v;
	if (db_row_opt_int(r, DB_ROW_START_TICKS, 0, INT64_MAX, 0, &v) == -1)
		return -1;
	run->start_ticks = (uint64_t)v;
	if (db_row_fill_v11(r, job, run) == -1 ||
	    db_row_node(r, DB_ROW_NODE, &job->node, &cache->node) == -1 ||
	    db_row_node(r, DB_ROW_PINNED_NODE, &job->pinned_node,
	    &cache->pinned_node) == -1)
		return -1;
	return 0;
}

int
db_row_env(sqlite3_stmt *st, uint64_t id, char ***env, char **cause)
{
	struct db_row_reader r = { st, "" };
	char **v = NULL, **p;

	if (db_row_strv(&r, 0, &v) == -1) {
		if (v != NULL) {
			for (p = v; *p != NULL; p++)
				free(*p);
			free(v);
		}
		return db_fail(cause, "cannot load the environment of job %"
		    PRIu64 ": %s", id, r.why);
	}
	*env = v;
	return 0;
}

struct job *
db_row_read(sqlite3_stmt *st, struct db_row_cache *cache, char **cause)
{
	struct db_row_reader r = { st, "" };
	struct job_run run = job_run_none, *own;
	struct job *job;
	int64_t id;

	/* id is the INTEGER PRIMARY KEY, always an integer. */
	id = sqlite3_column_int64(st, DB_ROW_ID);
	if (id < 1) {
		db_fail(cause, "cannot load job %" PRId64 ": bad id", id);
		return NULL;
	}
	if ((job = job_new()) == NULL) {
		db_fail(cause, "out of memory");
		return NULL;
	}
	job->id = (uint64_t)id;
	if (db_row_fill(&r, job, &run, cache) == -1)
		goto fail;
	/* A job that never ran shares job_run_none. */
	if (!job_run_is_none(&run) || run.reason != NULL) {
		if ((own = job_run_edit(job)) == NULL) {
			db_row_oom(&r);
			goto fail;
		}
		*own = run;
	}
	return job;
fail:
	free(run.reason);
	db_fail(cause, "cannot load job %" PRIu64 ": %s", job->id, r.why);
	job_free(job);
	return NULL;
}
