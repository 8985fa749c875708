/* wait.c - `wait` requests parked on a job until it ends or their timeout
 * passes; withdrawn when their connection closes. */
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "job.h"
#include "jobs.h"
#include "rpc.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "wait.h"

struct jobwait {
	TAILQ_ENTRY(jobwait) entry;	/* in its node's list */
	struct wait_node *node;
	struct triaged *td;
	struct rpc_req *req;
	struct event *timer;		/* NULL: no timeout */
};

/* The waits on one job, by its id. */
struct wait_node {
	uint64_t id;
	TAILQ_HEAD(, jobwait) waits;
};

static void *wait_root;		/* tsearch tree of struct wait_node */

static int
wait_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct wait_node *)a)->id;
	uint64_t y = ((const struct wait_node *)b)->id;

	return x < y ? -1 : x > y;
}

static struct wait_node *
wait_node_find(uint64_t id)
{
	struct wait_node key = { .id = id }, **found;

	found = tfind(&key, &wait_root, wait_cmp);
	return found != NULL ? *found : NULL;
}

static void
wait_free(struct jobwait *w)
{
	struct wait_node *node = w->node;

	TAILQ_REMOVE(&node->waits, w, entry);
	if (TAILQ_EMPTY(&node->waits)) {
		tdelete(node, &wait_root, wait_cmp);
		free(node);
	}
	if (w->timer != NULL)
		event_free(w->timer);
	free(w);
}

/* Answers with the job as it is now (timeout), or as its end left it. */
static void
wait_answer(struct jobwait *w, const struct job *job)
{
	struct rpc_req *req = w->req;
	json_t *obj = jobs_json(w->td, job);

	wait_free(w);
	rpc_reply(req, obj);
}

static void
wait_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct jobwait *w = arg;
	struct job *job = store_get(w->td->store, w->node->id);

	(void)fd;
	(void)what;
	if (job != NULL)
		wait_answer(w, job);
	else {
		struct rpc_req *req = w->req;

		wait_free(w);
		rpc_error(req, RPC_NO_SUCH_JOB, "id", "the job is gone");
	}
}

static void
wait_withdraw_cb(struct rpc_req *req, void *arg)
{
	(void)req;
	wait_free(arg);
}

int
wait_add(struct triaged *td, struct rpc_req *req, const struct job *job,
    uint64_t timeout_ms)
{
	struct timeval tv = timefmt_tv(timeout_ms);
	struct wait_node *node;
	struct jobwait *w;

	if ((w = calloc(1, sizeof *w)) == NULL)
		return -1;
	w->td = td;
	w->req = req;
	if (timeout_ms > 0) {
		w->timer = evtimer_new(td->base, wait_timeout_cb, w);
		if (w->timer == NULL || evtimer_add(w->timer, &tv) != 0)
			goto fail;
	}
	if ((node = wait_node_find(job->id)) == NULL) {
		if ((node = calloc(1, sizeof *node)) == NULL)
			goto fail;
		node->id = job->id;
		TAILQ_INIT(&node->waits);
		if (tsearch(node, &wait_root, wait_cmp) == NULL) {
			free(node);
			goto fail;
		}
	}
	w->node = node;
	TAILQ_INSERT_TAIL(&node->waits, w, entry);
	rpc_defer(req, wait_withdraw_cb, w);
	return 0;
fail:
	if (w->timer != NULL)
		event_free(w->timer);
	free(w);
	return -1;
}

void
wait_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	struct wait_node *node;

	(void)td;
	(void)arg;
	if (!job_state_terminal(ev->view->state))
		return;
	/* A node lives while it has waits: the last answer frees it. */
	while ((node = wait_node_find(ev->view->id)) != NULL)
		wait_answer(TAILQ_FIRST(&node->waits), ev->view);
}
