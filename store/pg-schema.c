/* pg-schema.c - the cluster's tables: jobs with a version (the fence of every
 * update) and the transaction that last wrote them (how a daemon reads what
 * changed since), the tombstones of removed jobs, the nodes, the paused
 * priorities, cancel requests, and captured output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg-schema.h"
#include "pg-util.h"

/* Any number that is ours: the lock daemons take to make the tables. */
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

int
pg_schema_setup(PGconn *pg, char **cause)
{
	PGresult *res;
	char lock[64];
	long version;
	int rc = -1;

	snprintf(lock, sizeof lock, "BEGIN; SELECT pg_advisory_xact_lock(%d)",
	    PG_SCHEMA_LOCK);
	if (pg_util_exec(pg, lock, cause) != 0)
		return -1;
	if ((res = pg_util_query(pg,
	    "SELECT to_regclass('triage_meta') IS NULL,"
	    " (SELECT count(*) FROM pg_tables WHERE schemaname ="
	    " current_schema())", cause)) == NULL)
		goto out;
	if (strcmp(PQgetvalue(res, 0, 0), "t") == 0) {
		/* Another program's tables are not ours to add to. */
		if (strcmp(PQgetvalue(res, 0, 1), "0") != 0) {
			PQclear(res);
			cause_fail(cause,
			    "the database has tables, none of them "
			    "triage's: give triage a database of its own");
			goto out;
		}
		PQclear(res);
		if (pg_util_exec(pg, pg_schema_v1, cause) != 0)
			goto out;
	} else {
		PQclear(res);
		if ((res = pg_util_query(pg, "SELECT value FROM triage_meta"
		    " WHERE key = 'schema'", cause)) == NULL)
			goto out;
		version = PQntuples(res) == 1 ?
		    strtol(PQgetvalue(res, 0, 0), NULL, 10) : -1;
		PQclear(res);
		if (version > PG_SCHEMA_VERSION) {
			cause_fail(cause, "the cluster's tables were made by a "
			    "newer triage: schema version %ld, this one knows "
			    "up to %d", version, PG_SCHEMA_VERSION);
			goto out;
		}
		if (version < 1) {
			cause_fail(cause, "triage_meta has no schema version: "
			    "the tables are not triage's");
			goto out;
		}
	}
	/* Tables made before grace_ms: the column, as the same version
	 * (an older daemon never names it). */
	if (pg_util_exec(pg, "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM"
	    " information_schema.columns WHERE table_schema = current_schema()"
	    " AND table_name = 'triage_nodes' AND column_name = 'grace_ms')"
	    " THEN ALTER TABLE triage_nodes ADD COLUMN grace_ms bigint"
	    " NOT NULL DEFAULT 0; END IF; END $$", cause) != 0)
		goto out;
	rc = pg_util_exec(pg, "COMMIT", cause);
out:
	if (rc != 0)
		(void)pg_util_exec(pg, "ROLLBACK", NULL);
	return rc;
}
