/* pg-util.h - how every connection of ours to PostgreSQL is made, and the
 * few blocking calls a daemon makes as it starts, errors as one-line causes. */
#ifndef TRIAGE_PG_UTIL_H
#define TRIAGE_PG_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "cause.h"

/*
 * A connection to conninfo (libpq's string or URI) with our defaults
 * before it, which it may override: TCP keepalives and a TCP user timeout,
 * so that a server gone silent (a network split) is found lost within half
 * a minute, idle or not, rather than after the kernel's quarter of an hour
 * of retransmissions; 10 s to connect; "triaged" as the application name.
 * Blocking, or begun only (PQconnectStartParams) when start is set. NULL
 * out of memory.
 */
PGconn *pg_util_connect(const char *conninfo, bool start);

/* libpq's message of a failed result or connection, as one line (no
 * trailing newline, no "ERROR:  " prefix), in a static buffer. */
const char *pg_util_message(const PGconn *pg, const PGresult *res);
/* Runs sql (one or more statements, no parameters) and drops the result:
 * 0, or -1 with *cause. */
int pg_util_exec(PGconn *pg, const char *sql, char **cause);
/* Runs sql, which returns rows: the result, or NULL with *cause. */
PGresult *pg_util_query(PGconn *pg, const char *sql, char **cause);
PGresult *pg_util_query_params(PGconn *pg, const char *sql, int nparams,
    const char *const *values, char **cause);

struct vec;
/* The ids of n items of size bytes each, the id (a uint64_t) first, as
 * an array's text ("{1,2}"); NULL out of memory. */
char *pg_util_array(const void *v, size_t n, size_t size);
/* The same of a vec of uint64_t ids. */
char *pg_util_ids_array(const struct vec *ids);

#endif
