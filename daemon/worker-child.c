/* worker-child.c - the job child between a worker's fork and the job's exec:
 * its own session, default signals, credentials, priority, cwd, fds and
 * environment. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/ioprio.h>

#include "sigdefault.h"
#include "worker-child.h"

/* Tells the worker which step failed ("chdir /nope: No such file or
 * directory") and ends the child; 127 is the shell's "could not run". */
static void __attribute__((noreturn))
worker_child_fail(const struct worker_child *c, const char *step,
    const char *arg)
{
	char msg[256];
	int error = errno, n;

	if (arg != NULL)
		n = snprintf(msg, sizeof msg, "%s %s: %s", step, arg,
		    strerror(error));
	else
		n = snprintf(msg, sizeof msg, "%s: %s", step, strerror(error));
	if (n > 0) {
		if ((size_t)n >= sizeof msg)
			n = sizeof msg - 1;
		/* If even this fails the worker sees EOF without text and the
		 * exit status 127 still tells that the job failed early. */
		if (write(c->errpipe, msg, (size_t)n) == -1)
			_exit(127);
	}
	_exit(127);
}

/* Back to a fresh process's signal state: every disposition default (the
 * worker's are already, but a job must not depend on that), nothing
 * blocked (the worker blocks SIGCHLD and SIGTERM, and all around fork). */
static void
worker_child_signals(const struct worker_child *c)
{
	const char *step;

	if (sigdefault_reset(&step) == -1)
		worker_child_fail(c, step, NULL);
}

/* Supplementary groups, then gid, then uid: each step needs the privilege
 * the next one gives up. */
static void
worker_child_creds(const struct worker_child *c)
{
	const struct pool_spec *spec = &c->run->spec;
	char arg[32];

	if (c->user != NULL) {
		if (initgroups(c->user, spec->gid) == -1)
			worker_child_fail(c, "initgroups", c->user);
	} else if (setgroups(1, &spec->gid) == -1) {
		snprintf(arg, sizeof arg, "%lu", (unsigned long)spec->gid);
		worker_child_fail(c, "setgroups", arg);
	}
	if (setgid(spec->gid) == -1) {
		snprintf(arg, sizeof arg, "%lu", (unsigned long)spec->gid);
		worker_child_fail(c, "setgid", arg);
	}
	if (setuid(spec->uid) == -1) {
		snprintf(arg, sizeof arg, "%lu", (unsigned long)spec->uid);
		worker_child_fail(c, "setuid", arg);
	}
	/* Belt and braces: every id must be the job's, and root, once left,
	 * out of reach (setuid(0) only works while some id is still 0). */
	if (spec->uid != 0 && (getuid() != spec->uid ||
	    geteuid() != spec->uid || getgid() != spec->gid ||
	    getegid() != spec->gid || setuid(0) != -1 || seteuid(0) != -1)) {
		errno = EPERM;
		worker_child_fail(c, "drop root", "root is still within reach");
	}
}

/* stdin from /dev/null, stdout and stderr to the pipes, nothing else but
 * the CLOEXEC error pipe, which exec closes. Assumes: the worker keeps fds
 * 0-2 open, so every fd it handed over is above 2 and survives the dup2s. */
static void
worker_child_fds(const struct worker_child *c)
{
	int null;

	if ((null = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		worker_child_fail(c, "open", "/dev/null");
	/* merge_output is 2>&1: the stderr pipe then only sees its EOF. */
	if (dup2(null, STDIN_FILENO) == -1 ||
	    dup2(c->out, STDOUT_FILENO) == -1 ||
	    dup2(c->run->spec.merge_output ? c->out : c->err,
	    STDERR_FILENO) == -1)
		worker_child_fail(c, "dup2", NULL);
	if ((c->errpipe > 3 &&
	    close_range(3, (unsigned)c->errpipe - 1, 0) == -1) ||
	    close_range((unsigned)c->errpipe + 1, ~0U, 0) == -1)
		worker_child_fail(c, "close_range", NULL);
}

/*
 * A job is a session of its own, and so, where the kernel groups tasks by
 * session for the CPU (sched_autogroup_enabled, on in most distributions),
 * a group of its own: its nice then only weighs within that group, and a
 * nice 19 job gets as much CPU as a nice 0 one beside it. The group's own
 * nice is what weighs against the other jobs, so it gets the job's. This
 * runs before the credential change: the kernel allows others only ten
 * such writes a second. A daemon not run as root may hear EAGAIN for
 * that reason, and its job then runs in a group of nice 0 rather than not
 * at all. The value is never below 0, a new group's own.
 */
static void
worker_child_autogroup(const struct worker_child *c)
{
	int fd, nice = c->run->spec.nice;

	if (nice == 0)
		return;
	if ((fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return;		/* a kernel without autogroups */
		worker_child_fail(c, "open", "/proc/self/autogroup");
	}
	if (dprintf(fd, "%d", nice) < 0 &&
	    !(errno == EAGAIN && geteuid() != 0))
		worker_child_fail(c, "write", "/proc/self/autogroup");
	close(fd);
}

/* The job's CPU and I/O priority, as the job's user: it may only make
 * itself nicer than the worker, never take a place above others. */
static void
worker_child_priority(const struct worker_child *c)
{
	const struct pool_spec *spec = &c->run->spec;
	char arg[16];

	if (setpriority(PRIO_PROCESS, 0, spec->nice) == -1) {
		snprintf(arg, sizeof arg, "%d", spec->nice);
		worker_child_fail(c, "setpriority", arg);
	}
	if (spec->io_idle && syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
	    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) == -1)
		worker_child_fail(c, "ioprio_set", "idle");
}

void
worker_child_exec(const struct worker_child *c)
{
	const struct wmsg_run *run = c->run;

	/* The job is its own session and process group, so that signalling
	 * -pid reaches all of it and nothing of the worker's. */
	if (setsid() == -1)
		worker_child_fail(c, "setsid", NULL);
	worker_child_signals(c);
	worker_child_autogroup(c);
	if (run->spec.set_creds)
		worker_child_creds(c);
	worker_child_priority(c);
	/* After the credential change, which clears it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		worker_child_fail(c, "prctl", "PR_SET_PDEATHSIG");
	if (getppid() != c->worker)
		_exit(127);	/* the worker died already: nobody to tell */
	/* Setuid programs (sudo, ping) work in jobs unless the admin chose
	 * otherwise; the flag is inherited and can never be unset. */
	if (run->spec.no_new_privs &&
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		worker_child_fail(c, "prctl", "PR_SET_NO_NEW_PRIVS");
	/* As the job's user, so that it only gets where that user may go. */
	if (chdir(run->spec.cwd) == -1)
		worker_child_fail(c, "chdir", run->spec.cwd);
	worker_child_fds(c);
	/* execvp looks argv[0] up in the PATH of environ: the job's own. */
	environ = run->envp;
	execvp(run->argv[0], run->argv);
	worker_child_fail(c, "exec", run->argv[0]);
}
