/* bench-daemon.h - for the benchmark: a real triaged on a fresh temp dir, in
 * its own process group, never left running or on disk after the run. */
#ifndef TRIAGE_BENCH_DAEMON_H
#define TRIAGE_BENCH_DAEMON_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct bench_daemon {
	pid_t pid;		/* also the process group; 0 once reaped */
	char dir[256];		/* everything of this daemon lives here */
	char sock[300];
	char conf[300];
	char log[300];
	char state[300];
	char http[300];		/* the [http] socket, with conf->http */
	bool ungrouped;		/* started with TRIAGED_GROUP_COMMIT=0 */
};

/* How to configure a benchmark's daemon; all zero is the default. */
struct bench_daemon_conf {
	bool ungrouped;		/* TRIAGED_GROUP_COMMIT=0: one commit a job */
	bool http;		/* [http] on a Unix socket, auth = none */
	const char *daemon;	/* more lines of [daemon] ("slots = 2\n") */
	const char *priorities;	/* the [priority.NAME] sections; NULL: one
				 * "normal" that queues up to 100000000 */
	const char *sections;	/* more sections ([resource.NAME]); NULL:
				 * none */
	const char *cluster;	/* the lines of a [cluster] section
				 * ("postgresql = ...\nnode = n1\n"); NULL:
				 * none, the jobs are kept in SQLite */
};

/*
 * Blocks SIGINT, SIGTERM and SIGHUP in every thread and starts a thread that
 * takes them: it kills the running daemons' process groups (up to 8 run at
 * once), so that the clients fail at once and the normal cleanup runs. Call
 * it first in main(), before any other thread exists. Returns 0, or -1 with
 * errno.
 */
int bench_daemon_guard(void);
/*
 * Another program the benchmark runs (a server it compares with) in a
 * process group of its own, pgid: the guard kills that group too, until
 * bench_daemon_kill_other(pgid) kills it (SIGKILL) and forgets it, under
 * the guard's lock, so that the guard never kills a reused id. The caller
 * reaps the leader after that.
 */
void bench_daemon_guard_group(pid_t pgid);
void bench_daemon_kill_other(pid_t pgid);
/* The signal mask main() had before the guard blocked its signals: a
 * child's, since a blocked mask survives exec. */
const sigset_t *bench_daemon_child_mask(void);
/* The signal that interrupted the benchmark, or 0. */
int bench_daemon_interrupted(void);

/*
 * Starts build/bin/triaged (found beside this binary) on a new temp dir made
 * under parent, configured by conf (NULL: the defaults), and waits until its
 * socket answers. Returns the daemon, or NULL with *cause set (allocated)
 * and nothing left behind.
 */
struct bench_daemon *bench_daemon_start(const char *parent,
    const struct bench_daemon_conf *conf, char **cause);
/*
 * Stops the daemon (as bench_daemon_stop) and starts it again on the same
 * files; *ready_s (when not NULL) is the time from the start to the first
 * answer on the socket. 0, or -1 with *cause set (allocated).
 */
int bench_daemon_restart(struct bench_daemon *d, double *ready_s,
    char **cause);
/*
 * SIGTERM, waits for the daemon to exit, then kills what is left of its
 * process group. Returns 0 when it exited with status 0, else -1 with *cause
 * set (allocated).
 */
int bench_daemon_stop(struct bench_daemon *d, char **cause);
/* Kills the process group if still there, removes the temp dir, frees. */
void bench_daemon_free(struct bench_daemon *d);
/*
 * The end of a benchmark's daemon (NULL: none): stops it, saying why on
 * stderr after prog when it did not stop cleanly (but when the guard killed
 * it), prints its log when the run failed (ok false), and frees it. Returns
 * ok, made false by a failed stop.
 */
bool bench_daemon_finish(struct bench_daemon *d, const char *prog, bool ok);
/* Prints the daemon's log to stderr, for a run that failed. */
void bench_daemon_dump_log(const struct bench_daemon *d);
/* The same for another program's log at path, what naming it. */
void bench_daemon_dump_file(const char *what, const char *path);

#endif
