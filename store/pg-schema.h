/* pg-schema.h - the cluster's tables in PostgreSQL: made by the first daemon
 * to connect, checked by every other, versioned and migrated forward like the
 * SQLite file. */
#ifndef TRIAGE_PG_SCHEMA_H
#define TRIAGE_PG_SCHEMA_H

#include <libpq-fe.h>

/* The schema this code writes, in triage_meta's 'schema' row; older
 * tables are migrated forward when a daemon connects. */
#define PG_SCHEMA_VERSION 5

/*
 * Makes the tables when the database has none of ours, or migrates older
 * ones to PG_SCHEMA_VERSION, in one transaction under an advisory lock, so
 * that daemons starting together make or migrate them once. Blocking, for
 * a daemon's start. 0, or -1 with *cause set (allocated), nothing changed:
 * unreachable, not ours, or from a newer triage.
 */
int pg_schema_setup(PGconn *pg, char **cause);
/*
 * The same, up to version to (1 to PG_SCHEMA_VERSION) only: tables as
 * the triage of that version made them, for the tests of the migration.
 * Tables at to or newer are left as they are (never newer than this code
 * knows: that is refused).
 */
int pg_schema_upgrade(PGconn *pg, int to, char **cause);

#endif
