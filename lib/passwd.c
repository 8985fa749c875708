/* passwd.c - a uid's name, home and shell from the password database, with
 * getpwuid_r and a buffer grown until the entry fits. */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "passwd.h"

/* getpwuid_r's buffer starts here and doubles up to the cap on ERANGE. */
#define PASSWD_BUF_MIN 1024
#define PASSWD_BUF_MAX (1024 * 1024)

int
passwd_lookup(uid_t uid, char **name, char **home, char **shell)
{
	struct passwd pw, *result = NULL;
	size_t size = PASSWD_BUF_MIN;
	char *buf, *n = NULL, *h = NULL, *sh = NULL;
	int error;

	for (;;) {
		if ((buf = malloc(size)) == NULL)
			return -1;
		error = getpwuid_r(uid, &pw, buf, size, &result);
		if (error != ERANGE || size >= PASSWD_BUF_MAX)
			break;
		free(buf);
		size *= 2;
	}
	if (error != 0 || result == NULL) {
		free(buf);
		/* getpwuid_r(3) lists these for a uid that is not there. */
		errno = error == 0 || error == ENOENT || error == ESRCH ||
		    error == EBADF || error == EPERM ? ENOENT : error;
		return -1;
	}
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
