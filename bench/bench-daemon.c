/* bench-daemon.c - for the benchmark: a real triaged on a fresh temp dir, in
 * its own process group, never left running or on disk after the run. */
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-daemon.h"
#include "bench-why.h"
#include "tsupport-child.h"
#include "tsupport-clock.h"
#include "tsupport-daemon.h"
#include "tsupport-dir.h"
#include "tsupport-proc.h"

/* How long the daemon may take to answer on its socket, or to exit. */
#define BENCH_DAEMON_TIMEOUT_MS 30000
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

const sigset_t *
bench_daemon_child_mask(void)
{
	return &bench_daemon_oldmask;
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

	return tsupport_child_env(drop, sizeof drop / sizeof drop[0], add,
	    grouped ? 0 : 1);
}

/* Kills what is left of the group and reaps the daemon. 0 or -1. */
static int
bench_daemon_reap(struct bench_daemon *d, int *status)
{
	bench_daemon_kill_group(d);
	if (tsupport_child_reap(d->pid, false, status) == -1)
		return -1;
	d->pid = 0;
	return 0;
}

/* Starts triaged on d's files and waits until it answers; 0, or -1 with
 * *cause set (allocated) and the daemon, if any, reaped. */
static int
bench_daemon_spawn(struct bench_daemon *d, char **cause)
{
	static char name[] = "triaged", opt[] = "--config";
	char bin[PATH_MAX + 16], *argv[] = { name, opt, d->conf, NULL };
	struct tsupport_child c = {
		.path = bin, .argv = argv, .leader = true, .log = d->log,
		.deathsig = SIGKILL, .mask = &bench_daemon_oldmask,
	};
	struct tsupport_err err;
	char **env;

	if (tsupport_proc_beside("triaged", 0, bin, sizeof bin) == -1) {
		bench_why_alloc(cause, "cannot find triaged beside "
		    "/proc/self/exe: %s", strerror(errno));
		return -1;
	}
	if (access(bin, X_OK) == -1) {
		bench_why_alloc(cause, "%s: %s", bin, strerror(errno));
		return -1;
	}
	if ((c.envp = env = bench_daemon_env(!d->ungrouped)) == NULL) {
		bench_why_alloc(cause, "cannot start triaged: %s",
		    strerror(errno));
		return -1;
	}
	d->pid = tsupport_child_spawn(&c, &err);
	free(env);
	if (d->pid == -1) {
		d->pid = 0;
		*cause = strdup(err.msg);
		return -1;
	}
	if (bench_daemon_set_current(d->pid) == -1) {
		bench_why_alloc(cause, "more than %d daemons at once",
		    BENCH_DAEMON_MAX_RUNNING);
		(void)bench_daemon_reap(d, NULL);
		return -1;
	}
	if (tsupport_daemon_ready(d->pid, d->sock, BENCH_DAEMON_TIMEOUT_MS,
	    &err) == -1) {
		if (bench_daemon_interrupted() != 0) {
			*cause = strdup("interrupted");
		} else {
			bench_daemon_dump_log(d);
			bench_why_alloc(cause, "%s (its log is above)",
			    err.msg);
		}
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
	struct tsupport_err err;
	struct bench_daemon *d;

	*cause = NULL;
	if (conf == NULL)
		conf = &defaults;
	if ((d = calloc(1, sizeof *d)) == NULL) {
		bench_why_alloc(cause, "cannot start triaged: %s",
		    strerror(errno));
		return NULL;
	}
	d->ungrouped = conf->ungrouped;
	if (tsupport_dir_make(d->dir, sizeof d->dir, parent,
	    "triage-bench-daemon", &err) == -1) {
		*cause = strdup(err.msg);
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
	/* The queue limits at their maximum: nothing may be refused. */
	if (tsupport_daemon_conf(d->conf, d->sock, d->state, &err,
	    "log_level = warning\nmax_queued_per_user = 100000000\n%s\n%s"
	    "%s%s%s%s%s%s", conf->daemon != NULL ? conf->daemon : "",
	    conf->priorities != NULL ? conf->priorities :
	    "[priority.normal]\nrank = 10\nmax_queued = 100000000\n",
	    conf->sections != NULL ? conf->sections : "",
	    conf->http ? "[http]\nlisten = " : "", conf->http ? d->http : "",
	    conf->http ? "\nauth = none\n" : "",
	    conf->cluster != NULL ? "[cluster]\n" : "",
	    conf->cluster != NULL ? conf->cluster : "") == -1) {
		*cause = strdup(err.msg);
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
	double t0;

	if (bench_daemon_stop(d, cause) == -1)
		return -1;
	t0 = tsupport_clock_s();
	if (bench_daemon_spawn(d, cause) == -1)
		return -1;
	if (ready_s != NULL)
		*ready_s = tsupport_clock_s() - t0;
	return 0;
}

int
bench_daemon_stop(struct bench_daemon *d, char **cause)
{
	struct tsupport_err err;
	int status, rc;

	*cause = NULL;
	if (d->pid <= 0)
		return 0;
	rc = tsupport_daemon_stop(d->pid, BENCH_DAEMON_TIMEOUT_MS, &err);
	if (bench_daemon_reap(d, &status) == -1) {
		bench_why_alloc(cause, "waitpid: %s", strerror(errno));
		return -1;
	}
	if (rc == -1)
		*cause = strdup(err.msg);
	else if (WIFSIGNALED(status))
		bench_why_alloc(cause, "triaged died of signal %d after "
		    "SIGTERM", WTERMSIG(status));
	else if (WEXITSTATUS(status) != 0)
		bench_why_alloc(cause, "triaged exited with status %d after "
		    "SIGTERM", WEXITSTATUS(status));
	else
		return 0;
	return -1;
}

void
bench_daemon_free(struct bench_daemon *d)
{
	struct tsupport_err err;

	if (d == NULL)
		return;
	if (d->pid > 0 && bench_daemon_reap(d, NULL) == -1)
		fprintf(stderr, "bench: waitpid %d: %s\n", (int)d->pid,
		    strerror(errno));
	if (tsupport_dir_remove(d->dir, &err) == -1)
		fprintf(stderr, "bench: %s\n", err.msg);
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
