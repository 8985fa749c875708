/* tsupport-child.h - for tests and benchmarks: the servers and programs they
 * start (a triaged, a PostgreSQL, initdb), from the fork to the reaping. */
#ifndef TRIAGE_TSUPPORT_CHILD_H
#define TRIAGE_TSUPPORT_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tsupport-err.h"

/* Groups of a user a child takes on, at most. */
#define TSUPPORT_CHILD_GROUPS 64

/* Who a child runs as: looked up before the fork, since the child of a
 * threaded program may call only what is async-signal-safe. */
struct tsupport_child_user {
	char	name[64];
	uid_t	uid;
	gid_t	gid;
	gid_t	groups[TSUPPORT_CHILD_GROUPS];
	int	ngroups;
};

/* How tsupport_child_spawn starts a program; zero is "as we are". */
struct tsupport_child {
	const char	*path;		/* the program; with search, a name
					 * looked up in $PATH */
	char *const	*argv;
	char *const	*envp;		/* NULL: ours */
	bool		 search;
	bool		 leader;	/* leads a process group of its own */
	const char	*log;		/* stdout and stderr, appended; made
					 * 0600. NULL: ours */
	const char	*cwd;		/* NULL: ours */
	const struct tsupport_child_user *user;	/* NULL: ours */
	int		 deathsig;	/* what it gets when we die; 0: none */
	const sigset_t	*mask;		/* its signal mask; NULL: ours */
};

/* The user name's ids and groups into *u. 0, or -1 with err. */
int tsupport_child_user(const char *name, struct tsupport_child_user *u,
    struct tsupport_err *err);
/*
 * Forks and execs the program as c says. A child that cannot do so exits
 * 127, saying why on its stderr (the log). Returns its pid, or -1 with err
 * and nothing left running.
 */
pid_t tsupport_child_spawn(const struct tsupport_child *c,
    struct tsupport_err *err);
/*
 * Our environment without the variables whose "NAME=" prefixes drop lists,
 * plus add's "NAME=value" strings, for a child's envp. The strings are
 * borrowed: free the array only. NULL out of memory.
 */
char **tsupport_child_env(const char *const *drop, size_t ndrop,
    char *const *add, size_t nadd);
/*
 * Whether pid has exited: 1 with *status (a wait status, NULL for none),
 * 0 while it runs, -1 with errno. It stays a zombie until
 * tsupport_child_reap (WNOWAIT), so that its process group id cannot be
 * reused before the rest of the group is killed.
 */
int tsupport_child_exited(pid_t pid, int *status);
/*
 * Polls until pid exits (left to tsupport_child_reap) and returns 0; -1
 * with errno ETIMEDOUT past timeout_ms, EINTR once interrupted (when not
 * NULL) returns non-zero, or waitid's.
 */
int tsupport_child_wait(pid_t pid, int timeout_ms, int (*interrupted)(void));
/* Reaps pid, after a SIGKILL of its whole process group when group is set
 * (pid its leader). *status is its wait status when not NULL. 0 or -1. */
int tsupport_child_reap(pid_t pid, bool group, int *status);
/*
 * Ends the group pid leads: stop_signal (0: none) first, with SIGCONT, and
 * up to timeout_ms for pid to exit by itself; then SIGKILL to the group,
 * and pid reaped. Async-signal-safe: a test's handler of SIGTERM ends its
 * servers with it.
 */
void tsupport_child_end(pid_t pid, int stop_signal, int timeout_ms);

#endif
