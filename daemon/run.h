/* run.h - a job between its grant and its end: handed to a worker, watched
 * for its timeout, signalled on cancel, and its outcome reported back. */
#ifndef TRIAGED_RUN_H
#define TRIAGED_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "job.h"

struct cgroups;
struct config;
struct event_base;
struct pool;
struct run;

/* How a run ended. state is what the run itself says: JOB_SUCCEEDED or
 * JOB_FAILED by the process's own end (or a failure to start it, or the
 * loss of its worker), else how it was stopped (JOB_CANCELED,
 * JOB_TIMED_OUT, JOB_LOST); reason says it in words (empty for success). */
struct run_outcome {
	enum job_state state;
	char reason[512];
	bool started;		/* its process existed */
	int status;		/* its wait status, when started and reaped */
	bool reaped;
	double user_time;	/* < 0: unknown */
	double system_time;
	int64_t max_rss_kb;
	/* The most memory its process tree used at once, in bytes (its
	 * cgroup's peak): < 0 unknown (run_outcome_peak falls back on
	 * max_rss_kb). */
	int64_t peak_memory;
	bool oom;		/* it, or a process of it, was killed for want
				 * of memory */
	/* Processes it left in its cgroup when its main one ended, killed
	 * then (its reason says so). */
	unsigned left;
	bool stdout_truncated;
	bool stderr_truncated;
	uint64_t stdout_dropped;	/* output_keep = tail: bytes before offset 0 */
	uint64_t stderr_dropped;
	/* What it left in TRIAGE_RESULT, borrowed for the ended_cb:
	 * result_len bytes, NULL none; result_truncated: there were more
	 * than max_result. */
	const char *result;
	size_t result_len;
	bool result_truncated;
	bool handed;		/* a worker had it: the capture files are
				 * this attempt's */
	bool lease_ended;	/* its worker stopped it: the node's lease
				 * ran out unrenewed (run_set_lease) */
};

/* The most memory the run's process tree used at once, in bytes: its
 * cgroup's peak when it has one, else (protocol.md) the largest child's
 * max RSS; -1 when neither is known. */
int64_t run_outcome_peak(const struct run_outcome *out);

/* What a job's priority says of its process, taken when its run starts:
 * a reload changes it for the runs started after. */
struct run_job_opts {
	bool io_idle;		/* io_class = idle */
	bool keep_tail;		/* output_keep = tail */
	/* Run as this uid and gid rather than the job's: its user's on
	 * this node (a cluster's hosts share users by name). */
	bool as_user;
	uid_t uid;
	gid_t gid;
	/* For its cgroup (protocol v1.2), 0 = none: memory.max in bytes
	 * (the job's memory), and its priority's pids_max and cpu_weight. */
	uint64_t memory_max;
	unsigned pids_max;
	unsigned cpu_weight;
};

struct run_callbacks {
	/* The job's process exists: pid is also its process group. */
	void (*started_cb)(struct job *job, pid_t pid, uint64_t start_ticks,
	    void *arg);
	/* The run is over (the run has let go of job). */
	void (*ended_cb)(struct job *job, const struct run_outcome *out,
	    void *arg);
};

struct run_params {
	const char *output_dir;	/* capture files: ID.stdout, ID.stderr */
	uint64_t kill_grace_ms;
	uint64_t max_output;
	/* A job's result kept, in bytes; 0: jobs get no TRIAGE_RESULT. */
	uint64_t max_result;
	bool set_creds;		/* root daemon: jobs run as their submitters */
	bool no_new_privs;	/* jobs get PR_SET_NO_NEW_PRIVS */
	/* Each job in a cgroup of its own (cgroups.h); NULL, or one in
	 * CGROUPS_NONE: none. */
	const struct cgroups *cgroups;
	/* Where the daemon keeps its config (&td->cfg: a reload replaces
	 * it), whose resources' env a job's units are given in besides
	 * TRIAGE_<NAME>; NULL: TRIAGE_<NAME> alone. */
	struct config *const *cfg;
};

/*
 * The executor over pool, whose callbacks it takes. Callbacks run from
 * base's loop, never inside run_start or run_stop. NULL out of memory.
 */
struct run *run_new(struct event_base *base, struct pool *pool,
    const struct run_params *params, const struct run_callbacks *cb,
    void *arg);
/* For a reload: runs started from now on get these, and the job users'
 * supplementary groups looked up afresh; a stop under way keeps the
 * grace it was given. */
void run_set_limits(struct run *run, uint64_t kill_grace_ms,
    uint64_t max_output, uint64_t max_result, bool no_new_privs);
/* Forgets every run without a word (the daemon exits). */
void run_free(struct run *run);

/* Hands job to a worker, at once or when one is idle, in the order of
 * the calls, with opts (copied). 0, or -1 out of memory (nothing
 * changed). */
int run_start(struct run *run, struct job *job,
    const struct run_job_opts *opts);

/* Where an adopted run is: a worker an earlier daemon left (fd, the
 * connection to it; worker, its pid; pid and start_ticks, the job's
 * process), or its end as that worker recorded it (ended, not NULL). */
struct run_adoptee {
	int fd;
	pid_t worker;
	pid_t pid;
	uint64_t start_ticks;
	bool exited;		/* the worker has reaped pid already */
	const struct pool_result *ended;
};

/*
 * Takes over job's run, begun by an earlier daemon, as the same attempt:
 * its worker given to the pool (which owns fd from then on), its timeout
 * re-armed from its start; or, with from->ended, its end reported at
 * once (ended_cb, before this returns), as a worker's would be. The job's
 * slots must be held already (resources_hold). 0, or -1 out of memory
 * (nothing changed, fd still the caller's).
 */
int run_adopt(struct run *run, struct job *job,
    const struct run_job_opts *opts, const struct run_adoptee *from);

/*
 * Ends job's run: its process group gets sig now (when it has not
 * started, as soon as it does), SIGKILL after kill_grace; a worker that
 * does not act even then loses the job and is replaced. as (JOB_CANCELED,
 * JOB_TIMED_OUT, JOB_LOST) and reason are the outcome's. A run being
 * stopped already keeps its first outcome. Returns false when job has no
 * run.
 */
bool run_stop(struct run *run, struct job *job, enum job_state as, int sig,
    const char *reason);

/*
 * Freezes the processes of job's run (freeze true) or thaws them. While
 * frozen, the run keeps what it holds and its timeout's clock stops; it
 * runs on from where it stopped at the thaw. A stop of a frozen run (any
 * signal, kill_grace's SIGKILL) thaws it to end it. Without cgroups the
 * way is SIGSTOP and SIGCONT to its process group. Returns 1 when it was
 * done, 0 when there was nothing to do (no run, its process not started
 * yet, being stopped, already so), -1 with errno when it could not be
 * (nothing changed).
 */
int run_freeze(struct run *run, struct job *job, bool freeze);

/* The end of job id, which ended_cb reported, is stored: its worker is
 * told (pool_ack). */
void run_ack(struct run *run, uint64_t id);

/* True while job has a run. */
bool run_has(const struct run *run, const struct job *job);
/* True once a worker has its run: the capture files are then this
 * attempt's (removed at the hand-over, made afresh by the worker). */
bool run_handed(const struct run *run, const struct job *job);
unsigned run_count(const struct run *run);

/* The workers under the runs, for whoever shows them (metrics, stats). */
struct run_workers {
	unsigned size;		/* asked for (the config's workers) */
	unsigned busy;		/* running a job, retiring ones included */
};
struct run_workers run_workers(const struct run *run);

/*
 * Which attempt job's capture files hold. They are removed when an attempt
 * is handed to a worker, which makes them afresh; until then (a job
 * queued again after a failure or a retry), or when it ended without
 * being handed out (canceled while queued), they still hold the previous
 * attempt's output.
 */
unsigned run_output_attempt(const struct run *run, const struct job *job);

/* A page of a job's stream as this node's capture file holds it now. */
struct run_output_page {
	int64_t offset;		/* where the page starts */
	unsigned char *buf;	/* got bytes, the caller's to free (or NULL) */
	size_t got;
	uint64_t size;		/* bytes the file keeps */
	uint64_t dropped;	/* bytes of the stream before its first */
};
/*
 * Reads up to limit bytes of job id's stream ("stdout" or "stderr") into
 * *pg, from offset (counted from the first byte kept; a negative one back
 * from the end, from 0 when the stream is shorter). No file is an empty
 * stream. 0, or -1 with errno and *what the step that failed ("open",
 * "read"), nothing to free.
 */
int run_output_read(const struct run *run, uint64_t id, const char *stream,
    int64_t offset, size_t limit, struct run_output_page *pg,
    const char **what);
/* A cluster node's lease, until until_us (CLOCK_MONOTONIC), for job's run
 * or (job NULL) every handed run: the worker stops its job itself should
 * it end unrenewed (SIGTERM, then SIGKILL after kill_grace), even while
 * the daemon cannot act. */
void run_set_lease(struct run *run, const struct job *job,
    uint64_t until_us);

#endif
