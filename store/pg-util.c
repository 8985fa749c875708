/* pg-util.c - our connections' options, blocking libpq calls for a daemon's
 * start, libpq's messages made into the one-line causes we report, and ids
 * as an array's text. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg-util.h"
#include "vec.h"

PGconn *
pg_util_connect(const char *conninfo, bool start)
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
pg_util_message(const PGconn *pg, const PGresult *res)
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
pg_util_exec(PGconn *pg, const char *sql, char **cause)
{
	PGresult *res = PQexec(pg, sql);
	int rc = 0;

	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = cause_fail(cause, "PostgreSQL: %s", pg_util_message(pg,
		    res));
	PQclear(res);
	return rc;
}

PGresult *
pg_util_query_params(PGconn *pg, const char *sql, int nparams,
    const char *const *values, char **cause)
{
	PGresult *res = PQexecParams(pg, sql, nparams, NULL, values, NULL,
	    NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		cause_fail(cause, "PostgreSQL: %s", pg_util_message(pg, res));
		PQclear(res);
		return NULL;
	}
	return res;
}

PGresult *
pg_util_query(PGconn *pg, const char *sql, char **cause)
{
	return pg_util_query_params(pg, sql, 0, NULL, cause);
}

/* The ids of n items of size bytes each, the id first, as an array's
 * text. */
char *
pg_util_array(const void *v, size_t n, size_t size)
{
	size_t i, len = 3 + n * 21;
	uint64_t id;
	char *a, *p;

	if ((a = malloc(len)) == NULL)
		return NULL;
	p = a;
	*p++ = '{';
	for (i = 0; i < n; i++) {
		memcpy(&id, (const char *)v + i * size, sizeof id);
		p += sprintf(p, "%s%" PRIu64, i > 0 ? "," : "", id);
	}
	strcpy(p, "}");
	return a;
}

char *
pg_util_ids_array(const struct vec *ids)
{
	return pg_util_array(ids->v, ids->n, sizeof(uint64_t));
}
