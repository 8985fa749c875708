/* method-remove.c - `remove`: terminal jobs and their captured output are
 * deleted now, after everything they did has been heard, a slice a turn. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "bulk.h"
#include "job.h"
#include "jobs.h"
#include "method.h"
#include "prune.h"
#include "rpc.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"

/*
 * Jobs whose earlier changes have all been heard (their barrier passed),
 * forgotten a few at a time: each forget moves the store's array, so a
 * remove of 100,000 jobs must not do them all in one turn of the loop.
 */
#define REMOVE_SLICE_US 2000

/* td->removals: the jobs whose barrier has passed, in turn; allocated
 * while there are some. */
struct removals {
	struct bulk_token **queue;
	size_t head, n, cap;
	struct event *ev;	/* the next slice */
};

/* A job retried since its barrier (a new attempt, or not terminal) may
 * have changes not heard yet: it stays. */
static void
remove_one(struct triaged *td, struct bulk_token *token)
{
	struct method_err err;
	struct job *job;

	if ((job = store_get(td->store, token->id)) == NULL) {
		method_fail(&err, RPC_NO_SUCH_JOB, "id", "no job %llu: it "
		    "was removed meanwhile", (unsigned long long)token->id);
		bulk_settle(token, BULK_SKIPPED, &err);
	} else if (!job_state_terminal(job->state) ||
	    job->attempt != token->attempt) {
		method_fail(&err, RPC_WRONG_STATE, "id", "job %llu was "
		    "retried meanwhile", (unsigned long long)token->id);
		bulk_settle(token, BULK_SKIPPED, &err);
	} else if (prune_job(td, token->id) != 0) {
		method_fail(&err, RPC_INTERNAL_ERROR, NULL, "cannot remove "
		    "job %llu: %s", (unsigned long long)token->id,
		    strerror(errno));
		bulk_settle(token, BULK_FAILED, &err);
	} else
		bulk_settle(token, BULK_ACTED, NULL);
}

static void
remove_queue_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval now = { 0, 0 };
	struct triaged *td = arg;
	struct removals *r = td->removals;
	uint64_t start = timefmt_mono_us();

	(void)fd;
	(void)what;
	while (r->head < r->n) {
		if (timefmt_mono_us() - start > REMOVE_SLICE_US) {
			evtimer_add(r->ev, &now);
			return;
		}
		remove_one(td, r->queue[r->head++]);
	}
	event_free(r->ev);
	free(r->queue);
	free(r);
	td->removals = NULL;
}

/* td->removals, made when there is none; NULL out of memory. */
static struct removals *
remove_queue(struct triaged *td)
{
	struct removals *r;

	if (td->removals != NULL)
		return td->removals;
	if ((r = calloc(1, sizeof *r)) == NULL)
		return NULL;
	if ((r->ev = evtimer_new(td->base, remove_queue_cb, td)) == NULL) {
		free(r);
		return NULL;
	}
	return td->removals = r;
}

/* Every change made before the barrier is published by now: the waits
 * and watches of the job have heard its end. */
static void
remove_barrier_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	static const struct timeval now = { 0, 0 };
	struct bulk_token **v, *token = arg;
	struct method_err err;
	struct removals *r;

	(void)job;
	(void)cause;
	if ((r = remove_queue(td)) == NULL) {
		method_fail(&err, RPC_INTERNAL_ERROR, NULL, "out of memory");
		bulk_settle(token, BULK_FAILED, &err);
		return;
	}
	if (r->n == r->cap) {
		v = reallocarray(r->queue, r->cap ? r->cap * 2 : 256,
		    sizeof *v);
		if (v == NULL) {
			method_fail(&err, RPC_INTERNAL_ERROR, NULL,
			    "out of memory");
			bulk_settle(token, BULK_FAILED, &err);
			return;
		}
		r->queue = v;
		r->cap = r->cap ? r->cap * 2 : 256;
	}
	r->queue[r->n++] = token;
	if (!evtimer_pending(r->ev, NULL))
		evtimer_add(r->ev, &now);
}

static enum bulk_verdict
remove_act(struct bulk *b, struct job *job, struct method_err *err)
{
	struct bulk_token *token;

	if (!job_state_terminal(job->state)) {
		method_fail(err, RPC_WRONG_STATE, "id", "job %llu %s: only "
		    "a job that has ended can be removed (cancel it first)",
		    (unsigned long long)job->id, job_state_phrase(job->state));
		return BULK_SKIPPED;
	}
	if ((token = bulk_token(b, job)) == NULL ||
	    jobs_after_commit(bulk_daemon(b), remove_barrier_cb, token) != 0) {
		free(token);
		method_fail(err, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return BULK_FAILED;
	}
	return BULK_PENDING;
}

static const struct bulk_op remove_op = {
	.verb = "remove",
	.act = remove_act,
	.id_gives_job = false,
};

static void
remove_handler(struct rpc_req *req, json_t *params)
{
	bulk_start(req, params, &remove_op);
}

static const struct method_param remove_params[] = {
	{ "id", PARAM_INTEGER, false, NULL },
	{ "filter", PARAM_OBJECT, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_remove = {
	.name = "remove",
	.params = remove_params,
	.check = bulk_check,
	.handler = remove_handler,
};
