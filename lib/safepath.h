/* safepath.h - whether a directory the daemon keeps its secrets in (its
 * state, its socket) could have been planted or changed by another user. */
#ifndef TRIAGE_SAFEPATH_H
#define TRIAGE_SAFEPATH_H

#include <sys/types.h>

/*
 * Checks the directory path (absolute) and every directory above it, as
 * OpenSSH's StrictModes does: each must be owned by root or by trusted,
 * and writable by nobody else, that is neither group- nor world-writable;
 * a directory above path may be world-writable with the sticky bit set
 * (/tmp), since others cannot then rename or remove what is ours in it.
 * Symbolic links are followed: the checks apply to where they lead.
 * A path that does not exist yet is checked up to its deepest existing
 * directory (what we create below it is ours).
 *
 * Returns 0, or -1 with *why set to an allocated sentence naming the
 * directory and what is wrong ("/srv/q: owned by uid 1000, not by root
 * or uid 0"); *why is NULL when out of memory.
 */
int safepath_check(const char *path, uid_t trusted, char **why);

#endif
