/* pg-row.c - PostgreSQL's side of a job as a row (jobrow.c): every value as
 * text, as libpq sends parameters, and a result's text read back by the
 * type of its column. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "jobcols.h"
#include "jobrow.h"
#include "pg-row.h"

/* PostgreSQL's type oids (pg_type.h, which libpq-dev does not ship). */
#define PG_ROW_INT8OID 20
#define PG_ROW_INT2OID 21
#define PG_ROW_INT4OID 23
#define PG_ROW_TEXTOID 25
#define PG_ROW_FLOAT4OID 700
#define PG_ROW_FLOAT8OID 701
#define PG_ROW_VARCHAROID 1043

static int
pg_row_null(void *ctx, int col)
{
	((struct pg_row *)ctx)->values[col] = NULL;
	return 0;
}

static int
pg_row_integer(void *ctx, int col, int64_t v)
{
	struct pg_row *r = ctx;

	snprintf(r->num[col], sizeof r->num[col], "%" PRId64, v);
	r->values[col] = r->num[col];
	return 0;
}

static int
pg_row_real(void *ctx, int col, double v)
{
	struct pg_row *r = ctx;

	snprintf(r->num[col], sizeof r->num[col], "%.17g", v);
	r->values[col] = r->num[col];
	return 0;
}

static int
pg_row_text(void *ctx, int col, const char *s)
{
	((struct pg_row *)ctx)->values[col] = s;
	return 0;
}

static int
pg_row_owned(void *ctx, int col, char *s)
{
	struct pg_row *r = ctx;

	free(r->owned[col]);
	r->owned[col] = s;
	r->values[col] = s;
	return 0;
}

static const char *
pg_row_error(void *ctx)
{
	(void)ctx;
	return "cannot happen";
}

static const struct jobrow_sink pg_row_sink = {
	.null = pg_row_null,
	.integer = pg_row_integer,
	.real = pg_row_real,
	.text = pg_row_text,
	.owned = pg_row_owned,
	.error = pg_row_error,
};

void
pg_row_clear(struct pg_row *r)
{
	size_t i;

	for (i = 0; i < JOBROW_NCOLUMNS; i++)
		free(r->owned[i]);
	memset(r, 0, sizeof *r);
}

int
pg_row_params(struct pg_row *r, const struct job *job, bool all, char **cause)
{
	size_t i;

	memset(r, 0, sizeof *r);
	if (jobrow_put(job, all, &pg_row_sink, r, cause) != 0) {
		pg_row_clear(r);
		return -1;
	}
	r->changes[0] = r->values[JOBROW_ID];
	for (i = 0; i < JOBCOLS_NCHANGES; i++)
		r->changes[i + 1] = r->values[jobcols_set_order[i]];
	return 0;
}

/* The row being read: result, row, and where the job's columns start. */
struct pg_row_reading {
	const PGresult *res;
	int row;
	int col0;
};

static enum jobrow_type
pg_row_type(void *ctx, int col)
{
	struct pg_row_reading *r = ctx;

	if (PQgetisnull(r->res, r->row, r->col0 + col))
		return JOBROW_NULL;
	switch (PQftype(r->res, r->col0 + col)) {
	case PG_ROW_INT8OID:
	case PG_ROW_INT2OID:
	case PG_ROW_INT4OID:
		return JOBROW_INTEGER;
	case PG_ROW_FLOAT4OID:
	case PG_ROW_FLOAT8OID:
		return JOBROW_REAL;
	case PG_ROW_TEXTOID:
	case PG_ROW_VARCHAROID:
		return JOBROW_TEXT;
	default:
		return JOBROW_OTHER;
	}
}

static int64_t
pg_row_column_integer(void *ctx, int col)
{
	struct pg_row_reading *r = ctx;

	return strtoll(PQgetvalue(r->res, r->row, r->col0 + col), NULL, 10);
}

static double
pg_row_column_real(void *ctx, int col)
{
	struct pg_row_reading *r = ctx;

	return strtod(PQgetvalue(r->res, r->row, r->col0 + col), NULL);
}

static const char *
pg_row_column_text(void *ctx, int col, size_t *len)
{
	struct pg_row_reading *r = ctx;

	*len = (size_t)PQgetlength(r->res, r->row, r->col0 + col);
	return PQgetvalue(r->res, r->row, r->col0 + col);
}

static const char *
pg_row_column_name(void *ctx, int col)
{
	struct pg_row_reading *r = ctx;

	return PQfname(r->res, r->col0 + col);
}

static const struct jobrow_source pg_row_source = {
	.type = pg_row_type,
	.integer = pg_row_column_integer,
	.real = pg_row_column_real,
	.text = pg_row_column_text,
	.name = pg_row_column_name,
};

struct job *
pg_row_read(const PGresult *res, int row, int col0, struct jobrow_cache *cache,
    char **cause)
{
	struct pg_row_reading r = { res, row, col0 };

	return jobrow_get(&pg_row_source, &r, cache, cause);
}

int
pg_row_env(const PGresult *res, int row, int col, uint64_t id, char ***env,
    char **cause)
{
	struct pg_row_reading r = { res, row, 0 };

	return jobrow_env(&pg_row_source, &r, col, id, env, cause);
}
