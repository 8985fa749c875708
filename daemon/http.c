/* http.c - the HTTP listener: evhttp on [http] listen with its bounds
 * (connections, sizes, time), who may ask what, and the routes. */
#include <errno.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "http.h"
#include "http-auth.h"
#include "http-events.h"
#include "http-private.h"
#include "http-rpc.h"
#include "listenaddr.h"
#include "log.h"
#include "metrics.h"
#include "server.h"
#include "triaged.h"

/* Accepting again after running out of descriptors. */
#define HTTP_STARVED_RETRY_MS 1000

const char *
http_path(struct evhttp_request *req)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path;

	if (uri == NULL || (path = evhttp_uri_get_path(uri)) == NULL)
		return NULL;
	return path[0] == '\0' ? "/" : path;
}

static void
http_metrics(struct http *h, struct evhttp_request *req)
{
	struct evbuffer *buf;

	if ((buf = evbuffer_new()) == NULL ||
	    metrics_write(h->td, buf) != 0) {
		if (buf != NULL)
			evbuffer_free(buf);
		http_error(req, 500, 0, "out of memory");
		return;
	}
	http_common_headers(req);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, 200, "OK", buf);
	evbuffer_free(buf);
}

static void
http_redirect(struct evhttp_request *req, const char *to)
{
	http_common_headers(req);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Location",
	    to);
	evhttp_send_reply(req, 303, "See Other", NULL);
}

/* POST /login, form field token: a session, or back to the form. */
static void
http_login(struct http *h, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	struct evkeyvalq form;
	const char *why, *token;
	char body[HTTP_MAX_BODY + 1];
	size_t len;
	bool ok;

	if (http_auth_post_ok(req, NULL, &why) != 0) {
		http_error(req, 403, 0, "refused: %s", why);
		return;
	}
	len = evbuffer_copyout(in, body, HTTP_MAX_BODY) < 0 ? 0 :
	    evbuffer_get_length(in);
	body[len > HTTP_MAX_BODY ? HTTP_MAX_BODY : len] = '\0';
	TAILQ_INIT(&form);
	ok = evhttp_parse_query_str(body, &form) == 0 &&
	    (token = evhttp_find_header(&form, "token")) != NULL &&
	    http_auth_token_ok(h->auth, token);
	evhttp_clear_headers(&form);
	explicit_bzero(body, sizeof body);
	if (!ok) {
		http_log_peer(req, "a login with a wrong token");
		/* The anchor shows the form's message, with no script. */
		http_redirect(req, "/login?failed=1#failed");
		return;
	}
	if (http_auth_open(h->auth, req) == NULL) {
		http_error(req, 500, 0, "no session could be opened");
		return;
	}
	http_log_peer(req, "a login");
	http_redirect(req, "/");
}

/* GET /api/session: what the page needs of its session. */
static void
http_session(struct http *h, struct evhttp_request *req,
    const struct http_session *s)
{
	http_reply_json(req, json_pack("{s:s?,s:s}", "csrf", s != NULL ?
	    http_session_csrf(s) : NULL, "auth",
	    http_auth_needs_token(h->auth) ? "token" : "none"));
}

/* The page's own files, by the name they are asked by. */
static const char *
http_static_name(const char *path)
{
	static const char *const files[] = {
		"/dashboard.js", "/dashboard.css", "/chart.js",
	};
	size_t i;

	for (i = 0; i < sizeof files / sizeof *files; i++)
		if (strcmp(path, files[i]) == 0)
			return files[i] + 1;
	return NULL;
}

/*
 * Whether host (a Host header's value, or an absolute URI's authority)
 * is exactly a name and maybe a port: 1 for one that names this host by
 * a loopback address or "localhost", 0 for another host, -1 for text
 * that is no host at all. With auth = none on loopback, a page of another
 * site whose name was made to point at 127.0.0.1 (DNS rebinding) would be
 * same-origin: its Host names that other site.
 */
static int
http_host_kind(const char *host)
{
	struct in6_addr a6;
	struct in_addr a4;
	char name[256];
	const char *port, *p;
	size_t len;
	bool ok, bracketed = host[0] == '[';

	if (bracketed) {
		if ((p = strchr(host, ']')) == NULL)
			return -1;
		port = p + 1;
		len = (size_t)(p - host - 1);
		host++;
	} else {
		len = strcspn(host, ":");
		port = host + len;
	}
	if (len == 0 || len >= sizeof name)
		return -1;
	if (port[0] == ':') {
		unsigned long n = 0;

		for (p = port + 1; *p >= '0' && *p <= '9' && n <= 65535; p++)
			n = n * 10 + (unsigned long)(*p - '0');
		if (p == port + 1 || *p != '\0' || n == 0 || n > 65535)
			return -1;
	} else if (port[0] != '\0') {
		return -1;
	}
	memcpy(name, host, len);
	name[len] = '\0';
	if (bracketed)
		return inet_pton(AF_INET6, name, &a6) != 1 ? -1 :
		    IN6_IS_ADDR_LOOPBACK(&a6) ? 1 : 0;
	if (inet_pton(AF_INET, name, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127 ? 1 : 0;
	for (p = name, ok = true; *p != '\0'; p++)
		ok = ok && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' &&
		    *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		    *p == '.');
	if (!ok)
		return -1;
	return strcasecmp(name, "localhost") == 0 ? 1 : 0;
}

/*
 * The Host of req: at most one header; with loopback_only, exactly one
 * (and the authority of an absolute URI, if any), naming this host. 0, or
 * the status to refuse it with (400 no Host, 403 another host's) and why.
 */
static int
http_host_check(struct evhttp_request *req, bool loopback_only,
    const char **why)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *host = NULL, *authority;
	struct evkeyval *kv;
	unsigned n = 0;
	int kind;

	TAILQ_FOREACH(kv, in, next)
		if (strcasecmp(kv->key, "Host") == 0) {
			host = kv->value;
			n++;
		}
	*why = "more than one Host header";
	if (n > 1)
		return 400;
	if (!loopback_only)
		return 0;
	*why = "with auth = none, a request needs a Host header";
	if (host == NULL)
		return 400;
	authority = uri != NULL ? evhttp_uri_get_host(uri) : NULL;
	*why = "a Host that is not a host name or address, with maybe a port";
	if ((kind = http_host_kind(host)) < 0)
		return 400;
	if (kind == 1 && authority != NULL && authority[0] != '\0') {
		char bracketed[260];

		/* evhttp gives an IPv6 authority without its brackets. */
		snprintf(bracketed, sizeof bracketed, strchr(authority, ':') !=
		    NULL ? "[%s]" : "%s", authority);
		if ((kind = http_host_kind(bracketed)) < 0)
			return 400;
	}
	*why = "refused: with auth = none, the Host must be a loopback address "
	    "or localhost";
	return kind == 1 ? 0 : 403;
}

static bool
http_too_many_headers(struct evhttp_request *req)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	struct evkeyval *kv;
	unsigned n = 0;

	TAILQ_FOREACH(kv, in, next)
		n++;
	return n > HTTP_MAX_HEADERS;
}

/* Arms header_timeout's deadline: the connection has sent no whole
 * request since now. */
static void
http_conn_idle(struct http_conn *c)
{
	struct timeval tv;
	uint64_t ms = c->h->td->cfg->http.header_timeout_ms;

	c->busy = false;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
	evtimer_add(c->deadline_ev, &tv);
}

/* Closes a connection that has sent no whole request: none of its
 * requests is the user's, so evhttp frees it all, and its close callback
 * says so. */
static void
http_conn_drop(struct http_conn *c, const char *why)
{
	char *addr = NULL;
	ev_uint16_t port = 0;

	evhttp_connection_get_peer(c->evcon, &addr, &port);
	log_debug("http: closing a connection from %s:%u: %s",
	    addr != NULL && addr[0] != '\0' ? addr : "a local client",
	    (unsigned)port, why);
	evhttp_connection_free(c->evcon);
}

static void
http_conn_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn *c = arg;

	(void)fd;
	(void)what;
	if (!c->busy && c->evcon != NULL)
		http_conn_drop(c, "no whole request within header_timeout");
}

/* The reply to one of its requests is sent: it is idle again. */
static void
http_conn_done_cb(struct evhttp_request *req, void *arg)
{
	(void)req;
	http_conn_idle(arg);
}

static bool
http_conn_same_addr(const struct http_conn *a, const struct http_conn *b)
{
	if (a->addr.ss_family != b->addr.ss_family)
		return false;
	if (a->addr.ss_family == AF_INET)
		return ((const struct sockaddr_in *)&a->addr)->sin_addr.s_addr ==
		    ((const struct sockaddr_in *)&b->addr)->sin_addr.s_addr;
	if (a->addr.ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)&a->addr)->sin6_addr,
		    &((const struct sockaddr_in6 *)&b->addr)->sin6_addr,
		    sizeof(struct in6_addr)) == 0;
	return false;
}

/*
 * The oldest connection that has sent no whole request (of like's address
 * when like is not NULL), other than but: the one to close for a new one.
 * NULL when every one is busy with a request.
 */
static struct http_conn *
http_conn_oldest_idle(struct http *h, const struct http_conn *like,
    const struct http_conn *but)
{
	struct http_conn *c;

	TAILQ_FOREACH(c, &h->conns, entry)
		if (c != but && c->evcon != NULL && !c->busy &&
		    (like == NULL || http_conn_same_addr(c, like)))
			return c;
	return NULL;
}

/*
 * A new connection within the caps: beyond max_connections_per_address,
 * the oldest idle connection of its address is closed (the new one itself
 * when all the others are busy); at max_connections, the oldest idle one
 * but the new one, so that the listener accepts again. Connections that
 * open and send nothing (slowloris) so cannot keep a scraper out.
 */
static void
http_conn_limit(struct http *h, struct http_conn *c)
{
	const struct config_http *cfg = &h->td->cfg->http;
	struct http_conn *it, *victim;
	unsigned n = 0;

	if (c->addr.ss_family != AF_UNSPEC) {
		TAILQ_FOREACH(it, &h->conns, entry)
			if (http_conn_same_addr(it, c))
				n++;
		if (n > cfg->max_connections_per_address &&
		    (victim = http_conn_oldest_idle(h, c, NULL)) != NULL) {
			http_conn_drop(victim, "max_connections_per_address");
			if (victim == c)
				return;
		}
	}
	if (h->nconns >= cfg->max_connections &&
	    (victim = http_conn_oldest_idle(h, NULL, c)) != NULL)
		http_conn_drop(victim, "max_connections");
}

static void
http_request_cb(struct evhttp_request *req, void *arg)
{
	struct http *h = arg;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const struct http_session *s;
	const char *path, *name, *why;
	struct http_conn *c;
	bool bearer;
	int status;

	/* A whole request: header_timeout is over for it, and it is busy
	 * (not to be closed for a newcomer) until its reply is sent. */
	if ((c = http_conn_find(h, evhttp_request_get_connection(req))) !=
	    NULL) {
		c->busy = true;
		event_del(c->deadline_ev);
		evhttp_request_set_on_complete_cb(req, http_conn_done_cb, c);
	}
	if (http_too_many_headers(req)) {
		http_error(req, 431, 0, "more than %d header fields",
		    HTTP_MAX_HEADERS);
		return;
	}
	if ((path = http_path(req)) == NULL) {
		http_error(req, 400, 0, "a request line that is not a URI");
		return;
	}
	if ((status = http_host_check(req, !http_auth_needs_token(h->auth) &&
	    h->unix_path == NULL, &why)) != 0) {
		http_error(req, status, 0, "%s", why);
		return;
	}
	/* Counts and timings only: open to whoever reaches the listener. */
	if (strcmp(path, "/metrics") == 0) {
		if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD)
			http_error(req, 405, 0, "/metrics takes GET");
		else
			http_metrics(h, req);
		return;
	}
	s = http_auth_check(h->auth, req, &bearer);
	if (strcmp(path, "/login") == 0) {
		if (!http_auth_needs_token(h->auth))
			http_redirect(req, "/");
		else if (cmd == EVHTTP_REQ_POST)
			http_login(h, req);
		else
			http_static_serve(h, req, "login.html", 200);
		return;
	}
	/* The login page's style is no secret. */
	if (strcmp(path, "/dashboard.css") == 0 && cmd == EVHTTP_REQ_GET) {
		http_static_serve(h, req, "dashboard.css", 200);
		return;
	}
	if (s == NULL && !bearer) {
		if (strcmp(path, "/") == 0 && cmd == EVHTTP_REQ_GET)
			http_static_serve(h, req, "login.html", 401);
		else
			http_error(req, 401, 0, "this needs a credential: "
			    "log in at /login, or send Authorization: Bearer "
			    "with the token of token_file");
		return;
	}
	if (cmd == EVHTTP_REQ_POST && http_auth_post_ok(req, s, &why) != 0) {
		http_error(req, 403, 0, "refused: %s", why);
		return;
	}
	if (strcmp(path, "/") == 0) {
		if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
			http_error(req, 405, 0, "/ takes GET");
			return;
		}
		/* With auth = none, the page's session is opened here. */
		if (s == NULL && !http_auth_needs_token(h->auth) &&
		    http_auth_open(h->auth, req) == NULL) {
			http_error(req, 500, 0, "no session could be opened");
			return;
		}
		http_static_serve(h, req, "index.html", 200);
		return;
	}
	if ((name = http_static_name(path)) != NULL) {
		http_static_serve(h, req, name, 200);
		return;
	}
	if (strcmp(path, "/api/session") == 0 ||
	    strcmp(path, "/api/state") == 0 ||
	    strcmp(path, "/api/events") == 0) {
		if (cmd != EVHTTP_REQ_GET)
			http_error(req, 405, 0, "%s takes GET", path);
		else if (strcmp(path, "/api/session") == 0)
			http_session(h, req, s);
		else if (strcmp(path, "/api/state") == 0)
			http_events_state(h->events, req);
		else
			http_events_subscribe(h->events, req);
		return;
	}
	if (strncmp(path, "/api/", 5) == 0) {
		http_api_route(h, req, path);
		return;
	}
	http_error(req, 404, 0, "no such page: %s", path);
}

static void
http_resume(struct http *h)
{
	if (!h->paused || h->nconns >= h->td->cfg->http.max_connections ||
	    h->bound == NULL)
		return;
	evconnlistener_enable(evhttp_bound_socket_get_listener(h->bound));
	h->paused = false;
}

/* evhttp frees a connection: whoever waited on it hears, and its place
 * is free. */
static void
http_conn_closed_cb(struct evhttp_connection *evcon, void *arg)
{
	struct http_conn *c = arg;
	struct http *h = c->h;

	(void)evcon;
	TAILQ_REMOVE(&h->conns, c, entry);
	if (c->gone != NULL)
		c->gone(c->gone_arg);
	event_free(c->deadline_ev);
	free(c);
	h->nconns--;
	http_resume(h);
}

/*
 * The connections just made get their close callback. evhttp has no hook
 * of its own for a new connection, but its callbacks' argument on the
 * bufferevent http_bev_cb made is the connection. This runs from the
 * loop's active queue in the same turn, before the connection can read:
 * only a failure to allocate inside evhttp could free one first.
 */
static void
http_hook_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http *h = arg;
	struct http_conn *c, *next;
	const struct sockaddr *sa;
	void *evcon;

	(void)fd;
	(void)what;
	for (c = TAILQ_FIRST(&h->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->evcon != NULL)
			continue;
		bufferevent_getcb(c->bev, NULL, NULL, NULL, &evcon);
		c->bev = NULL;
		if (evcon == NULL) {
			TAILQ_REMOVE(&h->conns, c, entry);
			event_free(c->deadline_ev);
			free(c);
			h->nconns--;
			continue;
		}
		c->evcon = evcon;
		evhttp_connection_set_closecb(c->evcon, http_conn_closed_cb, c);
		sa = evhttp_connection_get_addr(c->evcon);
		if (sa != NULL && sa->sa_family == AF_INET)
			memcpy(&c->addr, sa, sizeof(struct sockaddr_in));
		else if (sa != NULL && sa->sa_family == AF_INET6)
			memcpy(&c->addr, sa, sizeof(struct sockaddr_in6));
		c->fresh = true;
	}
	/* From the head each time: a connection closed for another may be
	 * any of them. */
	for (;;) {
		TAILQ_FOREACH(c, &h->conns, entry)
			if (c->fresh)
				break;
		if (c == NULL)
			break;
		c->fresh = false;
		http_conn_limit(h, c);
	}
	http_resume(h);
}

/* Every connection's bufferevent is made here: it is counted from its
 * first moment, so that connections that never send a request are bounded
 * too, and the listener pauses at max_connections. */
static struct bufferevent *
http_bev_cb(struct event_base *base, void *arg)
{
	struct http *h = arg;
	struct http_conn *c;

	if ((c = calloc(1, sizeof *c)) == NULL)
		return NULL;	/* evhttp makes one itself, uncounted */
	if ((c->deadline_ev = evtimer_new(base, http_conn_deadline_cb, c)) ==
	    NULL) {
		free(c);
		return NULL;
	}
	if ((c->bev = bufferevent_socket_new(base, -1, 0)) == NULL) {
		event_free(c->deadline_ev);
		free(c);
		return NULL;
	}
	c->h = h;
	c->addr.ss_family = AF_UNSPEC;
	http_conn_idle(c);
	TAILQ_INSERT_TAIL(&h->conns, c, entry);
	event_active(h->hook_ev, EV_TIMEOUT, 1);
	if (++h->nconns >= h->td->cfg->http.max_connections && !h->paused) {
		evconnlistener_disable(evhttp_bound_socket_get_listener(
		    h->bound));
		h->paused = true;
	}
	return c->bev;
}

static void
http_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http *h = arg;

	(void)fd;
	(void)what;
	if (!h->paused)
		evconnlistener_enable(evhttp_bound_socket_get_listener(
		    h->bound));
}

/* Out of descriptors: the listener would be woken again at once. */
static void
http_accept_error_cb(struct evconnlistener *l, void *arg)
{
	static const struct timeval retry = { 0,
	    HTTP_STARVED_RETRY_MS * 1000 };
	struct http *h = arg;
	int err = EVUTIL_SOCKET_ERROR();

	log_warnx("http: accept: %s%s", strerror(err),
	    err == EMFILE || err == ENFILE ? "; pausing for a second" : "");
	if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM)
		return;
	evconnlistener_disable(l);
	evtimer_add(h->retry_ev, &retry);
}

static int
http_listen_fd(struct http *h, const char *text, char **cause)
{
	const struct config *cfg = h->td->cfg;
	struct listenaddr addr;
	const char *why;
	int fd, one = 1;

	if (listenaddr_parse(text, &addr, &why) != 0) {
		if (asprintf(cause, "[http] listen: expected %s", why) < 0)
			*cause = NULL;
		return -1;
	}
	if (addr.is_unix) {
		if (server_check(text, cause) != 0)
			return -1;
		if ((fd = server_bind_unix(cfg, text, cause)) < 0)
			return -1;
		if ((h->unix_path = strdup(text)) == NULL) {
			close(fd);
			unlink(text);
			*cause = NULL;
			return -1;
		}
		return fd;
	}
	fd = socket(addr.sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof one) != 0 || (addr.sa.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
	    bind(fd, (struct sockaddr *)&addr.sa, addr.salen) != 0 ||
	    listen(fd, SOMAXCONN) != 0) {
		if (asprintf(cause, "[http] listen %s: %s", text,
		    strerror(errno)) < 0)
			*cause = NULL;
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The address as bound: the port the kernel chose for port 0. */
static void
http_log_listening(int fd, const char *text)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	char host[64];
	unsigned port;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
	    ss.ss_family == AF_UNIX) {
		log_info("http: listening on %s", text);
		return;
	}
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;

		evutil_inet_ntop(AF_INET, &in4->sin_addr, host, sizeof host);
		port = ntohs(in4->sin_port);
		log_info("http: listening on %s:%u", host, port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		evutil_inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		port = ntohs(in6->sin6_port);
		log_info("http: listening on [%s]:%u", host, port);
	}
}

/* The default dashboard_dir: ../share/triage/dashboard from triaged. */
static char *
http_default_dashboard(void)
{
	char exe[PATH_MAX], *slash, *dir;
	ssize_t n;

	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) < 0)
		return strdup("/usr/share/triage/dashboard");
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	if (asprintf(&dir, "%s/share/triage/dashboard", exe) < 0)
		return NULL;
	return dir;
}

static char *
http_dashboard_dir(const struct config *cfg)
{
	if (cfg->http.dashboard_dir != NULL)
		return strdup(cfg->http.dashboard_dir);
	return http_default_dashboard();
}

static void
http_apply_limits(struct http *h)
{
	const struct config_http *c = &h->td->cfg->http;

	evhttp_set_timeout(h->evh, (int)((c->timeout_ms + 999) / 1000));
	evhttp_set_max_headers_size(h->evh, HTTP_MAX_HEADERS_SIZE);
	evhttp_set_max_body_size(h->evh, HTTP_MAX_BODY);
	http_resume(h);
}

static void
http_free(struct http *h)
{
	struct http_conn *c;

	if (h == NULL)
		return;
	http_events_free(h->events);
	/* evhttp_free closes the connections: nobody is to hear of it. */
	while ((c = TAILQ_FIRST(&h->conns)) != NULL) {
		TAILQ_REMOVE(&h->conns, c, entry);
		if (c->evcon != NULL)
			evhttp_connection_set_closecb(c->evcon, NULL, NULL);
		event_free(c->deadline_ev);
		free(c);
	}
	if (h->evh != NULL)
		evhttp_free(h->evh);
	if (h->hook_ev != NULL)
		event_free(h->hook_ev);
	http_rpc_close(h->rpc);
	if (h->unix_path != NULL)
		unlink(h->unix_path);
	free(h->unix_path);
	if (h->retry_ev != NULL)
		event_free(h->retry_ev);
	http_auth_free(h->auth);
	free(h->pending_token);
	free(h->dashboard_dir);
	free(h);
}

int
http_start(struct triaged *td, char **cause)
{
	const struct config_http *c = &td->cfg->http;
	struct evconnlistener *l;
	struct http *h;
	char *token = NULL;
	int fd;

	*cause = NULL;
	if (c->listen == NULL)
		return 0;
	if (c->auth == CONFIG_HTTP_AUTH_TOKEN &&
	    (token = http_token_read(c->token_file, td->uid, cause)) == NULL) {
		if (*cause == NULL)
			*cause = strdup("[http] token_file: out of memory");
		return -1;
	}
	if ((h = calloc(1, sizeof *h)) == NULL ||
	    (h->auth = http_auth_new(c->auth, token)) == NULL) {
		if (h == NULL)
			free(token);
		goto oom;
	}
	h->td = td;
	TAILQ_INIT(&h->conns);
	if ((h->hook_ev = event_new(td->base, -1, 0, http_hook_cb, h)) ==
	    NULL ||
	    (h->dashboard_dir = http_dashboard_dir(td->cfg)) == NULL ||
	    (h->evh = evhttp_new(td->base)) == NULL ||
	    (h->retry_ev = evtimer_new(td->base, http_retry_cb, h)) == NULL ||
	    (h->rpc = http_rpc_open(td)) == NULL ||
	    (h->events = http_events_new(td)) == NULL)
		goto oom;
	if ((fd = http_listen_fd(h, c->listen, cause)) < 0) {
		http_free(h);
		return -1;
	}
	if ((l = evconnlistener_new(td->base, NULL, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd)) == NULL) {
		close(fd);
		goto oom;
	}
	if ((h->bound = evhttp_bind_listener(h->evh, l)) == NULL) {
		evconnlistener_free(l);
		goto oom;
	}
	evconnlistener_set_error_cb(l, http_accept_error_cb);
	evhttp_set_allowed_methods(h->evh, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_POST);
	evhttp_set_bevcb(h->evh, http_bev_cb, h);
	evhttp_set_gencb(h->evh, http_request_cb, h);
	http_apply_limits(h);
	http_log_listening(fd, c->listen);
	td->http = h;
	return 0;
oom:
	http_free(h);
	*cause = strdup("out of memory");
	return -1;
}

int
http_reload_check(struct triaged *td, const struct config *new,
    char **cause)
{
	struct http *h = td->http;

	*cause = NULL;
	if (h == NULL || new->http.listen == NULL)
		return 0;
	free(h->pending_token);
	h->pending_token = NULL;
	if (new->http.auth != CONFIG_HTTP_AUTH_TOKEN)
		return 0;
	h->pending_token = http_token_read(new->http.token_file, td->uid,
	    cause);
	if (h->pending_token == NULL) {
		if (*cause == NULL)
			*cause = strdup("[http] token_file: out of memory");
		return -1;
	}
	return 0;
}

void
http_reload_commit(struct triaged *td)
{
	struct http *h = td->http;
	char *dir;

	if (h == NULL)
		return;
	http_auth_set(h->auth, td->cfg->http.auth, h->pending_token);
	h->pending_token = NULL;
	if ((dir = http_dashboard_dir(td->cfg)) != NULL) {
		free(h->dashboard_dir);
		h->dashboard_dir = dir;
	}
	http_apply_limits(h);
}

void
http_stop(struct triaged *td)
{
	http_free(td->http);
	td->http = NULL;
}
