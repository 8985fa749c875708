/* db.h - the job database: SQLite in WAL mode, its versioned schema and
 * forward migrations, and the few statements the store needs. */
#ifndef TRIAGE_DB_H
#define TRIAGE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;
struct job;

/* The schema this code writes; older files are migrated on open. */
#define DB_SCHEMA_VERSION 7

/*
 * Opens the database at path, creating it if missing (mode 0600), in WAL
 * mode with synchronous=FULL, and migrates it to DB_SCHEMA_VERSION inside
 * one transaction. Returns NULL with *cause set (allocated, naming path)
 * when it cannot: unreadable, not a database, corrupt, or from a newer
 * version of triage (user_version above DB_SCHEMA_VERSION).
 */
struct db *db_open(const char *path, char **cause);
void db_close(struct db *db);

/*
 * Reads every job, in id order, into new jobs (job_new) handed to cb, which
 * owns them; cb returns 0 to go on or -1 to stop (then db_load returns -1
 * with *cause "stopped"). Returns 0, or -1 with *cause set.
 */
int db_load(struct db *db, int (*cb)(struct job *job, void *arg), void *arg,
    char **cause);

/* A new NULL-terminated copy of job id's stored environment into *env.
 * 0, or -1 with *cause set. */
int db_env(struct db *db, uint64_t id, char ***env, char **cause);

/* The paused priorities' names, each handed to cb (borrowed for the call).
 * 0, or -1 with *cause set. */
int db_paused(struct db *db, void (*cb)(const char *name, void *arg),
    void *arg, char **cause);
/* Inside a transaction: the paused priorities become exactly names[0..n). */
int db_set_paused(struct db *db, char *const *names, size_t n, char **cause);

/* The largest id ever stored, deleted ones included (0 when none). */
int db_max_id(struct db *db, uint64_t *id, char **cause);

/* One transaction around any number of writes. Each returns 0, or -1 with
 * *cause set (the SQLite message); after a failure, db_rollback. db_insert
 * writes every column; db_update only what a job's life changes (state,
 * times, pid, exit, reason, attempt, retries, seq, usage): the rest, argv
 * and env among it, is as inserted. */
int db_begin(struct db *db, char **cause);
/*
 * Outside a transaction: full (the default) makes the next commits wait
 * for the disk, so they survive a power loss; otherwise they survive a
 * crash of the process but a power loss may undo the last ones (WAL with
 * synchronous=NORMAL). 0, or -1 with *cause set.
 */
int db_set_sync(struct db *db, bool full, char **cause);
int db_insert(struct db *db, const struct job *job, char **cause);
/*
 * The same for DB_INSERT_ROWS jobs at once, in one statement: SQLite's work
 * per statement (AUTOINCREMENT's bookkeeping among it) is then shared.
 */
#define DB_INSERT_ROWS 16
int db_insert_rows(struct db *db, const struct job *const *jobs,
    char **cause);
int db_update(struct db *db, const struct job *job, char **cause);
int db_delete(struct db *db, uint64_t id, char **cause);
int db_commit(struct db *db, char **cause);
void db_rollback(struct db *db);

/*
 * Up to max ids of terminal jobs that finished before before_ms, oldest
 * first, into ids; sets *n. Returns 0, or -1 with *cause set.
 */
int db_expired(struct db *db, int64_t before_ms, uint64_t *ids, size_t max,
    size_t *n, char **cause);

#endif
