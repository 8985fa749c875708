/* worker.h - the worker process's entry point. The pool forks a worker and
 * calls worker_main() in the child; it never returns into the daemon's code. */
#ifndef TRIAGED_WORKER_H
#define TRIAGED_WORKER_H

#include "pool-spec.h"

/*
 * Runs jobs one at a time as the daemon asks over fd (a blocking
 * SOCK_STREAM socket speaking wmsg.h), until the daemon goes away (EOF, or
 * SIGTERM: the worker's parent-death signal when setup has no adopt_dir).
 * With an adopt_dir, a daemon that goes while a job runs leaves the job to
 * the worker: it runs it to its end, listens meanwhile on
 * adopt_dir/ID.ATTEMPT.sock for a daemon to take it over (WMSG_ADOPTED,
 * then as over fd), and if none does, records the end there (endrec.h).
 * Returns the process's exit status: 0 when the daemon went away, 1 on a
 * broken message or a failure that leaves the worker unable to go on.
 * Blocks SIGCHLD and SIGTERM for its signalfd; any job running when it
 * returns has ended or been killed, and been reaped. setup says where
 * jobs' cgroups go (pool_setup).
 * Assumes: the calling process is a fresh fork that owns nothing else.
 */
int worker_main(int fd, const struct pool_setup *setup);

#endif
