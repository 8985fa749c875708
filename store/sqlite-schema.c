/* sqlite-schema.c - the jobs table version by version, and the forward
 * migration that brings an older file up to SQLITE_SCHEMA_VERSION in one
 * transaction. */
#include <stdio.h>

#include <sqlite3.h>

#include "cause.h"
#include "sqlite-schema.h"

/*
  * Step i takes a file at user_version i to i + 1. A step that has shipped is
 * never edited, since files out there are at its result: a change is a new step
 * at the end and SQLITE_SCHEMA_VERSION in sqlite-db.h one higher. Times are ms
 * since the epoch; NULL stands for what the job keeps as "unknown"
 * (sqlite-row.c).
 */
static const char *const sqlite_db_schema_steps[] = {
	/* 0 -> 1: the base. */
	"CREATE TABLE jobs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" name TEXT NOT NULL,"
	" argv TEXT NOT NULL,"		/* JSON array of byte strings:
					 * strings, or {"base64": ...}
					 * where not UTF-8 (bytestr.h) */
	" env TEXT NOT NULL,"		/* JSON array of "K=V", the same */
	" cwd TEXT NOT NULL,"		/* a path, or {"base64": ...} */
	" priority TEXT NOT NULL,"
	" state TEXT NOT NULL,"		/* job_state_name() */
	" slots INTEGER NOT NULL,"
	" exclusive INTEGER NOT NULL,"
	" timeout_ms INTEGER NOT NULL,"
	" uid INTEGER NOT NULL,"
	" gid INTEGER NOT NULL,"
	" submitted_at INTEGER,"
	" started_at INTEGER,"
	" finished_at INTEGER,"
	" pid INTEGER,"
	" exit_code INTEGER,"
	" signal INTEGER,"
	" reason TEXT,"
	" attempt INTEGER NOT NULL,"
	" user_time REAL,"
	" system_time REAL,"
	" max_rss_kb INTEGER,"
	" stdout_truncated INTEGER NOT NULL DEFAULT 0,"
	" stderr_truncated INTEGER NOT NULL DEFAULT 0)",

	/* 1 -> 2: the order within a queue (the old rows keep their id order),
	 * automatic retries, dependencies as a JSON array of ids, and an index
	 * that finds the finished jobs to prune without reading the others. */
	"ALTER TABLE jobs ADD COLUMN seq INTEGER;"
	"UPDATE jobs SET seq = id;"
	"ALTER TABLE jobs ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN \"after\" TEXT;"
	"CREATE INDEX jobs_finished ON jobs(finished_at)"
	" WHERE state NOT IN ('queued','running')",

	/* 2 -> 3: whether the attempt was handed to a worker (recorded before
	 * its process starts, so that a crash always makes a new attempt), and
	 * the start time of its process, which tells that process apart from
	 * a later one with the same pid. */
	("ALTER TABLE jobs ADD COLUMN begun INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN start_ticks INTEGER"),

	/* 3 -> 4: the paused priorities, by name, so that a restart keeps
	 * them paused. */
	"CREATE TABLE paused (priority TEXT PRIMARY KEY)",

	/* 4 -> 5: protocol v1.1. Labels as a JSON object (NULL: none), held,
	 * the time before which a job does not start, the jobs it waits for
	 * whatever their outcome (a JSON array of ids), its nice value,
	 * stderr into stdout, and the bytes of each stream no longer stored
	 * (output_keep = tail). */
	("ALTER TABLE jobs ADD COLUMN labels TEXT;"
	"ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN begin_at INTEGER;"
	"ALTER TABLE jobs ADD COLUMN after_any TEXT;"
	"ALTER TABLE jobs ADD COLUMN nice INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN merge_output INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN stdout_dropped INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN stderr_dropped INTEGER NOT NULL DEFAULT 0"),

	/* 5 -> 6: the node an attempt runs or ran on, and the node a
	 * submission asked for (NULL: never started; any node). */
	("ALTER TABLE jobs ADD COLUMN node TEXT;"
	"ALTER TABLE jobs ADD COLUMN pinned_node TEXT"),

	/* 6 -> 7: the user a job runs as, by name, looked up on the node
	 * that runs it (NULL: by uid, as older rows did). */
	"ALTER TABLE jobs ADD COLUMN username TEXT",

	/* 7 -> 8: protocol v1.2's cgroups. The memory a job declared (NULL:
	 * none), whether it is frozen, the most memory its run used at once
	 * (NULL: unknown), whether it was killed for want of memory, and its
	 * cgroup while it runs (NULL: none). */
	("ALTER TABLE jobs ADD COLUMN memory INTEGER;"
	"ALTER TABLE jobs ADD COLUMN frozen INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN peak_memory INTEGER;"
	"ALTER TABLE jobs ADD COLUMN oom INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN cgroup TEXT"),

	/* 8 -> 9: protocol v1.2's resources. What a job asked for, a JSON
	 * object of resource name to count, and the units its attempt was
	 * given, a JSON object of resource name to an array of unit names
	 * (NULL: none, as for labels). */
	("ALTER TABLE jobs ADD COLUMN resources TEXT;"
	"ALTER TABLE jobs ADD COLUMN devices TEXT"),

	/* 9 -> 10: protocol v1.3. The submitter's idempotency key (NULL:
	 * none; no index: one daemon owns the file and finds a key in its
	 * memory). The bytes the last attempt left in TRIAGE_RESULT, as the
	 * wire carries them (a JSON string, or {"base64": ...}; NULL:
	 * none), and whether it wrote more than max_result. */
	("ALTER TABLE jobs ADD COLUMN \"key\" TEXT;"
	"ALTER TABLE jobs ADD COLUMN result TEXT;"
	"ALTER TABLE jobs ADD COLUMN result_truncated INTEGER NOT NULL"
	" DEFAULT 0"),
};

_Static_assert(sizeof sqlite_db_schema_steps / sizeof sqlite_db_schema_steps[0]
    ==
    SQLITE_SCHEMA_VERSION, "one migration step per schema version");

/* Runs sql, which returns one integer, into *v. Returns the SQLite code. */
static int
sqlite_schema_int(sqlite3 *sq, const char *sql, sqlite3_int64 *v)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = sqlite3_prepare_v2(sq, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

int
sqlite_schema_check(sqlite3 *sq, const char *path, int *version, char **cause)
{
	sqlite3_int64 v, ntables;
	int rc;

	/* The first read of the file: garbage shows up here as NOTADB. */
	rc = sqlite_schema_int(sq, "PRAGMA user_version", &v);
	if ((rc & 0xff) == SQLITE_NOTADB)
		return cause_fail(cause, "%s is not a triage database (%s)",
		    path,
		    sqlite3_errmsg(sq));
	if (rc != SQLITE_OK)
		return cause_fail(cause, "cannot read %s: %s", path,
		    sqlite3_errmsg(sq));
	if (v > SQLITE_SCHEMA_VERSION)
		return cause_fail(cause,
		    "%s was made by a newer triage: schema "
		    "version %lld, this one knows up to %d", path, v,
		    SQLITE_SCHEMA_VERSION);
	if (v < 0)
		return cause_fail(cause, "%s is not a triage database (schema "
		    "version %lld)", path, v);

	/* Version 0 with tables is somebody else's database: do not add ours
	 * to it. */
	if (v == 0) {
		rc = sqlite_schema_int(sq, "SELECT count(*) FROM sqlite_master",
		    &ntables);
		if (rc != SQLITE_OK)
			return cause_fail(cause, "cannot read %s: %s", path,
			    sqlite3_errmsg(sq));
		if (ntables != 0)
			return cause_fail(cause, "%s is not a triage database "
			    "(it has tables but no schema version)", path);
	}
	*version = (int)v;
	return 0;
}

/* The steps from version from, the new user_version, and the commit. */
static int
sqlite_schema_steps_run(sqlite3 *sq, const char *path, int from, char **cause)
{
	char sql[64];
	int i;

	for (i = from; i < SQLITE_SCHEMA_VERSION; i++)
		if (sqlite3_exec(sq, sqlite_db_schema_steps[i], NULL, NULL,
		    NULL) != SQLITE_OK)
			return cause_fail(cause,
			    "cannot migrate %s from schema "
			    "version %d to %d: %s", path, i, i + 1,
			    sqlite3_errmsg(sq));
	/* A PRAGMA takes no parameters; the number is ours. */
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d",
	    SQLITE_SCHEMA_VERSION);
	if (sqlite3_exec(sq, sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(sq, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return cause_fail(cause, "cannot migrate %s to schema version "
		    "%d: %s", path, SQLITE_SCHEMA_VERSION, sqlite3_errmsg(sq));
	return 0;
}

int
sqlite_schema_migrate(sqlite3 *sq, const char *path, char **cause)
{
	int version;

	if (sqlite_schema_check(sq, path, &version, cause) == -1)
		return -1;
	if (version == SQLITE_SCHEMA_VERSION)
		return 0;

	if (sqlite3_exec(sq, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return cause_fail(cause, "cannot migrate %s: %s", path,
		    sqlite3_errmsg(sq));
	/* Again under the write lock, in case another process migrated the
	 * file since the first look. */
	if (sqlite_schema_check(sq, path, &version, cause) == -1)
		goto fail;
	if (version == SQLITE_SCHEMA_VERSION) {
		sqlite3_exec(sq, "ROLLBACK", NULL, NULL, NULL);
		return 0;
	}
	if (sqlite_schema_steps_run(sq, path, version, cause) == -1)
		goto fail;
	return 0;

fail:
	/* Some errors end the transaction by themselves. */
	if (!sqlite3_get_autocommit(sq))
		sqlite3_exec(sq, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}
