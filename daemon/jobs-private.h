/* jobs-private.h - what jobs.c lends jobs-edit.c, and nothing else includes:
 * the steps an edit of a queued job is made of. */
#ifndef TRIAGED_JOBS_PRIVATE_H
#define TRIAGED_JOBS_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "job.h"

struct triaged;

/* Into the semaphore, at its place by seq, unless it is held, waits for
 * the jobs it runs after, or for its begin_at (then into the queue of
 * begin times); nothing when it is in either already. */
void jobs_try_acquire(struct triaged *td, struct job *job);
/* Out of the semaphore's queue and the queue of begin times. */
void jobs_unqueue(struct triaged *td, struct job *job);
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
/* Forgets the changes of job id not written yet (their writes are
 * refused: another daemon's came first), and its launch. */
void jobs_drop_pending(struct triaged *td, uint64_t id);
/* Publishes job's change from state from (change as jobs_event's), in its
 * turn. */
void jobs_record_change(struct triaged *td, struct job *job,
    enum job_state from, const char *change);
/* A job of another daemon has queue order seq: ours come after it. */
void jobs_seen_seq(struct triaged *td, int64_t seq);

#endif
