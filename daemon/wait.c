/* wait.c - `wait` requests parked on a job until it ends or their timeout
 * passes; withdrawn when their connection closes. */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "jobs.h"
#include "rpc.h"
#include "triaged.h"
#include "wait.h"

struct jobwait {
	TAILQ_ENTRY(jobwait) entry;	/* in job->waits */
	struct triaged *td;
	struct job *job;
	struct rpc_req *req;
	struct event *timer;		/* NULL: no timeout */
};

static void
wait_free(struct jobwait *w)
{
	TAILQ_REMOVE(&w->job->waits, w, entry);
	if (w->timer != NULL)
		event_free(w->timer);
	free(w);
}

/* Answers with the job as it is now, ended or not. */
static void
wait_answer(struct jobwait *w)
{
	struct rpc_req *req = w->req;
	json_t *obj = jobs_json(w->td, w->job);

	wait_free(w);
	rpc_reply(req, obj);
}

static void
wait_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	wait_answer(arg);
}

static void
wait_withdraw_cb(struct rpc_req *req, void *arg)
{
	(void)req;
	wait_free(arg);
}

int
wait_add(struct triaged *td, struct rpc_req *req, struct job *job,
    uint64_t timeout_ms)
{
	struct timeval tv = { (time_t)(timeout_ms / 1000),
	    (suseconds_t)(timeout_ms % 1000) * 1000 };
	struct jobwait *w;

	if ((w = calloc(1, sizeof *w)) == NULL)
		return -1;
	w->td = td;
	w->job = job;
	w->req = req;
	if (timeout_ms > 0) {
		w->timer = evtimer_new(td->base, wait_timeout_cb, w);
		if (w->timer == NULL || evtimer_add(w->timer, &tv) != 0) {
			if (w->timer != NULL)
				event_free(w->timer);
			free(w);
			return -1;
		}
	}
	TAILQ_INSERT_TAIL(&job->waits, w, entry);
	rpc_defer(req, wait_withdraw_cb, w);
	return 0;
}

void
wait_job_ended(struct job *job)
{
	struct jobwait *w;

	while ((w = TAILQ_FIRST(&job->waits)) != NULL)
		wait_answer(w);
}
