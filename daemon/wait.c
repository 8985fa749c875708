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

/* A commit barrier on its way for a set (its pointer cleared when the set
 * goes first: the barrier cannot be taken back). */
struct wait_check {
	struct waitset *set;
};

/* A job of a set as the daemon's view showed it when its answer was
 * taken, which may be a commit ahead of the database. */
struct wait_seen {
	bool unsure;			/* not known to be written yet */
	uint16_t mark;			/* jobs_edit_mark then */
	unsigned attempt;
	enum job_state state;
};

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
	/*
	 * Jobs whose end was taken from the daemon's own view as the request
	 * came, which may be a commit ahead of the database, and the barrier
	 * after which what the database made of it shows (a write refused, or
	 * the row read back, when another node took the job over first).
	 * Until then nothing is answered: an end the database did not keep
	 * is no outcome.
	 */
	struct wait_seen *seen;
	struct wait_check *check;
	bool timed_out;			/* while check: answer after it */
	bool now;
	uint64_t timeout_ms;
	wait_reply_fn reply;
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
	if (s->check != NULL)
		s->check->set = NULL;
	if (s->timer != NULL)
		event_free(s->timer);
	free(s->seen);
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
	struct waitset *s = arg;

	(void)fd;
	(void)what;
	if (s->check != NULL) {
		s->timed_out = true;
		return;
	}
	wait_answer(s);
}

/* The timeout, from now, once the set waits for ends. 0, or -1. */
static int
wait_arm(struct waitset *s)
{
	struct timeval tv = timefmt_tv(s->timeout_ms);

	if (s->timeout_ms == 0 || s->timer != NULL)
		return 0;
	s->timer = evtimer_new(s->td->base, wait_timeout_cb, s);
	if (s->timer == NULL || evtimer_add(s->timer, &tv) != 0)
		return -1;
	return 0;
}

static void wait_check_cb(struct triaged *, struct job *, const char *,
    void *);

/* Job's answer taken now, from the daemon's view: not sure to be written
 * until a barrier says so. NULL out of memory. */
static json_t *
wait_take(struct waitset *s, size_t i, const struct job *job)
{
	struct wait_seen *seen = &s->seen[i];

	seen->unsure = true;
	seen->mark = jobs_edit_mark(job);
	seen->attempt = job->attempt;
	seen->state = job->state;
	return jobs_json(s->td, job);
}

/* A barrier after everything done so far, unless nothing waits to be
 * written: then what was taken is the database's. 0, or -1. */
static int
wait_check(struct waitset *s)
{
	size_t i, unsure = 0;

	for (i = 0; i < s->n; i++)
		unsure += s->seen[i].unsure;
	if (unsure == 0)
		return 0;
	if (!store_pending(s->td->store)) {
		for (i = 0; i < s->n; i++)
			s->seen[i].unsure = false;
		return 0;
	}
	if ((s->check = calloc(1, sizeof *s->check)) == NULL)
		return -1;
	s->check->set = s;
	if (jobs_after_commit(s->td, wait_check_cb, s->check) != 0) {
		free(s->check);
		s->check = NULL;
		return -1;
	}
	return 0;
}

/*
 * Everything done before the answers were taken is written: each stands
 * if its job is still as it was then, and no write of it was refused
 * since. Otherwise the database had it otherwise (another node took the
 * job over as a new attempt, first): a job ended as it is now is taken
 * again, for another check; one that runs again is waited on again.
 */
static void
wait_check_cb(struct triaged *td, struct job *unused, const char *cause,
    void *arg)
{
	struct wait_check *ck = arg;
	struct waitset *s = ck->set;
	struct wait_seen *seen;
	struct job *job;
	size_t i;

	(void)unused;
	free(ck);
	if (s == NULL)
		return;		/* withdrawn */
	s->check = NULL;
	if (cause != NULL) {
		rpc_error(s->req, RPC_INTERNAL_ERROR, NULL, "%s", cause);
		wait_free(s);
		return;
	}
	for (i = 0; i < s->n; i++) {
		seen = &s->seen[i];
		if (!seen->unsure)
			continue;
		seen->unsure = false;
		job = store_get(td->store, s->ids[i]);
		/* Gone: removed once ended, as it was. */
		if (job == NULL || (!jobs_edit_undone(job, seen->mark) &&
		    job->attempt == seen->attempt &&
		    job->state == seen->state))
			continue;
		json_decref(s->ended[i]);
		s->ended[i] = NULL;
		if (s->now || job_state_terminal(job->state)) {
			if ((s->ended[i] = wait_take(s, i, job)) == NULL)
				goto oom;
		} else if (wait_park(&s->waits[i], s->ids[i]) != 0)
			goto oom;
		else
			s->left++;
	}
	if (wait_check(s) != 0)
		goto oom;
	if (s->check != NULL)
		return;
	if (s->left == 0 || s->timed_out) {
		wait_answer_with(s, s->reply);
		return;
	}
	if (wait_arm(s) != 0)
		goto oom;
	return;
oom:
	rpc_error(s->req, RPC_INTERNAL_ERROR, NULL, "out of memory");
	wait_free(s);
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
	struct waitset *s;
	struct job *job;
	size_t i;

	if ((s = calloc(1, sizeof *s)) == NULL)
		return -1;
	s->td = td;
	s->req = req;
	s->one = one;
	s->n = n;
	s->now = now;
	s->timeout_ms = timeout_ms;
	s->reply = reply;
	if ((s->ids = calloc(n, sizeof *s->ids)) == NULL ||
	    (s->ended = calloc(n, sizeof *s->ended)) == NULL ||
	    (s->waits = calloc(n, sizeof *s->waits)) == NULL ||
	    (s->seen = calloc(n, sizeof *s->seen)) == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		s->ids[i] = ids[i];
		s->waits[i].set = s;
		s->waits[i].index = i;
		job = store_get(td->store, ids[i]);
		if (now || job_state_terminal(job->state)) {
			if ((s->ended[i] = wait_take(s, i, job)) == NULL)
				goto fail;
		} else if (wait_park(&s->waits[i], ids[i]) != 0)
			goto fail;
		else
			s->left++;
	}
	if (wait_check(s) != 0)
		goto fail;
	if (s->left == 0 && s->check == NULL) {
		wait_answer_with(s, reply);
		return 0;
	}
	if (s->left > 0 && wait_arm(s) != 0)
		goto fail;
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
		/* With a check on its way, it answers. */
		if (--s->left == 0 && s->check == NULL)
			wait_answer(s);
	}
}
