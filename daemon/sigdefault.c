/* sigdefault.c - a forked child's way back to a fresh process's signal
 * state, for the worker and for the job it runs. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "clone3.h"
#include "sigdefault.h"

int
sigdefault_reset(const char **step)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		/* EINVAL: the signals glibc keeps for itself */
		if (sigaction(sig, &sa, NULL) == -1 && errno != EINVAL) {
			*step = "sigaction";
			return -1;
		}
	}
	if (sigemptyset(&none) == -1 ||
	    sigprocmask(SIG_SETMASK, &none, NULL) == -1) {
		*step = "sigprocmask";
		return -1;
	}
	return 0;
}

/* Runs start (a fork or a clone) with every signal blocked, and puts the
 * caller's mask back; a child that exists when that cannot be done is
 * killed and reaped. */
static pid_t
sigdefault_blocked(pid_t (*start)(void *), void *arg)
{
	sigset_t all, old;
	pid_t pid;
	int error;

	if (sigfillset(&all) == -1 ||
	    sigprocmask(SIG_SETMASK, &all, &old) == -1)
		return -1;
	if ((pid = start(arg)) == 0)
		return 0;
	error = errno;
	if (sigprocmask(SIG_SETMASK, &old, NULL) == -1 && pid != -1) {
		/* Cannot fail with the mask it just gave; but never go on
		 * with every signal blocked, nor leave a child behind. */
		error = errno;
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
		pid = -1;
	}
	errno = error;
	return pid;
}

static pid_t
sigdefault_fork_start(void *arg)
{
	(void)arg;
	return fork();
}

pid_t
sigdefault_fork(void)
{
	return sigdefault_blocked(sigdefault_fork_start, NULL);
}

struct sigdefault_clone {
	int (*fn)(void *);
	void *stack_top;
	void *arg;
};

static pid_t
sigdefault_clone_start(void *arg)
{
	const struct sigdefault_clone *c = arg;

	/* SIGCHLD: the parent reaps it as it would a forked child. */
	return clone(c->fn, c->stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD,
	    c->arg);
}

pid_t
sigdefault_vfork(int (*fn)(void *), void *stack_top, void *arg)
{
	struct sigdefault_clone c = { fn, stack_top, arg };

	return sigdefault_blocked(sigdefault_clone_start, &c);
}

struct sigdefault_clone3 {
	int (*fn)(void *);
	void *stack;
	size_t stack_size;
	void *arg;
	int cgroup_fd;
};

static pid_t
sigdefault_clone3_start(void *arg)
{
	const struct sigdefault_clone3 *c = arg;

	return clone3_into(c->fn, c->arg, c->stack, c->stack_size,
	    c->cgroup_fd);
}

pid_t
sigdefault_clone3(int (*fn)(void *), void *stack, size_t stack_size,
    void *arg, int cgroup_fd)
{
	struct sigdefault_clone3 c = { fn, stack, stack_size, arg, cgroup_fd };

	return sigdefault_blocked(sigdefault_clone3_start, &c);
}
