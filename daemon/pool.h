/* pool.h - the fixed pool of worker processes that run jobs, as the daemon
 * sees it: hand a job to an idle worker, hear when it starts and ends. */
#ifndef TRIAGED_POOL_H
#define TRIAGED_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool-spec.h"

struct event_base;
struct pool;

struct pool_callbacks {
	/* The job's process exists: pid is also its process group and
	 * session; start_ticks tells it apart from a later process with the
	 * same pid (procstat.h; 0 when unknown). */
	void (*started_cb)(uint64_t job_id, pid_t pid, uint64_t start_ticks,
	    void *arg);
	/* The run ended (or never began); the worker is idle again. */
	void (*finished_cb)(uint64_t job_id, const struct pool_result *res,
	    void *arg);
	/* The worker running job_id died; why says how. A new worker is
	 * already taking its place. */
	void (*lost_cb)(uint64_t job_id, const char *why, void *arg);
	/* A worker became idle after none was (a replacement that came late).
	 * Called whenever a replacement worker is up and idle, also right
	 * after lost_cb. */
	void (*idle_cb)(void *arg);
	/* Optional (may be NULL): one line for the daemon's log, as the pool
	 * has no logger: a worker died (with or without a job), a fork
	 * failed and will be retried. msg is borrowed for the call. */
	void (*error_cb)(const char *msg, void *arg);
};

/*
 * Forks n workers, each connected by a socketpair and in a process group
 * of its own (what a terminal sends the daemon's group never reaches
 * them), each given setup (copied; NULL: no cgroups, the daemon's own
 * oom_score_adj for jobs). The open files limit at
 * this call is the one every worker, and so every job, runs with. Returns
 * the pool, or NULL with *cause set (allocated) and no worker left behind.
 * Callbacks run from base's loop, never inside pool_start/pool_signal; they
 * may call pool_start and pool_signal, not pool_free.
 * Assumes: SIGPIPE is ignored (a write to a dead worker's socket is then an
 * error, not a signal); nothing else in the process forks, since the pool's
 * SIGCHLD event reaps every child; base is the only base with signal events.
 */
struct pool *pool_new(struct event_base *base, unsigned n,
    const struct pool_setup *setup, const struct pool_callbacks *cb,
    void *arg, char **cause);
/* Kills every worker and its job's process group (SIGKILL), reaps them. */
void pool_free(struct pool *pool);
/*
 * The daemon goes, and leaves running jobs to their workers (setup's
 * adopt_dir; worker.h): those with a job are only cut off, the idle ones
 * killed and reaped, the pool freed.
 */
void pool_leave(struct pool *pool);

/*
 * Takes over a worker left by an earlier daemon, connected on fd (which
 * the pool owns from then on) and running
 * job_id, whose process is job_pid: it reports the job's end as any
 * worker does (finished_cb, lost_cb when it dies), then goes once that end
 * is stored (pool_ack); the pool
 * never gives it another job, nor replaces it. worker is its pid;
 * job_reaped says the worker has reaped the job's process already (its
 * pid is then never signalled). Returns
 * 0, or -1 with errno (out of memory), and then fd is still the caller's.
 */
int pool_adopt(struct pool *pool, int fd, pid_t worker, uint64_t job_id,
    pid_t job_pid, bool job_reaped);

/*
 * Hands the job to an idle worker. Returns 0, or -1 with errno EAGAIN when
 * no worker is idle, or another errno when the worker could not be told
 * (then the worker is replaced and nothing runs). A spec that cannot be sent
 * (EINVAL: a NULL string or no argv[0]; E2BIG: over 64 MiB in all) and a
 * job_id already running (EEXIST) change nothing.
 */
int pool_start(struct pool *pool, const struct pool_spec *spec);

/* Sends sig to the running job's process group. -1 with ESRCH when job_id
 * is not running (not started yet, or already reaped). */
int pool_signal(struct pool *pool, uint64_t job_id, int sig);
/* Tells the worker that reported job_id's end (and nothing since) that the
 * end is stored: it need not record it should the daemon go. A worker
 * taken over goes then. */
void pool_ack(struct pool *pool, uint64_t job_id);
/* Gives the worker running job_id the node's lease (struct wmsg_lease):
 * it stops the job itself should the lease end unrenewed. -1 with ESRCH
 * when no worker has job_id. */
int pool_lease(struct pool *pool, uint64_t job_id, uint64_t until_us,
    uint64_t grace_ms);

/*
 * For a worker that does not act: kills the job's process group (when it
 * has started) and the worker running job_id, which is replaced; lost_cb
 * follows with why in its description. -1 with ESRCH when no worker has
 * job_id.
 */
int pool_abandon(struct pool *pool, uint64_t job_id, const char *why);

/* Replaces the callbacks and their arg given to pool_new(). */
void pool_set_callbacks(struct pool *pool, const struct pool_callbacks *cb,
    void *arg);

/*
 * Makes the pool n workers (n >= 1) without ending a job: new ones are
 * forked now (one that cannot be is retried as a dead one is); surplus
 * ones go, down or idle ones first, now if idle, else once their job has
 * finished (finished_cb or lost_cb still comes for it). idle_cb follows
 * from the loop when new workers are up. Returns 0, or -1 with errno
 * (EINVAL for 0, ENOMEM: the pool may then have grown part of the way).
 */
int pool_resize(struct pool *pool, unsigned n);

/* The workers asked for (pool_new, pool_resize). */
unsigned pool_size(const struct pool *pool);
/* Workers running a job, retiring ones included. */
unsigned pool_busy(const struct pool *pool);

#endif
