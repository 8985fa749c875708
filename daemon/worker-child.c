/* worker-child.c - the job child between a worker's spawn and the job's exec:
 * its own session, default signals, credentials, priority, cwd, fds and
 * environment. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/ioprio.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "sigdefault.h"
#include "worker-child.h"

/* The 32-bit id calls where the plain ones take 16-bit ids (i386, arm). */
#ifdef SYS_setgroups32
#define WORKER_CHILD_SETGROUPS	SYS_setgroups32
#define WORKER_CHILD_SETRESGID	SYS_setresgid32
#define WORKER_CHILD_SETRESUID	SYS_setresuid32
#define WORKER_CHILD_SETUID	SYS_setuid32
#else
#define WORKER_CHILD_SETGROUPS	SYS_setgroups
#define WORKER_CHILD_SETRESGID	SYS_setresgid
#define WORKER_CHILD_SETRESUID	SYS_setresuid
#define WORKER_CHILD_SETUID	SYS_setuid
#endif

/*
 * The child runs on a stack of its own while it shares the worker's
 * memory: the worker's, below the clone, is in use. What it needs is a
 * path buffer and snprintf's frames; a guard page below catches the rest.
 */
#define WORKER_CHILD_STACK	(128 * 1024)

/*
 * Everything below runs in the child, which shares the worker's memory
 * until exec: it must not allocate (the worker's heap is not its own), nor
 * write any memory of the worker's but its own stack (errno aside, which
 * the worker does not read across the spawn). Hence raw system calls for
 * the credentials (no library state touched) and strerrordesc_np (a
 * constant string, never a buffer).
 */

/* Tells the worker which step failed ("chdir /nope: No such file or
 * directory") and ends the child; 127 is the shell's "could not run". */
static void __attribute__((noreturn))
worker_child_fail(const struct worker_child *c, const char *step,
    const char *arg)
{
	const char *what = strerrordesc_np(errno);
	char msg[256];
	int n;

	if (what == NULL)
		what = "Unknown error";
	if (arg != NULL)
		n = snprintf(msg, sizeof msg, "%s %s: %s", step, arg, what);
	else
		n = snprintf(msg, sizeof msg, "%s: %s", step, what);
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
 * blocked (the spawn blocks everything, the worker SIGCHLD and SIGTERM). */
static void
worker_child_signals(const struct worker_child *c)
{
	const char *step;

	if (sigdefault_reset(&step) == -1)
		worker_child_fail(c, step, NULL);
}

/* Supplementary groups (resolved by the worker), then gid, then uid: each
 * step needs the privilege the next one gives up. */
static void
worker_child_creds(const struct worker_child *c)
{
	const struct pool_spec *spec = &c->run->spec;
	char arg[32];

	if (syscall(WORKER_CHILD_SETGROUPS, c->ngroups, c->groups) == -1) {
		if (c->user != NULL)
			worker_child_fail(c, "initgroups", c->user);
		snprintf(arg, sizeof arg, "%lu", (unsigned long)spec->gid);
		worker_child_fail(c, "setgroups", arg);
	}
	/* What setgid() and setuid() do for root: real, effective, saved. */
	if (syscall(WORKER_CHILD_SETRESGID, spec->gid, spec->gid,
	    spec->gid) == -1) {
		snprintf(arg, sizeof arg, "%lu", (unsigned long)spec->gid);
		worker_child_fail(c, "setgid", arg);
	}
	if (syscall(WORKER_CHILD_SETRESUID, spec->uid, spec->uid,
	    spec->uid) == -1) {
		snprintf(arg, sizeof arg, "%lu", (unsigned long)spec->uid);
		worker_child_fail(c, "setuid", arg);
	}
	/* Belt and braces: every id must be the job's, and root, once left,
	 * out of reach (setuid(0) only works while some id is still 0). */
	if (spec->uid != 0 && (getuid() != spec->uid ||
	    geteuid() != spec->uid || getgid() != spec->gid ||
	    getegid() != spec->gid || syscall(WORKER_CHILD_SETUID, 0) != -1 ||
	    syscall(WORKER_CHILD_SETRESUID, -1, 0, -1) != -1)) {
		errno = EPERM;
		worker_child_fail(c, "drop root", "root is still within reach");
	}
}

/* Closes every fd from 3 up but the ones in keep (ascending, n of them,
 * each above 2). */
static void
worker_child_close(const struct worker_child *c, const int *keep, size_t n)
{
	unsigned from = 3;
	size_t i;

	for (i = 0; i < n; i++) {
		if ((unsigned)keep[i] > from &&
		    close_range(from, (unsigned)keep[i] - 1, 0) == -1)
			worker_child_fail(c, "close_range", NULL);
		from = (unsigned)keep[i] + 1;
	}
	if (close_range(from, ~0U, 0) == -1)
		worker_child_fail(c, "close_range", NULL);
}

/* stdin from /dev/null, stdout and stderr to the pipes, the result file as
 * POOL_RESULT_FD (without CLOEXEC: the job's own), nothing else but the
 * CLOEXEC error pipe, which exec closes. Assumes: the worker keeps fds 0-2
 * open, so every fd it handed over is above 2 and survives the dup2s; and
 * it keeps POOL_RESULT_FD taken, so that neither the error pipe nor the
 * result file is that one. */
static void
worker_child_fds(const struct worker_child *c)
{
	int keep[2];

	/* merge_output is 2>&1: the stderr pipe then only sees its EOF. */
	if (dup2(c->null, STDIN_FILENO) == -1 ||
	    dup2(c->out, STDOUT_FILENO) == -1 ||
	    dup2(c->run->spec.merge_output ? c->out : c->err,
	    STDERR_FILENO) == -1)
		worker_child_fail(c, "dup2", NULL);
	if (c->result == -1) {
		worker_child_close(c, &c->errpipe, 1);
		return;
	}
	if (c->errpipe == POOL_RESULT_FD || c->result == POOL_RESULT_FD) {
		errno = EBUSY;
		worker_child_fail(c, "dup2", "the result file");
	}
	if (dup2(c->result, POOL_RESULT_FD) == -1)
		worker_child_fail(c, "dup2", "the result file");
	keep[0] = c->errpipe < POOL_RESULT_FD ? c->errpipe : POOL_RESULT_FD;
	keep[1] = c->errpipe < POOL_RESULT_FD ? POOL_RESULT_FD : c->errpipe;
	worker_child_close(c, keep, 2);
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
	int fd, n, nice = c->run->spec.nice;
	char text[16];

	if (nice == 0)
		return;
	if ((fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return;		/* a kernel without autogroups */
		worker_child_fail(c, "open", "/proc/self/autogroup");
	}
	n = snprintf(text, sizeof text, "%d", nice);
	if (write(fd, text, (size_t)n) != n &&
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

/* execve, and for a file of no known format sh, as execvp does; returns
 * with errno when neither ran. */
static void
worker_child_execve(const struct worker_child *c, char *file)
{
	execve(file, c->run->argv, c->run->envp);
	if (errno != ENOEXEC)
		return;
	c->sh_argv[1] = file;
	execve(c->sh_argv[0], c->sh_argv, c->run->envp);
}

/*
 * execvp(3) over the job's own PATH rather than the worker's environ: each
 * directory in turn, an empty one the cwd; EACCES reported only when no
 * directory had the file at all.
 */
static void
worker_child_execvp(const struct worker_child *c)
{
	char *file = c->run->argv[0], buf[PATH_MAX];
	const char *dir = c->path, *end;
	size_t dlen, flen = strlen(file);
	bool eacces = false;

	if (strchr(file, '/') != NULL) {
		worker_child_execve(c, file);
		return;
	}
	for (;; dir = end + 1) {
		end = strchrnul(dir, ':');
		dlen = (size_t)(end - dir);
		if (dlen + flen + 2 <= sizeof buf) {
			memcpy(buf, dir, dlen);
			if (dlen > 0)
				buf[dlen++] = '/';
			memcpy(buf + dlen, file, flen + 1);
			worker_child_execve(c, buf);
			switch (errno) {
			case EACCES:
				eacces = true;
				break;
			case ENOENT:
			case ESTALE:
			case ENOTDIR:
			case ENODEV:
			case ETIMEDOUT:
				break;
			default:
				return;
			}
		}
		if (*end == '\0')
			break;
	}
	errno = eacces ? EACCES : ENOENT;
}

/* Where clone3 could not place it: into its cgroup ("0", the writer),
 * before anything of the job's can run outside it. */
static void
worker_child_join(const struct worker_child *c)
{
	int fd;

	if ((fd = openat(c->cgroup_fd, "cgroup.procs", O_WRONLY |
	    O_CLOEXEC)) == -1 || write(fd, "0", 1) != 1)
		worker_child_fail(c, "join its cgroup", "cgroup.procs");
	close(fd);
}

/* The OOM killer's view of the job as of any process: the daemon's own as
 * it started (the daemon and its workers made themselves its last
 * choice). Before the credential change, which may forbid lowering it. */
static void
worker_child_oom_score(const struct worker_child *c)
{
	char text[16];
	int fd, n;

	if (c->oom_score_adj == POOL_OOM_SCORE_ADJ_SAME)
		return;
	n = snprintf(text, sizeof text, "%d", c->oom_score_adj);
	if ((fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC))
	    == -1 || write(fd, text, (size_t)n) != n)
		worker_child_fail(c, "write", "/proc/self/oom_score_adj");
	close(fd);
}

static int
worker_child_main(void *arg)
{
	const struct worker_child *c = arg;
	const struct wmsg_run *run = c->run;

	if (c->join_cgroup)
		worker_child_join(c);
	worker_child_oom_score(c);

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
	worker_child_execvp(c);
	worker_child_fail(c, "exec", run->argv[0]);
}

/*
 * The child's stack, made once per worker. NULL with errno. Under
 * AddressSanitizer every child leaves its frames' redzones marked in the
 * shadow (it never returns from them), where the next child's frames
 * would trip on them: each starts on a clean one.
 */
static char *
worker_child_stack(void)
{
	static char *top;
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	if (top == NULL) {
		if (page <= 0)
			page = 4096;
		p = mmap(NULL, WORKER_CHILD_STACK + (size_t)page, PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		/* The guard: an overflow faults rather than writing the
		 * worker's memory. */
		if (mprotect(p, (size_t)page, PROT_NONE) == -1) {
			munmap(p, WORKER_CHILD_STACK + (size_t)page);
			return NULL;
		}
		top = p + page + WORKER_CHILD_STACK;
	}
#if defined(__SANITIZE_ADDRESS__)
	ASAN_UNPOISON_MEMORY_REGION(top - WORKER_CHILD_STACK,
	    WORKER_CHILD_STACK);
#endif
	return top;
}

pid_t
worker_child_spawn(struct worker_child *c)
{
	/* Once clone3 has said it cannot place a child in a cgroup, it is
	 * not asked again: the kernel (or valgrind) will not change. */
	static bool no_clone3;
	char *stack;
	pid_t pid;

	if ((stack = worker_child_stack()) == NULL)
		return -1;
	c->join_cgroup = false;
	if (c->cgroup_fd != -1 && !no_clone3) {
		pid = sigdefault_clone3(worker_child_main,
		    stack - WORKER_CHILD_STACK, WORKER_CHILD_STACK, c,
		    c->cgroup_fd);
		if (pid != -1 || (errno != ENOSYS && errno != EINVAL &&
		    errno != E2BIG))
			return pid;
		no_clone3 = true;
	}
	c->join_cgroup = c->cgroup_fd != -1;
	return sigdefault_vfork(worker_child_main, stack, c);
}
