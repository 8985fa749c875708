/* tsupport-dir.h - for tests and benchmarks: temp dirs of their own, and
 * their removal with whatever a run left in them. */
#ifndef TRIAGE_TSUPPORT_DIR_H
#define TRIAGE_TSUPPORT_DIR_H

#include <stddef.h>

#include "tsupport-err.h"

/* Makes PARENT/NAME-XXXXXX (mkdtemp: mode 0700) into dir. 0, or -1 with
 * err and errno (ENAMETOOLONG when it does not fit in size). */
int tsupport_dir_make(char *dir, size_t size, const char *parent,
    const char *name, struct tsupport_err *err);
/*
 * Removes dir and everything below it, symbolic links as links: rm -rf
 * without a shell. A dir or file gone meanwhile, or already, is no
 * error. 0, or -1 with err and errno (what could go is gone).
 */
int tsupport_dir_remove(const char *dir, struct tsupport_err *err);

#endif
