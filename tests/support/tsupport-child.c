/* tsupport-child.c - for tests and benchmarks: the servers and programs they
 * start (a triaged, a PostgreSQL, initdb), from the fork to the reaping. */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tsupport-child.h"
#include "tsupport-clock.h"

/* How often the waits look. */
#define TSUPPORT_CHILD_POLL_MS 5

extern char **environ;

int
tsupport_child_user(const char *name, struct tsupport_child_user *u,
    struct tsupport_err *err)
{
	const struct passwd *pw;

	if ((pw = getpwnam(name)) == NULL)
		return tsupport_err_set(err, "no user %s", name);
	snprintf(u->name, sizeof u->name, "%s", name);
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->ngroups = TSUPPORT_CHILD_GROUPS;
	if (getgrouplist(name, u->gid, u->groups, &u->ngroups) == -1)
		return tsupport_err_set(err, "user %s is in more than %d groups",
		    name, TSUPPORT_CHILD_GROUPS);
	return 0;
}

/* Says on stderr why the child cannot go on, and exits 127. Only what is
 * async-signal-safe: strerrordesc_np reads a table. */
static void __attribute__((noreturn))
tsupport_child_die(const char *what, const char *arg)
{
	const char *why = strerrordesc_np(errno);

	dprintf(STDERR_FILENO, "cannot %s %s: %s\n", what, arg,
	    why != NULL ? why : "?");
	_exit(127);
}

/* In the child: becomes what c says and execs; never returns. */
static void __attribute__((noreturn))
tsupport_child_exec(const struct tsupport_child *c, pid_t parent)
{
	const struct tsupport_child_user *u = c->user;
	int fd;

	if (c->leader)
		(void)setpgid(0, 0);
	if (c->log != NULL && ((fd = open(c->log, O_WRONLY | O_CREAT |
	    O_APPEND | O_CLOEXEC, 0600)) == -1 || dup2(fd, 1) == -1 ||
	    dup2(fd, 2) == -1))
		_exit(127);
	if (c->cwd != NULL && chdir(c->cwd) == -1)
		tsupport_child_die("enter", c->cwd);
	if (u != NULL && (setgroups((size_t)u->ngroups, u->groups) == -1 ||
	    setgid(u->gid) == -1 || setuid(u->uid) == -1))
		tsupport_child_die("become", u->name);
	/* After the change of user, which clears it; and too late if the
	 * parent is gone already. */
	if (c->deathsig != 0 && (prctl(PR_SET_PDEATHSIG, c->deathsig) == -1 ||
	    getppid() != parent))
		_exit(127);
	if (c->mask != NULL)
		(void)sigprocmask(SIG_SETMASK, c->mask, NULL);
	if (c->search)
		execvpe(c->path, c->argv, c->envp ? c->envp : environ);
	else
		execve(c->path, c->argv, c->envp ? c->envp : environ);
	tsupport_child_die("run", c->path);
}

pid_t
tsupport_child_spawn(const struct tsupport_child *c,
    struct tsupport_err *err)
{
	pid_t parent = getpid(), pid;

	if ((pid = fork()) == -1)
		return tsupport_err_set(err, "cannot fork: %s",
		    strerror(errno));
	if (pid == 0)
		tsupport_child_exec(c, parent);
	/* Also here, whichever runs first: a signal may kill the group
	 * before the child ran. EACCES: the child has exec'd, after its
	 * own setpgid. */
	if (c->leader && setpgid(pid, pid) == -1 && errno != EACCES) {
		tsupport_err_set(err, "setpgid: %s", strerror(errno));
		(void)tsupport_child_reap(pid, true, NULL);
		return -1;
	}
	return pid;
}

char **
tsupport_child_env(const char *const *drop, size_t ndrop, char *const *add,
    size_t nadd)
{
	char **env;
	size_t n, i, j, k;
	bool keep;

	for (n = 0; environ[n] != NULL; n++)
		continue;
	if ((env = calloc(n + nadd + 1, sizeof *env)) == NULL)
		return NULL;
	for (i = 0, k = 0; i < n; i++) {
		keep = true;
		for (j = 0; j < ndrop; j++)
			if (strncmp(environ[i], drop[j], strlen(drop[j])) == 0)
				keep = false;
		if (keep)
			env[k++] = environ[i];
	}
	for (j = 0; j < nadd; j++)
		env[k++] = add[j];
	env[k] = NULL;
	return env;
}

int
tsupport_child_exited(pid_t pid, int *status)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1)
		return -1;
	if (si.si_pid != pid)
		return 0;
	if (status != NULL)
		*status = si.si_code == CLD_EXITED ?
		    W_EXITCODE(si.si_status, 0) : W_EXITCODE(0, si.si_status);
	return 1;
}

int
tsupport_child_wait(pid_t pid, int timeout_ms, int (*interrupted)(void))
{
	int64_t deadline = tsupport_clock_ms() + timeout_ms;
	int rc;

	while ((rc = tsupport_child_exited(pid, NULL)) == 0) {
		if (interrupted != NULL && interrupted() != 0) {
			errno = EINTR;
			return -1;
		}
		if (tsupport_clock_left_ms(deadline) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		tsupport_clock_sleep_ms(TSUPPORT_CHILD_POLL_MS);
	}
	return rc == 1 ? 0 : -1;
}

int
tsupport_child_reap(pid_t pid, bool group, int *status)
{
	/* ESRCH: the group is gone already. */
	if (group)
		(void)kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

void
tsupport_child_end(pid_t pid, int stop_signal, int timeout_ms)
{
	struct timespec nap = { 0, 10 * 1000000 };
	int i;

	if (pid <= 0)
		return;
	if (stop_signal != 0) {
		kill(pid, SIGCONT);
		kill(pid, stop_signal);
		for (i = 0; i < timeout_ms / 10; i++) {
			if (waitpid(pid, NULL, WNOHANG) == pid)
				return;
			nanosleep(&nap, NULL);
		}
	}
	/* SIGKILL cannot be refused: the blocking wait ends. */
	kill(-pid, SIGKILL);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		continue;
}
