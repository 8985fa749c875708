/* sqlite-private.h - what store/sqlite-db.c, sqlite-schema.c and sqlite-row.c
 * share, and nothing else includes: the schema steps, a job's columns, and the
 * error helper. */
#ifndef TRIAGE_SQLITE_PRIVATE_H
#define TRIAGE_SQLITE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "jobrow.h"

struct job;

/* Parameters of a row: one a column (jobcols.h). */
#define SQLITE_DB_ROW_NPARAMS 41
#define SQLITE_DB_ROW_PARAMS							\
	"?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "	\
	"?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, " \
	"?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41"

/*
 * The columns a job's life and the update method change, by the same
 * parameters: an UPDATE writes only these, the rest (argv, env, after...)
 * is written once, at INSERT.
 */
#define SQLITE_DB_ROW_CHANGES_SET						\
	"name = ?2, priority = ?6, timeout_ms = ?10, "			\
	"state = ?7, retries = ?11, seq = ?12, started_at = ?17, "	\
	"finished_at = ?18, pid = ?19, exit_code = ?20, signal = ?21, "	\
	"reason = ?22, attempt = ?23, user_time = ?24, "		\
	"system_time = ?25, max_rss_kb = ?26, stdout_truncated = ?27, "	\
	"stderr_truncated = ?28, begun = ?29, start_ticks = ?30, "	\
	"labels = ?31, held = ?32, begin_at = ?33, nice = ?35, "	\
	"stdout_dropped = ?37, stderr_dropped = ?38, node = ?39"

/*
  * sqlite-row.c, SQLite's side of jobrow.c. sqlite_row_bind binds job's columns
 * to st's parameters ?1 to ?41: every one when all is set (INSERT), else those
 * of SQLITE_DB_ROW_CHANGES_SET and the id (strings borrowed from job until st
 * is reset); 0 or -1 with *cause. sqlite_row_read makes a new job from the
 * current row of SELECT JOBCOLS_NAMES; NULL with *cause (naming the
 * id) when the row is malformed. sqlite_row_env reads column 0, a JSON array of
 * strings, into a new NULL-terminated vector; 0 or -1 with *cause.
 */
struct jobrow_cache;
int sqlite_row_bind(sqlite3_stmt *st, const struct job *job, bool all,
    char **cause);
/* The same for the row whose parameters follow base others (the rows of
 * an INSERT of many: row k has base k * SQLITE_DB_ROW_NPARAMS). */
int sqlite_row_bind_at(sqlite3_stmt *st, int base, const struct job *job,
    bool all, char **cause);
struct job *sqlite_row_read(sqlite3_stmt *st, struct jobrow_cache *cache,
    char **cause);
int sqlite_row_env(sqlite3_stmt *st, uint64_t id, char ***env, char **cause);

#endif
