/* safepath.c - a directory's owner and mode, and its parents', against
 * another user who could plant or swap what the daemon keeps there. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "safepath.h"

static int safepath_fail(char **why, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
safepath_fail(char **why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(why, fmt, ap) < 0)
		*why = NULL;
	va_end(ap);
	return -1;
}

/* One directory: top is the one named by the caller, the others are its
 * parents. */
static int
safepath_dir(const char *dir, bool top, uid_t trusted, char **why)
{
	struct stat st;

	if (stat(dir, &st) != 0)
		return safepath_fail(why, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return safepath_fail(why, "%s: not a directory", dir);
	if (st.st_uid != 0 && st.st_uid != trusted)
		return safepath_fail(why, "%s: owned by uid %lu, not by root "
		    "or uid %lu: another user could have planted it", dir,
		    (unsigned long)st.st_uid, (unsigned long)trusted);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return 0;
	if (!top && (st.st_mode & S_ISVTX) != 0)
		return 0;
	return safepath_fail(why, "%s: mode %04o lets %s write to it%s", dir,
	    (unsigned)(st.st_mode & 07777),
	    (st.st_mode & S_IWOTH) ? "everyone" : "its group",
	    top ? "" : " without the sticky bit");
}

int
safepath_check(const char *path, uid_t trusted, char **why)
{
	char *real, *p, *cut = NULL;
	size_t len;
	bool top = true;
	int rc = 0;

	*why = NULL;
	if (path[0] != '/')
		return safepath_fail(why, "%s: not an absolute path", path);
	if ((p = strdup(path)) == NULL)
		return -1;
	/* The deepest part that exists; the rest will be made by us. */
	while ((real = realpath(p, NULL)) == NULL && errno == ENOENT &&
	    (cut = strrchr(p, '/')) != NULL && cut != p) {
		*cut = '\0';
		top = false;
	}
	if (real == NULL && errno == ENOENT && cut == p) {
		free(p);
		return safepath_check("/", trusted, why);
	}
	free(p);
	if (real == NULL)
		return safepath_fail(why, "%s: %s", path, strerror(errno));
	/* From the directory up to /, each checked as it is. */
	for (;;) {
		if ((rc = safepath_dir(real, top, trusted, why)) != 0)
			break;
		top = false;
		if ((len = strlen(real)) <= 1)
			break;
		if ((cut = strrchr(real, '/')) == real)
			real[1] = '\0';
		else
			*cut = '\0';
	}
	free(real);
	return rc;
}
