/* jobs.h - the job state machine: admit a submission to its queue, move jobs
 * through their states, and tell waiters and watchers of every change. */
#ifndef TRIAGED_JOBS_H
#define TRIAGED_JOBS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "job.h"

struct job;
struct triaged;

/* The semaphore from the config. 0, or -1 with *cause set. */
int jobs_init(struct triaged *td, char **cause);
void jobs_free(struct triaged *td);

struct rpc_req;

/*
 * Admits a new job (every field set but id, seq and times) into priority
 * prio: stages it in the store and, once this turn's commit has made it
 * durable, queues it (or starts it, or cancels it for a failed dependency)
 * and answers req with it; if the commit fails, answers -32603 and frees
 * it. Returns 0, or -1 with errno when nothing could be staged (the job is
 * still the caller's, req unanswered).
 */
int jobs_submit(struct triaged *td, struct job *job, unsigned prio,
    struct rpc_req *req);

/* Sets up job's place in the queues of priority prio. */
void jobs_waiter_init(struct triaged *td, struct job *job, unsigned prio);

/* A queued job (in the store, counted): into the semaphore, unless it waits
 * for other jobs, or is canceled because one of those did not succeed. */
void jobs_admit(struct triaged *td, struct job *job);

/* A queued job free to go takes its place in the semaphore (and may start
 * at once). */
void jobs_enqueue(struct triaged *td, struct job *job);

/*
 * A new attempt of job: attempt + 1, what the last run left cleared, state
 * queued, at the tail of its priority, or keeping its place (a job stopped
 * with the daemon, to go again in its turn at the next start). It is not in
 * the semaphore yet: jobs_enqueue() puts it there.
 */
void jobs_requeue(struct triaged *td, struct job *job, bool keep_place);

/* job no longer waits for its after jobs (they ended, or it is canceled). */
void jobs_stop_waiting(struct triaged *td, struct job *job);

/* Cancels a queued job at once, or signals a running one (SIGTERM, SIGKILL
 * after kill_grace); a terminal job is left as it is. by is the uid asking. */
void jobs_cancel(struct triaged *td, struct job *job, uid_t by);

/* Moves job to state (counts, times, store) and tells everyone. */
void jobs_set_state(struct triaged *td, struct job *job, enum job_state state);

/* The job object with its current queue position; a new reference. */
json_t *jobs_json(struct triaged *td, const struct job *job);

/* The `stats` result object; a new reference. */
json_t *jobs_stats(struct triaged *td);

/* Pauses or resumes priority prio, or every one for -1; logs who did. */
void jobs_set_paused(struct triaged *td, int prio, bool paused, uid_t by);

/* Jobs queued, in every priority. */
unsigned jobs_queued(const struct triaged *td);

#endif
