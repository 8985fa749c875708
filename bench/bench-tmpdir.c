/* bench-tmpdir.c - for the benchmarks: a temp dir of their own, and its
 * removal with everything in it, whatever the run left there. */
#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench-tmpdir.h"

int
bench_tmpdir_make(const char *parent, const char *name, char *dir,
    size_t size)
{
	if ((size_t)snprintf(dir, size, "%s/triage-bench-%s-XXXXXX", parent,
	    name) >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
bench_tmpdir_remove_cb(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == -1 && errno != ENOENT ? -1 : 0;
}

int
bench_tmpdir_remove(const char *dir)
{
	return nftw(dir, bench_tmpdir_remove_cb, 16, FTW_DEPTH | FTW_PHYS);
}
