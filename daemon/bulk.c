/* bulk.c - methods that act on one job ("id") or on every job a filter
 * selects ("filter"), the filter form a slice per turn of the loop. */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "bulk.h"
#include "conn.h"
#include "filter.h"
#include "job.h"
#include "jobs.h"
#include "method.h"
#include "rpc.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"

/* Jobs acted on, jobs looked at, and time spent in one turn of the loop:
 * a filter over 100,000 jobs must not keep other clients waiting for its
 * whole length. Far fewer acts than list writes jobs: each is also a row
 * for the turn's commit and an event to publish (test-load measures the
 * others' latency meanwhile). The clock is read every BULK_SLICE_CHECK
 * jobs. */
#define BULK_SLICE_ACTS 100
#define BULK_SLICE_SCAN 5000
#define BULK_SLICE_US 2000
#define BULK_SLICE_CHECK 32

struct bulk {
	struct rpc_req *req;		/* NULL once its client has gone */
	struct triaged *td;
	const struct bulk_op *op;
	json_t *params;
	uid_t uid;
	struct filter *filter;		/* NULL: the id form */
	uint64_t id;			/* the id form's job; else the last
					 * looked at */
	uint64_t last;			/* the largest id at the start */
	struct event *ev;		/* the next slice */
	uint64_t *ids;			/* acted on */
	uint16_t *refused;		/* each one's refused writes then */
	size_t nids, cap;
	unsigned pending;		/* PENDING actions not settled yet */
	bool writing;			/* answered once its writes are in */
	bool scanning;			/* slices to come */
	bool unchanged;			/* the id form: answer with the job */
	struct method_err err;		/* err.code != 0: it failed */
};

int
bulk_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	json_t *filter = json_object_get(params, "filter");
	bool id = json_object_get(params, "id") != NULL;

	if (id == (filter != NULL))
		return method_fail(err, RPC_INVALID_PARAMS, id ? "filter" :
		    "id", "give either \"id\" (one job) or \"filter\" (every "
		    "job it selects), %s", id ? "not both" : "one of them");
	if (id)
		return method_check_id(ctx, params, err);
	return filter_check(ctx, filter, FILTER_KEYS, "filter.", true, err);
}

struct triaged *
bulk_daemon(const struct bulk *b)
{
	return b->td;
}

uid_t
bulk_uid(const struct bulk *b)
{
	return b->uid;
}

json_t *
bulk_params(const struct bulk *b)
{
	return b->params;
}

static void
bulk_free(struct bulk *b)
{
	if (b->ev != NULL)
		event_free(b->ev);
	filter_free(b->filter);
	json_decref(b->params);
	free(b->ids);
	free(b->refused);
	free(b);
}

/* Keeps the first error: it is the one the client hears. */
static void
bulk_fail(struct bulk *b, const struct method_err *err)
{
	if (b->err.code != 0)
		return;
	b->err = *err;
	if (err->field == err->field_buf)
		b->err.field = b->err.field_buf;
	b->scanning = false;
}

static void
bulk_acted(struct bulk *b, uint64_t id, uint16_t refused)
{
	struct method_err err;
	size_t cap = b->cap ? b->cap * 2 : 16;
	uint16_t *r;
	uint64_t *v;

	if (b->nids == b->cap) {
		if ((v = reallocarray(b->ids, cap, sizeof *v)) != NULL)
			b->ids = v;
		if ((r = reallocarray(b->refused, cap, sizeof *r)) != NULL)
			b->refused = r;
		if (v == NULL || r == NULL) {
			method_fail(&err, RPC_INTERNAL_ERROR, NULL,
			    "out of memory");
			bulk_fail(b, &err);
			return;
		}
		b->cap = cap;
	}
	b->refused[b->nids] = refused;
	b->ids[b->nids++] = id;
}

static void
bulk_verdict(struct bulk *b, uint64_t id, uint16_t refused,
    enum bulk_verdict v, const struct method_err *err)
{
	switch (v) {
	case BULK_ACTED:
		bulk_acted(b, id, refused);
		break;
	case BULK_SKIPPED:
		/* The filter form passes it by; the id form tells why. */
		if (b->filter != NULL)
			break;
		if (err != NULL && err->code != 0)
			bulk_fail(b, err);
		else
			b->unchanged = true;
		break;
	case BULK_PENDING:
		b->pending++;
		break;
	case BULK_FAILED:
		bulk_fail(b, err);
		break;
	}
}

/* Whether the write of the action on the i-th job acted on was refused,
 * undoing the action (bulk_op.done). */
static bool
bulk_undone(const struct bulk *b, size_t i)
{
	const struct job *job;

	if (b->op->done == NULL)
		return false;
	job = store_get(b->td->store, b->ids[i]);
	return job != NULL && jobs_edit_undone(job, b->refused[i]);
}

/* {"ids": [...]}, ascending, but those undone; NULL out of memory. Once:
 * the ids are sorted and the undone dropped in place. */
static json_t *
bulk_ids_json(struct bulk *b)
{
	json_t *ids = json_array();
	size_t i, n = 0;

	for (i = 0; i < b->nids; i++)
		if (!bulk_undone(b, i))
			b->ids[n++] = b->ids[i];
	b->nids = n;
	if (b->nids > 0)
		qsort(b->ids, b->nids, sizeof *b->ids, filter_cmp_id);
	for (i = 0; ids != NULL && i < b->nids; i++)
		if (json_array_append_new(ids, json_integer((json_int_t)
		    b->ids[i])) != 0) {
			json_decref(ids);
			return NULL;
		}
	return ids != NULL ? json_pack("{so}", "ids", ids) : NULL;
}

/* The answer, its writes on disk (or failed), then the bulk goes. */
static void
bulk_answer(struct bulk *b)
{
	struct rpc_req *req = b->req;
	struct method_err err;
	struct job *job;
	json_t *data;

	b->req = NULL;
	if (b->err.code != 0 && b->filter == NULL)
		rpc_error(req, b->err.code, b->err.field, "%s",
		    b->err.message);
	else if (b->err.code != 0) {
		data = bulk_ids_json(b);
		if (data != NULL && b->err.field != NULL)
			json_object_set_new(data, "field",
			    json_string(b->err.field));
		rpc_error_data(req, b->err.code, data, "%s", b->err.message);
	} else if (b->filter == NULL && b->op->id_gives_job &&
	    (job = store_get(b->td->store, b->id)) != NULL) {
		if (b->nids == 1 && bulk_undone(b, 0)) {
			method_fail_refused(&err, job, b->op->done);
			rpc_error(req, err.code, err.field, "%s", err.message);
		} else
			rpc_reply(req, jobs_json(b->td, job));
	} else
		rpc_reply(req, bulk_ids_json(b));
	bulk_free(b);
}

static void
bulk_written_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	struct bulk *b = arg;
	struct method_err err;

	(void)td;
	(void)job;
	b->writing = false;
	if (b->req == NULL) {
		bulk_free(b);
		return;
	}
	if (cause != NULL) {
		method_fail(&err, RPC_INTERNAL_ERROR, NULL, "the changes could "
		    "not be stored: %s", cause);
		bulk_fail(b, &err);
	}
	bulk_answer(b);
}

/* Everything is done: answered once what it did is on disk, when the
 * writes that undo an action (bulk_op.done) are known. */
static void
bulk_finish(struct bulk *b)
{
	struct method_err err;

	if (b->req == NULL) {
		bulk_free(b);
		return;
	}
	if (b->err.code == 0 && store_pending(b->td->store)) {
		b->writing = true;
		if (jobs_after_commit(b->td, bulk_written_cb, b) == 0)
			return;
		b->writing = false;
		method_fail(&err, RPC_INTERNAL_ERROR, NULL, "out of memory");
		bulk_fail(b, &err);
	}
	bulk_answer(b);
}

static void
bulk_finish_if_done(struct bulk *b)
{
	if (!b->scanning && b->pending == 0)
		bulk_finish(b);
}

static void
bulk_act(struct bulk *b, struct job *job)
{
	struct method_err err;
	uint64_t id = job->id;
	uint16_t refused = jobs_edit_mark(job);	/* act may free the job */

	memset(&err, 0, sizeof err);
	bulk_verdict(b, id, refused, b->op->act(b, job, &err), &err);
}

/* Acts on the next jobs the filter selects; scanning is false after the
 * last one. */
static void
bulk_slice(struct bulk *b)
{
	uint64_t start = timefmt_mono_us();
	unsigned acts = 0, scanned = 0;
	struct job *job;

	while (b->scanning && acts < BULK_SLICE_ACTS &&
	    scanned < BULK_SLICE_SCAN) {
		if (scanned % BULK_SLICE_CHECK == BULK_SLICE_CHECK - 1 &&
		    timefmt_mono_us() - start > BULK_SLICE_US)
			break;
		job = filter_next(b->filter, b->td->store, b->id);
		if (job == NULL || job->id > b->last) {
			b->scanning = false;
			break;
		}
		b->id = job->id;
		scanned++;
		if (!filter_match(b->filter, job))
			continue;
		acts++;
		bulk_act(b, job);
	}
}

static void bulk_step(struct bulk *b);

static void
bulk_next_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	bulk_step(arg);
}

static void
bulk_step(struct bulk *b)
{
	static const struct timeval now = { 0, 0 };
	struct method_err err;

	bulk_slice(b);
	if (!b->scanning) {
		bulk_finish_if_done(b);
		return;
	}
	/* The next slice at the next turn, after every other client. */
	if (b->ev == NULL && (b->ev = evtimer_new(b->td->base,
	    bulk_next_cb, b)) == NULL) {
		method_fail(&err, RPC_INTERNAL_ERROR, NULL, "out of memory");
		bulk_fail(b, &err);
		bulk_finish_if_done(b);
		return;
	}
	evtimer_add(b->ev, &now);
}

static void
bulk_withdraw_cb(struct rpc_req *req, void *arg)
{
	struct bulk *b = arg;

	(void)req;
	b->req = NULL;
	b->scanning = false;
	if (b->ev != NULL)
		evtimer_del(b->ev);
	/* Actions under way still settle, and writes end: the last of them
	 * frees it. */
	if (b->pending == 0 && !b->writing)
		bulk_free(b);
}

struct bulk_token *
bulk_token(struct bulk *b, const struct job *job)
{
	struct bulk_token *t;

	if ((t = calloc(1, sizeof *t)) == NULL)
		return NULL;
	t->bulk = b;
	t->id = job->id;
	t->attempt = job->attempt;
	t->refused = jobs_edit_mark(job);
	return t;
}

void
bulk_settle(struct bulk_token *token, enum bulk_verdict v,
    const struct method_err *err)
{
	struct bulk *b = token->bulk;

	b->pending--;
	if (b->req != NULL)
		bulk_verdict(b, token->id, token->refused, v, err);
	free(token);
	if (b->err.code != 0 && b->ev != NULL)
		evtimer_del(b->ev);
	bulk_finish_if_done(b);
}

void
bulk_start(struct rpc_req *req, json_t *params, const struct bulk_op *op)
{
	struct triaged *td = rpc_daemon(req);
	json_t *filter = json_object_get(params, "filter");
	struct job *job = NULL, *last;
	struct bulk *b;

	if (filter == NULL && ((job = method_job(req, params)) == NULL ||
	    !method_may_act(req, job, op->verb)))
		return;
	if ((b = calloc(1, sizeof *b)) == NULL ||
	    (filter != NULL && (b->filter = filter_new(td->cfg, filter,
	    conn_is_admin(req->conn), conn_uid(req->conn))) == NULL)) {
		free(b);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	b->req = req;
	b->td = td;
	b->op = op;
	b->params = json_incref(params);
	b->uid = conn_uid(req->conn);
	rpc_defer(req, bulk_withdraw_cb, b);
	if (job != NULL) {
		b->id = job->id;
		bulk_act(b, job);
		bulk_finish_if_done(b);
		return;
	}
	last = store_last(td->store);
	b->last = last != NULL ? last->id : 0;
	b->scanning = true;
	bulk_step(b);
}
