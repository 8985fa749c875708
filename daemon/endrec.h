/* endrec.h - the files of state_dir/adopt: a job attempt's end record, which
 * its orphaned worker leaves, and the socket it waits on for the next daemon. */
#ifndef TRIAGED_ENDREC_H
#define TRIAGED_ENDREC_H

#include <stddef.h>
#include <stdint.h>

#include "pool-spec.h"

/* "ID.ATTEMPT.end" or "ID.ATTEMPT.sock" under dir into buf. 0, or -1 with
 * errno ENAMETOOLONG (a socket's path must fit sockaddr_un). */
int endrec_path(const char *dir, uint64_t id, unsigned attempt,
    const char *suffix, char *buf, size_t size);

/*
 * Writes the end of attempt ID.ATTEMPT, res and when it was over (ms since
 * the epoch), as dir/ID.ATTEMPT.end: whole or not at all (a temp file,
 * fsync, rename, fsync of dir), so that it outlives a crash of the writer
 * once this returns 0. -1 with errno, nothing left behind.
 */
int endrec_write(const char *dir, uint64_t id, unsigned attempt,
    const struct pool_result *res, int64_t finished_at);

/*
 * Reads dir/ID.ATTEMPT.end into res and *finished_at, res->result
 * allocated (the caller frees it). Returns 1; 0 when there is none; -1
 * with errno (EINVAL: not a record of this attempt), nothing to free.
 */
int endrec_read(const char *dir, uint64_t id, unsigned attempt,
    struct pool_result *res, int64_t *finished_at);

#endif
