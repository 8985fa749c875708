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

/*
 * Admits a new job (state queued, every field set but id and times) into
 * priority prio: gives it an id, stores it, and queues it or starts it.
 * The store owns it from then on. Returns 0, or -1 with errno when it could
 * not be stored (the job is still the caller's).
 */
int jobs_submit(struct triaged *td, struct job *job, unsigned prio);

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
