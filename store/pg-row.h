/* pg-row.h - PostgreSQL's side of a job as a row (jobrow.c): a job's values as
 * a statement's text parameters, and a result's row read back. */
#ifndef TRIAGE_PG_ROW_H
#define TRIAGE_PG_ROW_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "jobcols.h"
#include "jobrow.h"

/* An UPDATE's parameters: $1 the id, then the columns a job's life changes
 * in jobcols_set_order's order, then the caller's own (the version it
 * expects), the last: $PG_ROW_NUPDATE. */
#define PG_ROW_NUPDATE (JOBCOLS_NCHANGES + 2)
/* A claim of a job naming shared counters has one more: their counts,
 * $PG_ROW_NSHARED (pg-open.c's claim_shared). */
#define PG_ROW_NSHARED (PG_ROW_NUPDATE + 1)
/* Any other claim has two: the ids of the jobs it may go to instead, and
 * their versions, as bigint[] literals; the last $PG_ROW_NCLAIM. */
#define PG_ROW_NCLAIM (PG_ROW_NUPDATE + 2)

/* One job's values as text, for one statement. */
struct pg_row {
	const char *values[JOBROW_NCOLUMNS];
	char *owned[JOBROW_NCOLUMNS];
	char num[JOBROW_NCOLUMNS][32];
	/* An UPDATE's parameters (PG_ROW_NUPDATE, PG_ROW_NSHARED or
	 * PG_ROW_NCLAIM), the caller's own left for it to set. */
	const char *changes[PG_ROW_NCLAIM];
};

/* Every column's value (all: an INSERT's, in values, column i at
 * $(i + 1)) or the id and the changes (changes); 0, or -1 with *cause
 * (and r cleared). */
int pg_row_params(struct pg_row *r, const struct job *job, bool all,
    char **cause);
void pg_row_clear(struct pg_row *r);

/* A new job from row of res, whose columns from col0 are JOBCOLS_NAMES;
 * NULL with *cause naming the id when the row is malformed. */
struct job *pg_row_read(const PGresult *res, int row, int col0,
    struct jobrow_cache *cache, char **cause);

/* Column col of row, a JSON array of strings, into a new NULL-terminated
 * vector (job id's environment); 0 or -1 with *cause. */
int pg_row_env(const PGresult *res, int row, int col, uint64_t id,
    char ***env, char **cause);

#endif
