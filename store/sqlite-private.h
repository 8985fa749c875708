/* sqlite-private.h - what store/sqlite-db.c and sqlite-row.c share, and
 * nothing else includes: a job's row bound to a statement and read back. */
#ifndef TRIAGE_SQLITE_PRIVATE_H
#define TRIAGE_SQLITE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "jobrow.h"

struct job;

/*
 * sqlite-row.c, SQLite's side of jobrow.c. A row's parameters are its
 * columns' (jobcols.h), column i at ?(i + 1), so that one binding serves
 * INSERT and UPDATE. sqlite_row_bind binds job's columns: every one when
 * all is set (INSERT), else the id and those a job's life changes (strings
 * borrowed from job until st is reset); 0 or -1 with *cause.
 * sqlite_row_read makes a new job from the current row of SELECT
 * JOBCOLS_NAMES; NULL with *cause (naming the id) when the row is
 * malformed. sqlite_row_env reads column 0, a JSON array of strings, into a
 * new NULL-terminated vector; 0 or -1 with *cause.
 */
struct jobrow_cache;
int sqlite_row_bind(sqlite3_stmt *st, const struct job *job, bool all,
    char **cause);
/* The same for the row whose parameters follow base others (the rows of
 * an INSERT of many: row k has base k * JOBROW_NCOLUMNS). */
int sqlite_row_bind_at(sqlite3_stmt *st, int base, const struct job *job,
    bool all, char **cause);
struct job *sqlite_row_read(sqlite3_stmt *st, struct jobrow_cache *cache,
    char **cause);
int sqlite_row_env(sqlite3_stmt *st, uint64_t id, char ***env, char **cause);

#endif
