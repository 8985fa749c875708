/* worker-child.h - the job child's side of a worker's fork: set up the
 * process (session, credentials, cwd, fds, environment) and exec the job. */
#ifndef TRIAGED_WORKER_CHILD_H
#define TRIAGED_WORKER_CHILD_H

#include <sys/types.h>

#include "wmsg.h"

/* What the worker prepared before fork for its job child. */
struct worker_child {
	const struct wmsg_run *run;
	const char *user;	/* set_creds: uid's passwd name, NULL if none */
	pid_t worker;		/* the parent; the child gives up if it is gone */
	int out;		/* write ends of the stdout and stderr pipes */
	int err;
	int errpipe;		/* CLOEXEC: EOF on exec, "STEP ARG: error" if not */
};

/*
 * Called in the child right after fork; never returns. On success it is
 * the job (after execvp); on any failure it writes one line of text naming
 * the failed step to c->errpipe and exits with status 127.
 */
void worker_child_exec(const struct worker_child *c)
    __attribute__((noreturn));

#endif
