/* wait.h - `wait` requests parked on a job until it ends or their timeout
 * passes; withdrawn when their connection closes. */
#ifndef TRIAGED_WAIT_H
#define TRIAGED_WAIT_H

#include <stdint.h>

struct job;
struct jobs_event;
struct rpc_req;
struct triaged;

/* Parks req on job (not terminal) for at most timeout_ms (0: no limit).
 * 0, or -1 with errno when out of memory (req is not answered). */
int wait_add(struct triaged *td, struct rpc_req *req, const struct job *job,
    uint64_t timeout_ms);

/* The listener of jobs.h: a job that ended answers its waits. */
void wait_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg);

#endif
