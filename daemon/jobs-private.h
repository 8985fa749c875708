/* jobs-private.h - what the jobs*.c files share, and nothing else includes:
 * the state machine's state, its commit queue, and the steps they lend. */
#ifndef TRIAGED_JOBS_PRIVATE_H
#define TRIAGED_JOBS_PRIVATE_H

/*
 * The files in layers, bottom to top: each calls only those of the layers
 * under it (issue 23); the sections below follow this order.
 *   jobs-record.c   the commit queue, where every change is recorded
 *   jobs.c          the state, its counts, jobs_change; the files above
 *                   include its header, jobs.h
 *   jobs-view.c, jobs-listen.c
 *   jobs-launch.c   a grant: its start written, then a worker
 *   jobs-admit.c    into the semaphore (a grant there and then launches)
 *   jobs-publish.c, jobs-end.c, jobs-retry.c, jobs-edit.c,
 *   jobs-freeze.c
 *   jobs-prio.c, jobs-changed.c
 *   jobs-init.c     lends the loop, the store and the semaphore the
 *                   callbacks of the layers under it
 * The machine's own circles (a change is published, and a listener
 * changes a job; a start is written, and the job launches) go through the
 * loop: the drain's timer and the store's hooks lent by jobs-init.c.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <event2/util.h>

#include "beginq.h"
#include "config.h"
#include "job.h"
#include "uidcount.h"

struct event;
struct jobs_event;
struct jobs_listener;
struct psem_waiter;
struct run_job_opts;
struct run_outcome;
struct triaged;

/*
 * What waits for a commit: a state change to publish, a barrier to call
 * back, or a granted job to hand to a worker once its start is recorded.
 * Items leave the queue in order, each once the commit of its generation
 * has succeeded; nothing a client hears can then be undone by a crash.
 */
enum jobs_item_kind {
	JOBS_EVENT,
	JOBS_BARRIER,
	JOBS_LAUNCH,
};

struct jobs_item {
	TAILQ_ENTRY(jobs_item) entry;
	enum jobs_item_kind kind;
	uint64_t gen;			/* the commit that makes it true */
	uint64_t id;			/* EVENT, LAUNCH: the job */
	enum job_state from;		/* EVENT */
	const char *change;		/* EVENT: NULL, or an edit (constant) */
	struct job_status status;	/* EVENT: the job after the change; */
	char *reason;			/* LAUNCH: status.attempt only */
	char *cgroup;			/* EVENT: its run's, as reason */
	json_t *result;			/* EVENT: its run's, a reference */
	/* BARRIER: a jobs_done_cb (jobs.h would make this header and jobs.c
	 * include each other). */
	void (*cb)(struct triaged *, struct job *, const char *, void *);
	void *arg;
};
TAILQ_HEAD(jobs_items, jobs_item);
struct jobs_admission;
TAILQ_HEAD(jobs_admissions, jobs_admission);
struct jobs_retrial;
TAILQ_HEAD(jobs_retrials, jobs_retrial);

struct jobs {
	struct jobs_items items;
	/* Granted jobs waiting for their start to be written (not for the
	 * disk: see jobs_begin), in grant order; gen is a write's number. */
	struct jobs_items launches;
	uint64_t written;		/* the last write that succeeded */
	bool launching;
	uint64_t durable;		/* the last commit that succeeded */
	struct event *publish_ev;	/* drains items already durable */
	bool draining;
	bool commits_failing;
	struct jobs_listener *listeners;
	size_t nlisteners;
	/* A jobs_gate_cb. */
	int (*gate)(struct triaged *, struct job *, void *);
	void *gate_arg;
	int64_t next_seq;		/* queue order of the next at a tail */
	unsigned counts[CONFIG_PRIORITIES_MAX][JOB_NSTATES];
	unsigned held[CONFIG_PRIORITIES_MAX];	/* of counts[][JOB_QUEUED] */
	unsigned staged[CONFIG_PRIORITIES_MAX];	/* not committed yet */
	/* The slots of those inserted begun (jobs_starts_at_once). */
	unsigned claimed_staged;
	/* Jobs free to go but for their begin_at, and the one timer for the
	 * earliest. */
	struct beginq beginq;
	struct event *begin_ev;
	/* Queued or staged jobs of each submitter: max_queued_per_user. */
	struct uidcount queued_by_uid;
	/* What holds a priority's index outside the store, for
	 * jobs_reprioritize. */
	struct jobs_admissions admissions;
	struct jobs_retrials retrials;
	/* Jobs begun here, not running yet, and some that have gone on
	 * since (jobs_starting weeds them out): for the dashboard. */
	uint64_t *starting;
	size_t nstarting, starting_size;
};

/* jobs-record.c: the queue of what waits for a commit. */

void jobs_item_free(struct jobs_item *it);
/* Queues it to be handled once commit gen has succeeded; durable now when
 * gen is already. */
void jobs_item_add(struct triaged *td, struct jobs_item *it, uint64_t gen);
/* The generation a change made now is durable with. */
uint64_t jobs_gen(const struct triaged *td);
/* Records the change job has just made from state from, to publish once
 * gen is on disk. Out of memory, the change goes unheard (and is logged). */
void jobs_record(struct triaged *td, struct job *job, enum job_state from,
    const char *change, uint64_t gen);
/* Publishes job's change from state from (change as jobs_event's), in its
 * turn. */
void jobs_record_change(struct triaged *td, struct job *job,
    enum job_state from, const char *change);
/* Forgets the changes of job id not written yet (their writes are
 * refused: another daemon's came first), and its launch. */
void jobs_drop_pending(struct triaged *td, uint64_t id);

/* jobs.c: the state and its counts. */

/* The job's own run record, to change. A few bytes: out of memory for
 * them, the daemon could not record the run's end either. */
struct job_run *jobs_run(struct job *job);
/* Counts job in prio and state: delta jobs more (or fewer). */
void jobs_tally(struct jobs *js, const struct job *job, unsigned prio,
    enum job_state state, int delta);
/* The same for a submission that is not committed yet. */
void jobs_tally_staged(struct jobs *js, const struct job *job, unsigned prio,
    int delta);
/*
 * Moves job to state to: counts, times, store, and an event. A change to
 * running need only survive a crash of the daemon (a power loss then
 * brings the job back as a new attempt); every other one waits for the
 * disk.
 */
void jobs_change(struct triaged *td, struct job *job, enum job_state to);
/* Sets held, and the counts with it. */
void jobs_set_held(struct triaged *td, struct job *job, bool held);
/* Counts it under priority prio, at the tail: the caller unqueued it. */
void jobs_move(struct triaged *td, struct job *job, unsigned prio);
/* Writes it, and publishes change once that is on disk. */
void jobs_edited(struct triaged *td, struct job *job, const char *change);
/* For jobs-changed.c, what another daemon did. Counts job as in prio and
 * state, held or not: delta jobs more (or fewer). */
void jobs_count_job(struct triaged *td, struct job *job, unsigned prio,
    enum job_state state, bool held, int delta);
/* A job of another daemon has queue order seq: ours come after it. */
void jobs_seen_seq(struct triaged *td, int64_t seq);

/* jobs-view.c */

/* Out of memory, the dashboard misses it; nothing else does. */
void jobs_starting_add(struct triaged *td, uint64_t id);

/* jobs-listen.c: who hears the state machine. */

/* Tells the listeners of events (jobs_listen) of ev, in their order. */
void jobs_tell_event(struct triaged *td, const struct jobs_event *ev);
/* Tells the listeners of runs (jobs_listen_runs) of job's run at once: out
 * is NULL when it was given to run_start, else how it ended. */
void jobs_tell_runs(struct triaged *td, struct job *job,
    const struct run_outcome *out);

/* jobs-launch.c: from the grant to the worker. */

/* The semaphore granted the job its slots. */
void jobs_grant_cb(struct psem_waiter *w, void *arg);
/*
 * The job holds its slots: that its attempt begins is written first, and
 * once that is in the database it is handed to a worker. Written, not
 * synced: a crash of the daemon then finds the attempt begun (a power loss
 * may lose it, and the job runs again as that attempt, which it never
 * finished). So it does not wait behind a commit that waits for the disk
 * for other jobs' ends: with few slots, that wait was the slot's idle time
 * (store_claim).
 */
void jobs_begin(struct triaged *td, struct job *job);
/* Hands the job of launch item it to the executor, unless it has moved on
 * meanwhile (canceled, stopped with the daemon). */
void jobs_launch(struct triaged *td, struct jobs_item *it);
/* What the job and its priority say of its process and cgroup, as the
 * config is now (and whom it runs as, in a cluster). 0, or -1 with the
 * job's reason set. */
int jobs_run_opts(const struct triaged *td, struct job *job,
    struct run_job_opts *opts);
/* Hands to their workers the granted jobs whose start is written; none
 * while commits fail, as before the store wrote starts ahead. */
void jobs_launch_written(struct triaged *td);
/* For jobs_init: the store's hook for a write. */
void jobs_written_cb(uint64_t write, void *arg);
/* For jobs_init: a cluster's claims that another node beat (store.h's
 * store_set_claim_alternates): the jobs queued here that may take a
 * claim's place, and the claim that went to one of them. */
size_t jobs_alternates_cb(const struct job *job, struct job **out, size_t max,
    void *arg);
void jobs_moved_cb(struct job *from, struct job *to, void *arg);

/* jobs-admit.c: from a submission to the semaphore's queue. */

/* For jobs_init: the timer of the earliest begin_at. */
void jobs_begin_cb(evutil_socket_t fd, short what, void *arg);
/* Into the semaphore, in the place its seq gives it. */
void jobs_acquire(struct triaged *td, struct job *job);
/* Into the semaphore, at its place by seq, unless it is held, waits for
 * the jobs it runs after, or for its begin_at (then into the queue of
 * begin times); nothing when it is in either already. */
void jobs_try_acquire(struct triaged *td, struct job *job);
/* Out of the semaphore's queue and the queue of begin times. */
void jobs_unqueue(struct triaged *td, struct job *job);
/* For jobs_reprioritize: the submissions on their way to the disk follow
 * map. */
void jobs_renumber_admissions(struct triaged *td, const int *map);

/* jobs-retry.c */

/* For jobs_reprioritize: the retries on their way to the disk follow
 * map. */
void jobs_renumber_retrials(struct triaged *td, const int *map);

/* jobs-publish.c: what waits for a commit goes out once it is on disk. */

/* For jobs_init: the drain's timer, and the store's hook for a commit. */
void jobs_publish_cb(evutil_socket_t fd, short what, void *arg);
void jobs_committed_cb(uint64_t generation, const char *cause, void *arg);

#endif
