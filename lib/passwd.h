/* passwd.h - one user's entry in the password database, by uid or by name,
 * for the callers of lib/ that need what it holds. */
#ifndef TRIAGE_PASSWD_H
#define TRIAGE_PASSWD_H

#include <sys/types.h>

/*
 * Looks uid up with getpwuid_r and sets *name to its user name, *home to
 * its home directory and *shell to its login shell (/bin/sh when the entry
 * has none), allocated copies the caller frees (pass NULL for one that is
 * not wanted). Returns 0, or -1 with errno ENOENT (no such uid,
 * however NSS says it), ENOMEM, or getpwuid_r's error (a failed lookup),
 * and then sets nothing.
 */
int passwd_lookup(uid_t uid, char **name, char **home, char **shell);
/* The uid and gid of the user called name (getpwnam_r): 0, or -1 with
 * errno as passwd_lookup's (ENOENT: no such user). */
int passwd_by_name(const char *name, uid_t *uid, gid_t *gid);

#endif
