/* wait.h - `wait` requests parked on a job until it ends or their timeout
 * passes; withdrawn when their connection closes. */
#ifndef TRIAGED_WAIT_H
#define TRIAGED_WAIT_H

#include <stdint.h>

struct job;
struct rpc_req;
struct triaged;

/* Parks req on job (not terminal) for at most timeout_ms (0: no limit).
 * 0, or -1 with errno when out of memory (req is not answered). */
int wait_add(struct triaged *td, struct rpc_req *req, struct job *job,
    uint64_t timeout_ms);

/* Answers every wait on job, which has just ended. */
void wait_job_ended(struct job *job);

#endif
