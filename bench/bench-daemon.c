/* bench-daemon.c - for the benchmark: a real triaged on a fresh temp dir, in
 * its own process group, never left running or on disk after the run. */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-daemon.h"
#include "bench-proc.h"
#include "bench-tmpdir.h"
#include "client.h"

/* How long the daemon may take to answer on its socket, or to exit. */
#define BENCH_DAEMON_TIMEOUT_MS 30000
#define BENCH_DAEMON_POLL_MS 5
/* Daemons running at once: a cluster of 3 nodes, and room to spare. */
#define BENCH_DAEMON_MAX_RUNNING 8


/* The mask main() had before the guard blocked the signals: the daemon gets
 * it back, since a blocked mask survives exec. */
static sigset_t bench_daemon_oldmask;
static atomic_int bench_daemon_signal;
/* The running daemons' process groups, 0 in a free place (a cluster
 * benchmark runs several at once). Under the lock, so that the guard never
 * kills a group whose leader has been reaped (its id could be reused). */
static pthread_mutex_t bench_daemon_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t bench_daemon_current[BENCH_DAEMON_MAX_RUNNING];
/* Another program's group the guard kills too (a reference server). */
static pid_t bench_daemon_other;

void
bench_daemon_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		continue;
}

/* Makes pid's group one the guard kills. 0, or -1 when there are too many
 * daemons running (the caller stops this one). */
static int
bench_daemon_set_current(pid_t pid)
{
	int i, rc = -1;

	pthread_mutex_lock(&bench_daemon_lock);
	for (i = 0; i < BENCH_DAEMON_MAX_RUNNING && rc == -1; i++) {
		if (bench_daemon_current[i] == 0) {
			bench_daemon_current[i] = pid;
			rc = 0;
		}
	}
	pthread_mutex_unlock(&bench_daemon_lock);
	return rc;
}

/* Kills the whole group of d, then forgets it: the caller reaps next. */
static void
bench_daemon_kill_group(struct bench_daemon *d)
{
	int i;

	pthread_mutex_lock(&bench_daemon_lock);
	/* ESRCH: the group is gone already; nothing else can fail here. */
	(void)kill(-d->pid, SIGKILL);
	for (i = 0; i < BENCH_DAEMON_MAX_RUNNING; i++) {
		if (bench_daemon_current[i] == d->pid)
			bench_daemon_current[i] = 0;
	}
	pthread_mutex_unlock(&bench_daemon_lock);
}

static void *
bench_daemon_guard_cb(void *arg)
{
	const sigset_t *set = arg;
	int sig, i;

	for (;;) {
		if (sigwait(set, &sig) != 0)
			continue;
		/* A second signal: the user does not want to wait for the
		 * cleanup. The daemon dies with us (PR_SET_PDEATHSIG). */
		if (atomic_exchange(&bench_daemon_signal, sig) != 0)
			_exit(128 + sig);
		pthread_mutex_lock(&bench_daemon_lock);
		for (i = 0; i < BENCH_DAEMON_MAX_RUNNING; i++) {
			if (bench_daemon_current[i] > 0)
				(void)kill(-bench_daemon_current[i], SIGKILL);
		}
		if (bench_daemon_other > 0)
			(void)kill(-bench_daemon_other, SIGKILL);
		pthread_mutex_unlock(&bench_daemon_lock);
	}
	return NULL;
}

int
bench_daemon_guard(void)
{
	static sigset_t set;
	pthread_attr_t attr;
	pthread_t thread;
	int rc;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if ((rc = pthread_sigmask(SIG_BLOCK, &set, &bench_daemon_oldmask)) != 0)
		goto fail;
	if ((rc = pthread_attr_init(&attr)) != 0)
		goto fail;
	if ((rc = pthread_attr_setdetachstate(&attr,
	    PTHREAD_CREATE_DETACHED)) == 0)
		rc = pthread_create(&thread, &attr, bench_daemon_guard_cb, &set);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		goto fail;
	return 0;
fail:
	errno = rc;
	return -1;
}

void
bench_daemon_guard_group(pid_t pgid)
{
	pthread_mutex_lock(&bench_daemon_lock);
	bench_daemon_other = pgid;
	pthread_mutex_unlock(&bench_daemon_lock);
}

void
bench_daemon_kill_other(pid_t pgid)
{
	pthread_mutex_lock(&bench_daemon_lock);
	(void)kill(-pgid, SIGKILL);
	if (bench_daemon_other == pgid)
		bench_daemon_other = 0;
	pthread_mutex_unlock(&bench_daemon_lock);
}

int
bench_daemon_interrupted(void)
{
	return atomic_load(&bench_daemon_signal);
}

/*
 * The daemon's environment: ours without what would point it elsewhere or
 * set the knob, plus TRIAGED_GROUP_COMMIT=0 when not grouped. Built before
 * fork(), since the child of a threaded process may only call what is
 * async-signal-safe. The strings are borrowed; free the array only.
 */
static char **
bench_daemon_env(bool grouped)
{
	static const char *const drop[] = {
		"TRIAGE_SOCKET=", "TRIAGE_CONFIG=", "TRIAGED_GROUP_COMMIT=",
	};
	static char knob[] = "TRIAGED_GROUP_COMMIT=0";
	char *const add[] = { knob };

	return bench_proc_env(drop, sizeof drop / sizeof drop[0], add,
	    grouped ? 0 : 1);
}

static int
bench_daemon_write_conf(const struct bench_daemon *d,
    const struct bench_daemon_conf *conf)
{
	FILE *f;
	int rc;

	if ((f = fopen(d->conf, "w")) == NULL)
		return -1;
	/* The queue limits at their maximum: nothing may be refused. */
	rc = fprintf(f, "[daemon]\nsocket = %s\nstate_dir = %s\n"
	    "log_level = warning\nmax_queued_per_user = 100000000\n%s\n%s",
	    d->sock, d->state, conf->daemon != NULL ? conf->daemon : "",
	    conf->priorities != NULL ? conf->priorities :
	    "[priority.normal]\nrank = 10\nmax_queued = 100000000\n");
	if (rc >= 0 && conf->http)
		rc = fprintf(f, "[http]\nlisten = %s\nauth = none\n", d->http);
	if (rc >= 0 && conf->cluster != NULL)
		rc = fprintf(f, "[cluster]\n%s", conf->cluster);
	if (fclose(f) == EOF || rc < 0)
		return -1;
	return 0;
}

/* Sets *cause (allocated) to "what: strerror(errnum)". */
static void
bench_daemon_cause(char **cause, const char *what, int errnum)
{
	if (asprintf(cause, "%s: %s", what, strerror(errnum)) == -1)
		*cause = NULL;
}

/* Whether the daemon has exited. WNOWAIT leaves the leader a zombie, so its
 * group id cannot be reused before the rest of the group is killed. */
static int
bench_daemon_exited(const struct bench_daemon *d, bool *exited)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)d->pid, &si, WEXITED | WNOHANG | WNOWAIT)
	    == -1)
		return -1;
	*exited = si.si_pid == d->pid;
	return 0;
}

/* Kills what is left of the group and reaps the daemon. 0 or -1. */
static int
bench_daemon_reap(struct bench_daemon *d, int *status)
{
	bench_daemon_kill_group(d);
	while (waitpid(d->pid, status, 0) == -1) {
		if (errno != EINTR)
			return -1;
	}
	d->pid = 0;
	return 0;
}

/* Polls until the socket answers, the daemon exits or time runs out. */
static int
bench_daemon_ready(struct bench_daemon *d, char **cause)
{
	struct client *c;
	char *why = NULL;
	bool exited;
	int i;

	for (i = 0; i < BENCH_DAEMON_TIMEOUT_MS / BENCH_DAEMON_POLL_MS; i++) {
		if (bench_daemon_exited(d, &exited) == -1) {
			bench_daemon_cause(cause, "waitid", errno);
			return -1;
		}
		if (exited) {
			bench_daemon_dump_log(d);
			*cause = strdup("triaged exited before it was ready "
			    "(its log is above)");
			return -1;
		}
		if (bench_daemon_interrupted() != 0) {
			*cause = strdup("interrupted");
			return -1;
		}
		if ((c = client_connect(d->sock, &why)) != NULL) {
			client_free(c);
			return 0;
		}
		free(why);
		why = NULL;
		bench_daemon_sleep_ms(BENCH_DAEMON_POLL_MS);
	}
	bench_daemon_dump_log(d);
	if (asprintf(cause, "triaged did not answer on %s within %d s",
	    d->sock, BENCH_DAEMON_TIMEOUT_MS / 1000) == -1)
		*cause = NULL;
	return -1;
}

/* Starts triaged on d's files and waits until it answers; 0, or -1 with
 * *cause set (allocated) and the daemon, if any, reaped. */
static int
bench_daemon_spawn(struct bench_daemon *d, char **cause)
{
	char bin[PATH_MAX + 16];
	char **env = NULL;
	pid_t ppid = getpid();
	int fd;

	if (bench_proc_beside("triaged", bin, sizeof bin) == -1) {
		bench_daemon_cause(cause, "cannot find triaged beside "
		    "/proc/self/exe", errno);
		return -1;
	}
	if (access(bin, X_OK) == -1) {
		if (asprintf(cause, "%s: %s", bin, strerror(errno)) == -1)
			*cause = NULL;
		return -1;
	}
	if ((env = bench_daemon_env(!d->ungrouped)) == NULL) {
		bench_daemon_cause(cause, "cannot start triaged", errno);
		return -1;
	}
	if ((d->pid = fork()) == -1) {
		d->pid = 0;
		bench_daemon_cause(cause, "cannot fork", errno);
		free(env);
		return -1;
	}
	if (d->pid == 0) {
		/* The parent does the same: whichever runs first wins. */
		(void)setpgid(0, 0);
		/* If the benchmark dies, its daemon follows (and the
		 * daemon's workers follow the daemon). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
		    getppid() != ppid)
			_exit(127);
		fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		    0600);
		if (fd == -1 || dup2(fd, 1) == -1 || dup2(fd, 2) == -1)
			_exit(127);
		if (pthread_sigmask(SIG_SETMASK, &bench_daemon_oldmask,
		    NULL) != 0)
			_exit(127);
		execle(bin, "triaged", "--config", d->conf, (char *)NULL, env);
		_exit(127);
	}
	free(env);
	/* Also here: the guard may kill the group before the child ran.
	 * EACCES means the child has already exec'd, after its own setpgid. */
	if (setpgid(d->pid, d->pid) == -1 && errno != EACCES) {
		bench_daemon_cause(cause, "setpgid", errno);
		(void)bench_daemon_reap(d, NULL);
		return -1;
	}
	if (bench_daemon_set_current(d->pid) == -1) {
		if (asprintf(cause, "more than %d daemons at once",
		    BENCH_DAEMON_MAX_RUNNING) == -1)
			*cause = NULL;
		(void)bench_daemon_reap(d, NULL);
		return -1;
	}
	if (bench_daemon_ready(d, cause) == -1) {
		(void)bench_daemon_reap(d, NULL);
		return -1;
	}
	return 0;
}

struct bench_daemon *
bench_daemon_start(const char *parent, const struct bench_daemon_conf *conf,
    char **cause)
{
	static const struct bench_daemon_conf defaults;
	struct bench_daemon *d;

	*cause = NULL;
	if (conf == NULL)
		conf = &defaults;
	if ((d = calloc(1, sizeof *d)) == NULL) {
		bench_daemon_cause(cause, "cannot start triaged", errno);
		return NULL;
	}
	d->ungrouped = conf->ungrouped;
	if (bench_tmpdir_make(parent, "daemon", d->dir, sizeof d->dir) == -1) {
		if (asprintf(cause, "cannot make a temp dir in %s: %s", parent,
		    strerror(errno)) == -1)
			*cause = NULL;
		free(d);
		return NULL;
	}
	/* dir is at most 255 bytes and each name below short: no truncation,
	 * but a socket path over 107 bytes is the daemon's to refuse. */
	snprintf(d->sock, sizeof d->sock, "%s/sock", d->dir);
	snprintf(d->conf, sizeof d->conf, "%s/triage.conf", d->dir);
	snprintf(d->log, sizeof d->log, "%s/log", d->dir);
	snprintf(d->state, sizeof d->state, "%s/state", d->dir);
	snprintf(d->http, sizeof d->http, "%s/http.sock", d->dir);
	if (bench_daemon_write_conf(d, conf) == -1) {
		bench_daemon_cause(cause, d->conf, errno);
		goto fail;
	}
	if (bench_daemon_spawn(d, cause) == -1)
		goto fail;
	return d;

fail:
	bench_daemon_free(d);
	return NULL;
}

int
bench_daemon_restart(struct bench_daemon *d, double *ready_s, char **cause)
{
	struct timespec t0, t1;

	if (bench_daemon_stop(d, cause) == -1)
		return -1;
	/* CLOCK_MONOTONIC cannot fail with a valid clock id and pointer. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (bench_daemon_spawn(d, cause) == -1)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ready_s != NULL)
		*ready_s = (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return 0;
}

int
bench_daemon_stop(struct bench_daemon *d, char **cause)
{
	bool exited = false;
	int status, i;

	*cause = NULL;
	if (d->pid <= 0)
		return 0;
	if (kill(d->pid, SIGTERM) == -1) {
		bench_daemon_cause(cause, "cannot stop triaged", errno);
		return -1;
	}
	for (i = 0; i < BENCH_DAEMON_TIMEOUT_MS / BENCH_DAEMON_POLL_MS; i++) {
		if (bench_daemon_exited(d, &exited) == -1) {
			bench_daemon_cause(cause, "waitid", errno);
			return -1;
		}
		if (exited)
			break;
		bench_daemon_sleep_ms(BENCH_DAEMON_POLL_MS);
	}
	if (bench_daemon_reap(d, &status) == -1) {
		bench_daemon_cause(cause, "waitpid", errno);
		return -1;
	}
	if (!exited) {
		if (asprintf(cause, "triaged did not exit within %d s of "
		    "SIGTERM", BENCH_DAEMON_TIMEOUT_MS / 1000) == -1)
			*cause = NULL;
		return -1;
	}
	if (WIFSIGNALED(status)) {
		if (asprintf(cause, "triaged died of signal %d after SIGTERM",
		    WTERMSIG(status)) == -1)
			*cause = NULL;
		return -1;
	}
	if (WEXITSTATUS(status) != 0) {
		if (asprintf(cause, "triaged exited with status %d after "
		    "SIGTERM", WEXITSTATUS(status)) == -1)
			*cause = NULL;
		return -1;
	}
	return 0;
}

void
bench_daemon_free(struct bench_daemon *d)
{
	if (d == NULL)
		return;
	if (d->pid > 0 && bench_daemon_reap(d, NULL) == -1)
		fprintf(stderr, "bench: waitpid %d: %s\n", (int)d->pid,
		    strerror(errno));
	if (bench_tmpdir_remove(d->dir) == -1)
		fprintf(stderr, "bench: cannot remove %s: %s\n", d->dir,
		    strerror(errno));
	free(d);
}

bool
bench_daemon_finish(struct bench_daemon *d, const char *prog, bool ok)
{
	char *cause = NULL;

	if (d == NULL)
		return ok;
	if (bench_daemon_stop(d, &cause) == -1 &&
	    bench_daemon_interrupted() == 0) {
		fprintf(stderr, "%s: %s\n", prog, cause ? cause : "oom");
		ok = false;
	}
	free(cause);
	if (!ok && bench_daemon_interrupted() == 0)
		bench_daemon_dump_log(d);
	bench_daemon_free(d);
	return ok;
}

void
bench_daemon_dump_log(const struct bench_daemon *d)
{
	bench_daemon_dump_file("triaged", d->log);
}

void
bench_daemon_dump_file(const char *what, const char *path)
{
	char line[1024];
	FILE *f;

	if ((f = fopen(path, "r")) == NULL)
		return;
	fprintf(stderr, "---- %s log (%s) ----\n", what, path);
	while (fgets(line, sizeof line, f) != NULL)
		fputs(line, stderr);
	fprintf(stderr, "---- end of log ----\n");
	fclose(f);
}
