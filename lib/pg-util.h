/* pg-util.h - the few blocking libpq calls a daemon makes as it starts
 * (schema, first load), with errors as one-line causes. */
#ifndef TRIAGE_PG_UTIL_H
#define TRIAGE_PG_UTIL_H

#include <libpq-fe.h>

#include "cause.h"

/* libpq's message of a failed result or connection, as one line (no
 * trailing newline, no "ERROR:  " prefix), in a static buffer. */
const char *pg_message(const PGconn *pg, const PGresult *res);
/* Runs sql (one or more statements, no parameters) and drops the result:
 * 0, or -1 with *cause. */
int pg_exec(PGconn *pg, const char *sql, char **cause);
/* Runs sql, which returns rows: the result, or NULL with *cause. */
PGresult *pg_query(PGconn *pg, const char *sql, char **cause);
PGresult *pg_query_params(PGconn *pg, const char *sql, int nparams,
    const char *const *values, char **cause);

#endif
