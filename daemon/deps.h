/* deps.h - `after`: a job waits in its queue, outside the semaphore, until
 * every job it names has ended, and is canceled if one did not succeed. */
#ifndef TRIAGED_DEPS_H
#define TRIAGED_DEPS_H

struct job;
struct triaged;

/*
 * Looks at job's after[]: returns 1 when all of them succeeded (it may go),
 * 0 when it must wait (it is registered, waiting_for counts them), or -1
 * when it cannot go, job's reason saying why (one ended otherwise, or out
 * of memory): the caller cancels it.
 */
int deps_check(struct triaged *td, struct job *job);

/* job has just ended: its dependents go, or are canceled. */
void deps_job_ended(struct triaged *td, struct job *job);

/* Forgets every registration (the daemon exits). */
void deps_free_all(void);

#endif
