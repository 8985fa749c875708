/* jobrow.h - a job as a row of the jobs table and back, whatever the database
 * (SQLite's sqlite-row.c, PostgreSQL's pg-row.c give the values their way). */
#ifndef TRIAGE_JOBROW_H
#define TRIAGE_JOBROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobcols.h"

struct job;

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
 * and those a job's life changes (jobcols_changes); 0, or -1 with *cause.
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
