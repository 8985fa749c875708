/* jobcols.h - the columns of a job's row, each listed once: its name, type and
 * role, whence the enum, both databases' SQL and jobrow.c's mechanical code. */
#ifndef TRIAGE_JOBCOLS_H
#define TRIAGE_JOBCOLS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * X(COL, sql, type, role, how), a column a line, in the order of every
 * statement's lists. sql is the name both databases know it by (quoted
 * where SQL has the word); type that of its values, NULL aside: INTEGER,
 * REAL or TEXT. role is one of
 *	KEY	the id: the first column, in every WHERE, never SET;
 *	ONCE	written by INSERT only: what a submission fixes;
 *	LIFE	written by UPDATE too: what a job's life and the update
 *		method change;
 *	FIRST	the same as LIFE, set ahead of the LIFE ones: the three the
 *		update method came with (schema 5) went to the head of the
 *		SET list, and the statements have kept their text since.
 * how is how jobrow.c maps it to a job: CUSTOM, code of its own, or
 * JOB(field, unknown, max), RUN(field, unknown, max) and EXTRA(field,
 * unknown, max), a field of struct job, of struct job_run or of struct
 * job_extra written and read as it is, from 0 to max (for an
 * integer); unknown is NOT_NULL, or the field's value that NULL stands for:
 * -1 (anything below 0 is written NULL) or 0 (so is 0, and a NULL string).
 *
 * A new column: a line here (its field's, or its code in jobrow.c), and a
 * step of each schema (sqlite-schema.c, pg-schema.c). tests/unit/
 * test-jobcols.c and tests/daemon/test-pg-columns.c fail until all agree.
 */
#define JOBCOLS(X)							\
	X(ID, "id", INTEGER, KEY, CUSTOM)				\
	X(NAME, "name", TEXT, FIRST, CUSTOM)				\
	X(ARGV, "argv", TEXT, ONCE, CUSTOM)				\
	X(ENV, "env", TEXT, ONCE, CUSTOM)				\
	X(CWD, "cwd", TEXT, ONCE, CUSTOM)				\
	X(PRIORITY, "priority", TEXT, FIRST, CUSTOM)			\
	X(STATE, "state", TEXT, LIFE, CUSTOM)				\
	X(SLOTS, "slots", INTEGER, ONCE,				\
	    JOB(slots, NOT_NULL, UINT16_MAX))				\
	X(EXCLUSIVE, "exclusive", INTEGER, ONCE,			\
	    JOB(exclusive, NOT_NULL, 1))				\
	X(TIMEOUT_MS, "timeout_ms", INTEGER, FIRST,			\
	    JOB(timeout_ms, NOT_NULL, INT64_MAX))			\
	X(RETRIES, "retries", INTEGER, LIFE,				\
	    JOB(retries, NOT_NULL, UINT_MAX))				\
	X(SEQ, "seq", INTEGER, LIFE, CUSTOM)				\
	X(AFTER, "\"after\"", TEXT, ONCE, CUSTOM)			\
	X(UID, "uid", INTEGER, ONCE, JOB(uid, NOT_NULL, UINT32_MAX))	\
	X(GID, "gid", INTEGER, ONCE, JOB(gid, NOT_NULL, UINT32_MAX))	\
	X(SUBMITTED_AT, "submitted_at", INTEGER, ONCE,			\
	    JOB(submitted_at, -1, INT64_MAX))				\
	X(STARTED_AT, "started_at", INTEGER, LIFE,			\
	    RUN(started_at, -1, INT64_MAX))				\
	X(FINISHED_AT, "finished_at", INTEGER, LIFE,			\
	    RUN(finished_at, -1, INT64_MAX))				\
	X(PID, "pid", INTEGER, LIFE, RUN(pid, 0, INT_MAX))		\
	X(EXIT_CODE, "exit_code", INTEGER, LIFE,			\
	    RUN(exit_code, -1, INT_MAX))				\
	X(SIGNAL, "signal", INTEGER, LIFE, RUN(signal, 0, INT_MAX))	\
	X(REASON, "reason", TEXT, LIFE, RUN(reason, 0, 0))		\
	X(ATTEMPT, "attempt", INTEGER, LIFE,				\
	    JOB(attempt, NOT_NULL, UINT_MAX))				\
	X(USER_TIME, "user_time", REAL, LIFE, RUN(user_time, -1, 0))	\
	X(SYSTEM_TIME, "system_time", REAL, LIFE,			\
	    RUN(system_time, -1, 0))					\
	X(MAX_RSS_KB, "max_rss_kb", INTEGER, LIFE,			\
	    RUN(max_rss_kb, -1, INT64_MAX))				\
	X(STDOUT_TRUNCATED, "stdout_truncated", INTEGER, LIFE,		\
	    RUN(stdout_truncated, NOT_NULL, 1))				\
	X(STDERR_TRUNCATED, "stderr_truncated", INTEGER, LIFE,		\
	    RUN(stderr_truncated, NOT_NULL, 1))				\
	X(BEGUN, "begun", INTEGER, LIFE, RUN(begun, NOT_NULL, 1))	\
	X(START_TICKS, "start_ticks", INTEGER, LIFE,			\
	    RUN(start_ticks, 0, INT64_MAX))				\
	X(LABELS, "labels", TEXT, LIFE, CUSTOM)				\
	X(HELD, "held", INTEGER, LIFE, JOB(held, NOT_NULL, 1))		\
	X(BEGIN_AT, "begin_at", INTEGER, LIFE,				\
	    EXTRA(begin_at, -1, INT64_MAX))				\
	X(AFTER_ANY, "after_any", TEXT, ONCE, CUSTOM)			\
	X(NICE, "nice", INTEGER, LIFE, JOB(nice, NOT_NULL, 19))		\
	X(MERGE_OUTPUT, "merge_output", INTEGER, ONCE,			\
	    JOB(merge_output, NOT_NULL, 1))				\
	X(STDOUT_DROPPED, "stdout_dropped", INTEGER, LIFE,		\
	    RUN(stdout_dropped, NOT_NULL, INT64_MAX))			\
	X(STDERR_DROPPED, "stderr_dropped", INTEGER, LIFE,		\
	    RUN(stderr_dropped, NOT_NULL, INT64_MAX))			\
	X(NODE, "node", TEXT, LIFE, CUSTOM)				\
	X(PINNED_NODE, "pinned_node", TEXT, ONCE, CUSTOM)		\
	X(USERNAME, "username", TEXT, ONCE, CUSTOM)			\
	X(MEMORY, "memory", INTEGER, LIFE,				\
	    JOB(memory, 0, INT64_MAX))					\
	X(FROZEN, "frozen", INTEGER, LIFE, JOB(frozen, NOT_NULL, 1))	\
	X(PEAK_MEMORY, "peak_memory", INTEGER, LIFE,			\
	    RUN(peak_memory, -1, INT64_MAX))				\
	X(OOM, "oom", INTEGER, LIFE, RUN(oom, NOT_NULL, 1))		\
	X(CGROUP, "cgroup", TEXT, LIFE, RUN(cgroup, 0, 0))		\
	X(RESOURCES, "resources", TEXT, LIFE, CUSTOM)			\
	X(DEVICES, "devices", TEXT, LIFE, CUSTOM)			\
	X(KEY, "\"key\"", TEXT, ONCE, EXTRA(key, 0, 0))		\
	X(RESULT, "result", TEXT, LIFE, CUSTOM)				\
	X(RESULT_TRUNCATED, "result_truncated", INTEGER, LIFE,		\
	    RUN(result_truncated, NOT_NULL, 1))

/* The columns by number, the index of every table of them (jobrow.c reads
 * and writes a row by it; a SELECT's column i is column i). */
#define JOBCOLS_ENUM(col, sql, type, role, how) JOBROW_##col,
enum jobrow_column {
	JOBCOLS(JOBCOLS_ENUM)
	JOBROW_NCOLUMNS
};
#undef JOBCOLS_ENUM

enum jobcol_type {
	JOBCOL_INTEGER,
	JOBCOL_REAL,
	JOBCOL_TEXT,
};

/* In this order: a column changes when its role is FIRST or after. */
enum jobcol_role {
	JOBCOL_KEY,
	JOBCOL_ONCE,
	JOBCOL_FIRST,
	JOBCOL_LIFE,
};

struct jobcol {
	const char *name;
	enum jobcol_type type;
	enum jobcol_role role;
};

/* Every column, by enum jobrow_column. */
extern const struct jobcol jobcols[JOBROW_NCOLUMNS];

static inline bool
jobcols_changes(int col)
{
	return jobcols[col].role >= JOBCOL_FIRST;
}

/* How many columns an UPDATE writes besides the id, and which, in the
 * order of its SET list: the FIRST ones, then the LIFE ones. */
#define JOBCOLS_COUNT_CHANGES(col, sql, type, role, how)		\
	+ (JOBCOL_##role >= JOBCOL_FIRST)
enum {
	JOBCOLS_NCHANGES = 0 JOBCOLS(JOBCOLS_COUNT_CHANGES)
};
#undef JOBCOLS_COUNT_CHANGES
extern const enum jobrow_column jobcols_set_order[JOBCOLS_NCHANGES];

/* "id, name, argv, ...": every column, for SELECT and INSERT. */
#define JOBCOLS_NAME(col, sql, type, role, how) JOBCOLS_SEP_##role sql
#define JOBCOLS_SEP_KEY
#define JOBCOLS_SEP_ONCE ", "
#define JOBCOLS_SEP_FIRST ", "
#define JOBCOLS_SEP_LIFE ", "
#define JOBCOLS_NAMES JOBCOLS(JOBCOLS_NAME)

/*
 * The parameters of every column, "?1, ?2, ..., ?41", numbered from first
 * (mark: '?' for SQLite, '$' for PostgreSQL), for an INSERT's VALUES.
 * Allocated; NULL when out of memory.
 */
char *jobcols_values(char mark, int first);
/*
 * What an UPDATE sets, "name = ?2, priority = ?6, ...": the columns of
 * jobcols_set_order, each from its own column's parameter (the INSERT's:
 * one binding serves both) when by_column, else from $2, $3... in that
 * order ($1 being the id): PostgreSQL wants every parameter used.
 * Allocated; NULL when out of memory.
 */
char *jobcols_set(char mark, bool by_column);

/*
 * What a database's jobs table says against the list: its columns names[i]
 * (unquoted, as the database lists them) of types[i], n of them, besides
 * its own bookkeeping columns named in own (NULL-terminated). NULL when
 * they agree; else a new message naming each column missing from either
 * side or of another type; "out of memory" when that cannot be made.
 */
char *jobcols_diff(const char *const *names, const enum jobcol_type *types,
    size_t n, const char *const *own);

#endif
