/* pgrow.c - PostgreSQL's side of a job as a row (jobrow.c): every value as
 * text, as libpq sends parameters, and a result's text read back by the
 * type of its column. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "jobrow.h"
#include "pgrow.h"

/* PostgreSQL's type oids (pg_type.h, which libpq-dev does not ship). */
#define PGROW_INT8OID 20
#define PGROW_INT2OID 21
#define PGROW_INT4OID 23
#define PGROW_TEXTOID 25
#define PGROW_FLOAT4OID 700
#define PGROW_FLOAT8OID 701
#define PGROW_VARCHAROID 1043

/* The columns of PGROW_CHANGES_SET, in its order. */
static const int pgrow_change_cols[PGROW_NCHANGES] = {
	JOBROW_NAME, JOBROW_PRIORITY, JOBROW_TIMEOUT_MS, JOBROW_STATE,
	JOBROW_RETRIES, JOBROW_SEQ, JOBROW_STARTED_AT, JOBROW_FINISHED_AT,
	JOBROW_PID, JOBROW_EXIT_CODE, JOBROW_SIGNAL, JOBROW_REASON,
	JOBROW_ATTEMPT, JOBROW_USER_TIME, JOBROW_SYSTEM_TIME,
	JOBROW_MAX_RSS_KB, JOBROW_STDOUT_TRUNCATED, JOBROW_STDERR_TRUNCATED,
	JOBROW_BEGUN, JOBROW_START_TICKS, JOBROW_LABELS, JOBROW_HELD,
	JOBROW_BEGIN_AT, JOBROW_NICE, JOBROW_STDOUT_DROPPED,
	JOBROW_STDERR_DROPPED, JOBROW_NODE,
};

static int
pgrow_null(void *ctx, int col)
{
	((struct pgrow *)ctx)->values[col] = NULL;
	return 0;
}

static int
pgrow_integer(void *ctx, int col, int64_t v)
{
	struct pgrow *r = ctx;

	snprintf(r->num[col], sizeof r->num[col], "%" PRId64, v);
	r->values[col] = r->num[col];
	return 0;
}

static int
pgrow_real(void *ctx, int col, double v)
{
	struct pgrow *r = ctx;

	snprintf(r->num[col], sizeof r->num[col], "%.17g", v);
	r->values[col] = r->num[col];
	return 0;
}

static int
pgrow_text(void *ctx, int col, const char *s)
{
	((struct pgrow *)ctx)->values[col] = s;
	return 0;
}

static int
pgrow_owned(void *ctx, int col, char *s)
{
	struct pgrow *r = ctx;

	free(r->owned[col]);
	r->owned[col] = s;
	r->values[col] = s;
	return 0;
}

static const char *
pgrow_error(void *ctx)
{
	(void)ctx;
	return "cannot happen";
}

static const struct jobrow_sink pgrow_sink = {
	.null = pgrow_null,
	.integer = pgrow_integer,
	.real = pgrow_real,
	.text = pgrow_text,
	.owned = pgrow_owned,
	.error = pgrow_error,
};

void
pgrow_clear(struct pgrow *r)
{
	size_t i;

	for (i = 0; i < JOBROW_NCOLUMNS; i++)
		free(r->owned[i]);
	memset(r, 0, sizeof *r);
}

int
pgrow_params(struct pgrow *r, const struct job *job, bool all, char **cause)
{
	size_t i;

	memset(r, 0, sizeof *r);
	if (jobrow_put(job, all, &pgrow_sink, r, cause) != 0) {
		pgrow_clear(r);
		return -1;
	}
	r->changes[0] = r->values[JOBROW_ID];
	for (i = 0; i < PGROW_NCHANGES; i++)
		r->changes[i + 1] = r->values[pgrow_change_cols[i]];
	return 0;
}

/* The row being read: result, row, and where the job's columns start. */
struct pgrow_reading {
	const PGresult *res;
	int row;
	int col0;
};

static enum jobrow_type
pgrow_type(void *ctx, int col)
{
	struct pgrow_reading *r = ctx;

	if (PQgetisnull(r->res, r->row, r->col0 + col))
		return JOBROW_NULL;
	switch (PQftype(r->res, r->col0 + col)) {
	case PGROW_INT8OID:
	case PGROW_INT2OID:
	case PGROW_INT4OID:
		return JOBROW_INTEGER;
	case PGROW_FLOAT4OID:
	case PGROW_FLOAT8OID:
		return JOBROW_REAL;
	case PGROW_TEXTOID:
	case PGROW_VARCHAROID:
		return JOBROW_TEXT;
	default:
		return JOBROW_OTHER;
	}
}

static int64_t
pgrow_column_integer(void *ctx, int col)
{
	struct pgrow_reading *r = ctx;

	return strtoll(PQgetvalue(r->res, r->row, r->col0 + col), NULL, 10);
}

static double
pgrow_column_real(void *ctx, int col)
{
	struct pgrow_reading *r = ctx;

	return strtod(PQgetvalue(r->res, r->row, r->col0 + col), NULL);
}

static const char *
pgrow_column_text(void *ctx, int col, size_t *len)
{
	struct pgrow_reading *r = ctx;

	*len = (size_t)PQgetlength(r->res, r->row, r->col0 + col);
	return PQgetvalue(r->res, r->row, r->col0 + col);
}

static const char *
pgrow_column_name(void *ctx, int col)
{
	struct pgrow_reading *r = ctx;

	return PQfname(r->res, r->col0 + col);
}

static const struct jobrow_source pgrow_source = {
	.type = pgrow_type,
	.integer = pgrow_column_integer,
	.real = pgrow_column_real,
	.text = pgrow_column_text,
	.name = pgrow_column_name,
};

struct job *
pgrow_read(const PGresult *res, int row, int col0, struct jobrow_cache *cache,
    char **cause)
{
	struct pgrow_reading r = { res, row, col0 };

	return jobrow_get(&pgrow_source, &r, cache, cause);
}

int
pgrow_env(const PGresult *res, int row, int col, uint64_t id, char ***env,
    char **cause)
{
	struct pgrow_reading r = { res, row, 0 };

	return jobrow_env(&pgrow_source, &r, col, id, env, cause);
}
