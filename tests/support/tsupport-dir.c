/* tsupport-dir.c - for tests and benchmarks: temp dirs of their own, and
 * their removal with whatever a run left in them. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
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

/* The walk's first failure: nftw passes its callback nothing of ours. */
static _Thread_local struct {
	int	errnum;
	char	path[PATH_MAX];
} tsupport_dir_failed;

/* Goes on past a failure, as rm -rf does: all that can go goes. */
static int
tsupport_dir_remove_cb(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) == -1 && errno != ENOENT &&
	    tsupport_dir_failed.errnum == 0) {
		tsupport_dir_failed.errnum = errno;
		snprintf(tsupport_dir_failed.path,
		    sizeof tsupport_dir_failed.path, "%s", path);
	}
	return 0;
}

int
tsupport_dir_remove(const char *dir, struct tsupport_err *err)
{
	tsupport_dir_failed.errnum = 0;
	/* Depth first, so that each dir is empty when its turn comes. */
	if (nftw(dir, tsupport_dir_remove_cb, TSUPPORT_DIR_FDS,
	    FTW_DEPTH | FTW_PHYS) == -1) {
		if (errno == ENOENT)
			return 0;
		return tsupport_err_set(err, "cannot remove %s: %s", dir,
		    strerror(errno));
	}
	if (tsupport_dir_failed.errnum == 0)
		return 0;
	errno = tsupport_dir_failed.errnum;
	return tsupport_err_set(err, "cannot remove %s: %s",
	    tsupport_dir_failed.path, strerror(errno));
}
