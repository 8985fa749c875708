/* rpc.h - JSON-RPC 2.0 over a connection's lines: decoding, batches, the
 * method table, and replies that may come later than the request. */
#ifndef TRIAGED_RPC_H
#define TRIAGED_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/queue.h>

#include <jansson.h>

#include "rpc-codes.h"

struct conn;
struct evbuffer;
struct rpc_conn;
struct triaged;


/* One request that has not been answered yet. */
struct rpc_req;
TAILQ_HEAD(rpc_reqs, rpc_req);

typedef void (*rpc_withdraw_cb)(struct rpc_req *req, void *arg);
/* Answers a well-formed request (now or later): method is its name,
 * params its "params" as sent (NULL when absent, maybe not an object). */
typedef void (*rpc_dispatch_cb)(struct rpc_req *req, const char *method,
    json_t *params);
typedef void (*rpc_room_cb)(struct rpc_req *req, void *arg);

struct rpc_req {
	TAILQ_ENTRY(rpc_req) entry;	/* in its connection's pending list */
	struct conn *conn;
	json_t *id;			/* NULL: a notification, no reply */
	struct rpc_batch *batch;	/* NULL unless part of a batch */
	size_t index;			/* its place in the batch */
	rpc_withdraw_cb withdraw_cb;	/* undoes a pending reply's waiting */
	void *withdraw_arg;

	/* The rest is rpc.c's. */
	struct rpc_conn *rc;
	bool deferred;
	struct evbuffer *result;	/* rpc_result_begin(): written so far */
	size_t held;			/* of it, counted with conn_hold() */
	bool streaming;			/* its reply is open on the output */
	rpc_room_cb room_cb;		/* waits for room (rpc_result_flush) */
	void *room_arg;
};

/* Reads conn's lines as JSON-RPC from now on: the server calls it for each
 * connection it accepts. 0, or -1 when out of memory. */
int rpc_attach(struct conn *conn);

/* Answers req (stealing result) and frees it. */
void rpc_reply(struct rpc_req *req, json_t *result);
/* The same with the result already JSON text (len bytes, one value on one
 * line): no object is built and dumped again. */
void rpc_reply_text(struct rpc_req *req, const char *result, size_t len);

/* td's layer, into td->rpc, with who answers its requests (the method
 * table, method_call): 0, or -1 when out of memory. rpc_stop frees it,
 * once every connection is closed. */
int rpc_start(struct triaged *td, rpc_dispatch_cb cb);
void rpc_stop(struct triaged *td);
/* Answers req with an error and frees it; field names the param at fault
 * (NULL: none). */
void rpc_error(struct rpc_req *req, int code, const char *field,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same with data as the error's data object (stolen; NULL: {}). */
void rpc_error_data(struct rpc_req *req, int code, json_t *data,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/*
 * Answers req with -32003 for a bound of the config that the request would
 * pass: data.limit names the config key, fmt says what was over it. The
 * same outside any request (id null), for a connection refused.
 */
void rpc_limit(struct rpc_req *req, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rpc_send_limit(struct conn *conn, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * The handler will answer later: req stays valid until rpc_reply/rpc_error,
 * or until its connection closes, when cb(req, arg) is called to undo the
 * wait (it must not answer) and req is freed.
 */
void rpc_defer(struct rpc_req *req, rpc_withdraw_cb cb, void *arg);

/*
 * A result too large to build as one jansson tree, written as JSON text in
 * pieces (rpc_result_add_json helps) over several turns of the loop. The
 * handler defers req as usual. While it writes, its connection starts no
 * other request, so one client's large results come one after the other.
 *
 * rpc_result_begin() returns the buffer to write the result's text to
 * (NULL when out of memory: answer with an error). rpc_result_flush()
 * hands on what was written so far: it returns true when the client is
 * behind in reading, and then cb(req, arg) is called once it has room
 * (or the connection closes first and req is withdrawn); write nothing
 * more before. rpc_result_end() answers with the result written and frees
 * req. After a flush, answering with rpc_error() instead drops the
 * connection, since part of the result may be out.
 */
struct evbuffer *rpc_result_begin(struct rpc_req *req);
int rpc_result_add_json(struct evbuffer *buf, const json_t *value);
bool rpc_result_flush(struct rpc_req *req, rpc_room_cb cb, void *arg);
void rpc_result_end(struct rpc_req *req);

/* An error outside any request (id null). */
void rpc_send_error(struct conn *conn, json_t *id, int code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

struct triaged *rpc_daemon(const struct rpc_req *req);

#endif
