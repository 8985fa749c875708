/* nodename.h - the name of a daemon in a cluster ([cluster] node, a job's
 * node, submit's node param): 1 to 64 of A-Z, a-z, 0-9, '_', '.' and '-'. */
#ifndef TRIAGE_NODENAME_H
#define TRIAGE_NODENAME_H

#include <stdbool.h>
#include <stddef.h>

#define NODENAME_MAX 64
/* The form, for messages. */
#define NODENAME_FORM "1 to 64 of A-Z, a-z, 0-9, _, . and -"

/* Returns whether s is a node name. */
bool nodename_valid(const char *s);

/*
 * Writes to out (size NODENAME_MAX + 1) the first label of host (up to its
 * first '.'), the default node name. Returns 0, or -1 when that label is not
 * a node name (out is then "").
 */
int nodename_from_host(const char *host, char *out);

#endif
