/* sqlite-schema.h - the jobs table's versions in the SQLite file, and the
 * forward migration that brings an older file to the newest. */
#ifndef TRIAGE_SQLITE_SCHEMA_H
#define TRIAGE_SQLITE_SCHEMA_H

#include <sqlite3.h>

/* The schema this code writes; older files are migrated on open. */
#define SQLITE_SCHEMA_VERSION 10

/*
 * sqlite_schema_check reads the file's schema version into *version; -1
 * with *cause when the file is not a database or is from a newer triage.
 * sqlite_schema_migrate brings it to SQLITE_SCHEMA_VERSION in one
 * transaction; on error the file keeps its old version.
 */
int sqlite_schema_check(sqlite3 *sq, const char *path, int *version,
    char **cause);
int sqlite_schema_migrate(sqlite3 *sq, const char *path, char **cause);

#endif
