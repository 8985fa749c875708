/* jobrow.h - a job as a row of the jobs table and back, whatever the database
 * (SQLite's sqlite-row.c, PostgreSQL's pg-row.c give the values their way). */
#ifndef TRIAGE_JOBROW_H
#define TRIAGE_JOBROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct job;

/* The columns, id first: a database's SELECT and INSERT list them in this
 * order. */
enum jobrow_column {
	JOBROW_ID,
	JOBROW_NAME,
	JOBROW_ARGV,
	JOBROW_ENV,
	JOBROW_CWD,
	JOBROW_PRIORITY,
	JOBROW_STATE,
	JOBROW_SLOTS,
	JOBROW_EXCLUSIVE,
	JOBROW_TIMEOUT_MS,
	JOBROW_RETRIES,
	JOBROW_SEQ,
	JOBROW_AFTER,
	JOBROW_UID,
	JOBROW_GID,
	JOBROW_SUBMITTED_AT,
	JOBROW_STARTED_AT,
	JOBROW_FINISHED_AT,
	JOBROW_PID,
	JOBROW_EXIT_CODE,
	JOBROW_SIGNAL,
	JOBROW_REASON,
	JOBROW_ATTEMPT,
	JOBROW_USER_TIME,
	JOBROW_SYSTEM_TIME,
	JOBROW_MAX_RSS_KB,
	JOBROW_STDOUT_TRUNCATED,
	JOBROW_STDERR_TRUNCATED,
	JOBROW_BEGUN,
	JOBROW_START_TICKS,
	JOBROW_LABELS,
	JOBROW_HELD,
	JOBROW_BEGIN_AT,
	JOBROW_AFTER_ANY,
	JOBROW_NICE,
	JOBROW_MERGE_OUTPUT,
	JOBROW_STDOUT_DROPPED,
	JOBROW_STDERR_DROPPED,
	JOBROW_NODE,
	JOBROW_PINNED_NODE,
	JOBROW_USERNAME,
	JOBROW_NCOLUMNS,
};

/* The columns after id, in that order, as both databases name them
 * ("after" is quoted: it is an SQL keyword). */
#define JOBROW_COLUMNS							\
	"name, argv, env, cwd, priority, state, slots, exclusive, "	\
	"timeout_ms, retries, seq, \"after\", uid, gid, submitted_at, "	\
	"started_at, finished_at, pid, exit_code, signal, reason, "	\
	"attempt, user_time, system_time, max_rss_kb, "			\
	"stdout_truncated, stderr_truncated, begun, start_ticks, "	\
	"labels, held, begin_at, after_any, nice, merge_output, "	\
	"stdout_dropped, stderr_dropped, node, pinned_node, username"

enum jobrow_type {
	JOBROW_NULL,
	JOBROW_INTEGER,
	JOBROW_REAL,
	JOBROW_TEXT,
	JOBROW_OTHER,
};

/* Where a job's values go: a statement's parameters. Each returns 0, or
 * -1 to stop, the sink keeping why for error(). */
struct jobrow_sink {
	int (*null)(void *ctx, int col);
	int (*integer)(void *ctx, int col, int64_t v);
	int (*real)(void *ctx, int col, double v);
	/* s outlives the statement's use */
	int (*text)(void *ctx, int col, const char *s);
	/* takes s (from malloc), freeing it once done, even on failure */
	int (*owned)(void *ctx, int col, char *s);
	const char *(*error)(void *ctx);
};

/* Where a row's values come from: the current row of a result. */
struct jobrow_source {
	enum jobrow_type (*type)(void *ctx, int col);
	int64_t (*integer)(void *ctx, int col);
	double (*real)(void *ctx, int col);
	/* borrowed until the next row; NULL out of memory */
	const char *(*text)(void *ctx, int col, size_t *len);
	const char *(*name)(void *ctx, int col);
};

/* What one row read shares with the next across a load (zeroed before the
 * first, cleared after the last). */
struct jobrow_cache {
	char *env_text;		/* the last env column read, as stored */
	char *const *env;	/* its shared copy (intern.h), held for it */
	const char *cwd;	/* the last cwd, priority and nodes, held too */
	const char *priority;
	const char *node;
	const char *pinned_node;
	const char *user;
};
void jobrow_cache_clear(struct jobrow_cache *cache);

/*
 * Puts job's values: every column when all is set (an INSERT), else the id
 * and those a job's life changes (sqlite-private.h's
 * SQLITE_DB_ROW_CHANGES_SET); 0,
 * or -1 with *cause.
 */
int jobrow_put(const struct job *job, bool all, const struct jobrow_sink *sink,
    void *ctx, char **cause);
/* A new job from the row; NULL with *cause (naming the id) when the row
 * is malformed. */
struct job *jobrow_get(const struct jobrow_source *src, void *ctx,
    struct jobrow_cache *cache, char **cause);
/* Column col, a JSON array of strings, into a new NULL-terminated vector
 * (job id's environment); 0 or -1 with *cause. */
int jobrow_env(const struct jobrow_source *src, void *ctx, int col,
    uint64_t id, char ***env, char **cause);

#endif
