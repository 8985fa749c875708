/* pg-row.h - PostgreSQL's side of a job as a row (jobrow.c): a job's values as
 * a statement's text parameters, and a result's row read back. */
#ifndef TRIAGE_PG_ROW_H
#define TRIAGE_PG_ROW_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "jobrow.h"

/* The columns of triage_jobs in jobrow's order, for SELECT and INSERT. */
#define PG_ROW_SELECT JOBCOLS_NAMES
#define PG_ROW_INSERT_PARAMS						\
	"$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, "	\
	"$15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, "	\
	"$27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, "	\
	"$39, $40, $41"
/* What a job's life changes, as an UPDATE writes it: $1 is the id, then
 * the changes in this order (pg_row_changes); the caller's own parameter
 * follows them, $(PG_ROW_NCHANGES + 2). */
#define PG_ROW_CHANGES_SET						\
	"name = $2, priority = $3, timeout_ms = $4, state = $5, "	\
	"retries = $6, seq = $7, started_at = $8, finished_at = $9, "	\
	"pid = $10, exit_code = $11, signal = $12, reason = $13, "	\
	"attempt = $14, user_time = $15, system_time = $16, "		\
	"max_rss_kb = $17, stdout_truncated = $18, "			\
	"stderr_truncated = $19, begun = $20, start_ticks = $21, "	\
	"labels = $22, held = $23, begin_at = $24, nice = $25, "	\
	"stdout_dropped = $26, stderr_dropped = $27, node = $28"
#define PG_ROW_NCHANGES 27

/* One job's values as text, for one statement. */
struct pg_row {
	const char *values[JOBROW_NCOLUMNS];
	char *owned[JOBROW_NCOLUMNS];
	char num[JOBROW_NCOLUMNS][32];
	/* $1 the id, then the changes, then a slot for the caller's own
	 * last parameter (the version an UPDATE expects). */
	const char *changes[PG_ROW_NCHANGES + 2];
};

/* Every column's value (all: an INSERT's $1 .. $40, in values) or the id
 * and the changes (changes); 0, or -1 with *cause (and r cleared). */
int pg_row_params(struct pg_row *r, const struct job *job, bool all,
    char **cause);
void pg_row_clear(struct pg_row *r);

/* A new job from row of res, whose columns from col0 are PG_ROW_SELECT's;
 * NULL with *cause naming the id when the row is malformed. */
struct job *pg_row_read(const PGresult *res, int row, int col0,
    struct jobrow_cache *cache, char **cause);

/* Column col of row, a JSON array of strings, into a new NULL-terminated
 * vector (job id's environment); 0 or -1 with *cause. */
int pg_row_env(const PGresult *res, int row, int col, uint64_t id,
    char ***env, char **cause);

#endif
