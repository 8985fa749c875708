/* wait.c - `wait` requests parked on jobs until they end or their timeout
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

struct waitset;

/* One job of a request, parked on that job's node. */
struct jobwait {
	TAILQ_ENTRY(jobwait) entry;	/* in its node's list */
	struct wait_node *node;		/* NULL: not parked (it ended) */
	struct waitset *set;
	size_t index;			/* its place in the set */
};

/* One request: its jobs, and what it answers with. */
struct waitset {
	struct triaged *td;
	struct rpc_req *req;
	struct event *timer;		/* NULL: no timeout */
	bool one;			/* answers with the job object */
	size_t n, left;			/* jobs in all, jobs not ended */
	uint64_t *ids;
	/* Each job as its end left it, taken then: a job removed after
	 * that still has its answer. NULL until it ends. */
	json_t **ended;
	struct jobwait *waits;
};

/* The waits on one job, by its id. */
struct wait_node {
	uint64_t id;
	TAILQ_HEAD(, jobwait) waits;
};

/* td->waits: the jobs waited on. */
struct waits {
	void *root;		/* tsearch tree of struct wait_node */
};

static int
wait_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct wait_node *)a)->id;
	uint64_t y = ((const struct wait_node *)b)->id;

	return x < y ? -1 : x > y;
}

static struct wait_node *
wait_node_find(struct waits *ws, uint64_t id)
{
	struct wait_node key = { .id = id }, **found;

	found = tfind(&key, &ws->root, wait_cmp);
	return found != NULL ? *found : NULL;
}

static void
wait_unpark(struct jobwait *w)
{
	struct wait_node *node = w->node;

	if (node == NULL)
		return;
	TAILQ_REMOVE(&node->waits, w, entry);
	if (TAILQ_EMPTY(&node->waits)) {
		tdelete(node, &w->set->td->waits->root, wait_cmp);
		free(node);
	}
	w->node = NULL;
}

static int
wait_park(struct jobwait *w, uint64_t id)
{
	struct waits *ws = w->set->td->waits;
	struct wait_node *node;

	if ((node = wait_node_find(ws, id)) == NULL) {
		if ((node = calloc(1, sizeof *node)) == NULL)
			return -1;
		node->id = id;
		TAILQ_INIT(&node->waits);
		if (tsearch(node, &ws->root, wait_cmp) == NULL) {
			free(node);
			return -1;
		}
	}
	w->node = node;
	TAILQ_INSERT_TAIL(&node->waits, w, entry);
	return 0;
}

static void
wait_free(struct waitset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		wait_unpark(&s->waits[i]);
		json_decref(s->ended[i]);
	}
	if (s->timer != NULL)
		event_free(s->timer);
	free(s->waits);
	free(s->ended);
	free(s->ids);
	free(s);
}

/* Each job as its end left it, or as it is now: the answer, or NULL
 * (out of memory; or a job is gone, when gone is set to its id). */
static json_t *
wait_result(struct waitset *s, uint64_t *gone)
{
	json_t *jobs = json_array(), *obj;
	struct job *job;
	size_t i;

	for (i = 0; jobs != NULL && i < s->n; i++) {
		if ((obj = s->ended[i]) != NULL)
			s->ended[i] = NULL;
		else if ((job = store_get(s->td->store, s->ids[i])) != NULL)
			obj = jobs_json(s->td, job);
		else
			*gone = s->ids[i];
		if (obj == NULL || json_array_append_new(jobs, obj) != 0) {
			json_decref(jobs);
			return NULL;
		}
	}
	if (jobs == NULL || !s->one)
		return json_pack("{so*}", "jobs", jobs);
	obj = json_incref(json_array_get(jobs, 0));
	json_decref(jobs);
	return obj;
}

/* Answers through reply, and frees s. */
static void
wait_answer_with(struct waitset *s, wait_reply_fn reply)
{
	struct rpc_req *req = s->req;
	uint64_t gone = 0;
	json_t *result = wait_result(s, &gone);
	bool one = s->one;

	wait_free(s);
	if (result != NULL)
		reply(req, result);
	else if (gone != 0)
		rpc_error(req, RPC_NO_SUCH_JOB, one ? "id" : "ids",
		    "job %llu is gone", (unsigned long long)gone);
	else
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
}

static void
wait_answer(struct waitset *s)
{
	wait_answer_with(s, rpc_reply);
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
wait_start(struct triaged *td)
{
	if ((td->waits = calloc(1, sizeof *td->waits)) == NULL)
		return -1;
	return 0;
}

void
wait_stop(struct triaged *td)
{
	free(td->waits);
	td->waits = NULL;
}

int
wait_add(struct triaged *td, struct rpc_req *req, const uint64_t *ids,
    size_t n, bool one, uint64_t timeout_ms, bool now, wait_reply_fn reply)
{
	struct timeval tv = timefmt_tv(timeout_ms);
	struct waitset *s;
	struct job *job;
	size_t i;

	if ((s = calloc(1, sizeof *s)) == NULL)
		return -1;
	s->td = td;
	s->req = req;
	s->one = one;
	s->n = n;
	if ((s->ids = calloc(n, sizeof *s->ids)) == NULL ||
	    (s->ended = calloc(n, sizeof *s->ended)) == NULL ||
	    (s->waits = calloc(n, sizeof *s->waits)) == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		s->ids[i] = ids[i];
		s->waits[i].set = s;
		s->waits[i].index = i;
		job = store_get(td->store, ids[i]);
		if (now || job_state_terminal(job->state)) {
			if ((s->ended[i] = jobs_json(td, job)) == NULL)
				goto fail;
		} else if (wait_park(&s->waits[i], ids[i]) != 0)
			goto fail;
		else
			s->left++;
	}
	if (s->left == 0) {
		wait_answer_with(s, reply);
		return 0;
	}
	if (timeout_ms > 0) {
		s->timer = evtimer_new(td->base, wait_timeout_cb, s);
		if (s->timer == NULL || evtimer_add(s->timer, &tv) != 0)
			goto fail;
	}
	rpc_defer(req, wait_withdraw_cb, s);
	return 0;
fail:
	wait_free(s);
	return -1;
}

void
wait_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	struct wait_node *node;
	struct jobwait *w;
	struct waitset *s;

	(void)arg;
	if (!job_state_terminal(ev->view->state))
		return;
	/* A node lives while it has waits: the last one parked frees it. */
	while ((node = wait_node_find(td->waits, ev->view->id)) != NULL) {
		w = TAILQ_FIRST(&node->waits);
		s = w->set;
		wait_unpark(w);
		s->ended[w->index] = jobs_json(td, ev->view);
		if (--s->left == 0)
			wait_answer(s);
	}
}
