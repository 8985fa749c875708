/* sqlite-db.h - the job database: SQLite in WAL mode, its versioned schema and
 * forward migrations, and the few statements the store needs. */
#ifndef TRIAGE_SQLITE_DB_H
#define TRIAGE_SQLITE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sqlite-schema.h"

struct sqlite_db;
struct job;

/*
 * Opens the database at path, creating it if missing (mode 0600), in WAL
 * mode with synchronous=FULL, and migrates it to SQLITE_SCHEMA_VERSION inside
 * one transaction. Returns NULL with *cause set (allocated, naming path)
 * when it cannot: unreadable, not a database, corrupt, or from a newer
 * version of triage (user_version above SQLITE_SCHEMA_VERSION).
 */
struct sqlite_db *sqlite_db_open(const char *path, char **cause);
void sqlite_db_close(struct sqlite_db *db);
/* The checkpoints made off the caller's thread so far (sqlite-ckpt.h); 0
 * where the commits make their own. */
uint64_t sqlite_db_checkpoints(struct sqlite_db *db);

/*
 * Reads every job, in id order, into new jobs (job_new) handed to cb, which
 * owns them; cb returns 0 to go on or -1 to stop (then sqlite_db_load returns
 * -1 with *cause "stopped"). Returns 0, or -1 with *cause set.
 */
int sqlite_db_load(struct sqlite_db *db, int (*cb)(struct job *job, void *arg),
    void *arg,
    char **cause);

/* A new NULL-terminated copy of job id's stored environment into *env.
 * 0, or -1 with *cause set. */
int sqlite_db_env(struct sqlite_db *db, uint64_t id, char ***env, char **cause);

/* The paused priorities' names, each handed to cb (borrowed for the call).
 * 0, or -1 with *cause set. */
int sqlite_db_paused(struct sqlite_db *db,
    void (*cb)(const char *name, void *arg), void *arg, char **cause);
/* Inside a transaction: the paused priorities become exactly names[0..n). */
int sqlite_db_set_paused(struct sqlite_db *db, char *const *names, size_t n,
    char **cause);

/* The largest id ever stored, deleted ones included (0 when none). */
int sqlite_db_max_id(struct sqlite_db *db, uint64_t *id, char **cause);

/* One transaction around any number of writes. Each returns 0, or -1 with
 * *cause set (the SQLite message); after a failure, sqlite_db_rollback.
 * sqlite_db_insert writes every column; sqlite_db_update only what a job's life
 * changes (state, times, pid, exit, reason, attempt, retries, seq, usage): the
 * rest, argv and env among it, is as inserted. */
int sqlite_db_begin(struct sqlite_db *db, char **cause);
/*
 * Outside a transaction: full (the default) makes the next commits wait
 * for the disk, so they survive a power loss; otherwise they survive a
 * crash of the process but a power loss may undo the last ones (WAL with
 * synchronous=NORMAL). 0, or -1 with *cause set.
 */
int sqlite_db_set_sync(struct sqlite_db *db, bool full, char **cause);
int sqlite_db_insert(struct sqlite_db *db, const struct job *job, char **cause);
/*
 * The same for SQLITE_DB_INSERT_ROWS jobs at once, in one statement: SQLite's
 * work per statement (AUTOINCREMENT's bookkeeping among it) is then shared.
 */
#define SQLITE_DB_INSERT_ROWS 16
int sqlite_db_insert_rows(struct sqlite_db *db, const struct job *const *jobs,
    char **cause);
int sqlite_db_update(struct sqlite_db *db, const struct job *job, char **cause);
int sqlite_db_delete(struct sqlite_db *db, uint64_t id, char **cause);
int sqlite_db_commit(struct sqlite_db *db, char **cause);
void sqlite_db_rollback(struct sqlite_db *db);

/*
 * Up to max ids of terminal jobs that finished before before_ms, oldest
 * first, into ids; sets *n. Returns 0, or -1 with *cause set.
 */
int sqlite_db_expired(struct sqlite_db *db, int64_t before_ms, uint64_t *ids,
    size_t max,
    size_t *n, char **cause);

#endif
