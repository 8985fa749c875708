/* conn.c - one client connection: line framing with the max_request limit,
 * the peer's credentials, its pending requests, and its outgoing messages. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "config.h"
#include "conn.h"
#include "log.h"
#include "rpc.h"
#include "triaged.h"
#include "watch.h"

/* How far behind in reading a client may fall (a watcher that never reads,
 * say) before it loses its connection, on top of one largest request. */
#define CONN_MAX_BACKLOG (64u << 20)

struct conn {
	TAILQ_ENTRY(conn) entry;
	struct triaged *td;
	struct bufferevent *bev;	/* NULL once closed */
	uid_t uid;
	gid_t gid;
	pid_t pid;
	gid_t *groups;			/* supplementary, from SO_PEERGROUPS */
	int ngroups;
	unsigned refs;
	bool read_eof;			/* the client will send no more */
	bool closing;			/* close once the output is flushed */
	struct rpc_reqs pending;
	unsigned npending;
	struct watch *watch;
};

static TAILQ_HEAD(, conn) conn_list = TAILQ_HEAD_INITIALIZER(conn_list);
static unsigned conn_nlist;
static void (*conn_closed_cb)(void *);
static void *conn_closed_arg;

static void conn_read_cb(struct bufferevent *, void *);
static void conn_write_cb(struct bufferevent *, void *);
static void conn_event_cb(struct bufferevent *, short, void *);

/* SO_PEERGROUPS answers ERANGE with the size it needs when ours is short. */
static void
conn_read_groups(struct conn *conn, int fd)
{
	socklen_t len = 64 * sizeof(gid_t);
	gid_t *groups = NULL, *bigger;

	for (;;) {
		if ((bigger = realloc(groups, len)) == NULL)
			break;
		groups = bigger;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups,
		    &len) == 0) {
			conn->groups = groups;
			conn->ngroups = (int)(len / sizeof(gid_t));
			return;
		}
		if (errno != ERANGE)
			break;
	}
	free(groups);
}

struct conn *
conn_new(struct triaged *td, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	struct conn *conn;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return NULL;
	if (evutil_make_socket_nonblocking(fd) != 0)
		return NULL;
	if ((conn = calloc(1, sizeof *conn)) == NULL)
		return NULL;
	conn->td = td;
	conn->uid = cred.uid;
	conn->gid = cred.gid;
	conn->pid = cred.pid;
	conn->refs = 1;
	TAILQ_INIT(&conn->pending);
	conn_read_groups(conn, fd);
	conn->bev = bufferevent_socket_new(td->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (conn->bev == NULL) {
		free(conn->groups);
		free(conn);
		return NULL;
	}
	/* Reading stops when a line reaches max_request without its end:
	 * that is the moment to refuse it, with nothing more buffered. */
	bufferevent_setwatermark(conn->bev, EV_READ, 0,
	    (size_t)td->cfg->max_request + 1);
	bufferevent_setcb(conn->bev, conn_read_cb, conn_write_cb,
	    conn_event_cb, conn);
	bufferevent_enable(conn->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&conn_list, conn, entry);
	conn_nlist++;
	log_debug("client connected: uid %u gid %u pid %d", (unsigned)conn->uid,
	    (unsigned)conn->gid, (int)conn->pid);
	return conn;
}

void
conn_ref(struct conn *conn)
{
	conn->refs++;
}

void
conn_unref(struct conn *conn)
{
	if (--conn->refs > 0)
		return;
	free(conn->groups);
	free(conn);
}

void
conn_close(struct conn *conn)
{
	struct rpc_req *req;

	if (conn->bev == NULL)
		return;
	conn_ref(conn);
	bufferevent_free(conn->bev);
	conn->bev = NULL;
	TAILQ_REMOVE(&conn_list, conn, entry);
	conn_nlist--;
	while ((req = TAILQ_FIRST(&conn->pending)) != NULL)
		rpc_withdraw(req);
	if (conn->watch != NULL) {
		watch_free(conn->watch);
		conn->watch = NULL;
	}
	log_debug("client gone: uid %u pid %d", (unsigned)conn->uid,
	    (int)conn->pid);
	if (conn_closed_cb != NULL)
		conn_closed_cb(conn_closed_arg);
	conn->refs--;		/* the list's; ours keeps it alive */
	conn_unref(conn);
}

/* A client that sent EOF still gets the answers it is owed; then it goes. */
static void
conn_maybe_finish(struct conn *conn)
{
	if (conn->bev == NULL)
		return;
	if (evbuffer_get_length(bufferevent_get_output(conn->bev)) != 0)
		return;
	if (conn->closing || (conn->read_eof && conn->npending == 0))
		conn_close(conn);
}

/* Sends the error and closes once it is out: nothing more is read. */
static void
conn_refuse_line(struct conn *conn)
{
	rpc_send_error(conn, NULL, RPC_INVALID_REQUEST,
	    "request longer than max_request (%llu bytes)",
	    (unsigned long long)conn->td->cfg->max_request);
	conn->closing = true;
	bufferevent_disable(conn->bev, EV_READ);
	log_warnx("client uid %u pid %d sent a request over max_request; "
	    "connection closed", (unsigned)conn->uid, (int)conn->pid);
	conn_maybe_finish(conn);
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *conn = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t max = (size_t)conn->td->cfg->max_request, eol_len, len;
	struct evbuffer_ptr eol;
	unsigned char *line;

	conn_ref(conn);
	while (conn->bev != NULL && !conn->closing) {
		eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		if (eol.pos < 0) {
			len = evbuffer_get_length(in);
			if (len > max)
				conn_refuse_line(conn);
			else if (conn->read_eof && len > 0) {
				/* The last line may lack its newline. */
				line = evbuffer_pullup(in, -1);
				rpc_handle_line(conn, (char *)line, len);
				evbuffer_drain(in, len);
			}
			break;
		}
		if ((size_t)eol.pos > max) {
			conn_refuse_line(conn);
			break;
		}
		line = evbuffer_pullup(in, eol.pos + 1);
		rpc_handle_line(conn, (char *)line, (size_t)eol.pos);
		if (conn->bev != NULL)
			evbuffer_drain(in, (size_t)eol.pos + 1);
	}
	conn_unref(conn);
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_maybe_finish(arg);
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *conn = arg;

	if (what & BEV_EVENT_ERROR) {
		conn_close(conn);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		conn->read_eof = true;
		bufferevent_disable(bev, EV_READ);
		conn_read_cb(bev, conn);
		conn_maybe_finish(conn);
	}
}

/*
 * Serializes msg into one line in a buffer kept for the next message too,
 * and hands it to the output in one piece: libevent runs the buffer's
 * callbacks on every add, which made adding token by token the daemon's
 * largest cost.
 */
static int
conn_serialize(const json_t *msg, const char **line, size_t *len)
{
	static char *buf;
	static size_t cap;
	/* Every newline inside strings is escaped: one message, one line.
	 * Fifteen digits print 0.05 as 0.05, and are more than seconds with
	 * milliseconds need. */
	const size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(15);
	size_t n;
	char *bigger;

	for (;;) {
		if ((n = json_dumpb(msg, buf, cap, flags)) == 0)
			return -1;
		if (n < cap)
			break;
		if ((bigger = realloc(buf, n + 1 + 4096)) == NULL)
			return -1;
		buf = bigger;
		cap = n + 1 + 4096;
	}
	buf[n] = '\n';
	*line = buf;
	*len = n + 1;
	return 0;
}

void
conn_send(struct conn *conn, const json_t *msg)
{
	struct evbuffer *out;
	const char *line;
	size_t len;

	if (conn->bev == NULL)
		return;
	out = bufferevent_get_output(conn->bev);
	if (evbuffer_get_length(out) >
	    CONN_MAX_BACKLOG + conn->td->cfg->max_request) {
		log_warnx("client uid %u pid %d is not reading its replies; "
		    "connection closed", (unsigned)conn->uid, (int)conn->pid);
		conn_close(conn);
		return;
	}
	if (conn_serialize(msg, &line, &len) != 0 ||
	    evbuffer_add(out, line, len) != 0) {
		log_warnx("out of memory sending to client pid %d",
		    (int)conn->pid);
		conn_close(conn);
	}
}

void
conn_finish(struct conn *conn)
{
	if (conn->bev == NULL)
		return;
	conn->closing = true;
	bufferevent_disable(conn->bev, EV_READ);
	conn_maybe_finish(conn);
}

struct triaged *
conn_daemon(const struct conn *conn)
{
	return conn->td;
}

uid_t
conn_uid(const struct conn *conn)
{
	return conn->uid;
}

gid_t
conn_gid(const struct conn *conn)
{
	return conn->gid;
}

bool
conn_is_admin(const struct conn *conn)
{
	const struct config *cfg = conn->td->cfg;
	int i;

	if (conn->uid == 0 || conn->uid == conn->td->uid)
		return true;
	if (!cfg->has_admin_group)
		return false;
	if (conn->gid == cfg->admin_gid)
		return true;
	for (i = 0; i < conn->ngroups; i++)
		if (conn->groups[i] == cfg->admin_gid)
			return true;
	return false;
}

bool
conn_alive(const struct conn *conn)
{
	return conn->bev != NULL;
}

void
conn_add_pending(struct conn *conn, struct rpc_req *req)
{
	TAILQ_INSERT_TAIL(&conn->pending, req, entry);
	conn->npending++;
}

void
conn_remove_pending(struct conn *conn, struct rpc_req *req)
{
	TAILQ_REMOVE(&conn->pending, req, entry);
	conn->npending--;
	conn_maybe_finish(conn);
}

unsigned
conn_npending(const struct conn *conn)
{
	return conn->npending;
}

struct conn *
conn_first(void)
{
	return TAILQ_FIRST(&conn_list);
}

struct conn *
conn_next(struct conn *conn)
{
	return TAILQ_NEXT(conn, entry);
}

unsigned
conn_count(void)
{
	return conn_nlist;
}

struct watch *
conn_watch(const struct conn *conn)
{
	return conn->watch;
}

void
conn_set_watch(struct conn *conn, struct watch *w)
{
	if (conn->watch != NULL)
		watch_free(conn->watch);
	conn->watch = w;
}

void
conn_set_closed_cb(void (*cb)(void *), void *arg)
{
	conn_closed_cb = cb;
	conn_closed_arg = arg;
}
