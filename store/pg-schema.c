/* pg-schema.c - the cluster's tables: jobs with a version (the fence of every
 * update) and the transaction that last wrote them (how a daemon reads what
 * changed since), the tombstones of removed jobs, the nodes, the paused
 * priorities, cancel requests, captured output and the shared counters;
 * version by version, and the forward migration that brings older tables
 * to PG_SCHEMA_VERSION. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg-schema.h"
#include "pg-util.h"

/* Any number that is ours: the lock daemons take to make or migrate the
 * tables. */
#define PG_SCHEMA_LOCK 0x74726961

/*
 * Times are ms since the epoch, as in SQLite; NULL is what a job keeps as
 * unknown; booleans are 0 or 1, as SQLite keeps them, so that one job-row
 * reader serves both. txid is the writing transaction, set by a trigger on
 * every insert and update, and version counts a row's updates: an UPDATE
 * that names the version it read is refused when another node wrote since.
 */
static const char pg_schema_v1[] =
	"CREATE TABLE triage_meta ("
	" key text PRIMARY KEY,"
	" value text NOT NULL);"
	"CREATE SEQUENCE triage_job_id;"
	"CREATE TABLE triage_jobs ("
	" id bigint PRIMARY KEY,"
	" version bigint NOT NULL DEFAULT 1,"
	" txid xid8 NOT NULL DEFAULT pg_current_xact_id(),"
	" name text NOT NULL,"
	" argv text NOT NULL,"			/* JSON array of byte strings:
						 * strings, or {"base64": ...}
						 * where not UTF-8 (bytestr.h)
						 * */
	" env text NOT NULL,"			/* JSON array of "K=V", the same
	    */
	" cwd text NOT NULL,"			/* a path, or {"base64": ...} */
	" priority text NOT NULL,"
	" state text NOT NULL,"
	" slots integer NOT NULL,"
	" exclusive integer NOT NULL,"
	" timeout_ms bigint NOT NULL,"
	" retries bigint NOT NULL,"
	" seq bigint,"
	" \"after\" text,"			/* JSON array of ids */
	" uid bigint NOT NULL,"
	" gid bigint NOT NULL,"
	" submitted_at bigint,"
	" started_at bigint,"
	" finished_at bigint,"
	" pid bigint,"
	" exit_code bigint,"
	" signal bigint,"
	" reason text,"
	" attempt bigint NOT NULL,"
	" user_time double precision,"
	" system_time double precision,"
	" max_rss_kb bigint,"
	" stdout_truncated integer NOT NULL,"
	" stderr_truncated integer NOT NULL,"
	" begun integer NOT NULL,"
	" start_ticks bigint,"
	" labels text,"
	" held integer NOT NULL,"
	" begin_at bigint,"
	" after_any text,"
	" nice integer NOT NULL,"
	" merge_output integer NOT NULL,"
	" stdout_dropped bigint NOT NULL,"
	" stderr_dropped bigint NOT NULL,"
	" node text,"
	" pinned_node text,"
	" username text);"
	"CREATE INDEX triage_jobs_txid ON triage_jobs (txid);"
	"CREATE INDEX triage_jobs_queued ON triage_jobs (priority, seq)"
	" WHERE state = 'queued';"
	"CREATE INDEX triage_jobs_node ON triage_jobs (node)"
	" WHERE state = 'running' OR begun = 1;"
	"CREATE FUNCTION triage_touch() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN NEW.txid := pg_current_xact_id(); RETURN NEW; END $$;"
	"CREATE TRIGGER triage_jobs_touch BEFORE INSERT OR UPDATE"
	" ON triage_jobs FOR EACH ROW EXECUTE FUNCTION triage_touch();"
	/* What other daemons must forget; kept as long as finished jobs. */
	"CREATE TABLE triage_removed ("
	" id bigint PRIMARY KEY,"
	" removed_at bigint NOT NULL,"
	" txid xid8 NOT NULL DEFAULT pg_current_xact_id());"
	"CREATE INDEX triage_removed_txid ON triage_removed (txid);"
	"CREATE TABLE triage_paused ("
	" priority text PRIMARY KEY);"
	/* boot tells one run of a node's daemon from the next; commit_gen
	 * and commit_xid, written by each of its commits, tell it after a
	 * lost connection whether its last commit happened. */
	"CREATE TABLE triage_nodes ("
	" name text PRIMARY KEY,"
	" boot bigint NOT NULL,"
	" slots integer NOT NULL,"
	" busy integer NOT NULL DEFAULT 0,"	/* slots held, as last told */
	" started_at bigint NOT NULL,"
	" lease_until timestamptz,"
	/* How long past lease_until the others wait before they take its
	 * jobs: the time it gives its own jobs to die. */
	" grace_ms bigint NOT NULL DEFAULT 0,"
	" commit_gen bigint NOT NULL DEFAULT 0,"
	" commit_xid xid8,"
	" txid xid8 NOT NULL DEFAULT pg_current_xact_id());"
	"CREATE TRIGGER triage_nodes_touch BEFORE INSERT OR UPDATE"
	" ON triage_nodes FOR EACH ROW EXECUTE FUNCTION triage_touch();"
	"CREATE TABLE triage_cancels ("
	" job bigint NOT NULL,"
	" attempt bigint NOT NULL,"
	" signal integer NOT NULL,"
	" by_uid bigint NOT NULL,"
	" txid xid8 NOT NULL DEFAULT pg_current_xact_id(),"
	" PRIMARY KEY (job, attempt));"
	"CREATE INDEX triage_cancels_txid ON triage_cancels (txid);"
	/* Each stream of each attempt, in chunks at their offsets. */
	"CREATE TABLE triage_output ("
	" job bigint NOT NULL,"
	" attempt bigint NOT NULL,"
	" stream smallint NOT NULL,"
	" off bigint NOT NULL,"
	" data bytea NOT NULL,"
	" PRIMARY KEY (job, attempt, stream, off));"
	"INSERT INTO triage_meta VALUES ('schema', '1');";

/*
 * Step i takes the tables at schema version i to i + 1, as
 * sqlite-schema.c's steps do the SQLite file. A step that has shipped is
 * never edited, since databases out there are at its result: a change is
 * a new step at the end and PG_SCHEMA_VERSION one higher. The version in
 * triage_meta is written after the last step, in the same transaction.
 */
static const char *const pg_schema_steps[] = {
	/* 0 -> 1: the base. */
	pg_schema_v1,

	/* 1 -> 2: protocol v1.2's cgroups. The memory a job declared (NULL:
	 * none), whether it is frozen, the most memory its run used at once
	 * (NULL: unknown), whether it was killed for want of memory, and its
	 * cgroup while it runs (NULL: none). Also grace_ms for the tables
	 * of version 1 made before it, which version 1 added on every open. */
	"ALTER TABLE triage_nodes ADD COLUMN IF NOT EXISTS grace_ms bigint"
	" NOT NULL DEFAULT 0;"
	"ALTER TABLE triage_jobs"
	" ADD COLUMN memory bigint,"
	" ADD COLUMN frozen integer NOT NULL DEFAULT 0,"
	" ADD COLUMN peak_memory bigint,"
	" ADD COLUMN oom integer NOT NULL DEFAULT 0,"
	" ADD COLUMN cgroup text",

	/* 2 -> 3: protocol v1.2's resources. What a job asked for, a JSON
	 * object of resource name to count, and the units its attempt was
	 * given, a JSON object of resource name to an array of unit names
	 * (NULL: none, as for labels). */
	"ALTER TABLE triage_jobs"
	" ADD COLUMN resources text,"
	" ADD COLUMN devices text",

	/* 3 -> 4: [resource.NAME] scope = cluster. A row for each counter
	 * the cluster shares, made by the first claim that names it: every
	 * claim of it locks the row until its commit, so that two nodes never
	 * both see the last unit free. */
	"CREATE TABLE triage_resources ("
	" name text PRIMARY KEY)",

	/* 4 -> 5: protocol v1.3. The submitter's idempotency key (NULL:
	 * none), unique among a uid's jobs: two nodes that take the same
	 * key at once each check their memory, where the other's job is not
	 * yet, and the index lets the insert of one of them only (its
	 * ON CONFLICT DO NOTHING inserts nothing, and that node answers
	 * with the other's job). The bytes the last attempt left in
	 * TRIAGE_RESULT, as the wire carries them (a JSON string, or
	 * {"base64": ...}; NULL: none), and whether it wrote more than
	 * max_result. */
	"ALTER TABLE triage_jobs"
	" ADD COLUMN \"key\" text,"
	" ADD COLUMN result text,"
	" ADD COLUMN result_truncated integer NOT NULL DEFAULT 0;"
	"CREATE UNIQUE INDEX triage_jobs_key ON triage_jobs (uid, \"key\")"
	" WHERE \"key\" IS NOT NULL",
};

_Static_assert(sizeof pg_schema_steps / sizeof pg_schema_steps[0] ==
    PG_SCHEMA_VERSION, "one migration step per schema version");

/* The version of the tables there are, 0 for none, into *version: 0, or
 * -1 with *cause when they are not triage's. Under the schema lock. */
static int
pg_schema_version(PGconn *pg, long *version, char **cause)
{
	PGresult *res;
	bool none, empty;

	if ((res = pg_util_query(pg,
	    "SELECT to_regclass('triage_meta') IS NULL,"
	    " (SELECT count(*) FROM pg_tables WHERE schemaname ="
	    " current_schema())", cause)) == NULL)
		return -1;
	none = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	empty = strcmp(PQgetvalue(res, 0, 1), "0") == 0;
	PQclear(res);
	if (none) {
		/* Another program's tables are not ours to add to. */
		if (!empty)
			return cause_fail(cause, "the database has tables, "
			    "none of them triage's: give triage a database of "
			    "its own");
		*version = 0;
		return 0;
	}
	if ((res = pg_util_query(pg, "SELECT value FROM triage_meta"
	    " WHERE key = 'schema'", cause)) == NULL)
		return -1;
	*version = PQntuples(res) == 1 ?
	    strtol(PQgetvalue(res, 0, 0), NULL, 10) : -1;
	PQclear(res);
	if (*version < 1)
		return cause_fail(cause, "triage_meta has no schema version: "
		    "the tables are not triage's");
	return 0;
}

/* The steps from version from to to, and the version written. */
static int
pg_schema_steps_run(PGconn *pg, long from, int to, char **cause)
{
	char sql[128], *why = NULL;
	long i;

	for (i = from; i < to; i++) {
		if (pg_util_exec(pg, pg_schema_steps[i], &why) == 0)
			continue;
		cause_fail(cause, "cannot migrate the cluster's tables from "
		    "schema version %ld to %ld: %s", i, i + 1,
		    why != NULL ? why : "out of memory");
		free(why);
		return -1;
	}
	snprintf(sql, sizeof sql, "UPDATE triage_meta SET value = '%d'"
	    " WHERE key = 'schema'", to);
	return pg_util_exec(pg, sql, cause);
}

int
pg_schema_upgrade(PGconn *pg, int to, char **cause)
{
	char lock[64];
	long version = 0;
	int rc = -1;

	if (to < 1 || to > PG_SCHEMA_VERSION)
		return cause_fail(cause, "no schema version %d", to);
	/* Daemons starting together: one makes or migrates the tables, the
	 * others wait for its commit here and find them done. */
	snprintf(lock, sizeof lock, "BEGIN; SELECT pg_advisory_xact_lock(%d)",
	    PG_SCHEMA_LOCK);
	if (pg_util_exec(pg, lock, cause) != 0)
		goto out;
	if (pg_schema_version(pg, &version, cause) != 0)
		goto out;
	if (version > PG_SCHEMA_VERSION) {
		cause_fail(cause, "the cluster's tables were made by a newer "
		    "triage: schema version %ld, this one knows up to %d",
		    version, PG_SCHEMA_VERSION);
		goto out;
	}
	if (version < to && pg_schema_steps_run(pg, version, to, cause) != 0)
		goto out;
	rc = pg_util_exec(pg, "COMMIT", cause);
out:
	if (rc != 0)
		(void)pg_util_exec(pg, "ROLLBACK", NULL);
	return rc;
}

int
pg_schema_setup(PGconn *pg, char **cause)
{
	return pg_schema_upgrade(pg, PG_SCHEMA_VERSION, cause);
}
