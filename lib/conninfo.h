/* conninfo.h - a libpq connection string checked without ever repeating it:
 * it may hold a password, so no message made from it shows any of it. */
#ifndef TRIAGE_CONNINFO_H
#define TRIAGE_CONNINFO_H

/*
 * Checks that libpq can parse s (key=value pairs or a postgresql:// URI;
 * PQconninfoParse). Returns 0; when it cannot, returns -1 with *why set to
 * libpq's reason, allocated, with every quoted part of it that came from s
 * replaced by "...", or *why NULL when out of memory.
 */
int conninfo_check(const char *s, char **why);

#endif
