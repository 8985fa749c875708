/* sqlite-db.c - the job database: opening it (0600, WAL, synchronous=FULL,
 * schema brought up to date), its transactions, and the statements the store
 * runs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cause.h"
#include "sqlite-ckpt.h"
#include "sqlite-db.h"
#include "sqlite-private.h"
#include "job.h"
#include "jobcols.h"
#include "jobrow.h"

/* How long a write waits for a reader such as an operator's sqlite3 shell
 * holding a lock, before it fails with "database is locked". */
#define SQLITE_DB_BUSY_TIMEOUT_MS 5000

enum sqlite_db_stmt {
	SQLITE_DB_BEGIN,
	SQLITE_DB_COMMIT,
	SQLITE_DB_ROLLBACK,
	SQLITE_DB_INSERT,
	SQLITE_DB_UPDATE,
	SQLITE_DB_DELETE,
	SQLITE_DB_LOAD,
	SQLITE_DB_EXPIRED,
	SQLITE_DB_MAX_ID,
	SQLITE_DB_ENV,
	SQLITE_DB_PAUSED,
	SQLITE_DB_PAUSED_CLEAR,
	SQLITE_DB_PAUSED_ADD,
	SQLITE_DB_SYNC_FULL,
	SQLITE_DB_SYNC_NORMAL,
};
#define SQLITE_DB_NSTMTS (SQLITE_DB_SYNC_NORMAL + 1)

static const char *const sqlite_db_sql[SQLITE_DB_NSTMTS] = {
	/* IMMEDIATE takes the write lock at once, so a busy file shows up
	 * here rather than half way through a group of writes. */
	[SQLITE_DB_BEGIN] = "BEGIN IMMEDIATE",
	[SQLITE_DB_COMMIT] = "COMMIT",
	[SQLITE_DB_ROLLBACK] = "ROLLBACK",
	/* INSERT and UPDATE are made from the columns (jobcols.h), below. */
	[SQLITE_DB_DELETE] = "DELETE FROM jobs WHERE id = ?1",
	[SQLITE_DB_LOAD] = "SELECT " JOBCOLS_NAMES
	    " FROM jobs ORDER BY id",
	/* The state test is the WHERE of the partial index jobs_finished,
	 * word for word: that is how SQLite knows the index covers it. The
	 * index's entries end with the rowid, so the ORDER BY costs nothing. */
	[SQLITE_DB_EXPIRED] = "SELECT id FROM jobs"
	    " WHERE state NOT IN ('queued','running') AND finished_at < ?1"
	    " ORDER BY finished_at, id LIMIT ?2",
	/* AUTOINCREMENT keeps the largest id ever used, deleted or not. */
	[SQLITE_DB_MAX_ID]
	    = "SELECT seq FROM sqlite_sequence WHERE name = 'jobs'",
	[SQLITE_DB_ENV] = "SELECT env FROM jobs WHERE id = ?1",
	[SQLITE_DB_PAUSED] = "SELECT priority FROM paused ORDER BY priority",
	[SQLITE_DB_PAUSED_CLEAR] = "DELETE FROM paused",
	[SQLITE_DB_PAUSED_ADD] = "INSERT INTO paused (priority) VALUES (?1)",
	/* Switched between a loop turn's two transactions: prepared once,
	 * not parsed each time. */
	[SQLITE_DB_SYNC_FULL] = "PRAGMA synchronous = FULL",
	[SQLITE_DB_SYNC_NORMAL] = "PRAGMA synchronous = NORMAL",
};

struct sqlite_db {
	sqlite3 *sq;
	sqlite3_stmt *stmt[SQLITE_DB_NSTMTS];
	/* SQLITE_DB_INSERT of SQLITE_DB_INSERT_ROWS rows */
	sqlite3_stmt *insert_rows;
	bool full_sync;		/* synchronous is FULL now, else NORMAL */
	/* The checkpoints' thread; NULL: sq makes its own (no thread). */
	struct sqlite_ckpt *ckpt;
};

/* Creates path 0600 if missing: SQLite would create it 0644 less the umask,
 * and its -wal and -shm files take the database's mode. */
static int
sqlite_db_create(const char *path, char **cause)
{
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return cause_fail(cause, "cannot open %s: %s", path,
		    strerror(errno));
	close(fd);
	return 0;
}

/* Debian's SQLite reads "file:..." names as URIs; "./file:..." is a path. */
static int
sqlite_db_sqlite_open(struct sqlite_db *db, const char *path, char **cause)
{
	char *dotted = NULL;
	int rc;

	if (strncmp(path, "file:", 5) == 0 &&
	    asprintf(&dotted, "./%s", path) == -1)
		return cause_fail(cause, "out of memory");
	rc = sqlite3_open_v2(dotted != NULL ? dotted : path, &db->sq,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
	    SQLITE_OPEN_EXRESCODE, NULL);
	free(dotted);
	if (rc != SQLITE_OK)
		return cause_fail(cause, "cannot open %s: %s", path,
		    db->sq != NULL ? sqlite3_errmsg(db->sq) :
		    sqlite3_errstr(rc));
	return 0;
}

/* WAL: readers never block the writer, and a commit is one append and one
 * fsync. The pragma answers with the mode it got, which must be "wal". */
static int
sqlite_db_wal(struct sqlite_db *db, const char *path, char **cause)
{
	sqlite3_stmt *st;
	const char *mode;
	int rc;

	rc = sqlite3_prepare_v2(db->sq, "PRAGMA journal_mode = WAL", -1, &st,
	    NULL);
	if (rc != SQLITE_OK)
		return cause_fail(cause, "cannot set WAL mode on %s: %s", path,
		    sqlite3_errmsg(db->sq));
	if (sqlite3_step(st) != SQLITE_ROW) {
		cause_fail(cause, "cannot set WAL mode on %s: %s", path,
		    sqlite3_errmsg(db->sq));
		sqlite3_finalize(st);
		return -1;
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	if (mode == NULL || strcmp(mode, "wal") != 0) {
		cause_fail(cause,
		    "cannot set WAL mode on %s: journal mode stays "
		    "%s", path, mode != NULL ? mode : "unknown");
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

/* The INSERT of nrows rows, row k's parameters after k * JOBROW_NCOLUMNS
 * others. Allocated; NULL when out of memory. */
static char *
sqlite_db_insert_sql(int nrows)
{
	char *sql = NULL, *values;
	size_t len;
	FILE *f;
	bool failed;
	int k;

	if ((f = open_memstream(&sql, &len)) == NULL)
		return NULL;
	fputs("INSERT INTO jobs (" JOBCOLS_NAMES ") VALUES ", f);
	for (k = 0; k < nrows; k++) {
		values = jobcols_values('?', k * JOBROW_NCOLUMNS + 1);
		if (values == NULL)
			break;
		fprintf(f, "%s(%s)", k > 0 ? ", " : "", values);
		free(values);
	}
	failed = k < nrows || ferror(f) != 0;
	if (fclose(f) != 0 || failed) {
		free(sql);
		return NULL;
	}
	return sql;
}

/* The UPDATE of what a job's life changes, by the INSERT's parameters.
 * Allocated; NULL when out of memory. */
static char *
sqlite_db_update_sql(void)
{
	char *sql, *set;

	if ((set = jobcols_set('?', true)) == NULL ||
	    asprintf(&sql, "UPDATE jobs SET %s WHERE id = ?1", set) == -1)
		sql = NULL;
	free(set);
	return sql;
}

static int
sqlite_db_prepare(struct sqlite_db *db, const char *path, char **cause)
{
	char *sql;
	int i, rc;

	for (i = 0; i < SQLITE_DB_NSTMTS; i++) {
		sql = NULL;
		if (sqlite_db_sql[i] == NULL && (sql = i == SQLITE_DB_INSERT ?
		    sqlite_db_insert_sql(1) : sqlite_db_update_sql()) == NULL)
			return cause_fail(cause, "out of memory");
		rc = sqlite3_prepare_v3(db->sq, sql != NULL ? sql :
		    sqlite_db_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
		    &db->stmt[i], NULL);
		free(sql);
		if (rc != SQLITE_OK)
			return cause_fail(cause, "cannot use %s: %s", path,
			    sqlite3_errmsg(db->sq));
	}
	if ((sql = sqlite_db_insert_sql(SQLITE_DB_INSERT_ROWS)) == NULL)
		return cause_fail(cause, "out of memory");
	rc = sqlite3_prepare_v3(db->sq, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &db->insert_rows, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return cause_fail(cause, "cannot use %s: %s", path,
		    sqlite3_errmsg(db->sq));
	return 0;
}

struct sqlite_db *
sqlite_db_open(const char *path, char **cause)
{
	struct sqlite_db *db;
	char *ckpt_cause = NULL;
	int version;

	if (sqlite_db_create(path, cause) == -1)
		return NULL;
	if ((db = calloc(1, sizeof *db)) == NULL) {
		cause_fail(cause, "out of memory");
		return NULL;
	}
	if (sqlite_db_sqlite_open(db, path, cause) == -1)
		goto fail;
	if (sqlite3_busy_timeout(db->sq, SQLITE_DB_BUSY_TIMEOUT_MS) !=
	    SQLITE_OK) {
		cause_fail(cause, "cannot open %s: %s", path,
		    sqlite3_errmsg(db->sq));
		goto fail;
	}

	/* Refuse garbage and newer files before changing anything in them. */
	if (sqlite_schema_check(db->sq, path, &version, cause) == -1 ||
	    sqlite_db_wal(db, path, cause) == -1)
		goto fail;
	/* FULL: a commit returns only once the WAL is on disk, so a committed
	 * transaction survives a power loss. */
	if (sqlite3_exec(db->sq, "PRAGMA synchronous = FULL", NULL, NULL,
	    NULL) != SQLITE_OK) {
		cause_fail(cause, "cannot set synchronous=FULL on %s: %s", path,
		    sqlite3_errmsg(db->sq));
		goto fail;
	}
	db->full_sync = true;
	if (sqlite_schema_migrate(db->sq, path, cause) == -1 ||
	    sqlite_db_prepare(db, path, cause) == -1)
		goto fail;
	/* Without the thread, the commits checkpoint as SQLite's default
	 * has them: slower at depth, no less safe. */
	db->ckpt = sqlite_ckpt_start(db->sq, &ckpt_cause);
	free(ckpt_cause);
	return db;

fail:
	sqlite_db_close(db);
	return NULL;
}

void
sqlite_db_close(struct sqlite_db *db)
{
	int i;

	if (db == NULL)
		return;
	/* Before sq's close, which makes the last checkpoint. */
	sqlite_ckpt_stop(db->ckpt);
	for (i = 0; i < SQLITE_DB_NSTMTS; i++)
		sqlite3_finalize(db->stmt[i]);
	sqlite3_finalize(db->insert_rows);
	/* Rolls back an open transaction; the last connection to go also
	 * checkpoints the WAL into the database and removes it. */
	sqlite3_close(db->sq);
	free(db);
}

/* Ready for the next use. sqlite3_reset's code repeats the step's, already
 * handled; clearing the bindings drops borrowed strings. */
static void
sqlite_db_reset(sqlite3_stmt *st)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

int
sqlite_db_load(struct sqlite_db *db, int (*cb)(struct job *job, void *arg),
    void *arg, char **cause)
{
	sqlite3_stmt *st = db->stmt[SQLITE_DB_LOAD];
	struct jobrow_cache cache = { 0 };
	struct job *job;
	int rc, ret = -1;

	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			cause_fail(cause, "cannot load jobs: %s",
			    sqlite3_errmsg(db->sq));
			goto out;
		}
		if ((job = sqlite_row_read(st, &cache, cause)) == NULL)
			goto out;
		if (cb(job, arg) != 0) {
			cause_fail(cause, "stopped");
			goto out;
		}
	}
	ret = 0;
out:
	jobrow_cache_clear(&cache);
	/* Also ends the read transaction, which would hold back
	 * checkpoints. */
	sqlite_db_reset(st);
	return ret;
}

int
sqlite_db_max_id(struct sqlite_db *db, uint64_t *id, char **cause)
{
	sqlite3_stmt *st = db->stmt[SQLITE_DB_MAX_ID];
	int rc, ret = 0;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = (uint64_t)sqlite3_column_int64(st, 0);
	else if (rc == SQLITE_DONE)
		*id = 0;	/* no job ever inserted */
	else
		ret = cause_fail(cause, "cannot read the largest job id: %s",
		    sqlite3_errmsg(db->sq));
	sqlite_db_reset(st);
	return ret;
}

int
sqlite_db_env(struct sqlite_db *db, uint64_t id, char ***env, char **cause)
{
	sqlite3_stmt *st = db->stmt[SQLITE_DB_ENV];
	int rc, ret;

	if (sqlite3_bind_int64(st, 1, (int64_t)id) != SQLITE_OK) {
		sqlite_db_reset(st);
		return cause_fail(cause, "cannot look up job %" PRIu64 ": %s",
		    id,
		    sqlite3_errmsg(db->sq));
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ret = sqlite_row_env(st, id, env, cause);
	else if (rc == SQLITE_DONE)
		ret = cause_fail(cause, "job %" PRIu64
		    " is not in the database",
		    id);
	else
		ret = cause_fail(cause, "cannot look up job %" PRIu64 ": %s",
		    id,
		    sqlite3_errmsg(db->sq));
	sqlite_db_reset(st);
	return ret;
}

/* Steps st, which returns no row, and resets it. what names the operation for
 * the message. */
static int
sqlite_db_run(struct sqlite_db *db, sqlite3_stmt *st, char **cause,
    const char *what, uint64_t id)
{
	int ret = 0;

	if (sqlite3_step(st) != SQLITE_DONE) {
		if (id != 0)
			ret = cause_fail(cause, "cannot %s job %" PRIu64 ": %s",
			    what, id, sqlite3_errmsg(db->sq));
		else
			ret = cause_fail(cause, "cannot %s: %s", what,
			    sqlite3_errmsg(db->sq));
	}
	sqlite_db_reset(st);
	return ret;
}

int
sqlite_db_paused(struct sqlite_db *db, void (*cb)(const char *name, void *arg),
    void *arg,
    char **cause)
{
	sqlite3_stmt *st = db->stmt[SQLITE_DB_PAUSED];
	const unsigned char *name;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((name = sqlite3_column_text(st, 0)) != NULL)
			cb((const char *)name, arg);
	sqlite_db_reset(st);
	if (rc != SQLITE_DONE)
		return cause_fail(cause,
		    "cannot read the paused priorities: %s",
		    sqlite3_errmsg(db->sq));
	return 0;
}

int
sqlite_db_set_paused(struct sqlite_db *db, char *const *names, size_t n, char
    **cause)
{
	sqlite3_stmt *st = db->stmt[SQLITE_DB_PAUSED_ADD];
	size_t i;

	if (sqlite_db_run(db, db->stmt[SQLITE_DB_PAUSED_CLEAR], cause,
	    "clear the paused "
	    "priorities", 0) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC) !=
		    SQLITE_OK) {
			sqlite_db_reset(st);
			return cause_fail(cause,
			    "cannot store a paused priority: "
			    "%s", sqlite3_errmsg(db->sq));
		}
		if (sqlite_db_run(db, st, cause, "store a paused priority", 0)
		    != 0)
			return -1;
	}
	return 0;
}

int
sqlite_db_set_sync(struct sqlite_db *db, bool full, char **cause)
{
	if (db->full_sync == full)
		return 0;
	if (sqlite_db_run(db, db->stmt[full ? SQLITE_DB_SYNC_FULL :
	    SQLITE_DB_SYNC_NORMAL], cause, "set synchronous", 0) != 0)
		return -1;
	db->full_sync = full;
	return 0;
}

int
sqlite_db_begin(struct sqlite_db *db, char **cause)
{
	return sqlite_db_run(db, db->stmt[SQLITE_DB_BEGIN], cause,
	    "begin a transaction", 0);
}

int
sqlite_db_commit(struct sqlite_db *db, char **cause)
{
	return sqlite_db_run(db, db->stmt[SQLITE_DB_COMMIT], cause, "commit",
	    0);
}

void
sqlite_db_rollback(struct sqlite_db *db)
{
	/* Some errors (a full disk, an I/O error) roll back by themselves. */
	if (!sqlite3_get_autocommit(db->sq))
		sqlite_db_run(db, db->stmt[SQLITE_DB_ROLLBACK], NULL,
		    "roll back", 0);
}

int
sqlite_db_insert(struct sqlite_db *db, const struct job *job, char **cause)
{
	sqlite3_stmt *st = db->stmt[SQLITE_DB_INSERT];

	if (sqlite_row_bind(st, job, true, cause) == -1) {
		sqlite_db_reset(st);
		return -1;
	}
	return sqlite_db_run(db, st, cause, "insert", job->id);
}

int
sqlite_db_insert_rows(struct sqlite_db *db, const struct job *const *jobs, char
    **cause)
{
	sqlite3_stmt *st = db->insert_rows;
	int k;

	for (k = 0; k < SQLITE_DB_INSERT_ROWS; k++)
		if (sqlite_row_bind_at(st, k * JOBROW_NCOLUMNS, jobs[k],
		    true,
		    cause) == -1) {
			sqlite_db_reset(st);
			return -1;
		}
	if (sqlite3_step(st) != SQLITE_DONE) {
		cause_fail(cause, "cannot insert jobs %" PRIu64 " to %" PRIu64
		    ": %s", jobs[0]->id, jobs[SQLITE_DB_INSERT_ROWS - 1]->id,
		    sqlite3_errmsg(db->sq));
		sqlite_db_reset(st);
		return -1;
	}
	sqlite_db_reset(st);
	return 0;
}

int
sqlite_db_update(struct sqlite_db *db, const struct job *job, char **cause)
{
	sqlite3_stmt *st = db->stmt[SQLITE_DB_UPDATE];

	if (sqlite_row_bind(st, job, false, cause) == -1) {
		sqlite_db_reset(st);
		return -1;
	}
	if (sqlite_db_run(db, st, cause, "update", job->id) == -1)
		return -1;
	/* Updating a job that was never inserted would lose it silently. */
	if (sqlite3_changes(db->sq) != 1)
		return cause_fail(cause, "cannot update job %" PRIu64
		    ": not in "
		    "the database", job->id);
	return 0;
}

int
sqlite_db_delete(struct sqlite_db *db, uint64_t id, char **cause)
{
	sqlite3_stmt *st = db->stmt[SQLITE_DB_DELETE];

	/* Deleting what is not there is not an error: the end is the same. */
	if (id > INT64_MAX)
		return 0;
	if (sqlite3_bind_int64(st, 1, (sqlite3_int64)id) != SQLITE_OK) {
		cause_fail(cause, "cannot delete job %" PRIu64 ": %s", id,
		    sqlite3_errmsg(db->sq));
		sqlite_db_reset(st);
		return -1;
	}
	return sqlite_db_run(db, st, cause, "delete", id);
}

int
sqlite_db_expired(struct sqlite_db *db, int64_t before_ms, uint64_t *ids, size_t
    max,
    size_t *n, char **cause)
{
	sqlite3_stmt *st = db->stmt[SQLITE_DB_EXPIRED];
	int rc, ret = -1;

	*n = 0;
	if (max == 0)
		return 0;
	if (sqlite3_bind_int64(st, 1, before_ms) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2,
	    max > INT64_MAX ? INT64_MAX : (sqlite3_int64)max) != SQLITE_OK) {
		cause_fail(cause, "cannot find expired jobs: %s",
		    sqlite3_errmsg(db->sq));
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < max)
		ids[(*n)++] = (uint64_t)sqlite3_column_int64(st, 0);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		cause_fail(cause, "cannot find expired jobs: %s",
		    sqlite3_errmsg(db->sq));
		*n = 0;
		goto out;
	}
	ret = 0;
out:
	sqlite_db_reset(st);
	return ret;
}

uint64_t
sqlite_db_checkpoints(struct sqlite_db *db)
{
	return db->ckpt != NULL ? sqlite_ckpt_count(db->ckpt) : 0;
}
