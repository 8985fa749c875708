/* shutdown.h - stopping on SIGTERM or SIGINT as the `shutdown` key says:
 * requeue, drain, finish or keep; a second signal stops at once. */
#ifndef TRIAGED_SHUTDOWN_H
#define TRIAGED_SHUTDOWN_H

struct jobs_event;
struct triaged;

/* A stop signal arrived. */
void shutdown_begin(struct triaged *td, int signo);

/* The listener of jobs.h: leaves the loop once what the mode waits for is
 * done. Added last, so that every other listener has had its say. */
void shutdown_job_cb(struct triaged *td, const struct jobs_event *ev,
    void *arg);

#endif
