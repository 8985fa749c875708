/* db-private.h - what lib/db.c, db-schema.c and db-row.c share, and nothing
 * else includes: the schema steps, a job's columns, and the error helper. */
#ifndef TRIAGE_DB_PRIVATE_H
#define TRIAGE_DB_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

struct job;

/*
 * Every column of a job but id, in the order of enum db_row_column in
 * db-row.c, and their parameters: id is always ?1, so that one binding serves
 * INSERT (id, DB_ROW_COLUMNS) and UPDATE ... SET (DB_ROW_COLUMNS) WHERE id = ?1,
 * and SELECT id, DB_ROW_COLUMNS reads column i from parameter i + 1.
 * "after" is quoted because it is an SQL keyword.
 */
#define DB_ROW_COLUMNS							\
	"name, argv, env, cwd, priority, state, slots, exclusive, "	\
	"timeout_ms, retries, seq, \"after\", uid, gid, submitted_at, "	\
	"started_at, finished_at, pid, exit_code, signal, reason, "	\
	"attempt, user_time, system_time, max_rss_kb, "			\
	"stdout_truncated, stderr_truncated, begun, start_ticks, "	\
	"labels, held, begin_at, after_any, nice, merge_output, "	\
	"stdout_dropped, stderr_dropped, node, pinned_node, username"
/* Parameters of a row: the id and DB_ROW_COLUMNS. */
#define DB_ROW_NPARAMS 41
#define DB_ROW_PARAMS							\
	"?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "	\
	"?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, " \
	"?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41"

/*
 * The columns a job's life and the update method change, by the same
 * parameters: an UPDATE writes only these, the rest (argv, env, after...)
 * is written once, at INSERT.
 */
#define DB_ROW_CHANGES_SET						\
	"name = ?2, priority = ?6, timeout_ms = ?10, "			\
	"state = ?7, retries = ?11, seq = ?12, started_at = ?17, "	\
	"finished_at = ?18, pid = ?19, exit_code = ?20, signal = ?21, "	\
	"reason = ?22, attempt = ?23, user_time = ?24, "		\
	"system_time = ?25, max_rss_kb = ?26, stdout_truncated = ?27, "	\
	"stderr_truncated = ?28, begun = ?29, start_ticks = ?30, "	\
	"labels = ?31, held = ?32, begin_at = ?33, nice = ?35, "	\
	"stdout_dropped = ?37, stderr_dropped = ?38, node = ?39"

/* Sets *cause (when cause is not NULL) to the formatted message, or to
 * "out of memory" when that cannot be allocated; returns -1. */
int db_fail(char **cause, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * db-schema.c. db_schema_check reads the file's schema version into *version;
 * -1 with *cause when the file is not a database or is from a newer triage.
 * db_schema_migrate brings it to DB_SCHEMA_VERSION in one transaction; on
 * error the file keeps its old version.
 */
int db_schema_check(sqlite3 *sq, const char *path, int *version,
    char **cause);
int db_schema_migrate(sqlite3 *sq, const char *path, char **cause);

/*
 * db-row.c, SQLite's side of jobrow.c. db_row_bind binds job's columns to
 * st's parameters ?1 to ?41: every one when all is set (INSERT), else those
 * of DB_ROW_CHANGES_SET and the id (strings borrowed from job until st is
 * reset); 0 or -1 with *cause. db_row_read makes a new job from the
 * current row of SELECT id, DB_ROW_COLUMNS; NULL with *cause (naming the
 * id) when the row is malformed. db_row_env reads column 0, a JSON array of
 * strings, into a new NULL-terminated vector; 0 or -1 with *cause.
 */
struct jobrow_cache;
int db_row_bind(sqlite3_stmt *st, const struct job *job, bool all,
    char **cause);
/* The same for the row whose parameters follow base others (the rows of
 * an INSERT of many: row k has base k * DB_ROW_NPARAMS). */
int db_row_bind_at(sqlite3_stmt *st, int base, const struct job *job,
    bool all, char **cause);
struct job *db_row_read(sqlite3_stmt *st, struct jobrow_cache *cache,
    char **cause);
int db_row_env(sqlite3_stmt *st, uint64_t id, char ***env, char **cause);

#endif
