/* rpc.c - JSON-RPC 2.0 over a connection's lines: decoding, checking against
 * the method's descriptor, batches, and replies that may come later. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "config.h"
#include "conn.h"
#include "envelope.h"
#include "jsonw.h"
#include "log.h"
#include "rpc.h"
#include "rpc-decode.h"
#include "triaged.h"
#include "timefmt.h"

/* Batch members started in one go before other clients get their turn. */
#define RPC_TURN_US 2000
/* A batch's replies wait in memory up to this size; past it they go out as
 * they come, the batch's line open on the output, so that a client that
 * does not read holds back the batch instead of the daemon's memory. */
#define RPC_STREAM_MIN (64u << 10)

/* rpc's side of one connection. */
struct rpc_conn {
	struct conn *conn;
	unsigned refs;		/* the connection's until it closes, each
				   request's, each batch's */
	bool closed;
	struct rpc_reqs pending;	/* deferred: withdrawn on close */
	struct rpc_batch *running;	/* still starting its members */
	struct event *run_ev;		/* starts more of them, next turn */
	bool run_wants_room;		/* ...once the output drains */
	unsigned nworking;		/* requests writing a result in pieces */
	struct rpc_req *room_waiter;	/* one waiting for the output to drain */
};

/* One batch: its replies make one array on one line, member by member. */
struct rpc_batch {
	struct rpc_conn *rc;
	json_t *members;	/* the requests, until all are started */
	size_t next;		/* the next member to start */
	size_t outstanding;	/* started and unanswered, +1 while starting */
	struct evbuffer *out;	/* replies not on the output yet */
	size_t held;		/* of them, counted with conn_hold() */
	size_t nreplies;	/* so far: the first one opens the array */
	bool streaming;		/* the batch's line is open on the output */
	struct rpc_req *open;	/* the member whose reply is open in it */
};

/* The layer's side of the daemon: td->rpc. */
struct rpc {
	rpc_dispatch_cb dispatch;	/* the method table's method_call */
};

static void rpc_batch_run(struct rpc_batch *);

static const struct timeval rpc_now_tv = { 0, 0 };

/* Text being written, kept for the next: a reply costs no allocation.
 * Scratch, not state: nothing in it outlives the call that writes it. */
static struct jsonw rpc_text;

struct triaged *
rpc_daemon(const struct rpc_req *req)
{
	return conn_daemon(req->conn);
}

static void
rpc_conn_unref(struct rpc_conn *rc)
{
	if (--rc->refs > 0)
		return;
	event_free(rc->run_ev);
	conn_unref(rc->conn);
	free(rc);
}

/* While a batch is still being started, or a request writes its result in
 * pieces, the connection's further lines wait. */
static void
rpc_update_intake(struct rpc_conn *rc)
{
	if (!rc->closed)
		conn_hold_lines(rc->conn, rc->running != NULL ||
		    rc->nworking > 0);
}

/* The message is one line for people, whatever a client's input held. */
static json_t *rpc_error_object(int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static json_t *
rpc_error_object(int code, const char *fmt, va_list ap)
{
	char msg[1024], *p;

	vsnprintf(msg, sizeof msg, fmt, ap);
	for (p = msg; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return json_pack("{si ss s{}}", "code", code, "message", msg, "data");
}

/* What comes before a result written as text: the envelope, opened. */
static int
rpc_result_prefix(struct evbuffer *buf, const json_t *id)
{
	const char *text;
	size_t n;

	jsonw_reset(&rpc_text);
	envelope_result_open(&rpc_text, id);
	if ((text = jsonw_text(&rpc_text, &n)) == NULL)
		return -1;
	return evbuffer_add(buf, text, n);
}

void
rpc_send_error(struct conn *conn, json_t *id, int code, const char *fmt, ...)
{
	json_t *err, *msg;
	va_list ap;

	va_start(ap, fmt);
	err = rpc_error_object(code, fmt, ap);
	va_end(ap);
	if (err == NULL || (msg = envelope_error(id, err)) == NULL)
		return;
	conn_send(conn, msg);
	json_decref(msg);
}

void
rpc_send_limit(struct conn *conn, const char *key, const char *fmt, ...)
{
	json_t *err, *msg;
	va_list ap;

	va_start(ap, fmt);
	err = rpc_error_object(RPC_QUEUE_FULL, fmt, ap);
	va_end(ap);
	if (err == NULL)
		return;
	json_object_set_new(json_object_get(err, "data"), "limit",
	    json_string(key));
	if ((msg = envelope_error(NULL, err)) != NULL) {
		conn_send(conn, msg);
		json_decref(msg);
	}
}

/* Counts the replies a batch keeps in memory against the client's limits. */
static void
rpc_batch_hold(struct rpc_batch *b)
{
	conn_hold(b->rc->conn, &b->held, evbuffer_get_length(b->out));
}

/* The separator before the next reply of the batch. */
static int
rpc_batch_separator(struct rpc_batch *b, struct evbuffer *buf)
{
	return evbuffer_add(buf, b->nreplies++ == 0 ? "[" : ",", 1);
}

/* Replies kept go out when they can: the batch's line is open, or can be
 * opened now that they are many, and no member's reply is half-written. */
static void
rpc_batch_emit(struct rpc_batch *b)
{
	struct conn *conn = b->rc->conn;

	if (b->open == NULL && !b->streaming &&
	    evbuffer_get_length(b->out) >= RPC_STREAM_MIN &&
	    conn_stream_begin(conn) == 0)
		b->streaming = true;
	if (b->open == NULL && b->streaming)
		conn_stream_write(conn, b->out);
	rpc_batch_hold(b);
}

static void
rpc_batch_add_json(struct rpc_batch *b, const json_t *msg)
{
	if (rpc_batch_separator(b, b->out) != 0 ||
	    conn_add_json(b->out, msg) != 0) {
		conn_drop(b->rc->conn, "could not be sent a reply (out of "
		    "memory)");
		return;
	}
	rpc_batch_emit(b);
}

/* One member fewer to wait for; the last one closes the array. */
static void
rpc_batch_done(struct rpc_batch *b)
{
	struct rpc_conn *rc = b->rc;

	if (--b->outstanding > 0)
		return;
	/* A batch of notifications only gets no reply at all. */
	if (b->nreplies > 0) {
		if (evbuffer_add(b->out, "]\n", 2) != 0)
			conn_drop(rc->conn, "could not be sent a reply (out "
			    "of memory)");
		else if (b->streaming)
			conn_stream_write(rc->conn, b->out);
		else
			conn_send_buffer(rc->conn, b->out);
	}
	if (b->streaming)
		conn_stream_end(rc->conn);
	conn_hold(rc->conn, &b->held, 0);
	evbuffer_free(b->out);
	json_decref(b->members);
	conn_work_end(rc->conn);
	free(b);
	rpc_conn_unref(rc);
}

static void
rpc_req_free(struct rpc_req *req)
{
	struct rpc_conn *rc = req->rc;
	struct rpc_batch *batch = req->batch;
	bool worked = false;

	if (req->deferred) {
		TAILQ_REMOVE(&rc->pending, req, entry);
		conn_work_end(rc->conn);
	}
	if (req->result != NULL) {
		conn_hold(rc->conn, &req->held, 0);
		evbuffer_free(req->result);
		rc->nworking--;
		worked = true;
		if (rc->room_waiter == req)
			rc->room_waiter = NULL;
		if (batch != NULL && batch->open == req)
			batch->open = NULL;	/* withdrawn half-way */
	}
	json_decref(req->id);
	free(req);
	if (batch != NULL)
		rpc_batch_done(batch);
	if (worked && !rc->closed) {
		/* The batch waiting for it goes on, next turn. */
		if (rc->running != NULL && rc->nworking == 0)
			evtimer_add(rc->run_ev, &rpc_now_tv);
		rpc_update_intake(rc);
	}
	rpc_conn_unref(rc);
}

/* Sends (or, in a batch, adds) the reply msg, stolen; frees req. */
static void
rpc_finish(struct rpc_req *req, json_t *msg)
{
	if (msg != NULL && req->id != NULL) {
		if (req->streaming)
			/* Part of a result is out: no way to take it back. */
			conn_drop(req->conn, "got an error half-way through "
			    "a reply");
		else if (req->batch != NULL)
			rpc_batch_add_json(req->batch, msg);
		else
			conn_send(req->conn, msg);
	}
	json_decref(msg);
	rpc_req_free(req);
}

void
rpc_reply(struct rpc_req *req, json_t *result)
{
	if (result == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	rpc_finish(req, envelope_result(req->id, result));
}

void
rpc_reply_text(struct rpc_req *req, const char *result, size_t len)
{
	struct jsonw *w = &rpc_text;
	struct rpc_batch *b = req->batch;
	const char *line;
	size_t n;

	if (req->id == NULL || req->streaming) {
		/* Nobody reads the reply of a notification; one half-way
		 * out cannot be taken back (as rpc_finish). */
		if (req->streaming)
			conn_drop(req->conn, "got an error half-way through "
			    "a reply");
		rpc_req_free(req);
		return;
	}
	jsonw_reset(w);
	if (b != NULL)
		jsonw_raw(w, b->nreplies++ == 0 ? "[" : ",", 1);
	envelope_result_open(w, req->id);
	jsonw_raw(w, result, len);
	jsonw_raw(w, ENVELOPE_CLOSE, sizeof ENVELOPE_CLOSE - 1);
	if (b == NULL)
		jsonw_raw(w, "\n", 1);
	if ((line = jsonw_text(w, &n)) == NULL)
		conn_drop(req->conn, "could not be sent a reply (out of "
		    "memory)");
	else if (b == NULL)
		conn_send_text(req->conn, line, n);
	else if (evbuffer_add(b->out, line, n) != 0)
		conn_drop(req->conn, "could not be sent a reply (out of "
		    "memory)");
	else
		rpc_batch_emit(b);
	rpc_req_free(req);
}

void
rpc_error(struct rpc_req *req, int code, const char *field, const char *fmt,
    ...)
{
	json_t *err;
	va_list ap;

	va_start(ap, fmt);
	err = rpc_error_object(code, fmt, ap);
	va_end(ap);
	if (err != NULL && field != NULL)
		json_object_set_new(json_object_get(err, "data"), "field",
		    json_string(field));
	rpc_finish(req, err != NULL ? envelope_error(req->id, err) : NULL);
}

void
rpc_error_data(struct rpc_req *req, int code, json_t *data, const char *fmt,
    ...)
{
	json_t *err;
	va_list ap;

	va_start(ap, fmt);
	err = rpc_error_object(code, fmt, ap);
	va_end(ap);
	if (err != NULL && data != NULL)
		json_object_set(err, "data", data);
	json_decref(data);
	rpc_finish(req, err != NULL ? envelope_error(req->id, err) : NULL);
}

void
rpc_limit(struct rpc_req *req, const char *key, const char *fmt, ...)
{
	json_t *err;
	va_list ap;

	va_start(ap, fmt);
	err = rpc_error_object(RPC_QUEUE_FULL, fmt, ap);
	va_end(ap);
	if (err != NULL)
		json_object_set_new(json_object_get(err, "data"), "limit",
		    json_string(key));
	rpc_finish(req, err != NULL ? envelope_error(req->id, err) : NULL);
}

void
rpc_defer(struct rpc_req *req, rpc_withdraw_cb cb, void *arg)
{
	req->withdraw_cb = cb;
	req->withdraw_arg = arg;
	if (req->deferred)
		return;
	req->deferred = true;
	TAILQ_INSERT_TAIL(&req->rc->pending, req, entry);
	conn_work_begin(req->conn);
}

/* The connection closed under a deferred request. */
static void
rpc_withdraw(struct rpc_req *req)
{
	req->withdraw_cb(req, req->withdraw_arg);
	rpc_finish(req, NULL);
}

struct evbuffer *
rpc_result_begin(struct rpc_req *req)
{
	if (req->result == NULL) {
		if ((req->result = evbuffer_new()) == NULL)
			return NULL;
		req->rc->nworking++;
	}
	return req->result;
}

int
rpc_result_add_json(struct evbuffer *buf, const json_t *value)
{
	return conn_add_json(buf, value);
}

/* Opens req's reply on the output: alone, or as the batch's next member. */
static void
rpc_result_open(struct rpc_req *req)
{
	struct rpc_batch *b = req->batch;
	struct evbuffer *pre;

	if (b == NULL) {
		if (conn_stream_begin(req->conn) != 0)
			return;
	} else {
		if (b->open != NULL || (!b->streaming &&
		    conn_stream_begin(req->conn) != 0))
			return;
		b->streaming = true;
		/* The replies before it first. */
		conn_stream_write(req->conn, b->out);
		rpc_batch_hold(b);
		b->open = req;
	}
	req->streaming = true;
	if ((pre = evbuffer_new()) == NULL ||
	    (b != NULL && rpc_batch_separator(b, pre) != 0) ||
	    rpc_result_prefix(pre, req->id) != 0)
		conn_drop(req->conn, "could not be sent a reply (out of "
		    "memory)");
	else
		conn_stream_write(req->conn, pre);
	if (pre != NULL)
		evbuffer_free(pre);
}

bool
rpc_result_flush(struct rpc_req *req, rpc_room_cb cb, void *arg)
{
	struct rpc_conn *rc = req->rc;

	if (!conn_alive(req->conn))
		return true;	/* it will be withdrawn */
	if (req->id == NULL) {
		/* A notification: nobody reads the result. */
		evbuffer_drain(req->result, evbuffer_get_length(req->result));
		return false;
	}
	if (!req->streaming)
		rpc_result_open(req);
	if (!req->streaming)
		return conn_hold(req->conn, &req->held,
		    evbuffer_get_length(req->result)) != 0;
	conn_stream_write(req->conn, req->result);
	if (!conn_congested(req->conn))
		return false;
	req->room_cb = cb;
	req->room_arg = arg;
	rc->room_waiter = req;
	return true;
}

/* What comes after a result written as text: the envelope's end, and the
 * line's when it is alone on it. */
static int
rpc_result_close(struct evbuffer *buf, bool alone)
{
	if (evbuffer_add(buf, ENVELOPE_CLOSE, sizeof ENVELOPE_CLOSE - 1) != 0)
		return -1;
	return alone ? evbuffer_add(buf, "\n", 1) : 0;
}

void
rpc_result_end(struct rpc_req *req)
{
	struct rpc_batch *b = req->batch;
	struct evbuffer *msg = NULL;

	if (req->id == NULL || !conn_alive(req->conn))
		goto done;
	if (req->streaming) {
		if (rpc_result_close(req->result, b == NULL) != 0)
			goto fail;
		conn_stream_write(req->conn, req->result);
		if (b == NULL)
			conn_stream_end(req->conn);
		else {
			b->open = NULL;
			rpc_batch_emit(b);	/* the replies that waited */
		}
		goto done;
	}
	if ((msg = evbuffer_new()) == NULL ||
	    (b != NULL && rpc_batch_separator(b, msg) != 0) ||
	    rpc_result_prefix(msg, req->id) != 0 ||
	    evbuffer_add_buffer(msg, req->result) != 0 ||
	    rpc_result_close(msg, b == NULL) != 0)
		goto fail;
	if (b == NULL)
		conn_send_buffer(req->conn, msg);
	else {
		evbuffer_add_buffer(b->out, msg);
		rpc_batch_emit(b);
	}
	goto done;
fail:
	conn_drop(req->conn, "could not be sent a reply (out of memory)");
done:
	if (msg != NULL)
		evbuffer_free(msg);
	rpc_req_free(req);
}

static void
rpc_handle_one(struct rpc_conn *rc, json_t *msg, struct rpc_batch *batch,
    size_t index)
{
	struct conn *conn = rc->conn;
	struct rpc_call call;
	struct rpc_req *req;

	if ((req = calloc(1, sizeof *req)) == NULL) {
		rpc_send_error(conn, NULL, RPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	req->conn = conn;
	req->rc = rc;
	rc->refs++;
	req->batch = batch;
	req->index = index;
	if (batch != NULL)
		batch->outstanding++;

	if (rpc_decode_request(msg, &call) != 0) {
		/* Answered even without an id: null then. */
		req->id = call.id != NULL ? json_incref(call.id) : json_null();
		rpc_error(req, call.code, call.field, "%s", call.message);
		return;
	}
	req->id = call.id != NULL ? json_incref(call.id) : NULL;
	conn_daemon(conn)->rpc->dispatch(req, call.method, call.params);
}

int
rpc_start(struct triaged *td, rpc_dispatch_cb cb)
{
	if ((td->rpc = calloc(1, sizeof *td->rpc)) == NULL)
		return -1;
	td->rpc->dispatch = cb;
	return 0;
}

void
rpc_stop(struct triaged *td)
{
	free(td->rpc);
	td->rpc = NULL;
}

/*
 * Starts the batch's members in order, as long as this turn's share of
 * time lasts, no member is writing a large result, and the client keeps
 * up with reading; then goes on at the next turn, when that member is
 * done, or when the output has drained.
 */
static void
rpc_batch_run(struct rpc_batch *b)
{
	struct rpc_conn *rc = b->rc;
	uint64_t start = timefmt_mono_us();
	size_t i;

	rc->refs++;
	while (rc->running == b && b->next < json_array_size(b->members)) {
		if (rc->nworking > 0)
			goto out;
		if (conn_congested(rc->conn)) {
			rc->run_wants_room = true;
			goto out;
		}
		if (timefmt_mono_us() - start > RPC_TURN_US) {
			evtimer_add(rc->run_ev, &rpc_now_tv);
			goto out;
		}
		i = b->next++;
		rpc_handle_one(rc, json_array_get(b->members, i), b, i);
	}
	if (rc->running == b) {
		/* Every member started: the batch's own count goes. */
		rc->running = NULL;
		rpc_batch_done(b);
	}
out:
	rpc_update_intake(rc);
	rpc_conn_unref(rc);
}

static void
rpc_run_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rpc_conn *rc = arg;

	(void)fd;
	(void)what;
	if (rc->running != NULL)
		rpc_batch_run(rc->running);
}

static void
rpc_handle_batch(struct rpc_conn *rc, json_t *msg)
{
	struct rpc_batch *b;

	if ((b = calloc(1, sizeof *b)) == NULL ||
	    (b->out = evbuffer_new()) == NULL) {
		free(b);
		rpc_send_error(rc->conn, NULL, RPC_INTERNAL_ERROR,
		    "out of memory");
		json_decref(msg);
		return;
	}
	b->rc = rc;
	rc->refs++;
	b->members = msg;
	/* One extra count, so the batch is not closed before every member
	 * has at least started. */
	b->outstanding = 1;
	conn_work_begin(rc->conn);
	rc->running = b;
	rpc_batch_run(b);
}

static void
rpc_line_cb(struct conn *conn, const char *line, size_t len, void *arg)
{
	struct rpc_conn *rc = arg;
	struct rpc_line dec;

	if (line == NULL) {
		rpc_send_error(conn, NULL, RPC_INVALID_REQUEST,
		    "request longer than max_request (%llu bytes)",
		    (unsigned long long)conn_daemon(conn)->cfg->max_request);
		return;
	}
	rpc_decode_line(line, len, conn_daemon(conn)->cfg->max_batch, &dec);
	switch (dec.kind) {
	case RPC_LINE_BLANK:
		break;		/* blank lines are ignored */
	case RPC_LINE_ERROR:
		rpc_send_error(conn, NULL, dec.code, "%s", dec.message);
		break;
	case RPC_LINE_ONE:
		rpc_handle_one(rc, dec.msg, NULL, 0);
		json_decref(dec.msg);
		rpc_update_intake(rc);
		break;
	case RPC_LINE_BATCH:
		rpc_handle_batch(rc, dec.msg);
		break;
	}
}

/* The output drained: whoever waited for room goes on. */
static void
rpc_conn_room_cb(struct conn *conn, void *arg)
{
	struct rpc_conn *rc = arg;
	struct rpc_req *req;
	rpc_room_cb cb;

	(void)conn;
	if (rc->run_wants_room) {
		rc->run_wants_room = false;
		evtimer_add(rc->run_ev, &rpc_now_tv);
	}
	if ((req = rc->room_waiter) != NULL) {
		rc->room_waiter = NULL;
		cb = req->room_cb;
		req->room_cb = NULL;
		cb(req, req->room_arg);
	}
}

static void
rpc_closed_cb(struct conn *conn, void *arg)
{
	struct rpc_conn *rc = arg;
	struct rpc_batch *b;
	struct rpc_req *req;

	(void)conn;
	rc->closed = true;
	evtimer_del(rc->run_ev);
	if ((b = rc->running) != NULL) {
		/* The members not started never will be. */
		rc->running = NULL;
		rpc_batch_done(b);
	}
	while ((req = TAILQ_FIRST(&rc->pending)) != NULL)
		rpc_withdraw(req);
	rpc_conn_unref(rc);
}

int
rpc_attach(struct conn *conn)
{
	struct rpc_conn *rc;

	if ((rc = calloc(1, sizeof *rc)) == NULL)
		return -1;
	rc->conn = conn;
	rc->refs = 1;
	TAILQ_INIT(&rc->pending);
	if ((rc->run_ev = evtimer_new(conn_daemon(conn)->base, rpc_run_cb,
	    rc)) == NULL) {
		free(rc);
		return -1;
	}
	if (conn_on_close(conn, rpc_closed_cb, rc) == NULL) {
		event_free(rc->run_ev);
		free(rc);
		return -1;
	}
	conn_ref(conn);
	conn_set_reader(conn, rpc_line_cb, rpc_conn_room_cb, rc);
	return 0;
}
