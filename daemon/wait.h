/* wait.h - `wait` requests parked on jobs until they end or their timeout
 * passes; withdrawn when their connection closes. */
#ifndef TRIAGED_WAIT_H
#define TRIAGED_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct jobs_event;
struct rpc_req;
struct triaged;

/* Answers req with result (stolen): rpc_reply, or a method's own. */
typedef void (*wait_reply_fn)(struct rpc_req *req, json_t *result);

/* td's waits, into td->waits: 0, or -1 when out of memory. wait_stop
 * frees them; by then every connection is closed, and nothing waits. */
int wait_start(struct triaged *td);
void wait_stop(struct triaged *td);

/*
 * Parks req until each of the n jobs of ids (all of which exist; an id
 * may repeat) has reached a terminal state, or for at most timeout_ms (0:
 * no limit). It is answered with the job object (one: n is 1), or with
 * {"jobs": [...]} in the order of ids: each job as its end left it, or as
 * it is at the timeout; a job that ended already, as it is now. When
 * there is nothing to wait for (each has ended, or now is set), req is
 * answered at once through reply. 0, or -1 with errno when out of memory
 * (req is not answered).
 */
int wait_add(struct triaged *td, struct rpc_req *req, const uint64_t *ids,
    size_t n, bool one, uint64_t timeout_ms, bool now, wait_reply_fn reply);

/* The listener of jobs.h: a job that ended answers its waits. */
void wait_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg);

#endif
