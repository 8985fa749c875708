/* jobrow.c - a job as a row of the jobs table and back, whatever the database:
 * SQL NULL for what the job keeps as unknown, JSON for argv, env, after,
 * labels, resources, devices and result, and checks on reading. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bytestr.h"
#include "intern.h"
#include "job.h"
#include "cause.h"
#include "jobrow.h"
#include "jsonw.h"
#include "nodename.h"


/* A job's values into a sink, which stops at its first failure: the sink
 * keeps its error for the message. */
struct jobrow_writer {
	const struct jobrow_sink *sink;
	void *ctx;
	int rc;
};

static void
jobrow_put_int(struct jobrow_writer *b, int col, int64_t v)
{
	if (b->rc == 0)
		b->rc = b->sink->integer(b->ctx, col, v);
}

static void
jobrow_put_null(struct jobrow_writer *b, int col)
{
	if (b->rc == 0)
		b->rc = b->sink->null(b->ctx, col);
}

static void
jobrow_put_opt_int(struct jobrow_writer *b, int col, bool known, int64_t v)
{
	if (known)
		jobrow_put_int(b, col, v);
	else
		jobrow_put_null(b, col);
}

static void
jobrow_put_opt_real(struct jobrow_writer *b, int col, bool known, double v)
{
	if (!known)
		jobrow_put_null(b, col);
	else if (b->rc == 0)
		b->rc = b->sink->real(b->ctx, col, v);
}

/* Borrows s, which outlives the statement's use; NULL is NULL. */
static void
jobrow_put_text(struct jobrow_writer *b, int col, const char *s)
{
	if (s == NULL)
		jobrow_put_null(b, col);
	else if (b->rc == 0)
		b->rc = b->sink->text(b->ctx, col, s);
}

/* Takes s, which the sink frees once done with it, even on failure. */
static void
jobrow_put_owned(struct jobrow_writer *b, int col, char *s)
{
	if (b->rc != 0)
		free(s);
	else if (s == NULL)
		jobrow_put_null(b, col);
	else
		b->rc = b->sink->owned(b->ctx, col, s);
}

/* The text w holds as an allocated string for SQLite, or NULL when a
 * string was not UTF-8 or memory ran out. */
static char *
jobrow_written(struct jsonw *w)
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

/* v as a compact JSON array of byte strings (NULL v gives "[]"): what is
 * not UTF-8 as {"base64": ...} (bytestr.h); NULL when memory runs out.
 * Written as text, with no JSON object between: every new job stores two
 * of them. */
static char *
jobrow_strv_json(struct jsonw *w, char *const *v)
{
	jsonw_reset(w);
	bytestr_write_strv(w, v);
	return jobrow_written(w);
}

/* The cwd column: the path, or when it is not UTF-8 (which PostgreSQL's
 * text refuses) {"base64": ...}, which no path starting with '/' reads
 * as; so does anything else starting with '{' (never a cwd of a
 * request), to read back as it was. */
static void
jobrow_put_cwd(struct jobrow_writer *b, const char *cwd)
{
	struct jsonw w = { 0 };

	if (cwd == NULL || (cwd[0] != '{' && bytestr_utf8(cwd, strlen(cwd)))) {
		jobrow_put_text(b, JOBROW_CWD, cwd);
		return;
	}
	bytestr_write_base64(&w, cwd);
	jobrow_put_owned(b, JOBROW_CWD, jobrow_written(&w));
	jsonw_free(&w);
}

/* The ids as a compact JSON array; NULL when memory runs out. */
static char *
jobrow_ids_json(struct jsonw *w, const uint64_t *ids, size_t n)
{
	jsonw_reset(w);
	jsonw_ids(w, ids, n);
	return jobrow_written(w);
}

/* ids, which SQLite must hold as integers: 0, or -1 naming what. */
static int
jobrow_ids_check(const struct job *job, const char *what,
    const uint64_t *ids, size_t n, char **cause)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == 0 || ids[i] > INT64_MAX)
			return cause_fail(cause, "cannot store job %" PRIu64
			    ": %s holds id %" PRIu64 ", out of range",
			    job->id, what, ids[i]);
	return 0;
}

/* The JSON columns written once, which may fail before any binding. */
static int
jobrow_bind_json(struct jobrow_writer *b, const struct job *job,
    char **cause)
{
	/* Kept for the next row: the text is copied out of it. */
	static struct jsonw w;
	char *argv, *env, *after = NULL, *after_any = NULL;

	if (jobrow_ids_check(job, "after", job->extra->after,
	    job->extra->nafter, cause) == -1 ||
	    jobrow_ids_check(job, "after_any", job->extra->after_any,
	    job->extra->nafter_any, cause) == -1)
		return -1;
	argv = jobrow_strv_json(&w, job->argv);
	env = jobrow_strv_json(&w, job->env);
	if (job->extra->nafter > 0)
		after = jobrow_ids_json(&w, job->extra->after,
		    job->extra->nafter);
	if (job->extra->nafter_any > 0)
		after_any = jobrow_ids_json(&w, job->extra->after_any,
		    job->extra->nafter_any);
	if (argv == NULL || env == NULL ||
	    (job->extra->nafter > 0 && after == NULL) ||
	    (job->extra->nafter_any > 0 && after_any == NULL)) {
		free(argv);
		free(env);
		free(after);
		free(after_any);
		return cause_fail(cause, "cannot store job %" PRIu64 ": out of "
		    "memory", job->id);
	}
	jobrow_put_owned(b, JOBROW_ARGV, argv);
	jobrow_put_owned(b, JOBROW_ENV, env);
	jobrow_put_owned(b, JOBROW_AFTER, after);
	jobrow_put_owned(b, JOBROW_AFTER_ANY, after_any);
	return 0;
}

/* The C type of a column's field, which says how to load and store it. */
enum jobrow_ctype {
	JOBROW_C_CUSTOM,	/* no field: code of its own */
	JOBROW_C_BOOL,
	JOBROW_C_I8,
	JOBROW_C_U16,
	JOBROW_C_INT,
	JOBROW_C_UINT,
	JOBROW_C_I64,
	JOBROW_C_U64,
	JOBROW_C_DOUBLE,
	JOBROW_C_STR,
};
/* Types the table cannot take fail to compile here. */
#define JOBROW_CTYPE(lvalue) _Generic((lvalue),				\
	bool: JOBROW_C_BOOL, int8_t: JOBROW_C_I8,			\
	uint16_t: JOBROW_C_U16, int: JOBROW_C_INT,			\
	unsigned: JOBROW_C_UINT, int64_t: JOBROW_C_I64,			\
	uint64_t: JOBROW_C_U64, double: JOBROW_C_DOUBLE,		\
	char *: JOBROW_C_STR)

/* Where a field is: the bases the field functions are given. */
enum jobrow_base {
	JOBROW_BASE_JOB,
	JOBROW_BASE_RUN,
	JOBROW_BASE_EXTRA,
	JOBROW_NBASES
};

/* A column that is a field of the job, its run or its extra, as JOBCOLS
 * says. */
struct jobrow_field {
	enum jobrow_ctype ctype;
	enum jobrow_base base;	/* whose field */
	int unknown;		/* what NULL stands for: -1, 0 or NOT_NULL */
	size_t offset;
	int64_t max;
};
#define JOBROW_NOT_NULL 1
#define JOBROW_FIELD(type, base, field, unknown, max)			\
	JOBROW_CTYPE(((type *)NULL)->field), base, unknown,		\
	offsetof(type, field), max
#define JOBROW_JOB(field, unknown, max)					\
	JOBROW_FIELD(struct job, JOBROW_BASE_JOB, field, unknown, max)
#define JOBROW_RUN(field, unknown, max)					\
	JOBROW_FIELD(struct job_run, JOBROW_BASE_RUN, field, unknown, max)
#define JOBROW_EXTRA(field, unknown, max)				\
	JOBROW_FIELD(struct job_extra, JOBROW_BASE_EXTRA, field, unknown, max)
#define JOBROW_CUSTOM JOBROW_C_CUSTOM, JOBROW_BASE_JOB, 0, 0, 0
#define JOBROW_FIELD_OF(col, sql, type, role, how)			\
	[JOBROW_##col] = { JOBROW_##how },
#define NOT_NULL JOBROW_NOT_NULL
static const struct jobrow_field jobrow_fields[JOBROW_NCOLUMNS] = {
	JOBCOLS(JOBROW_FIELD_OF)
};
#undef NOT_NULL

/*
 * Column col when it is a field, NULL where unknown (f->unknown); base: the
 * job and its run. Called with a constant col, it folds to that column's
 * own code, as if written out by hand.
 */
static inline __attribute__((always_inline)) void
jobrow_put_field(struct jobrow_writer *b, int col, const char *const *base)
{
	const struct jobrow_field *f = &jobrow_fields[col];
	const char *p = base[f->base] + f->offset;
	bool any = f->unknown == JOBROW_NOT_NULL;
	uint64_t u;
	int64_t v;
	double d;

	switch (f->ctype) {
	case JOBROW_C_CUSTOM:
		return;
	case JOBROW_C_STR:
		jobrow_put_text(b, col, *(char *const *)p);
		return;
	case JOBROW_C_DOUBLE:
		d = *(const double *)p;
		jobrow_put_opt_real(b, col, any || (f->unknown == 0 ? d > 0 :
		    d >= 0), d);
		return;
	case JOBROW_C_U64:
		/* Past INT64_MAX it goes in negative, as a cast always put
		 * it (jobrow_put refuses the fields where that can be). */
		u = *(const uint64_t *)p;
		jobrow_put_opt_int(b, col, f->unknown != 0 || u != 0,
		    (int64_t)u);
		return;
	case JOBROW_C_BOOL:
		v = *(const bool *)p;
		break;
	case JOBROW_C_I8:
		v = *(const int8_t *)p;
		break;
	case JOBROW_C_U16:
		v = *(const uint16_t *)p;
		break;
	case JOBROW_C_INT:
		v = *(const int *)p;
		break;
	case JOBROW_C_UINT:
		v = *(const unsigned *)p;
		break;
	default:
		v = *(const int64_t *)p;
		break;
	}
	/* Below 0 is unknown for -1; 0 and below for 0. */
	jobrow_put_opt_int(b, col, any || v > f->unknown, v);
}

/* The columns that are fields (JOBCOLS's JOB, RUN and EXTRA): every one
 * when all is set, else those a job's life changes. */
static void
jobrow_put_fields(struct jobrow_writer *b, const struct job *job, bool all)
{
	const char *base[JOBROW_NBASES] = { (const char *)job,
	    (const char *)job->run, (const char *)job->extra };

#define JOBROW_PUT_FIELD(col, sql, type, role, how)			\
	if (all || JOBCOL_##role >= JOBCOL_FIRST)			\
		jobrow_put_field(b, JOBROW_##col, base);
	JOBCOLS(JOBROW_PUT_FIELD)
#undef JOBROW_PUT_FIELD
}

/* One of the job's objects (labels, resources, devices) as compact JSON
 * text into *text: NULL for none or {}, which read back as NULL alike.
 * 0, or -1 when it holds a string that is not UTF-8, or out of memory. */
static int
jobrow_dump(const json_t *obj, char **text)
{
	*text = NULL;
	if (obj == NULL || json_object_size(obj) == 0)
		return 0;
	return (*text = json_dumps(obj, JSON_COMPACT)) == NULL ? -1 : 0;
}

/* The result column: its byte string as the wire writes it (a JSON string,
 * or {"base64": ...}), NULL for none; into *text, NULL out of memory. */
static int
jobrow_result_text(const json_t *result, char **text)
{
	*text = NULL;
	if (result == NULL)
		return 0;
	return (*text = json_dumps(result, JSON_COMPACT | JSON_ENCODE_ANY)) ==
	    NULL ? -1 : 0;
}

int
jobrow_put(const struct job *job, bool all, const struct jobrow_sink *sink,
    void *ctx, char **cause)
{
	struct jobrow_writer b = { sink, ctx, 0 };
	char *labels = NULL, *resources = NULL, *devices = NULL, *result;

	/* SQLite integers are signed 64 bits. */
	if (job->id == 0 || job->id > INT64_MAX ||
	    job->timeout_ms > INT64_MAX || job->memory > INT64_MAX ||
	    job->run->stdout_dropped > INT64_MAX ||
	    job->run->stderr_dropped > INT64_MAX)
		return cause_fail(cause, "cannot store job %" PRIu64 ": id, "
		    "timeout, memory or dropped bytes out of range", job->id);
	if (jobrow_dump(job->extra->labels, &labels) == -1 ||
	    jobrow_dump(job->extra->resources, &resources) == -1 ||
	    jobrow_dump(job->extra->devices, &devices) == -1) {
		free(labels);
		free(resources);
		return cause_fail(cause, "cannot store job %" PRIu64 ": its "
		    "labels, resources or devices are not UTF-8, or out of "
		    "memory", job->id);
	}
	if (jobrow_result_text(job->run->result, &result) == -1) {
		free(labels);
		free(resources);
		free(devices);
		return cause_fail(cause, "cannot store job %" PRIu64 ": out of "
		    "memory for its result", job->id);
	}
	jobrow_put_int(&b, JOBROW_ID, (int64_t)job->id);
	if (all) {
		if (jobrow_bind_json(&b, job, cause) == -1) {
			free(labels);
			free(resources);
			free(devices);
			free(result);
			return -1;
		}
		jobrow_put_cwd(&b, job->cwd);
		jobrow_put_text(&b, JOBROW_PINNED_NODE,
		    job->extra->pinned_node);
		jobrow_put_text(&b, JOBROW_USERNAME, job->user);
	}
	jobrow_put_text(&b, JOBROW_NAME, job_name(job));
	jobrow_put_text(&b, JOBROW_PRIORITY, job->priority);
	jobrow_put_text(&b, JOBROW_STATE, job_state_name(job->state));
	jobrow_put_int(&b, JOBROW_SEQ, job->seq);
	jobrow_put_owned(&b, JOBROW_LABELS, labels);
	jobrow_put_owned(&b, JOBROW_RESOURCES, resources);
	jobrow_put_owned(&b, JOBROW_DEVICES, devices);
	jobrow_put_owned(&b, JOBROW_RESULT, result);
	jobrow_put_text(&b, JOBROW_NODE, job->node);
	jobrow_put_fields(&b, job, all);
	if (b.rc != 0)
		return cause_fail(cause, "cannot store job %" PRIu64 ": %s",
		    job->id, sink->error(ctx));
	return 0;
}

/* What is wrong with the row being read, for the message. */
struct jobrow_reader {
	const struct jobrow_source *src;
	void *ctx;
	char why[256];
};

static int
jobrow_bad(struct jobrow_reader *r, int col, const char *what)
{
	const char *name = r->src->name(r->ctx, col);

	snprintf(r->why, sizeof r->why, "column %s %s",
	    name != NULL ? name : "?", what);
	return -1;
}

static int
jobrow_oom(struct jobrow_reader *r)
{
	snprintf(r->why, sizeof r->why, "out of memory");
	return -1;
}

/* An integer column whose value has type type (NULL is not an integer),
 * within [min, max], into *v. */
static int
jobrow_int(struct jobrow_reader *r, int col, enum jobrow_type type,
    int64_t min, int64_t max, int64_t *v)
{
	char what[64];

	if (type != JOBROW_INTEGER)
		return jobrow_bad(r, col, "is not an integer");
	*v = r->src->integer(r->ctx, col);
	if (*v < min || *v > max) {
		snprintf(what, sizeof what, "is out of range (%" PRId64 ")",
		    *v);
		return jobrow_bad(r, col, what);
	}
	return 0;
}

/* A column where NULL means unknown, which is if_null in the job. */
static int
jobrow_opt_int(struct jobrow_reader *r, int col, int64_t min, int64_t max,
    int64_t if_null, int64_t *v)
{
	enum jobrow_type type = r->src->type(r->ctx, col);

	if (type == JOBROW_NULL) {
		*v = if_null;
		return 0;
	}
	return jobrow_int(r, col, type, min, max, v);
}

/* A REAL column not below 0, NULL meaning unknown, if_null in the job. */
static int
jobrow_opt_real(struct jobrow_reader *r, int col, double if_null, double *v)
{
	switch (r->src->type(r->ctx, col)) {
	case JOBROW_NULL:
		*v = if_null;
		return 0;
	case JOBROW_INTEGER:
	case JOBROW_REAL:
		*v = r->src->real(r->ctx, col);
		if (*v < 0)
			return jobrow_bad(r, col, "is negative");
		return 0;
	default:
		return jobrow_bad(r, col, "is not a number");
	}
}

/* A TEXT column, borrowed until the next step; NULL for SQL NULL when
 * nullable. */
static int
jobrow_text_ref(struct jobrow_reader *r, int col, bool nullable,
    const char **s)
{
	enum jobrow_type type = r->src->type(r->ctx, col);
	size_t len;

	*s = NULL;
	if (type == JOBROW_NULL && nullable)
		return 0;
	if (type != JOBROW_TEXT)
		return jobrow_bad(r, col, "is not text");
	if ((*s = r->src->text(r->ctx, col, &len)) == NULL)
		return jobrow_oom(r);
	/* A C string ends at the first NUL; the job would lose the rest. */
	if (strlen(*s) != len)
		return jobrow_bad(r, col, "holds a NUL byte");
	return 0;
}

/* A TEXT column, copied into *out (NULL for SQL NULL when nullable). */
static int
jobrow_text(struct jobrow_reader *r, int col, bool nullable, char **out)
{
	const char *s;

	if (jobrow_text_ref(r, col, nullable, &s) == -1)
		return -1;
	if (s != NULL && (*out = strdup(s)) == NULL)
		return jobrow_oom(r);
	return 0;
}

/* A TEXT column of JSON whose top is an array, a new reference in *arr;
 * NULL when the column is NULL and nullable. */
static int
jobrow_json_array(struct jobrow_reader *r, int col, bool nullable,
    json_t **arr)
{
	json_error_t err;
	const char *s;

	*arr = NULL;
	if (jobrow_text_ref(r, col, nullable, &s) == -1)
		return -1;
	if (s == NULL)
		return 0;
	if ((*arr = json_loads(s, 0, &err)) == NULL) {
		if (json_error_code(&err) == json_error_out_of_memory)
			return jobrow_oom(r);
		return jobrow_bad(r, col, "is not JSON");
	}
	if (!json_is_array(*arr)) {
		json_decref(*arr);
		*arr = NULL;
		return jobrow_bad(r, col, "is not a JSON array");
	}
	return 0;
}

/* A JSON array of strings into a new NULL-terminated vector (empty, not
 * NULL, for []). */
static int
jobrow_strv(struct jobrow_reader *r, int col, char ***out)
{
	const char *why;	/* the message says it its way */
	json_t *arr, *elem;
	char **v;
	size_t i;
	int rc = -1;

	if (jobrow_json_array(r, col, false, &arr) == -1)
		return -1;
	if ((v = calloc(json_array_size(arr) + 1, sizeof *v)) == NULL) {
		rc = jobrow_oom(r);
		goto out;
	}
	*out = v;	/* the job frees what was copied so far */
	json_array_foreach(arr, i, elem) {
		if (bytestr_from_json(elem, &v[i], &why) == -1) {
			rc = errno == ENOMEM ? jobrow_oom(r) :
			    jobrow_bad(r, col, json_is_object(elem) ?
			    "holds a malformed {\"base64\": ...}" :
			    "holds a non-string");
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
jobrow_strv_plain(const char *s, char ***out)
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
jobrow_strv_packed(struct jobrow_reader *r, int col, char ***out)
{
	char **v = NULL;
	const char *s;
	int rc;

	if (jobrow_text_ref(r, col, false, &s) == -1)
		return -1;
	if ((rc = jobrow_strv_plain(s, out)) != 0)
		return rc == 1 ? 0 : jobrow_oom(r);
	rc = jobrow_strv(r, col, &v);
	if (rc == 0 && (*out = job_strv_pack(v)) == NULL)
		rc = jobrow_oom(r);
	job_free_strv(v);
	return rc;
}

/* The job's shared environment from column col: the one of the row before
 * when the text is the same, as it mostly is. */
static int
jobrow_env_shared(struct jobrow_reader *r, int col, struct job *job,
    struct jobrow_cache *cache)
{
	char **v = NULL;
	const char *s;
	char *text;

	if (jobrow_text_ref(r, col, false, &s) == -1)
		return -1;
	if (cache->env != NULL && strcmp(cache->env_text, s) == 0) {
		job->env = intern_strv_hold(cache->env);
		return 0;
	}
	if (jobrow_strv_packed(r, col, &v) == -1)
		return -1;
	job->env = intern_strv(v);
	free(v);
	if (job->env == NULL || (text = strdup(s)) == NULL)
		return jobrow_oom(r);
	free(cache->env_text);
	intern_strv_drop(cache->env);
	cache->env_text = text;
	cache->env = intern_strv_hold(job->env);
	return 0;
}

/* A shared copy of s in *field (job->cwd, job->priority): the one in *last
 * when it is the same, as it mostly is. 0, or -1 out of memory. */
static int
jobrow_shared(const char **field, const char *s, const char **last)
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
jobrow_cache_clear(struct jobrow_cache *cache)
{
	free(cache->env_text);
	intern_strv_drop(cache->env);
	intern_str_drop(cache->cwd);
	intern_str_drop(cache->priority);
	intern_str_drop(cache->node);
	intern_str_drop(cache->pinned_node);
	intern_str_drop(cache->user);
	memset(cache, 0, sizeof *cache);
}

/* The cwd column, a path or {"base64": ...} (jobrow_put_cwd), into the
 * job's shared cwd. */
static int
jobrow_cwd(struct jobrow_reader *r, struct job *job,
    struct jobrow_cache *cache)
{
	const char *s, *why;
	char *bytes = NULL;
	json_t *v;
	int rc;

	if (jobrow_text_ref(r, JOBROW_CWD, false, &s) == -1)
		return -1;
	if (s[0] != '{') {
		if (jobrow_shared(&job->cwd, s, &cache->cwd) == -1)
			return jobrow_oom(r);
		return 0;
	}
	if ((v = json_loads(s, 0, NULL)) == NULL ||
	    bytestr_from_json(v, &bytes, &why) == -1) {
		rc = errno == ENOMEM ? jobrow_oom(r) :
		    jobrow_bad(r, JOBROW_CWD, "is neither a path nor "
		    "{\"base64\": ...}");
		json_decref(v);
		return rc;
	}
	json_decref(v);
	rc = jobrow_shared(&job->cwd, bytes, &cache->cwd) == -1 ?
	    jobrow_oom(r) : 0;
	free(bytes);
	return rc;
}

/* A JSON array of job ids, or NULL, into *ids and *n (NULL and 0 for none). */
static int
jobrow_ids(struct jobrow_reader *r, int col, uint64_t **ids, uint32_t *n)
{
	json_t *arr, *elem;
	size_t i;
	int rc = -1;

	if (jobrow_json_array(r, col, true, &arr) == -1)
		return -1;
	if (arr == NULL || json_array_size(arr) == 0) {
		rc = 0;
		goto out;
	}
	if ((*ids = calloc(json_array_size(arr), sizeof **ids)) == NULL) {
		rc = jobrow_oom(r);
		goto out;
	}
	json_array_foreach(arr, i, elem) {
		if (!json_is_integer(elem) || json_integer_value(elem) < 1) {
			rc = jobrow_bad(r, col, "holds something not a job id");
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

/* What a labels value is: a string. */
static bool
jobrow_is_label(const json_t *v)
{
	return json_is_string(v);
}

/* What a resources value is: how many units, at least one. */
static bool
jobrow_is_count(const json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 1;
}

/* What a devices value is: the names of the units given, at least one. */
static bool
jobrow_is_units(const json_t *v)
{
	const json_t *u;
	size_t i;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return false;
	json_array_foreach(v, i, u)
		if (!json_is_string(u) || json_string_length(u) == 0)
			return false;
	return true;
}

/* A JSON object whose every value valid accepts (else the column "holds
 * " what), or NULL, into *obj (NULL for none). */
static int
jobrow_object(struct jobrow_reader *r, int col, bool (*valid)(const json_t *),
    const char *what, json_t **obj)
{
	json_error_t err;
	const char *s, *key;
	json_t *value;
	char why[96];

	if (jobrow_text_ref(r, col, true, &s) == -1)
		return -1;
	if (s == NULL)
		return 0;
	if ((*obj = json_loads(s, 0, &err)) == NULL) {
		if (json_error_code(&err) == json_error_out_of_memory)
			return jobrow_oom(r);
		return jobrow_bad(r, col, "is not JSON");
	}
	if (!json_is_object(*obj))
		return jobrow_bad(r, col, "is not a JSON object");
	json_object_foreach(*obj, key, value)
		if (!valid(value)) {
			snprintf(why, sizeof why, "holds %s", what);
			return jobrow_bad(r, col, why);
		}
	return 0;
}

/* The result column: NULL, or a byte string as the wire has it (a JSON
 * string without a NUL, or {"base64": ...}), into *result, the form
 * bytestr_json_bytes makes of its bytes (a row written by hand may hold
 * the other), NULL for none or none written. */
static int
jobrow_result(struct jobrow_reader *r, json_t **result)
{
	json_error_t err;
	const char *s, *why;
	char *bytes;
	size_t len;
	json_t *v;

	if (jobrow_text_ref(r, JOBROW_RESULT, true, &s) == -1)
		return -1;
	if (s == NULL)
		return 0;
	if ((v = json_loads(s, JSON_DECODE_ANY, &err)) == NULL) {
		if (json_error_code(&err) == json_error_out_of_memory)
			return jobrow_oom(r);
		return jobrow_bad(r, JOBROW_RESULT, "is not JSON");
	}
	if (bytestr_bytes_from_json(v, &bytes, &len, &why) == -1) {
		json_decref(v);
		if (errno == ENOMEM)
			return jobrow_oom(r);
		return jobrow_bad(r, JOBROW_RESULT, "is neither a string nor "
		    "{\"base64\": ...}");
	}
	json_decref(v);
	*result = len == 0 ? NULL : bytestr_json_bytes(bytes, len);
	free(bytes);
	if (len != 0 && *result == NULL)
		return jobrow_oom(r);
	return 0;
}

/* A login name: not empty, without '/', ':' or a newline. */
static bool
jobrow_user_valid(const char *s)
{
	return *s != '\0' && strlen(s) <= 256 && strpbrk(s, "/:\n") == NULL;
}

/* A name or NULL that valid accepts (else it "is not " what), shared like
 * cwd: a node's (schema version 6), a user's (7). */
static int
jobrow_name(struct jobrow_reader *r, int col, bool (*valid)(const char *),
    const char *what, const char **field, const char **last)
{
	char why[64];
	const char *s;

	if (jobrow_text_ref(r, col, true, &s) == -1)
		return -1;
	if (s == NULL)
		return 0;
	if (!valid(s)) {
		snprintf(why, sizeof why, "is not %s", what);
		return jobrow_bad(r, col, why);
	}
	if (jobrow_shared(field, s, last) == -1)
		return jobrow_oom(r);
	return 0;
}

static void
jobrow_field_store(const struct jobrow_field *f, char *p, int64_t v)
{
	switch (f->ctype) {
	case JOBROW_C_BOOL:
		*(bool *)p = v != 0;
		break;
	case JOBROW_C_I8:
		*(int8_t *)p = (int8_t)v;
		break;
	case JOBROW_C_U16:
		*(uint16_t *)p = (uint16_t)v;
		break;
	case JOBROW_C_INT:
		*(int *)p = (int)v;
		break;
	case JOBROW_C_UINT:
		*(unsigned *)p = (unsigned)v;
		break;
	case JOBROW_C_U64:
		*(uint64_t *)p = (uint64_t)v;
		break;
	default:
		*(int64_t *)p = v;
		break;
	}
}

/* Column col when it is a field (JOBCOLS's JOB and RUN) into it; base: the
 * job and its run. Folds as jobrow_put_field does. */
static inline __attribute__((always_inline)) int
jobrow_get_field(struct jobrow_reader *r, int col, char *const *base)
{
	const struct jobrow_field *f = &jobrow_fields[col];
	char *p = base[f->base] + f->offset;
	bool nullable = f->unknown != JOBROW_NOT_NULL;
	enum jobrow_type type;
	int64_t v;

	switch (f->ctype) {
	case JOBROW_C_CUSTOM:
		return 0;
	case JOBROW_C_STR:
		return jobrow_text(r, col, nullable, (char **)p);
	case JOBROW_C_DOUBLE:
		if (!nullable && r->src->type(r->ctx, col) == JOBROW_NULL)
			return jobrow_bad(r, col, "is not a number");
		return jobrow_opt_real(r, col, f->unknown, (double *)p);
	default:
		type = r->src->type(r->ctx, col);
		if (type == JOBROW_NULL && nullable)
			v = f->unknown;
		else if (jobrow_int(r, col, type, 0, f->max, &v) == -1)
			return -1;
		jobrow_field_store(f, p, v);
		return 0;
	}
}

/* Every column but id into job, what its runs left into *run and its
 * extra into *extra; -1 with r->why. */
static int
jobrow_fill(struct jobrow_reader *r, struct job *job, struct job_run *run,
    struct job_extra *extra, struct jobrow_cache *cache)
{
	char *base[JOBROW_NBASES] = { (char *)job, (char *)run,
	    (char *)extra };
	const char *state, *priority, *name;
	int64_t v;
	int s;

	/* argv first: the name is stored only when it is not argv's. */
	if (jobrow_strv_packed(r, JOBROW_ARGV, &job->argv) == -1 ||
	    jobrow_text_ref(r, JOBROW_NAME, false, &name) == -1)
		return -1;
	if (strcmp(name, job_name(job)) != 0 &&
	    (extra->name = strdup(name)) == NULL)
		return jobrow_oom(r);
	if (jobrow_text_ref(r, JOBROW_STATE, false, &state) == -1)
		return -1;
	if ((s = job_state_parse(state)) == -1) {
		snprintf(r->why, sizeof r->why, "unknown state \"%.64s\"",
		    state);
		return -1;
	}
	job->state = (enum job_state)s;
	/* An ended job's environment stays on disk (job_drop_env). */
	if (!job_state_terminal(job->state) &&
	    jobrow_env_shared(r, JOBROW_ENV, job, cache) == -1)
		return -1;
	if (jobrow_cwd(r, job, cache) == -1 ||
	    jobrow_text_ref(r, JOBROW_PRIORITY, false, &priority) == -1)
		return -1;
	if (jobrow_shared(&job->priority, priority, &cache->priority) == -1)
		return jobrow_oom(r);
	/* Version 2 gave every old row seq = id; NULL can only be a row
	 * written by hand since, and id is its natural place. */
	if (jobrow_opt_int(r, JOBROW_SEQ, INT64_MIN, INT64_MAX,
	    (int64_t)job->id, &v) == -1)
		return -1;
	job->seq = v;
	if (jobrow_ids(r, JOBROW_AFTER, &extra->after, &extra->nafter) == -1 ||
	    jobrow_ids(r, JOBROW_AFTER_ANY, &extra->after_any,
	    &extra->nafter_any) == -1 ||
	    jobrow_object(r, JOBROW_LABELS, jobrow_is_label, "a non-string",
	    &extra->labels) == -1 ||
	    jobrow_object(r, JOBROW_RESOURCES, jobrow_is_count, "a count "
	    "that is not a positive integer", &extra->resources) == -1 ||
	    jobrow_object(r, JOBROW_DEVICES, jobrow_is_units, "something "
	    "not a list of unit names", &extra->devices) == -1 ||
	    jobrow_result(r, &run->result) == -1 ||
	    jobrow_name(r, JOBROW_NODE, nodename_valid, "a node name",
	    &job->node, &cache->node) == -1 ||
	    jobrow_name(r, JOBROW_PINNED_NODE, nodename_valid, "a node name",
	    &extra->pinned_node, &cache->pinned_node) == -1 ||
	    jobrow_name(r, JOBROW_USERNAME, jobrow_user_valid, "a user name",
	    &job->user, &cache->user) == -1)
		return -1;

#define JOBROW_GET_FIELD(col, sql, type, role, how)			\
	if (jobrow_get_field(r, JOBROW_##col, base) == -1)		\
		return -1;
	JOBCOLS(JOBROW_GET_FIELD)
#undef JOBROW_GET_FIELD
	return 0;
}

int
jobrow_env(const struct jobrow_source *src, void *ctx, int col, uint64_t id,
    char ***env, char **cause)
{
	struct jobrow_reader r = { src, ctx, "" };
	char **v = NULL, **p;

	if (jobrow_strv(&r, col, &v) == -1) {
		if (v != NULL) {
			for (p = v; *p != NULL; p++)
				free(*p);
			free(v);
		}
		return cause_fail(cause, "cannot load the environment of job "
		    "%" PRIu64 ": %s", id, r.why);
	}
	*env = v;
	return 0;
}

struct job *
jobrow_get(const struct jobrow_source *src, void *ctx,
    struct jobrow_cache *cache, char **cause)
{
	struct jobrow_reader r = { src, ctx, "" };
	struct job_run run = job_run_none, *own;
	struct job_extra extra = job_extra_none, *own_extra;
	struct job *job;
	int64_t id;

	if (src->type(ctx, JOBROW_ID) != JOBROW_INTEGER ||
	    (id = src->integer(ctx, JOBROW_ID)) < 1) {
		cause_fail(cause, "cannot load a job: its id is not a "
		    "positive integer");
		return NULL;
	}
	if ((job = job_new()) == NULL) {
		cause_fail(cause, "out of memory");
		return NULL;
	}
	job->id = (uint64_t)id;
	if (jobrow_fill(&r, job, &run, &extra, cache) == -1)
		goto fail;
	/* A job that asks for none of it shares job_extra_none. */
	if (!job_extra_is_none(&extra)) {
		if ((own_extra = job_extra_edit(job)) == NULL) {
			jobrow_oom(&r);
			goto fail;
		}
		*own_extra = extra;
		extra = job_extra_none;
	}
	/* A job that never ran shares job_run_none. */
	if (!job_run_is_none(&run) || run.reason != NULL ||
	    run.cgroup != NULL || run.result != NULL) {
		if ((own = job_run_edit(job)) == NULL) {
			jobrow_oom(&r);
			goto fail;
		}
		*own = run;
	}
	return job;
fail:
	free(run.reason);
	free(run.cgroup);
	json_decref(run.result);
	job_extra_clear(&extra);
	cause_fail(cause, "cannot load job %" PRIu64 ": %s", job->id, r.why);
	job_free(job);
	return NULL;
}
