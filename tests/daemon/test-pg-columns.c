/* test-pg-columns.c - the cluster's triage_jobs table, as a real PostgreSQL
 * makes it and migrates older tables to it, against the list of a job's
 * columns (store/jobcols.h): rows kept, several daemons opening at once
 * migrating once, a failed step changing nothing, newer tables refused. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "harness.h"
#include "jobcols.h"
#include "pg-schema.h"
#include "tpg.h"

/*
 * triage_jobs' own columns, which are no job's: version counts a row's
 * updates (the fence of each), txid is the transaction that last wrote it
 * (what a daemon reads changes since). pg-schema.c says more.
 */
static const char *const pg_own[] = { "version", "txid", NULL };

/* The list's type of a column of PostgreSQL's data_type. */
static enum jobcol_type
pg_type(const char *column, const char *type)
{
	if (strcmp(type, "bigint") == 0 || strcmp(type, "integer") == 0 ||
	    strcmp(type, "smallint") == 0)
		return JOBCOL_INTEGER;
	if (strcmp(type, "double precision") == 0 || strcmp(type, "real") == 0)
		return JOBCOL_REAL;
	if (strcmp(type, "text") != 0 && strcmp(type, "xid8") != 0)
		fail_msg("column %s is of type %s", column, type);
	/* txid's xid8 is not compared: it is no job's. */
	return JOBCOL_TEXT;
}

static PGconn *
connect_ok(const char *conninfo)
{
	PGconn *pg = PQconnectdb(conninfo);

	if (PQstatus(pg) != CONNECTION_OK)
		fail_msg("cannot connect: %s", PQerrorMessage(pg));
	return pg;
}

/* Runs sql, which must succeed; its one value of its one row, as text
 * (NULL for SQL NULL), into buf when buf is not NULL. */
static void
sql_ok(PGconn *pg, const char *sql, char *buf, size_t size)
{
	PGresult *res = PQexec(pg, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(pg));
	if (buf != NULL) {
		if (PQntuples(res) != 1)
			fail_msg("%s: %d rows", sql, PQntuples(res));
		snprintf(buf, size, "%s", PQgetisnull(res, 0, 0) ? "NULL" :
		    PQgetvalue(res, 0, 0));
	}
	PQclear(res);
}

static void
assert_version(PGconn *pg, const char *want)
{
	char got[32];

	sql_ok(pg, "SELECT value FROM triage_meta WHERE key = 'schema'", got,
	    sizeof got);
	assert_string_equal(got, want);
}

/* The tables are at the version this code writes. */
static void
assert_newest(PGconn *pg)
{
	char want[16];

	snprintf(want, sizeof want, "%d", PG_SCHEMA_VERSION);
	assert_version(pg, want);
}

/* triage_jobs holds exactly jobcols.h's columns, and its own. */
static void
assert_jobs_is_the_list(PGconn *pg)
{
	const char *names[128];
	enum jobcol_type types[128];
	PGresult *res;
	char *diff;
	int i, n;

	res = PQexec(pg, "SELECT column_name, data_type"
	    " FROM information_schema.columns"
	    " WHERE table_schema = current_schema()"
	    " AND table_name = 'triage_jobs' ORDER BY ordinal_position");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("columns: %s", PQerrorMessage(pg));
	n = PQntuples(res);
	assert_true(n > 0 && n <= 128);
	for (i = 0; i < n; i++) {
		names[i] = PQgetvalue(res, i, 0);
		types[i] = pg_type(names[i], PQgetvalue(res, i, 1));
	}
	if ((diff = jobcols_diff(names, types, (size_t)n, pg_own)) != NULL)
		fail_msg("triage_jobs and jobcols.h differ: %s", diff);
	PQclear(res);
}

/* The tables as triage of schema version 1 made them, with a finished
 * job and a node in them: from before grace_ms, the column version 1
 * added on every open. */
static char *
make_v1(const char *name)
{
	char *conninfo = tpg_createdb(tpg_group, name), *cause = NULL;
	PGconn *pg = connect_ok(conninfo);

	if (pg_schema_upgrade(pg, 1, &cause) != 0)
		fail_msg("pg_schema_upgrade to 1: %s", cause);
	assert_version(pg, "1");
	sql_ok(pg, "ALTER TABLE triage_nodes DROP COLUMN grace_ms", NULL, 0);
	sql_ok(pg, "INSERT INTO triage_jobs (id, name, argv, env, cwd,"
	    " priority, state, slots, exclusive, timeout_ms, retries, seq,"
	    " uid, gid, submitted_at, finished_at, exit_code, reason,"
	    " attempt, max_rss_kb, stdout_truncated, stderr_truncated, begun,"
	    " held, nice, merge_output, stdout_dropped, stderr_dropped, node)"
	    " VALUES (7, 'old', '[\"true\"]', '[]', '/', 'normal',"
	    " 'succeeded', 1, 0, 0, 0, 7, 1000, 1000, 1, 2, 0, 'kept', 1,"
	    " 2048, 0, 0, 1, 0, 0, 0, 0, 0, 'n1')", NULL, 0);
	sql_ok(pg, "INSERT INTO triage_nodes (name, boot, slots, started_at)"
	    " VALUES ('n1', 1, 4, 1)", NULL, 0);
	PQfinish(pg);
	return conninfo;
}

/* Tables of version 1 come up at the newest version, their rows as they
 * were, the new columns of a job unknown (NULL) or false. */
static void
test_v1_migrated_rows_kept(void **state)
{
	char *conninfo, *cause = NULL, buf[256];
	PGconn *pg;

	(void)state;
	if (tpg_group == NULL)
		skip();
	conninfo = make_v1("from_v1");
	pg = connect_ok(conninfo);
	if (pg_schema_setup(pg, &cause) != 0)
		fail_msg("pg_schema_setup: %s", cause);
	assert_newest(pg);
	assert_jobs_is_the_list(pg);
	sql_ok(pg, "SELECT concat_ws(' ', name, state, reason, max_rss_kb,"
	    " node, coalesce(memory::text, 'null'), frozen,"
	    " coalesce(peak_memory::text, 'null'), oom,"
	    " coalesce(cgroup, 'null'), coalesce(resources, 'null'),"
	    " coalesce(devices, 'null')) FROM triage_jobs WHERE id = 7", buf,
	    sizeof buf);
	assert_string_equal(buf, "old succeeded kept 2048 n1 null 0 null 0 "
	    "null null null");
	sql_ok(pg, "SELECT concat_ws(' ', slots, grace_ms) FROM triage_nodes"
	    " WHERE name = 'n1'", buf, sizeof buf);
	assert_string_equal(buf, "4 0");
	/* The new columns take what a daemon writes. */
	sql_ok(pg, "UPDATE triage_jobs SET memory = 1048576, frozen = 1,"
	    " peak_memory = 4096, oom = 1, cgroup = 'triage/7',"
	    " resources = '{\"gpu\":1}', devices = '{\"gpu\":[\"0\"]}'"
	    " WHERE id = 7", NULL, 0);

	/* Open again: nothing to do, nothing changed. */
	if (pg_schema_setup(pg, &cause) != 0)
		fail_msg("pg_schema_setup again: %s", cause);
	assert_newest(pg);
	sql_ok(pg, "SELECT concat_ws(' ', memory, cgroup, resources, devices)"
	    " FROM triage_jobs", buf, sizeof buf);
	assert_string_equal(buf, "1048576 triage/7 {\"gpu\":1} "
	    "{\"gpu\":[\"0\"]}");
	PQfinish(pg);
	free(conninfo);
}

struct opener {
	const char *conninfo;
	int rc;
	char *cause;
};

static void *
opener_main(void *arg)
{
	struct opener *o = arg;
	PGconn *pg = PQconnectdb(o->conninfo);

	if (PQstatus(pg) != CONNECTION_OK) {
		o->rc = -1;
		o->cause = strdup(PQerrorMessage(pg));
	} else
		o->rc = pg_schema_setup(pg, &o->cause);
	PQfinish(pg);
	return NULL;
}

/* Sessions of this database waiting for an advisory lock. */
static int
advisory_waiters(PGconn *pg)
{
	char buf[32];

	sql_ok(pg, "SELECT count(*) FROM pg_locks l JOIN pg_database d"
	    " ON d.oid = l.database WHERE d.datname = current_database()"
	    " AND l.locktype = 'advisory' AND NOT l.granted", buf, sizeof buf);
	return atoi(buf);
}

/*
 * Daemons of a cluster opening old tables at once: each finds them at
 * version 1 while the first to get the schema's lock migrates them, and
 * waits for its commit; then each finds them migrated. Two migrations
 * would fail the second on its ADD COLUMN. The test holds the lock first,
 * so that both openers are sure to be waiting together.
 */
static void
test_openers_at_once_migrate_once(void **state)
{
	struct opener o[3];
	pthread_t th[3];
	char *conninfo, lock[80];
	int64_t deadline;
	PGconn *pg;
	int i;

	(void)state;
	if (tpg_group == NULL)
		skip();
	conninfo = make_v1("at_once");
	pg = connect_ok(conninfo);
	snprintf(lock, sizeof lock, "BEGIN; SELECT pg_advisory_xact_lock(%d)",
	    0x74726961);
	sql_ok(pg, lock, NULL, 0);
	for (i = 0; i < 3; i++) {
		o[i] = (struct opener){ conninfo, 0, NULL };
		assert_int_equal(pthread_create(&th[i], NULL, opener_main,
		    &o[i]), 0);
	}
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	while (advisory_waiters(pg) < 3) {
		tcheck_deadline(deadline, "3 openers waiting for the lock");
		usleep(10000);
	}
	sql_ok(pg, "COMMIT", NULL, 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		if (o[i].rc != 0)
			fail_msg("opener %d: %s", i, o[i].cause);
	}
	assert_newest(pg);
	assert_jobs_is_the_list(pg);
	PQfinish(pg);
	free(conninfo);
}

/* A step that fails leaves the tables as they were, at their version:
 * PostgreSQL's DDL is transactional. */
static void
test_failed_step_changes_nothing(void **state)
{
	char *conninfo, *cause = NULL, buf[64];
	PGconn *pg;

	(void)state;
	if (tpg_group == NULL)
		skip();
	conninfo = make_v1("failed_step");
	pg = connect_ok(conninfo);
	/* In the way of step 1 -> 2's last column. */
	sql_ok(pg, "ALTER TABLE triage_jobs ADD COLUMN cgroup bigint", NULL,
	    0);
	assert_int_equal(pg_schema_setup(pg, &cause), -1);
	assert_non_null(cause);
	if (strstr(cause, "from schema version 1 to 2") == NULL ||
	    strstr(cause, "cgroup") == NULL)
		fail_msg("cause: %s", cause);
	free(cause);
	cause = NULL;
	assert_version(pg, "1");
	sql_ok(pg, "SELECT count(*) FROM information_schema.columns"
	    " WHERE table_schema = current_schema() AND"
	    " table_name = 'triage_jobs' AND column_name IN ('memory',"
	    " 'frozen')", buf, sizeof buf);
	assert_string_equal(buf, "0");
	sql_ok(pg, "SELECT count(*) FROM triage_jobs", buf, sizeof buf);
	assert_string_equal(buf, "1");

	/* Out of the way, the next open migrates. */
	sql_ok(pg, "ALTER TABLE triage_jobs DROP COLUMN cgroup", NULL, 0);
	if (pg_schema_setup(pg, &cause) != 0)
		fail_msg("pg_schema_setup: %s", cause);
	assert_newest(pg);
	PQfinish(pg);
	free(conninfo);
}

/* Tables a newer triage made are refused, named, and left alone. */
static void
test_newer_refused(void **state)
{
	char *conninfo, *cause = NULL, want[128];
	PGconn *pg;

	(void)state;
	if (tpg_group == NULL)
		skip();
	conninfo = make_v1("newer");
	pg = connect_ok(conninfo);
	sql_ok(pg, "UPDATE triage_meta SET value = '99' WHERE key = 'schema'",
	    NULL, 0);
	assert_int_equal(pg_schema_setup(pg, &cause), -1);
	snprintf(want, sizeof want, "made by a newer triage: schema version "
	    "99, this one knows up to %d", PG_SCHEMA_VERSION);
	if (cause == NULL || strstr(cause, want) == NULL)
		fail_msg("cause: %s", cause != NULL ? cause : "(null)");
	free(cause);
	assert_version(pg, "99");
	PQfinish(pg);
	free(conninfo);
}

/* The tables a daemon makes hold the listed columns, and no other but
 * their own. */
static void
test_triage_jobs_is_the_list(void **state)
{
	char *conninfo, *cause = NULL;
	PGconn *pg;

	(void)state;
	if (tpg_group == NULL)
		skip();
	conninfo = tpg_createdb(tpg_group, "columns");
	pg = connect_ok(conninfo);
	if (pg_schema_setup(pg, &cause) != 0)
		fail_msg("pg_schema_setup: %s", cause);
	assert_jobs_is_the_list(pg);
	PQfinish(pg);
	free(conninfo);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_triage_jobs_is_the_list),
		cmocka_unit_test(test_v1_migrated_rows_kept),
		cmocka_unit_test(test_openers_at_once_migrate_once),
		cmocka_unit_test(test_failed_step_changes_nothing),
		cmocka_unit_test(test_newer_refused),
	};

	return cmocka_run_group_tests(tests, tpg_group_setup,
	    tpg_group_teardown);
}
