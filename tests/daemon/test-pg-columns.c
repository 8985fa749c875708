/* test-pg-columns.c - the cluster's triage_jobs table, as a real PostgreSQL
 * makes it, against the list of a job's columns (store/jobcols.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

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

/* The tables a daemon makes hold the listed columns, and no other but
 * their own. */
static void
test_triage_jobs_is_the_list(void **state)
{
	const char *names[128];
	enum jobcol_type types[128];
	char *conninfo, *cause = NULL, *diff;
	PGresult *res;
	PGconn *pg;
	int i, n;

	(void)state;
	if (tpg_group == NULL)
		skip();
	conninfo = tpg_createdb(tpg_group, "columns");
	pg = PQconnectdb(conninfo);
	if (PQstatus(pg) != CONNECTION_OK)
		fail_msg("cannot connect: %s", PQerrorMessage(pg));
	if (pg_schema_setup(pg, &cause) != 0)
		fail_msg("pg_schema_setup: %s", cause);
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
	diff = jobcols_diff(names, types, (size_t)n, pg_own);
	if (diff != NULL)
		fail_msg("triage_jobs and jobcols.h differ: %s", diff);
	PQclear(res);
	PQfinish(pg);
	free(conninfo);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_triage_jobs_is_the_list),
	};

	return cmocka_run_group_tests(tests, tpg_group_setup,
	    tpg_group_teardown);
}
