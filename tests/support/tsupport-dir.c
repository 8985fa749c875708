/* tsupport-dir.c - for tests and benchmarks: temp dirs of their own, and
 * their removal with whatever a run left in them. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsupport-dir.h"

/* Descriptors nftw may hold open, one a level. */
#define TSUPPORT_DIR_FDS 16

int
tsupport_dir_make(char *dir, size_t size, const char *parent,
    const char *name, struct tsupport_err *err)
{
	if ((size_t)snprintf(dir, size, "%s/%s-XXXXXX", parent, name) >=
	    size) {
		errno = ENAMETOOLONG;
		return tsupport_err_set(err, "a temp dir in %s: name too long",
		    parent);
	}
	if (mkdtemp(dir) == NULL)
		return tsupport_err_set(err, "cannot make a temp dir in %s: %s",
		    parent, strerror(errno));
	return 0;
}

/* The first failure's errno ends the walk: nftw returns it. */
static int
tsupport_dir_remove_cb(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == -1 && errno != ENOENT ? errno : 0;
}

int
tsupport_dir_remove(const char *dir, struct tsupport_err *err)
{
	int rc;

	/* Depth first, so that each dir is empty when its turn comes. */
	rc = nftw(dir, tsupport_dir_remove_cb, TSUPPORT_DIR_FDS,
	    FTW_DEPTH | FTW_PHYS);
	if (rc == 0 || (rc == -1 && errno == ENOENT))
		return 0;
	if (rc > 0)
		errno = rc;
	return tsupport_err_set(err, "cannot remove %s: %s", dir,
	    strerror(errno));
}
