/* bench-tmpdir.h - for the benchmarks: a temp dir of their own, and its
 * removal with everything in it, whatever the run left there. */
#ifndef TRIAGE_BENCH_TMPDIR_H
#define TRIAGE_BENCH_TMPDIR_H

#include <stddef.h>

/* Makes PARENT/triage-bench-NAME-XXXXXX into dir. 0, or -1 with errno
 * (ENAMETOOLONG when it does not fit). */
int bench_tmpdir_make(const char *parent, const char *name, char *dir,
    size_t size);
/* Removes dir and all below it. 0, or -1 with errno (what could be
 * removed is gone). */
int bench_tmpdir_remove(const char *dir);

#endif
