/* passwd.c - a uid's name, home and shell, or a name's uid and gid, from the
 * password database, with getpw*_r and a buffer grown until the entry fits. */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "passwd.h"

/* getpwuid_r's buffer starts here and doubles up to the cap on ERANGE. */
#define PASSWD_BUF_MIN 1024
#define PASSWD_BUF_MAX (1024 * 1024)

/* The entry of uid, or of name when it is not NULL, into *pw, its strings
 * in *buf (the caller frees it). 0, or -1 with errno as passwd_lookup's. */
static int
passwd_get(uid_t uid, const char *name, struct passwd *pw, char **buf)
{
	struct passwd *result = NULL;
	size_t size = PASSWD_BUF_MIN;
	int error;

	for (;;) {
		if ((*buf = malloc(size)) == NULL)
			return -1;
		error = name != NULL ?
		    getpwnam_r(name, pw, *buf, size, &result) :
		    getpwuid_r(uid, pw, *buf, size, &result);
		if (error != ERANGE || size >= PASSWD_BUF_MAX)
			break;
		free(*buf);
		size *= 2;
	}
	if (error != 0 || result == NULL) {
		free(*buf);
		*buf = NULL;
		/* getpwuid_r(3) lists these for an entry that is not there. */
		errno = error == 0 || error == ENOENT || error == ESRCH ||
		    error == EBADF || error == EPERM ? ENOENT : error;
		return -1;
	}
	return 0;
}

int
passwd_by_name(const char *name, uid_t *uid, gid_t *gid)
{
	struct passwd pw;
	char *buf;

	if (passwd_get(0, name, &pw, &buf) != 0)
		return -1;
	*uid = pw.pw_uid;
	*gid = pw.pw_gid;
	free(buf);
	return 0;
}

int
passwd_lookup(uid_t uid, char **name, char **home, char **shell)
{
	struct passwd pw;
	char *buf, *n = NULL, *h = NULL, *sh = NULL;

	if (passwd_get(uid, NULL, &pw, &buf) != 0)
		return -1;
	/* passwd(5): an empty shell field means /bin/sh. */
	if ((name != NULL && (n = strdup(pw.pw_name)) == NULL) ||
	    (home != NULL && (h = strdup(pw.pw_dir)) == NULL) ||
	    (shell != NULL && (sh = strdup(pw.pw_shell != NULL &&
	    pw.pw_shell[0] != '\0' ? pw.pw_shell : "/bin/sh")) == NULL)) {
		free(n);
		free(h);
		free(buf);
		errno = ENOMEM;
		return -1;
	}
	free(buf);
	if (name != NULL)
		*name = n;
	if (home != NULL)
		*home = h;
	if (shell != NULL)
		*shell = sh;
	return 0;
}
