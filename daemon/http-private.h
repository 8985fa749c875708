/* http-private.h - what the http*.c files share: the listener's state,
 * and the replies every handler makes (JSON, errors, security headers). */
#ifndef TRIAGED_HTTP_PRIVATE_H
#define TRIAGED_HTTP_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <jansson.h>

struct bufferevent;
struct event;
struct evhttp;
struct evhttp_connection;
struct evhttp_bound_socket;
struct evhttp_request;
struct http_auth;
struct http_events;
struct http_rpc;
struct triaged;

/* Requests are small: the dashboard sends no large bodies. */
#define HTTP_MAX_HEADERS_SIZE (16 * 1024)
#define HTTP_MAX_HEADERS 64
#define HTTP_MAX_BODY (64 * 1024)

/* An open HTTP connection, from its creation; the list of them is in
 * the order they opened. */
struct http_conn {
	TAILQ_ENTRY(http_conn) entry;
	struct http *h;
	struct bufferevent *bev;	/* until its connection is known */
	struct evhttp_connection *evcon;
	void (*gone)(void *);		/* see http_conn_watch */
	void *gone_arg;
	/* header_timeout's deadline, armed while it has sent no whole
	 * request (since it opened, or since its last reply). */
	struct event *deadline_ev;
	bool busy;			/* a request of it is being answered */
	bool fresh;			/* its caps are still to be checked */
	struct sockaddr_storage addr;	/* AF_UNSPEC: a Unix socket's */
};
TAILQ_HEAD(http_conns, http_conn);

struct http {
	struct triaged *td;
	struct evhttp *evh;
	struct evhttp_bound_socket *bound;
	struct event *retry_ev;		/* accepting again after EMFILE */
	char *unix_path;		/* our socket, removed at stop */
	struct http_conns conns;
	struct event *hook_ev;		/* see http_hook_cb */
	unsigned nconns;		/* open, counted from their creation */
	bool paused;			/* at max_connections */
	char *dashboard_dir;
	struct http_auth *auth;
	struct http_rpc *rpc;		/* the daemon's own JSON-RPC */
	struct http_events *events;	/* state and its event streams */
	char *pending_token;		/* a reload's, until committed */
};

/* http-reply.c, below the listener and the handlers. The body of every
 * error: {"error": {"code", "message"}}; code is the
 * JSON-RPC code behind it, or 0. */
void http_error(struct evhttp_request *req, int status, int code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* 200 with body (stolen) as JSON. */
void http_reply_json(struct evhttp_request *req, json_t *body);
/* Headers every reply carries (no sniffing, no framing, no referrer). */
void http_common_headers(struct evhttp_request *req);

/* The tracked connection of evcon, or NULL. */
struct http_conn *http_conn_find(struct http *h,
    const struct evhttp_connection *evcon);
/* gone(arg) runs when req's connection closes before the handler is done
 * with it; NULL stops that. Each connection has one at a time. */
void http_conn_watch(struct http *h, struct evhttp_request *req,
    void (*gone)(void *), void *arg);

/* From a gone callback of http_conn_watch: req, not answered yet, is
 * ours to free once evhttp has let go of it (its connection failed). */
void http_request_orphaned(struct evhttp_request *req);

/* Logs (notice) what a client did, naming it by its address. */
void http_log_peer(struct evhttp_request *req, const char *what);

/* The path of req without its query, or NULL for a bad URI. */
const char *http_path(struct evhttp_request *req);

/* The handlers of the routes (http-static.c, http-auth.c, http-api.c,
 * http-events.c). A handler answers req. */
void http_static_serve(struct http *h, struct evhttp_request *req,
    const char *name, int status);
void http_api_route(struct http *h, struct evhttp_request *req,
    const char *path);

#endif
