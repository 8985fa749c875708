/* http-reply.c - what the HTTP handlers answer with (JSON replies and
 * errors, the headers every reply carries) and know of their request (its
 * peer, its connection): below http.c and its handlers alike. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http-private.h"
#include "log.h"

void
http_common_headers(struct evhttp_request *req)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);

	evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(out, "X-Frame-Options", "DENY");
	/* Not no-referrer: with it, browsers send "Origin: null" on the
	 * page's own POSTs, which the cross-site check must refuse. */
	evhttp_add_header(out, "Referrer-Policy", "same-origin");
	evhttp_add_header(out, "Cache-Control", "no-store");
}

void
http_reply_json(struct evhttp_request *req, json_t *body)
{
	struct evbuffer *buf = evbuffer_new();
	char *text;

	text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (buf == NULL || text == NULL) {
		free(text);
		if (buf != NULL)
			evbuffer_free(buf);
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	evbuffer_add(buf, text, strlen(text));
	evbuffer_add(buf, "\n", 1);
	free(text);
	http_common_headers(req);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, 200, "OK", buf);
	evbuffer_free(buf);
}

void
http_error(struct evhttp_request *req, int status, int code,
    const char *fmt, ...)
{
	struct evbuffer *buf;
	char message[1024], *text;
	json_t *body;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	body = json_pack("{s:{s:i,s:s}}", "error", "code", code, "message",
	    message);
	text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (text == NULL || (buf = evbuffer_new()) == NULL) {
		free(text);
		evhttp_send_error(req, status, NULL);
		return;
	}
	evbuffer_add_printf(buf, "%s\n", text);
	free(text);
	http_common_headers(req);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, status, NULL, buf);
	evbuffer_free(buf);
}

void
http_log_peer(struct evhttp_request *req, const char *what)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	char *addr = NULL;
	ev_uint16_t port = 0;

	if (evcon != NULL)
		evhttp_connection_get_peer(evcon, &addr, &port);
	log_notice("http: %s from %s%s%.0u", what,
	    addr != NULL && addr[0] != '\0' ? addr : "a local client",
	    port != 0 ? ":" : "", (unsigned)port);
}

void
http_request_orphaned(struct evhttp_request *req)
{
	/* evhttp detaches a request the user has not finished from a
	 * connection that fails, and leaves it to the user. */
	if (evhttp_request_get_connection(req) == NULL)
		evhttp_request_free(req);
}

struct http_conn *
http_conn_find(struct http *h, const struct evhttp_connection *evcon)
{
	struct http_conn *c;

	if (evcon == NULL)
		return NULL;
	TAILQ_FOREACH(c, &h->conns, entry)
		if (c->evcon == evcon)
			return c;
	return NULL;
}

void
http_conn_watch(struct http *h, struct evhttp_request *req,
    void (*gone)(void *), void *arg)
{
	struct http_conn *c = http_conn_find(h,
	    evhttp_request_get_connection(req));

	if (c != NULL) {
		c->gone = gone;
		c->gone_arg = arg;
	}
}
