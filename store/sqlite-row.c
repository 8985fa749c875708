/* sqlite-row.c - SQLite's side of a job as a row (jobrow.c): a job's values
 * bound to a statement's parameters, and a result's columns read back. */
#include <stdint.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "sqlite-private.h"
#include "jobrow.h"

/* Binding stops at the first failure, whose code is kept for the message
 * (sqlite3_errmsg would be reset by later bindings). */
struct sqlite_db_row_params {
	sqlite3_stmt *st;
	int base;	/* parameters before the row's: rows of one INSERT */
	int rc;
};

static int
sqlite_row_rc(struct sqlite_db_row_params *p, int rc)
{
	p->rc = rc;
	return rc == SQLITE_OK ? 0 : -1;
}

static int
sqlite_row_null(void *ctx, int col)
{
	struct sqlite_db_row_params *p = ctx;

	return sqlite_row_rc(p, sqlite3_bind_null(p->st, p->base + col + 1));
}

static int
sqlite_row_integer(void *ctx, int col, int64_t v)
{
	struct sqlite_db_row_params *p = ctx;

	return sqlite_row_rc(p, sqlite3_bind_int64(p->st, p->base + col + 1,
	    v));
}

static int
sqlite_row_real(void *ctx, int col, double v)
{
	struct sqlite_db_row_params *p = ctx;

	return sqlite_row_rc(p, sqlite3_bind_double(p->st, p->base + col + 1,
	    v));
}

static int
sqlite_row_text(void *ctx, int col, const char *s)
{
	struct sqlite_db_row_params *p = ctx;

	return sqlite_row_rc(p, sqlite3_bind_text(p->st, p->base + col + 1, s,
	    -1, SQLITE_STATIC));
}

/* SQLite frees s once done with it, even when the binding fails. */
static int
sqlite_row_owned(void *ctx, int col, char *s)
{
	struct sqlite_db_row_params *p = ctx;

	return sqlite_row_rc(p, sqlite3_bind_text(p->st, p->base + col + 1, s,
	    -1, free));
}

static const char *
sqlite_row_error(void *ctx)
{
	return sqlite3_errstr(((struct sqlite_db_row_params *)ctx)->rc);
}

static const struct jobrow_sink sqlite_db_row_sink = {
	.null = sqlite_row_null,
	.integer = sqlite_row_integer,
	.real = sqlite_row_real,
	.text = sqlite_row_text,
	.owned = sqlite_row_owned,
	.error = sqlite_row_error,
};

int
sqlite_row_bind(sqlite3_stmt *st, const struct job *job, bool all, char **cause)
{
	return sqlite_row_bind_at(st, 0, job, all, cause);
}

int
sqlite_row_bind_at(sqlite3_stmt *st, int base, const struct job *job, bool all,
    char **cause)
{
	struct sqlite_db_row_params p = { st, base, SQLITE_OK };

	return jobrow_put(job, all, &sqlite_db_row_sink, &p, cause);
}

static enum jobrow_type
sqlite_row_type(void *ctx, int col)
{
	switch (sqlite3_column_type(ctx, col)) {
	case SQLITE_NULL:
		return JOBROW_NULL;
	case SQLITE_INTEGER:
		return JOBROW_INTEGER;
	case SQLITE_FLOAT:
		return JOBROW_REAL;
	case SQLITE_TEXT:
		return JOBROW_TEXT;
	default:
		return JOBROW_OTHER;
	}
}

static int64_t
sqlite_row_column_integer(void *ctx, int col)
{
	return sqlite3_column_int64(ctx, col);
}

static double
sqlite_row_column_real(void *ctx, int col)
{
	return sqlite3_column_double(ctx, col);
}

static const char *
sqlite_row_column_text(void *ctx, int col, size_t *len)
{
	const char *s = (const char *)sqlite3_column_text(ctx, col);

	*len = (size_t)sqlite3_column_bytes(ctx, col);
	return s;
}

static const char *
sqlite_row_column_name(void *ctx, int col)
{
	return sqlite3_column_name(ctx, col);
}

static const struct jobrow_source sqlite_db_row_source = {
	.type = sqlite_row_type,
	.integer = sqlite_row_column_integer,
	.real = sqlite_row_column_real,
	.text = sqlite_row_column_text,
	.name = sqlite_row_column_name,
};

struct job *
sqlite_row_read(sqlite3_stmt *st, struct jobrow_cache *cache, char **cause)
{
	return jobrow_get(&sqlite_db_row_source, st, cache, cause);
}

int
sqlite_row_env(sqlite3_stmt *st, uint64_t id, char ***env, char **cause)
{
	return jobrow_env(&sqlite_db_row_source, st, 0, id, env, cause);
}
