/* method-list.c - `list`: jobs in submission order, filtered by state,
 * priority, labels, name and held, a page at a time (limit, after_id), a
 * slice per turn. */
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "config.h"
#include "filter.h"
#include "job.h"
#include "jobs.h"
#include "method.h"
#include "rpc.h"
#include "store.h"
#include "triaged.h"
#include "timefmt.h"

#define LIST_DEFAULT_LIMIT 1000
#define LIST_MAX_LIMIT 100000
/* Jobs written, jobs looked at, and time spent in one turn of the loop: a
 * list of 100,000 jobs must not keep other clients waiting for its whole
 * length. The clock is read every LIST_SLICE_CHECK jobs. */
#define LIST_SLICE_JOBS 500
#define LIST_SLICE_SCAN 5000
#define LIST_SLICE_US 2000
#define LIST_SLICE_CHECK 32

/* A list under way. */
struct list {
	struct rpc_req *req;
	struct triaged *td;
	struct event *ev;		/* the next slice */
	struct evbuffer *out;		/* the result's text */
	struct filter *filter;
	uint64_t id;			/* the last job looked at */
	json_int_t left;		/* jobs still to write */
	bool first;			/* no job written yet */
};

static void
list_free(struct list *l)
{
	if (l->ev != NULL)
		event_free(l->ev);
	filter_free(l->filter);
	free(l);
}

/* Writes the next slice; true when the list is complete. -1 on error. */
static int
list_slice(struct list *l)
{
	uint64_t start = timefmt_mono_us();
	unsigned written = 0, scanned = 0;
	struct job *job;
	bool failed;
	json_t *o;

	while (l->left > 0 && written < LIST_SLICE_JOBS &&
	    scanned < LIST_SLICE_SCAN) {
		if (scanned % LIST_SLICE_CHECK == LIST_SLICE_CHECK - 1 &&
		    timefmt_mono_us() - start > LIST_SLICE_US)
			break;
		if ((job = store_next_submitted(l->td->store, l->id)) ==
		    NULL) {
			l->left = 0;
			break;
		}
		l->id = job->id;
		scanned++;
		if (!filter_match(l->filter, job))
			continue;
		/* Each job's tree lives only as long as it takes to write it:
		 * a list never holds more than one. */
		if ((o = jobs_json(l->td, job)) == NULL)
			return -1;
		failed = (!l->first && evbuffer_add(l->out, ",", 1) != 0) ||
		    rpc_result_add_json(l->out, o) != 0;
		json_decref(o);
		if (failed)
			return -1;
		l->first = false;
		written++;
		l->left--;
	}
	return l->left == 0;
}

static void list_step(struct list *l);

static void
list_next_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	list_step(arg);
}

static void
list_room_cb(struct rpc_req *req, void *arg)
{
	struct list *l = arg;
	static const struct timeval now = { 0, 0 };

	(void)req;
	evtimer_add(l->ev, &now);
}

static void
list_withdraw_cb(struct rpc_req *req, void *arg)
{
	(void)req;
	list_free(arg);
}

/*
 * One slice, then the next one at the next turn of the loop (a zero timer,
 * after the loop has looked at every other client), or once the client has
 * read enough of what was written.
 */
static void
list_step(struct list *l)
{
	static const struct timeval now = { 0, 0 };
	struct rpc_req *req = l->req;
	int done;

	if ((done = list_slice(l)) < 0) {
		list_free(l);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	if (done) {
		if (evbuffer_add(l->out, "]}", 2) != 0) {
			list_free(l);
			rpc_error(req, RPC_INTERNAL_ERROR, NULL,
			    "out of memory");
			return;
		}
		list_free(l);
		rpc_result_end(req);
		return;
	}
	if (l->ev == NULL && (l->ev = evtimer_new(l->td->base, list_next_cb,
	    l)) == NULL) {
		list_free(l);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	rpc_defer(req, list_withdraw_cb, l);
	if (!rpc_result_flush(req, list_room_cb, l))
		evtimer_add(l->ev, &now);
}

static int
list_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	json_t *limit = json_object_get(params, "limit");
	json_t *after = json_object_get(params, "after_id");

	if (filter_check(ctx, params, FILTER_KEYS | FILTER_HELD, "", false,
	    err) != 0)
		return -1;
	if (limit != NULL && (json_integer_value(limit) < 1 ||
	    json_integer_value(limit) > LIST_MAX_LIMIT))
		return method_fail(err, RPC_INVALID_PARAMS, "limit",
		    "\"limit\" must be from 1 to %d", LIST_MAX_LIMIT);
	if (after != NULL && json_integer_value(after) < 0)
		return method_fail(err, RPC_INVALID_PARAMS, "after_id",
		    "\"after_id\" must be 0 or more");
	return 0;
}

static void
list_handler(struct rpc_req *req, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	json_t *limit = json_object_get(params, "limit");
	json_t *after = json_object_get(params, "after_id");
	struct list *l;

	/* Everybody's jobs: list is open to all. */
	if ((l = calloc(1, sizeof *l)) == NULL ||
	    (l->filter = filter_new(td->cfg, params, true, 0)) == NULL) {
		free(l);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	l->req = req;
	l->td = td;
	l->left = LIST_DEFAULT_LIMIT;
	l->first = true;
	if (limit != NULL)
		l->left = json_integer_value(limit);
	if (after != NULL)
		l->id = (uint64_t)json_integer_value(after);
	if ((l->out = rpc_result_begin(req)) == NULL ||
	    evbuffer_add(l->out, "{\"jobs\":[", 9) != 0) {
		list_free(l);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	list_step(l);
}

static const struct method_param list_params[] = {
	{ "state", PARAM_ARRAY, false, "an array of state names" },
	{ "priority", PARAM_STRING, false, NULL },
	{ "limit", PARAM_INTEGER, false, NULL },
	{ "after_id", PARAM_INTEGER, false, NULL },
	{ "labels", PARAM_OBJECT, false, NULL },
	{ "name", PARAM_STRING, false, NULL },
	{ "held", PARAM_BOOLEAN, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_list = {
	.name = "list",
	.params = list_params,
	.check = list_check,
	.handler = list_handler,
};
