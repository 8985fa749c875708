/* run.h - a job between its grant and its end: handed to a worker, watched
 * for its timeout, signalled on cancel, and finished from the worker's report. */
#ifndef TRIAGED_RUN_H
#define TRIAGED_RUN_H

#include <sys/types.h>

struct job;
struct pool_callbacks;
struct triaged;

/* The pool's callbacks, for pool_new(). */
extern const struct pool_callbacks run_pool_callbacks;

/* The job holds its slots: mark it running and hand it to a worker. */
void run_start(struct triaged *td, struct job *job);

/* Ends the running job: SIGTERM now, SIGKILL after kill_grace. canceled
 * says why, for its final state: canceled, else lost (shutdown). */
void run_stop(struct job *job, bool canceled, uid_t by);

/* Forgets every running job's state without a word (the daemon exits). */
void run_free_all(void);

#endif
