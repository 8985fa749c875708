/* http-rpc.c - a client of our own rpc layer on one end of a socket pair:
 * requests pipelined on one connection, replies matched by id. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conn.h"
#include "envelope.h"
#include "http-rpc.h"
#include "log.h"
#include "rpc.h"
#include "triaged.h"

struct http_call {
	TAILQ_ENTRY(http_call) entry;
	uint64_t id;
	http_rpc_cb cb;
	void *arg;
};
TAILQ_HEAD(http_calls, http_call);

struct http_rpc {
	struct triaged *td;
	struct bufferevent *bev;	/* NULL: closed, reopened on a call */
	struct http_calls calls;
	uint64_t next_id;
};

static void http_rpc_read_cb(struct bufferevent *bev, void *arg);
static void http_rpc_event_cb(struct bufferevent *bev, short what,
    void *arg);

/* Every call waiting gets err: the connection is gone. */
static void
http_rpc_fail_all(struct http_rpc *r, const char *why)
{
	struct http_call *c;
	json_t *err;

	err = json_pack("{s:i,s:s}", "code", RPC_INTERNAL_ERROR, "message",
	    why);
	while ((c = TAILQ_FIRST(&r->calls)) != NULL) {
		TAILQ_REMOVE(&r->calls, c, entry);
		c->cb(NULL, err, c->arg);
		free(c);
	}
	json_decref(err);
}

static int
http_rpc_connect(struct http_rpc *r)
{
	struct conn *conn;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) != 0)
		return -1;
	if ((conn = conn_new(r->td, sv[0])) == NULL) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (rpc_attach(conn) != 0) {
		conn_close(conn);
		close(sv[1]);
		return -1;
	}
	r->bev = bufferevent_socket_new(r->td->base, sv[1],
	    BEV_OPT_CLOSE_ON_FREE);
	if (r->bev == NULL) {
		close(sv[1]);
		return -1;
	}
	bufferevent_setcb(r->bev, http_rpc_read_cb, NULL, http_rpc_event_cb,
	    r);
	bufferevent_enable(r->bev, EV_READ | EV_WRITE);
	return 0;
}

struct http_rpc *
http_rpc_open(struct triaged *td)
{
	struct http_rpc *r;

	if ((r = calloc(1, sizeof *r)) == NULL)
		return NULL;
	r->td = td;
	TAILQ_INIT(&r->calls);
	if (http_rpc_connect(r) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

static void
http_rpc_disconnect(struct http_rpc *r)
{
	if (r->bev != NULL)
		bufferevent_free(r->bev);
	r->bev = NULL;
}

void
http_rpc_close(struct http_rpc *r)
{
	struct http_call *c;

	if (r == NULL)
		return;
	http_rpc_disconnect(r);
	while ((c = TAILQ_FIRST(&r->calls)) != NULL) {
		TAILQ_REMOVE(&r->calls, c, entry);
		free(c);
	}
	free(r);
}

static void
http_rpc_reply(struct http_rpc *r, const char *line, size_t len)
{
	struct http_call *c;
	json_t *msg, *id;
	uint64_t n;

	if ((msg = json_loadb(line, len, 0, NULL)) == NULL) {
		log_warnx("http: the daemon's reply is not JSON");
		return;
	}
	id = json_object_get(msg, "id");
	n = json_is_integer(id) ? (uint64_t)json_integer_value(id) : 0;
	TAILQ_FOREACH(c, &r->calls, entry)
		if (c->id == n)
			break;
	if (c != NULL) {
		TAILQ_REMOVE(&r->calls, c, entry);
		c->cb(json_object_get(msg, "result"),
		    json_object_get(msg, "error"), c->arg);
		free(c);
	}
	json_decref(msg);
}

static void
http_rpc_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	struct http_rpc *r = arg;
	size_t len;
	char *line;

	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		http_rpc_reply(r, line, len);
		free(line);
		if (r->bev != bev)
			return;	/* a callback closed it */
	}
}

static void
http_rpc_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct http_rpc *r = arg;

	(void)bev;
	if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) == 0)
		return;
	log_warnx("http: the connection to the daemon's rpc closed; "
	    "opening another at the next request");
	http_rpc_disconnect(r);
	http_rpc_fail_all(r, "the daemon dropped the dashboard's connection");
}

uint64_t
http_rpc_call(struct http_rpc *r, const char *method, json_t *params,
    http_rpc_cb cb, void *arg)
{
	struct http_call *c;
	json_t *msg;
	char *text;

	if (r->bev == NULL && http_rpc_connect(r) != 0) {
		json_decref(params);
		return 0;
	}
	if ((c = calloc(1, sizeof *c)) == NULL) {
		json_decref(params);
		return 0;
	}
	c->id = ++r->next_id;
	c->cb = cb;
	c->arg = arg;
	msg = envelope_request(c->id, method, params);
	text = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
	json_decref(msg);
	if (text == NULL || bufferevent_write(r->bev, text, strlen(text)) != 0
	    || bufferevent_write(r->bev, "\n", 1) != 0) {
		free(text);
		free(c);
		return 0;
	}
	free(text);
	TAILQ_INSERT_TAIL(&r->calls, c, entry);
	return c->id;
}

void
http_rpc_forget(struct http_rpc *r, uint64_t id)
{
	struct http_call *c;

	TAILQ_FOREACH(c, &r->calls, entry)
		if (c->id == id) {
			TAILQ_REMOVE(&r->calls, c, entry);
			free(c);
			return;
		}
}
