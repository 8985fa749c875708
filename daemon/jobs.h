/* jobs.h - the job state machine: admit submissions to their queues, move
 * jobs through their states, and publish each change once it is on disk. */
#ifndef TRIAGED_JOBS_H
#define TRIAGED_JOBS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "job.h"

struct run_callbacks;
struct run_outcome;
struct triaged;

/* What the executor reports to the state machine (run_new's callbacks). */
extern const struct run_callbacks jobs_run_callbacks;

/*
 * A state change, published to every listener once the commit that wrote
 * it has succeeded, in the order the changes happened. view is the job as
 * the change left it (its state is the new one); job is the job now, which
 * may have moved on since (both borrowed for the call).
 */
struct jobs_event {
	struct job *job;
	const struct job *view;
	enum job_state from;
	/* NULL for a change of state (or a submission: from is its state);
	 * else what an operator did to a queued job: "held", "released",
	 * "updated"; or to a running one: "frozen", "thawed". */
	const char *change;
};
typedef void (*jobs_listener_cb)(struct triaged *td,
    const struct jobs_event *ev, void *arg);

/*
 * A run's two edges, heard the moment they happen: ahead of any commit,
 * unlike a jobs_event, for what must reach the store before the change
 * does (the output a node ships, before the commit of the job's end).
 */
struct jobs_run_event {
	struct job *job;
	/* NULL: the run was just given to the executor (run_start); else it
	 * is over, and this is how it ended (before the end changes job). */
	const struct run_outcome *out;
};
typedef void (*jobs_run_listener_cb)(struct triaged *td,
    const struct jobs_run_event *ev, void *arg);

/*
 * Decides whether a queued job may take its place in the semaphore: 1 it
 * may, 0 it must wait (the gate lets it go later with jobs_enqueue), -1
 * it never may (its reason says why; it is canceled).
 */
typedef int (*jobs_gate_cb)(struct triaged *td, struct job *job, void *arg);

/* A submission, a retry or a barrier is settled: cause is NULL when it is
 * on disk (job is then the stored job), else why not (job NULL for a
 * submission that was dropped). */
typedef void (*jobs_done_cb)(struct triaged *td, struct job *job,
    const char *cause, void *arg);

/* The semaphore from the config, and the store's commit hook. 0, or -1
 * with *cause set. */
int jobs_init(struct triaged *td, char **cause);
void jobs_free(struct triaged *td);

/* Listeners run in the order they were added; 0, or -1 out of memory. */
int jobs_listen(struct triaged *td, jobs_listener_cb cb, void *arg);
int jobs_listen_runs(struct triaged *td, jobs_run_listener_cb cb, void *arg);
void jobs_set_gate(struct triaged *td, jobs_gate_cb cb, void *arg);

/*
 * Admits a new job (every field set but id, seq and times) into priority
 * prio: it is staged in the store and, once this turn's commit has made it
 * durable, queued (or canceled by the gate) and done_cb(td, job, NULL,
 * arg) runs; if the commit fails, done_cb(td, NULL, cause, arg) runs and
 * the job is freed. Returns 0, or -1 with errno when nothing could be
 * staged (the job is still the caller's, done_cb is never called).
 */
int jobs_submit(struct triaged *td, struct job *job, unsigned prio,
    jobs_done_cb done_cb, void *arg);
/* Whether a submission of uid with this idempotency key is on its way to
 * the disk (jobs_submit), its commit not yet over. */
bool jobs_staged_key(const struct triaged *td, uid_t uid, const char *key);

/*
 * A terminal job (but succeeded) goes back to the queue of priority prio as
 * a new attempt. Nobody hears of it until it is on disk; then done_cb(td,
 * job, NULL, arg). If it cannot be written the job is put back as it was,
 * nobody is told, and done_cb gets the cause. Assumes: its environment is
 * in memory (store_env). 0, or -1 out of memory (nothing changed).
 */
int jobs_retry(struct triaged *td, struct job *job, unsigned prio,
    jobs_done_cb done_cb, void *arg);

/*
 * Cancels: a queued job ends at once; a running one gets sig for its
 * process group, then SIGKILL after kill_grace, and ends when it has
 * exited; a terminal one is left as it is. by is the uid asking.
 */
void jobs_cancel(struct triaged *td, struct job *job, uid_t by, int sig);

/*
 * done_cb(td, NULL, NULL, arg) runs once every change made so far is on
 * disk and published: from the loop, never inside this call. 0, or -1 out
 * of memory.
 */
int jobs_after_commit(struct triaged *td, jobs_done_cb done_cb, void *arg);

/* A queued job free to go takes its place in the semaphore, at the tail of
 * its priority (the gate's way to let a waiting job go). */
void jobs_enqueue(struct triaged *td, struct job *job);

/* Ends a queued job (the gate's way to cancel a waiting one); reason set
 * by the caller. */
void jobs_end(struct triaged *td, struct job *job, enum job_state state);

/* Stops every running job as the daemon stops: requeued for the next
 * start, or lost (shutdown = requeue decides). */
void jobs_stop_running(struct triaged *td);

/* Follows what other daemons sharing the store do to jobs
 * (jobs-changed.c). */
void jobs_follow_store(struct triaged *td);
/* An edit's mark of job, taken as the edit is made: once the edit's
 * commit is done, jobs_edit_undone says whether the database refused a
 * write of the job since (another daemon's change came first, and the
 * edit did not happen). */
uint16_t jobs_edit_mark(const struct job *job);
bool jobs_edit_undone(const struct job *job, uint16_t mark);

/* For recovery (and jobs-changed.c): a job whose attempt runs on another
 * node counts toward its priority's max_running here too, and what it
 * holds of a cluster-scoped counter is not free here. */
void jobs_count_elsewhere(struct triaged *td, struct job *job);

/* For recovery: counts a job read from the store as it is, and sets up its
 * place in its queue (prio). */
void jobs_loaded(struct triaged *td, struct job *job, unsigned prio);
/*
 * For recovery, before anything is granted: a job whose attempt began
 * before the daemon stopped, as its worker left it (state_dir/adopt): its
 * end recorded there taken as the attempt's end, or its worker, still
 * running it, taken over; either way its slots are held again. Returns 1
 * then, 0 when there is neither (the job is the caller's to requeue).
 */
int jobs_adopt(struct triaged *td, struct job *job);
/* Whether an attempt begun that no worker holds any more runs again at
 * start (requeue, and keep, which is to lose nothing), or is lost. */
bool jobs_rerun_unheld(const struct triaged *td);
/* First (before jobs_adopt), what state_dir/adopt holds of no attempt
 * the store has running is stale: removed, and a worker that answers on
 * it killed with its job. */
void jobs_adopt_sweep(struct triaged *td);
/* For recovery: a job whose attempt began before the daemon stopped goes
 * back to the head of its queue as a new attempt at seq, or is lost. */
void jobs_recover_begun(struct triaged *td, struct job *job, bool requeue,
    int64_t seq);
/* For recovery: a queued job into the gate and the semaphore, in order. */
void jobs_admit(struct triaged *td, struct job *job);
/* For recovery: the queue order of the next job at a tail. */
void jobs_set_next_seq(struct triaged *td, int64_t seq);
/*
 * An operator's edits of a queued job (jobs-edit.c), each published as an
 * event once on disk. hold: it keeps its place but is never dispatched;
 * release: it goes again from that place. 1 when the job changed, 0 when
 * there was nothing to do (not queued, already so, or holding its slots
 * already on its way to a worker). by is the uid asking.
 */
int jobs_hold(struct triaged *td, struct job *job, uid_t by);
int jobs_release(struct triaged *td, struct job *job, uid_t by);

/*
 * An operator's freeze (freeze true) or thaw of a running job
 * (jobs-freeze.c, run_freeze), published as an edit ("frozen", "thawed")
 * once on disk. 1 when the job changed, 0 when there was nothing to do
 * (not running here, or running but not started by its worker yet,
 * already so, being stopped), -1 with errno when its processes could not
 * be frozen or thawed (nothing changed). by is the uid asking.
 */
int jobs_freeze(struct triaged *td, struct job *job, bool freeze, uid_t by);
/* Whether job is running on another node of the cluster, which alone may
 * freeze it. */
bool jobs_runs_elsewhere(const struct triaged *td, const struct job *job);

/* What an update changes: each field only when its has_ flag is set. */
struct jobs_update {
	int prio;		/* -1: unchanged; else the new priority */
	const char *name;	/* NULL: unchanged */
	bool has_timeout;
	uint64_t timeout_ms;
	bool has_retries;
	unsigned retries;
	json_t *labels;		/* NULL: unchanged; else borrowed */
	bool has_begin_at;
	int64_t begin_at;	/* -1: none */
	bool has_nice;
	int nice;
	bool has_memory;
	uint64_t memory;	/* bytes */
	json_t *resources;	/* NULL: unchanged; else borrowed ({}: none) */
};

/*
 * Applies u to a queued job that is not starting yet (the caller checked
 * with jobs_editable). A new priority puts it at the tail of that queue; a
 * new begin_at takes it out of its queue until then; other fields keep its
 * place. 0, or -1 out of memory (nothing changed).
 */
int jobs_update(struct triaged *td, struct job *job,
    const struct jobs_update *u, uid_t by);
/* Whether update may change job: queued, and not holding slots yet. */
bool jobs_editable(const struct job *job);

/* For pruning: forgets a terminal job. 0, or -1 with errno. */
int jobs_forget(struct triaged *td, uint64_t id);

/*
 * The jobs that have their slots here and are not running yet (their start
 * is being written, or their worker handed them), in the order they got
 * them: their number, and their ids in *ids, borrowed until the next call
 * into jobs. Such a job is queued with position 0 and no pending_reason.
 */
size_t jobs_starting(struct triaged *td, const uint64_t **ids);

/* The job object with its current queue position; a new reference. job may
 * be an event's view. */
json_t *jobs_json(struct triaged *td, const struct job *job);
/* The same object written as text into w (job_write_json): 0, or -1 with
 * w failed. */
struct jsonw;
int jobs_write_json(struct triaged *td, const struct job *job,
    struct jsonw *w);

/* Pauses or resumes priority prio, or every one for -1; logs who did. */
void jobs_set_paused(struct triaged *td, int prio, bool paused, uid_t by);

/*
 * For a reload: the priorities become nprio; map has an entry for each
 * priority there is now, its new index, or -1 when it goes. Every job, the
 * semaphore and the counts follow; terminal jobs of a priority that goes
 * count under priority 0 (as recovery places them). Weights, caps and
 * pauses of a new index are the caller's to set. Returns 0, or -1 changing
 * nothing: EBUSY when a priority that goes has queued, running or staged
 * jobs, EINVAL for a bad map, ENOMEM.
 */
int jobs_reprioritize(struct triaged *td, unsigned nprio, const int *map);

/* Jobs in state, in priority prio (-1: every priority). */
unsigned jobs_count(const struct triaged *td, int prio, enum job_state state);
/* Submissions staged, not yet committed, in prio (-1: every priority). */
unsigned jobs_staged(const struct triaged *td, int prio);
/* Queued jobs that are held, in priority prio (-1: every priority). */
unsigned jobs_held(const struct triaged *td, int prio);
/* uid's jobs queued or staged, in every priority. */
unsigned jobs_queued_by(const struct triaged *td, uid_t uid);

#endif
