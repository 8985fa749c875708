/* pg-schema.h - the cluster's tables in PostgreSQL: made by the first daemon
 * to connect, checked by every other, versioned like the SQLite file. */
#ifndef TRIAGE_PG_SCHEMA_H
#define TRIAGE_PG_SCHEMA_H

#include <libpq-fe.h>

/* The schema this code writes, in triage_meta's 'schema' row. */
#define PG_SCHEMA_VERSION 1

/*
 * Makes the tables when the database has none of ours, under an advisory
 * lock so that daemons starting together make them once; checks the
 * version of tables that are there. Blocking, for a daemon's start. 0, or
 * -1 with *cause set (allocated): unreachable, not ours, or from a newer
 * triage.
 */
int pg_schema_setup(PGconn *pg, char **cause);

#endif
