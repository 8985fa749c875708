/* db.c - the job database: opening it (0600, WAL, synchronous=FULL, schema
 * brought up to date), its transactions, and the statements the store runs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "db-private.h"
#include "job.h"

/* How long a write waits for a reader such as an operator's sqlite3 shell
 * holding a lock, before it fails with "database is locked". */
#define DB_BUSY_TIMEOUT_MS 5000

enum db_stmt {
	DB_BEGIN,
	DB_COMMIT,
	DB_ROLLBACK,
	DB_INSERT,
	DB_UPDATE,
	DB_DELETE,
	DB_LOAD,
	DB_EXPIRED,
	DB_MAX_ID,
	DB_ENV,
	DB_PAUSED,
	DB_PAUSED_CLEAR,
	DB_PAUSED_ADD,
};
#define DB_NSTMTS (DB_PAUSED_ADD + 1)

static const char *const db_sql[DB_NSTMTS] = {
	/* IMMEDIATE takes the write lock at once, so a busy file shows up
	 * here rather than half way through a group of writes. */
	[DB_BEGIN] = "BEGIN IMMEDIATE",
	[DB_COMMIT] = "COMMIT",
	[DB_ROLLBACK] = "ROLLBACK",
	[DB_INSERT] = "INSERT INTO jobs (id, " DB_ROW_COLUMNS ")"
	    " VALUES (?1, " DB_ROW_PARAMS ")",
	[DB_UPDATE] = "UPDATE jobs SET " DB_ROW_CHANGES_SET " WHERE id = ?1",
	[DB_DELETE] = "DELETE FROM jobs WHERE id = ?1",
	[DB_LOAD] = "SELECT id, " DB_ROW_COLUMNS " FROM jobs ORDER BY id",
	/* The state test is the WHERE of the partial index jobs_finished,
	 * word for word: that is how SQLite knows the index covers it. The
	 * index's entries end with the rowid, so the ORDER BY costs nothing. */
	[DB_EXPIRED] = "SELECT id FROM jobs"
	    " WHERE state NOT IN ('queued','running') AND finished_at < ?1"
	    " ORDER BY finished_at, id LIMIT ?2",
	/* AUTOINCREMENT keeps the largest id ever used, deleted or not. */
	[DB_MAX_ID] = "SELECT seq FROM sqlite_sequence WHERE name = 'jobs'",
	[DB_ENV] = "SELECT env FROM jobs WHERE id = ?1",
	[DB_PAUSED] = "SELECT priority FROM paused ORDER BY priority",
	[DB_PAUSED_CLEAR] = "DELETE FROM paused",
	[DB_PAUSED_ADD] = "INSERT INTO paused (priority) VALUES (?1)",
};

struct db {
	sqlite3 *sq;
	sqlite3_stmt *stmt[DB_NSTMTS];
	sqlite3_stmt *insert_rows;	/* DB_INSERT of DB_INSERT_ROWS rows */
	bool full_sync;		/* synchronous is FULL now, else NORMAL */
};

int
db_fail(char **cause, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (cause == NULL)
		return -1;
	va_start(ap, fmt);
	n = vasprintf(cause, fmt, ap);
	va_end(ap);
	if (n < 0)
		*cause = strdup("out of memory");
	return -1;
}

/* Creates path 0600 if missing: SQLite would create it 0644 less the umask,
 * and its -wal and -shm files take the database's mode. */
static int
db_create(const char *path, char **cause)
{
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return db_fail(cause, "cannot open %s: %s", path,
		    strerror(errno));
	close(fd);
	return 0;
}

/* Debian's SQLite reads "file:..." names as URIs; "./file:..." is a path. */
static int
db_sqlite_open(struct db *db, const char *path, char **cause)
{
	char *dotted = NULL;
	int rc;

	if (strncmp(path, "file:", 5) == 0 &&
	    asprintf(&dotted, "./%s", path) == -1)
		return db_fail(cause, "out of memory");
	rc = sqlite3_open_v2(dotted != NULL ? dotted : path, &db->sq,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
	    SQLITE_OPEN_EXRESCODE, NULL);
	free(dotted);
	if (rc != SQLITE_OK)
		return db_fail(cause, "cannot open %s: %s", path,
		    db->sq != NULL ? sqlite3_errmsg(db->sq) :
		    sqlite3_errstr(rc));
	return 0;
}

/* WAL: readers never block the writer, and a commit is one append and one
 * fsync. The pragma answers with the mode it got, which must be "wal". */
static int
db_wal(struct db *db, const char *path, char **cause)
{
	sqlite3_stmt *st;
	const char *mode;
	int rc;

	rc = sqlite3_prepare_v2(db->sq, "PRAGMA journal_mode = WAL", -1, &st,
	    NULL);
	if (rc != SQLITE_OK)
		return db_fail(cause, "cannot set WAL mode on %s: %s", path,
		    sqlite3_errmsg(db->sq));
	if (sqlite3_step(st) != SQLITE_ROW) {
		db_fail(cause, "cannot set WAL mode on %s: %s", path,
		    sqlite3_errmsg(db->sq));
		sqlite3_finalize(st);
		return -1;
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	if (mode == NULL || strcmp(mode, "wal") != 0) {
		db_fail(cause, "cannot set WAL mode on %s: journal mode stays "
		    "%s", path, mode != NULL ? mode : "unknown");
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

/*
 * INSERT of DB_INSERT_ROWS rows, row k's parameters after k *
 * DB_ROW_NPARAMS others. Allocated; NULL when out of memory.
 */
static char *
db_insert_rows_sql(void)
{
	static const char head[] = "INSERT INTO jobs (id, " DB_ROW_COLUMNS
	    ") VALUES ";
	/* "?NNN, " at most, per parameter. */
	size_t size = sizeof head + DB_INSERT_ROWS * (DB_ROW_NPARAMS * 6 + 4);
	size_t len;
	char *sql;
	int k, i;

	if ((sql = malloc(size)) == NULL)
		return NULL;
	len = (size_t)snprintf(sql, size, "%s", head);
	for (k = 0; k < DB_INSERT_ROWS; k++)
		for (i = 1; i <= DB_ROW_NPARAMS; i++)
			len += (size_t)snprintf(sql + len, size - len, "%s?%d%s",
			    i == 1 ? (k == 0 ? "(" : ", (") : "",
			    k * DB_ROW_NPARAMS + i,
			    i == DB_ROW_NPARAMS ? ")" : ", ");
	return sql;
}

static int
db_prepare(struct db *db, const char *path, char **cause)
{
	char *sql;
	int i, rc;

	for (i = 0; i < DB_NSTMTS; i++)
		if (sqlite3_prepare_v3(db->sq, db_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &db->stmt[i], NULL) != SQLITE_OK)
			return db_fail(cause, "cannot use %s: %s", path,
			    sqlite3_errmsg(db->sq));
	if ((sql = db_insert_rows_sql()) == NULL)
		return db_fail(cause, "out of memory");
	rc = sqlite3_prepare_v3(db->sq, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &db->insert_rows, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return db_fail(cause, "cannot use %s: %s", path,
		    sqlite3_errmsg(db->sq));
	return 0;
}

struct db *
db_open(const char *path, char **cause)
{
	struct db *db;
	int version;

	if (db_create(path, cause) == -1)
		return NULL;
	if ((db = calloc(1, sizeof *db)) == NULL) {
		db_fail(cause, "out of memory");
		return NULL;
	}
	if (db_sqlite_open(db, path, cause) == -1)
		goto fail;
	if (sqlite3_busy_timeout(db->sq, DB_BUSY_TIMEOUT_MS) != SQLITE_OK) {
		db_fail(cause, "cannot open %s: %s", path,
		    sqlite3_errmsg(db->sq));
		goto fail;
	}

	/* Refuse garbage and newer files before changing anything in them. */
	if (db_schema_check(db->sq, path, &version, cause) == -1 ||
	    db_wal(db, path, cause) == -1)
		goto fail;
	/* FULL: a commit returns only once the WAL is on disk, so a committed
	 * transaction survives a power loss. */
	if (sqlite3_exec(db->sq, "PRAGMA synchronous = FULL", NULL, NULL,
	    NULL) != SQLITE_OK) {
		db_fail(cause, "cannot set synchronous=FULL on %s: %s", path,
		    sqlite3_errmsg(db->sq));
		goto fail;
	}
	db->full_sync = true;
	if (db_schema_migrate(db->sq, path, cause) == -1 ||
	    db_prepare(db, path, cause) == -1)
		goto fail;
	return db;

fail:
	db_close(db);
	return NULL;
}

void
db_close(struct db *db)
{
	int i;

	if (db == NULL)
		return;
	for (i = 0; i < DB_NSTMTS; i++)
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
db_reset(sqlite3_stmt *st)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

int
db_load(struct db *db, int (*cb)(struct job *job, void *arg), void *arg,
    char **cause)
{
	sqlite3_stmt *st = db->stmt[DB_LOAD];
	struct db_row_cache cache = { 0 };
	struct job *job;
	int rc, ret = -1;

	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			db_fail(cause, "cannot load jobs: %s",
			    sqlite3_errmsg(db->sq));
			goto out;
		}
		if ((job = db_row_read(st, &cache, cause)) == NULL)
			goto out;
		if (cb(job, arg) != 0) {
			db_fail(cause, "stopped");
			goto out;
		}
	}
	ret = 0;
out:
	db_row_cache_clear(&cache);
	/* Also ends the read transaction, which would hold back
	 * checkpoints. */
	db_reset(st);
	return ret;
}

int
db_max_id(struct db *db, uint64_t *id, char **cause)
{
	sqlite3_stmt *st = db->stmt[DB_MAX_ID];
	int rc, ret = 0;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = (uint64_t)sqlite3_column_int64(st, 0);
	else if (rc == SQLITE_DONE)
		*id = 0;	/* no job ever inserted */
	else
		ret = db_fail(cause, "cannot read the largest job id: %s",
		    sqlite3_errmsg(db->sq));
	db_reset(st);
	return ret;
}

int
db_env(struct db *db, uint64_t id, char ***env, char **cause)
{
	sqlite3_stmt *st = db->stmt[DB_ENV];
	int rc, ret;

	if (sqlite3_bind_int64(st, 1, (int64_t)id) != SQLITE_OK) {
		db_reset(st);
		return db_fail(cause, "cannot look up job %" PRIu64 ": %s", id,
		    sqlite3_errmsg(db->sq));
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ret = db_row_env(st, id, env, cause);
	else if (rc == SQLITE_DONE)
		ret = db_fail(cause, "job %" PRIu64 " is not in the database",
		    id);
	else
		ret = db_fail(cause, "cannot look up job %" PRIu64 ": %s", id,
		    sqlite3_errmsg(db->sq));
	db_reset(st);
	return ret;
}

/* Steps st, which returns no row, and resets it. what names the operation for
 * the message. */
static int
db_run(struct db *db, sqlite3_stmt *st, char **cause, const char *what,
    uint64_t id)
{
	int ret = 0;

	if (sqlite3_step(st) != SQLITE_DONE) {
		if (id != 0)
			ret = db_fail(cause, "cannot %s job %" PRIu64 ": %s",
			    what, id, sqlite3_errmsg(db->sq));
		else
			ret = db_fail(cause, "cannot %s: %s", what,
			    sqlite3_errmsg(db->sq));
	}
	db_reset(st);
	return ret;
}

int
db_paused(struct db *db, void (*cb)(const char *name, void *arg), void *arg,
    char **cause)
{
	sqlite3_stmt *st = db->stmt[DB_PAUSED];
	const unsigned char *name;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((name = sqlite3_column_text(st, 0)) != NULL)
			cb((const char *)name, arg);
	db_reset(st);
	if (rc != SQLITE_DONE)
		return db_fail(cause, "cannot read the paused priorities: %s",
		    sqlite3_errmsg(db->sq));
	return 0;
}

int
db_set_paused(struct db *db, char *const *names, size_t n, char **cause)
{
	sqlite3_stmt *st = db->stmt[DB_PAUSED_ADD];
	size_t i;

	if (db_run(db, db->stmt[DB_PAUSED_CLEAR], cause, "clear the paused "
	    "priorities", 0) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC) !=
		    SQLITE_OK) {
			db_reset(st);
			return db_fail(cause, "cannot store a paused priority: "
			    "%s", sqlite3_errmsg(db->sq));
		}
		if (db_run(db, st, cause, "store a paused priority", 0) != 0)
			return -1;
	}
	return 0;
}

int
db_set_sync(struct db *db, bool full, char **cause)
{
	if (db->full_sync == full)
		return 0;
	if (sqlite3_exec(db->sq, full ? "PRAGMA synchronous = FULL" :
	    "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(cause, "cannot set synchronous: %s",
		    sqlite3_errmsg(db->sq));
	db->full_sync = full;
	return 0;
}

int
db_begin(struct db *db, char **cause)
{
	return db_run(db, db->stmt[DB_BEGIN], cause, "begin a transaction", 0);
}

int
db_commit(struct db *db, char **cause)
{
	return db_run(db, db->stmt[DB_COMMIT], cause, "commit", 0);
}

void
db_rollback(struct db *db)
{
	/* Some errors (a full disk, an I/O error) roll back by themselves. */
	if (!sqlite3_get_autocommit(db->sq))
		db_run(db, db->stmt[DB_ROLLBACK], NULL, "roll back", 0);
}

int
db_insert(struct db *db, const struct job *job, char **cause)
{
	sqlite3_stmt *st = db->stmt[DB_INSERT];

	if (db_row_bind(st, job, true, cause) == -1) {
		db_reset(st);
		return -1;
	}
	return db_run(db, st, cause, "insert", job->id);
}

int
db_insert_rows(struct db *db, const struct job *const *jobs, char **cause)
{
	sqlite3_stmt *st = db->insert_rows;
	int k;

	for (k = 0; k < DB_INSERT_ROWS; k++)
		if (db_row_bind_at(st, k * DB_ROW_NPARAMS, jobs[k], true,
		    cause) == -1) {
			db_reset(st);
			return -1;
		}
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_fail(cause, "cannot insert jobs %" PRIu64 " to %" PRIu64
		    ": %s", jobs[0]->id, jobs[DB_INSERT_ROWS - 1]->id,
		    sqlite3_errmsg(db->sq));
		db_reset(st);
		return -1;
	}
	db_reset(st);
	return 0;
}

int
db_update(struct db *db, const struct job *job, char **cause)
{
	sqlite3_stmt *st = db->stmt[DB_UPDATE];

	if (db_row_bind(st, job, false, cause) == -1) {
		db_reset(st);
		return -1;
	}
	if (db_run(db, st, cause, "update", job->id) == -1)
		return -1;
	/* Updating a job that was never inserted would lose it silently. */
	if (sqlite3_changes(db->sq) != 1)
		return db_fail(cause, "cannot update job %" PRIu64 ": not in "
		    "the database", job->id);
	return 0;
}

int
db_delete(struct db *db, uint64_t id, char **cause)
{
	sqlite3_stmt *st = db->stmt[DB_DELETE];

	/* Deleting what is not there is not an error: the end is the same. */
	if (id > INT64_MAX)
		return 0;
	if (sqlite3_bind_int64(st, 1, (sqlite3_int64)id) != SQLITE_OK) {
		db_fail(cause, "cannot delete job %" PRIu64 ": %s", id,
		    sqlite3_errmsg(db->sq));
		db_reset(st);
		return -1;
	}
	return db_run(db, st, cause, "delete", id);
}

int
db_expired(struct db *db, int64_t before_ms, uint64_t *ids, size_t max,
    size_t *n, char **cause)
{
	sqlite3_stmt *st = db->stmt[DB_EXPIRED];
	int rc, ret = -1;

	*n = 0;
	if (max == 0)
		return 0;
	if (sqlite3_bind_int64(st, 1, before_ms) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2,
	    max > INT64_MAX ? INT64_MAX : (sqlite3_int64)max) != SQLITE_OK) {
		db_fail(cause, "cannot find expired jobs: %s",
		    sqlite3_errmsg(db->sq));
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < max)
		ids[(*n)++] = (uint64_t)sqlite3_column_int64(st, 0);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		db_fail(cause, "cannot find expired jobs: %s",
		    sqlite3_errmsg(db->sq));
		*n = 0;
		goto out;
	}
	ret = 0;
out:
	db_reset(st);
	return ret;
}
