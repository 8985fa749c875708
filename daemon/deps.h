/* deps.h - `after` and `after_any`: a job waits in its queue, outside the
 * semaphore, until every job it names has ended, and is canceled if one of
 * its `after` did not succeed. */
#ifndef TRIAGED_DEPS_H
#define TRIAGED_DEPS_H

struct deps;
struct job;
struct jobs_event;
struct triaged;

/* The registrations of waiting jobs; NULL out of memory. */
struct deps *deps_new(void);
void deps_free(struct deps *deps);

/*
 * The gate of jobs.h (arg: the deps): 1 when every job of job's after[]
 * has succeeded and every one of its after_any[] has ended, 0 when it must
 * wait (it is registered), -1 when it never can go (one of after[] ended
 * otherwise, is unknown, or memory ran out), with job's reason saying why.
 */
int deps_gate_cb(struct triaged *td, struct job *job, void *arg);

/* The listener of jobs.h (arg: the deps): when a job ends, the jobs that
 * wait for it go (all theirs succeeded) or are canceled. */
void deps_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg);

#endif
