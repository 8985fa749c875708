/* pg-util.c - our connections' options, blocking libpq calls for a daemon's
 * start, and libpq's messages made into the one-line causes we report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg-util.h"

PGconn *
pg_connect(const char *conninfo, bool start)
{
	static const char *const keys[] = {
		"keepalives_idle", "keepalives_interval", "keepalives_count",
		"tcp_user_timeout", "connect_timeout", "dbname",
		"fallback_application_name", NULL
	};
	const char *values[] = { "10", "5", "3", "30000", "10", conninfo,
	    "triaged", NULL };

	/* expand_dbname: dbname's value is the whole connection string. */
	return start ? PQconnectStartParams(keys, values, 1) :
	    PQconnectdbParams(keys, values, 1);
}

const char *
pg_message(const PGconn *pg, const PGresult *res)
{
	static char buf[512];
	const char *msg = NULL;
	size_t n;

	if (res != NULL)
		msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	if ((msg == NULL || *msg == '\0') && res != NULL)
		msg = PQresultErrorMessage(res);
	if ((msg == NULL || *msg == '\0') && pg != NULL)
		msg = PQerrorMessage(pg);
	if (msg == NULL || *msg == '\0')
		msg = "unknown error";
	snprintf(buf, sizeof buf, "%s", msg);
	/* libpq's messages end with a newline, some have several lines. */
	for (n = 0; buf[n] != '\0'; n++)
		if (buf[n] == '\n')
			buf[n] = buf[n + 1] == '\0' ? '\0' : ' ';
	return buf;
}

int
pg_exec(PGconn *pg, const char *sql, char **cause)
{
	PGresult *res = PQexec(pg, sql);
	int rc = 0;

	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = cause_fail(cause, "PostgreSQL: %s", pg_message(pg, res));
	PQclear(res);
	return rc;
}

PGresult *
pg_query_params(PGconn *pg, const char *sql, int nparams,
    const char *const *values, char **cause)
{
	PGresult *res = PQexecParams(pg, sql, nparams, NULL, values, NULL,
	    NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		cause_fail(cause, "PostgreSQL: %s", pg_message(pg, res));
		PQclear(res);
		return NULL;
	}
	return res;
}

PGresult *
pg_query(PGconn *pg, const char *sql, char **cause)
{
	return pg_query_params(pg, sql, 0, NULL, cause);
}
