/* worker-child.h - the job child's side of a worker's spawn: set up the
 * process (session, credentials, cwd, fds, environment) and exec the job. */
#ifndef TRIAGED_WORKER_CHILD_H
#define TRIAGED_WORKER_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "wmsg.h"

/*
 * What the worker prepared for its job child, which shares the worker's
 * memory until it execs: it reads this, and writes only sh_argv[1].
 */
struct worker_child {
	const struct wmsg_run *run;
	const char *user;	/* set_creds: uid's passwd name, NULL if none */
	const gid_t *groups;	/* set_creds: the supplementary groups */
	size_t ngroups;
	const char *path;	/* the job's PATH, for argv[0] without a '/' */
	char **sh_argv;		/* "/bin/sh", (file), argv[1..], NULL: a file
				 * exec finds no format in runs by sh */
	pid_t worker;		/* the parent; the child gives up if it is gone */
	int null;		/* /dev/null, read-only: stdin */
	int out;		/* write ends of the stdout and stderr pipes */
	int err;
	int errpipe;		/* CLOEXEC: EOF on exec, "STEP ARG: error" if not */
	/* The result file (CLOEXEC), -1 none: the job's as POOL_RESULT_FD.
	 * Neither it nor errpipe is POOL_RESULT_FD (the worker keeps that
	 * number taken). */
	int result;
	int cgroup_fd;		/* the job's cgroup, -1 none */
	bool join_cgroup;	/* the spawn's: the child moves itself there */
	/* Written to the child's oom_score_adj, unless it is
	 * POOL_OOM_SCORE_ADJ_SAME. */
	int oom_score_adj;
};

/*
 * Starts the job child sharing the worker's memory (no copy of it) and
 * returns its pid once it has exec'd the job or failed, or -1 with errno
 * when no child could be made. On any failure the child writes one line
 * of text naming the failed step to c->errpipe and exits with status 127
 * (the shell's "could not run"); the pipe tells, rather than memory, so
 * that it also holds where the clone is a fork (valgrind). With a
 * cgroup_fd the child is born in that cgroup (clone3); where the kernel
 * (before 5.7) or valgrind cannot do that, it moves itself there before
 * anything else, and the spawn does so from then on.
 */
pid_t worker_child_spawn(struct worker_child *c);

#endif
