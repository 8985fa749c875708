/* conn.c - one client connection: line framing with the max_request limit,
 * the peer's credentials, and its outgoing bytes, with backpressure. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "config.h"
#include "conn.h"
#include "frame.h"
#include "jsonw.h"
#include "log.h"
#include "timefmt.h"
#include "triaged.h"

/* Unsent bytes of every client together: past it, the client that would
 * add more is dropped, so slow readers cannot take the daemon's memory. */
#define CONN_BUDGET ((size_t)256 << 20)
/* Over this much unsent output a connection is congested: nothing more is
 * read from it or produced for it until the output is under CONN_LOW. A
 * reading client empties it faster than it fills; one that does not read
 * costs no more than this. */
#define CONN_HIGH (1u << 20)
#define CONN_LOW (256u << 10)
/* Lines handled for one connection in a turn of the loop before the others
 * get theirs. */
#define CONN_TURN_US 2000
/* Once unsent output of this size or more has gone (written out, or its
 * client gone), the heap pages it used go back to the system
 * (malloc_trim), at most once per CONN_TRIM_MS: trimming walks the whole
 * heap, and is pointless while replies stream in small pieces. */
#define CONN_TRIM_BYTES ((size_t)16 << 20)
#define CONN_TRIM_MS 1000

struct conn_hook {
	TAILQ_ENTRY(conn_hook) entry;
	conn_hook_cb cb;
	void *arg;
};
TAILQ_HEAD(conn_hooks, conn_hook);

struct conn {
	TAILQ_ENTRY(conn) entry;
	struct triaged *td;
	struct bufferevent *bev;	/* NULL once closed */
	struct event *turn_ev;		/* the next turn: more lines, a drop */
	struct event *flush_ev;		/* writes the output, end of turn */
	bool flush_soon;		/* flush_ev is active */
	uid_t uid;
	gid_t gid;
	pid_t pid;
	gid_t *groups;			/* supplementary, from SO_PEERGROUPS */
	int ngroups;
	unsigned refs;
	bool read_eof;			/* the client will send no more */
	bool closing;			/* close once the output is flushed */
	bool dropping;			/* close at the next turn */
	bool hold;			/* the reader holds the lines */
	bool want_room;			/* someone waits for the output to drain */
	bool streaming;			/* a message is open on the output */
	struct evbuffer *waiting;	/* whole messages behind the stream */
	size_t counted;			/* unsent bytes in conns.total */
	size_t held;			/* the reader's, through conn_hold */
	unsigned work;			/* owed to the client: conn_work_begin */
	conn_line_cb line_cb;
	conn_hook_cb room_cb;
	void *reader_arg;
	struct conn_hooks close_hooks;
};

/* What the connections of one daemon share: td->conns. */
struct conns {
	TAILQ_HEAD(, conn) list;
	unsigned n;
	void (*closed_cb)(void *);	/* the server's: accept again */
	void *closed_arg;
	/* Unsent bytes of every connection (output, waiting, held). */
	size_t total;
	/* The most total was since the last malloc_trim. */
	size_t peak;
	struct event *trim_ev;		/* a malloc_trim on its way */
	uint64_t last_trim_ms;
};

static void conn_read_cb(struct bufferevent *, void *);
static void conn_write_cb(struct bufferevent *, void *);
static void conn_event_cb(struct bufferevent *, short, void *);
static void conn_turn_cb(evutil_socket_t, short, void *);
static void conn_count_cb(struct evbuffer *, const struct evbuffer_cb_info *,
    void *);
static void conn_flush_cb(evutil_socket_t, short, void *);
static void conn_trim_cb(evutil_socket_t, short, void *);

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
	TAILQ_INIT(&conn->close_hooks);
	conn_read_groups(conn, fd);
	conn->turn_ev = evtimer_new(td->base, conn_turn_cb, conn);
	conn->flush_ev = event_new(td->base, -1, 0, conn_flush_cb, conn);
	if (conn->turn_ev == NULL || conn->flush_ev == NULL ||
	    (conn->waiting = evbuffer_new()) == NULL ||
	    evbuffer_add_cb(conn->waiting, conn_count_cb, conn) == NULL ||
	    (conn->bev = bufferevent_socket_new(td->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		goto fail;
	if (evbuffer_add_cb(bufferevent_get_output(conn->bev), conn_count_cb,
	    conn) == NULL) {
		/* The caller closes fd. */
		bufferevent_setfd(conn->bev, -1);
		bufferevent_free(conn->bev);
		goto fail;
	}
	/* Reading stops when a line reaches max_request without its end:
	 * that is the moment to refuse it, with nothing more buffered. */
	bufferevent_setwatermark(conn->bev, EV_READ, 0,
	    (size_t)td->cfg->max_request + 1);
	/* The write callback says when a congested output has room again
	 * (and, at 0, that everything is out). */
	bufferevent_setwatermark(conn->bev, EV_WRITE, CONN_LOW, 0);
	bufferevent_setcb(conn->bev, conn_read_cb, conn_write_cb,
	    conn_event_cb, conn);
	/* Writing is conn_flush_cb's, and the bufferevent's only for what
	 * the socket would not take at once (see conn_flush_cb). */
	bufferevent_disable(conn->bev, EV_WRITE);
	TAILQ_INSERT_TAIL(&td->conns->list, conn, entry);
	td->conns->n++;
	log_debug("client connected: uid %u gid %u pid %d", (unsigned)conn->uid,
	    (unsigned)conn->gid, (int)conn->pid);
	return conn;
fail:
	if (conn->turn_ev != NULL)
		event_free(conn->turn_ev);
	if (conn->flush_ev != NULL)
		event_free(conn->flush_ev);
	if (conn->waiting != NULL)
		evbuffer_free(conn->waiting);
	free(conn->groups);
	free(conn);
	errno = ENOMEM;
	return NULL;
}

void
conn_set_reader(struct conn *conn, conn_line_cb line_cb, conn_hook_cb room_cb,
    void *arg)
{
	conn->line_cb = line_cb;
	conn->room_cb = room_cb;
	conn->reader_arg = arg;
	if (conn->bev != NULL && !conn->dropping)
		bufferevent_enable(conn->bev, EV_READ);
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

/* Every add to and drain from the output (and the messages waiting behind
 * a stream), so that the budget knows what all clients hold. */
static void
conn_count_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn *conn = arg;
	struct conns *cs = conn->td->conns;

	(void)buf;
	conn->counted += info->n_added;
	conn->counted -= info->n_deleted;
	cs->total += info->n_added;
	cs->total -= info->n_deleted;
	if (cs->total > cs->peak)
		cs->peak = cs->total;
	/* Whatever reaches the output goes out at the end of this turn, in
	 * one write with whatever else the turn adds. */
	if (info->n_added > 0 && !conn->flush_soon && conn->bev != NULL &&
	    buf == bufferevent_get_output(conn->bev)) {
		conn->flush_soon = true;
		event_active(conn->flush_ev, EV_WRITE, 1);
	}
}

/*
 * Writes the output straight to the socket, after the callbacks of this
 * turn have added theirs: one write for all the replies of a commit, and
 * no write event to add and delete (two epoll_ctl calls) around each. What
 * the socket does not take, or an error, is left to the bufferevent, which
 * writes on when it can (or reports the error) and calls conn_write_cb.
 */
static void
conn_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *conn = arg;
	struct evbuffer *out;
	int written;

	(void)fd;
	(void)what;
	conn->flush_soon = false;
	if (conn->bev == NULL ||
	    (bufferevent_get_enabled(conn->bev) & EV_WRITE) != 0)
		return;
	out = bufferevent_get_output(conn->bev);
	if (evbuffer_get_length(out) == 0)
		return;
	/* The bufferevent keeps the front of its output frozen but while it
	 * writes itself, as here. */
	evbuffer_unfreeze(out, 1);
	written = evbuffer_write(out, bufferevent_getfd(conn->bev));
	evbuffer_freeze(out, 1);
	if (written == -1 || evbuffer_get_length(out) > 0) {
		bufferevent_enable(conn->bev, EV_WRITE);
		return;
	}
	/* All out: what the write callback does when the output drains. */
	conn_ref(conn);
	conn_write_cb(conn->bev, conn);
	conn_unref(conn);
}

static void
conn_trim_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conns *cs = arg;

	(void)fd;
	(void)what;
	cs->last_trim_ms = timefmt_mono_ms();
	cs->peak = cs->total;
	malloc_trim(0);
}

/*
 * The memory of large replies, once written, goes back to the system: glibc
 * keeps freed heap pages otherwise, and the daemon's size would stay at its
 * peak.
 */
static void
conn_maybe_trim(struct conn *conn)
{
	struct conns *cs = conn->td->conns;
	uint64_t now = timefmt_mono_ms(), next;
	struct timeval tv = timefmt_tv(0);

	if (evtimer_pending(cs->trim_ev, NULL) || cs->peak < CONN_TRIM_BYTES ||
	    cs->total > cs->peak / 4)
		return;
	next = cs->last_trim_ms + CONN_TRIM_MS;
	if (cs->last_trim_ms != 0 && next > now)
		tv = timefmt_tv(next - now);
	evtimer_add(cs->trim_ev, &tv);
}

void
conn_close(struct conn *conn)
{
	struct conns *cs = conn->td->conns;
	struct conn_hook *hook;
	struct evbuffer *out;

	if (conn->bev == NULL)
		return;
	conn_ref(conn);
	out = bufferevent_get_output(conn->bev);
	evbuffer_remove_cb(out, conn_count_cb, conn);
	evbuffer_remove_cb(conn->waiting, conn_count_cb, conn);
	cs->total -= conn->counted + conn->held;
	conn->counted = 0;
	conn->held = 0;
	bufferevent_free(conn->bev);
	conn->bev = NULL;
	evbuffer_free(conn->waiting);
	conn->waiting = NULL;
	event_free(conn->turn_ev);
	conn->turn_ev = NULL;
	event_free(conn->flush_ev);
	conn->flush_ev = NULL;
	conn->flush_soon = false;
	TAILQ_REMOVE(&cs->list, conn, entry);
	cs->n--;
	/* A hook may remove others: take them one at a time. */
	while ((hook = TAILQ_FIRST(&conn->close_hooks)) != NULL) {
		TAILQ_REMOVE(&conn->close_hooks, hook, entry);
		hook->cb(conn, hook->arg);
		free(hook);
	}
	log_debug("client gone: uid %u pid %d", (unsigned)conn->uid,
	    (int)conn->pid);
	if (cs->closed_cb != NULL)
		cs->closed_cb(cs->closed_arg);
	conn_maybe_trim(conn);
	conn->refs--;		/* the list's; ours keeps it alive */
	conn_unref(conn);
}

static void
conn_schedule(struct conn *conn)
{
	static const struct timeval now = { 0, 0 };

	/* A timer, not event_active(): an active event runs in this same
	 * turn, before the loop looks at other clients' sockets again. */
	if (conn->turn_ev != NULL)
		evtimer_add(conn->turn_ev, &now);
}

void
conn_drop(struct conn *conn, const char *why)
{
	if (conn->bev == NULL || conn->dropping)
		return;
	log_warnx("client uid %u pid %d %s; connection closed",
	    (unsigned)conn->uid, (int)conn->pid, why);
	conn->dropping = true;
	bufferevent_disable(conn->bev, EV_READ);
	conn_schedule(conn);
}

/* A client that sent EOF still gets the answers it is owed; then it goes. */
static void
conn_maybe_finish(struct conn *conn)
{
	if (conn->bev == NULL || conn->dropping)
		return;
	if (evbuffer_get_length(bufferevent_get_output(conn->bev)) != 0)
		return;
	/* A reply half-written goes out whole first (a drain's deadline
	 * bounds the wait). */
	if (conn->closing && !conn->streaming) {
		conn_close(conn);
		return;
	}
	if (conn->read_eof && conn->work == 0 && !conn->streaming &&
	    evbuffer_get_length(conn->waiting) == 0 &&
	    evbuffer_get_length(bufferevent_get_input(conn->bev)) == 0)
		conn_close(conn);
}

/* Tells the reader, and closes once the error is out: nothing more is read. */
static void
conn_refuse_line(struct conn *conn)
{
	if (conn->line_cb != NULL)
		conn->line_cb(conn, NULL, 0, conn->reader_arg);
	if (conn->bev == NULL)
		return;
	conn->closing = true;
	bufferevent_disable(conn->bev, EV_READ);
	log_warnx("client uid %u pid %d sent a request over max_request; "
	    "connection closed", (unsigned)conn->uid, (int)conn->pid);
	conn_maybe_finish(conn);
}

/*
 * Hands the complete lines read to the reader, as long as it takes them, the
 * output is not congested, and this turn's share of time lasts; then reads
 * more only if it will be able to handle it.
 */
static void
conn_process(struct conn *conn)
{
	struct evbuffer *in;
	size_t max = (size_t)conn->td->cfg->max_request, eol_len, len, span;
	uint64_t start = timefmt_mono_us();
	enum frame_result framed;
	size_t used;
	struct evbuffer_ptr eol;
	unsigned char *line;
	bool stalled = false;

	if (conn->bev == NULL || conn->line_cb == NULL)
		return;
	conn_ref(conn);
	in = bufferevent_get_input(conn->bev);
	while (conn->bev != NULL && !conn->closing && !conn->dropping) {
		if (conn->hold || conn_congested(conn)) {
			stalled = true;
			break;
		}
		if (timefmt_mono_us() - start > CONN_TURN_US) {
			conn_schedule(conn);
			break;
		}
		eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		len = evbuffer_get_length(in);
		/* A partial line is not copied together while it grows:
		 * frame_next could only say FRAME_MORE. */
		if (len == 0 || (eol.pos < 0 && len <= max && !conn->read_eof))
			break;
		/* frame_next needs the line and its newline in one piece,
		 * and never more than max + 1 bytes. */
		span = eol.pos >= 0 ? (size_t)eol.pos + 1 : len;
		if (span > max + 1)
			span = max + 1;
		line = evbuffer_pullup(in, (ssize_t)span);
		framed = frame_next((const char *)line, span, max,
		    conn->read_eof, &len, &used);
		if (framed == FRAME_TOO_LONG)
			conn_refuse_line(conn);
		if (framed != FRAME_LINE)
			break;
		conn->line_cb(conn, (char *)line, len, conn->reader_arg);
		if (conn->bev != NULL)
			evbuffer_drain(in, used);
	}
	if (conn->bev != NULL && !conn->closing && !conn->dropping &&
	    !conn->read_eof) {
		/* Stalled, the lines wait in the input buffer; the client's
		 * further ones wait in the socket, where they cost us
		 * nothing. */
		if (stalled)
			bufferevent_disable(conn->bev, EV_READ);
		else
			bufferevent_enable(conn->bev, EV_READ);
	}
	conn_maybe_finish(conn);
	conn_unref(conn);
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_process(arg);
}

static void
conn_turn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *conn = arg;

	(void)fd;
	(void)what;
	if (conn->dropping)
		conn_close(conn);
	else
		conn_process(conn);
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *conn = arg;
	size_t len = evbuffer_get_length(bufferevent_get_output(bev));

	if (len == 0) {
		/* Drained: the next output is conn_flush_cb's again (the
		 * write event is no longer pending: no system call). */
		bufferevent_disable(bev, EV_WRITE);
		conn_maybe_trim(conn);
	}
	if (conn->want_room && len <= CONN_LOW) {
		conn->want_room = false;
		conn_ref(conn);
		conn_schedule(conn);	/* the lines that waited */
		if (conn->room_cb != NULL && !conn->dropping)
			conn->room_cb(conn, conn->reader_arg);
		conn_unref(conn);
		if (conn->bev == NULL)
			return;
	}
	conn_maybe_finish(conn);
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
		conn_process(conn);
	}
}

struct conn_hook *
conn_on_close(struct conn *conn, conn_hook_cb cb, void *arg)
{
	struct conn_hook *hook;

	if ((hook = calloc(1, sizeof *hook)) == NULL)
		return NULL;
	hook->cb = cb;
	hook->arg = arg;
	TAILQ_INSERT_TAIL(&conn->close_hooks, hook, entry);
	return hook;
}

void
conn_hook_remove(struct conn *conn, struct conn_hook *hook)
{
	TAILQ_REMOVE(&conn->close_hooks, hook, entry);
	free(hook);
}

void
conn_hold_lines(struct conn *conn, bool hold)
{
	if (conn->hold == hold)
		return;
	conn->hold = hold;
	if (!hold)
		conn_schedule(conn);
}

void
conn_work_begin(struct conn *conn)
{
	conn->work++;
}

void
conn_work_end(struct conn *conn)
{
	conn->work--;
	conn_maybe_finish(conn);
}

unsigned
conn_npending(const struct conn *conn)
{
	return conn->work;
}

/* What would adding n more bytes for conn break, if anything. */
static const char *
conn_over(const struct conn *conn, size_t n)
{
	static char why[128];

	/* How far behind in reading a client may fall (a watcher that
	 * never reads, say), on top of one largest request. */
	if (conn->counted + conn->held + n >
	    conn->td->cfg->max_unread + conn->td->cfg->max_request) {
		snprintf(why, sizeof why, "is not reading its replies (over "
		    "%" PRIu64 " bytes unread: max_unread)",
		    conn->td->cfg->max_unread);
		return why;
	}
	if (conn->td->conns->total + n > CONN_BUDGET) {
		snprintf(why, sizeof why, "would take the unsent output of "
		    "all clients over %zu MiB", CONN_BUDGET >> 20);
		return why;
	}
	return NULL;
}

int
conn_hold(struct conn *conn, size_t *held, size_t now)
{
	struct conns *cs = conn->td->conns;
	size_t before = *held;
	const char *why;

	*held = now;
	if (conn->bev == NULL)
		return -1;	/* counted no more since it closed */
	conn->held -= before;
	cs->total -= before;
	if (now > before && (why = conn_over(conn, now)) != NULL) {
		conn_drop(conn, why);
		*held = 0;
		return -1;
	}
	conn->held += now;
	cs->total += now;
	if (cs->total > cs->peak)
		cs->peak = cs->total;
	return conn->dropping ? -1 : 0;
}

/*
 * Serializes value into one line in a buffer kept for the next value too,
 * with room for a newline after it: the caller hands it on in one piece,
 * since libevent runs a buffer's callbacks on every add, which made adding
 * token by token the daemon's largest cost. The buffer is scratch for the
 * process, not a daemon's state: nothing in it outlives the call.
 */
static int
conn_dump(const json_t *value, char **line, size_t *len)
{
	static char *scratch;
	static size_t cap;
	/* Every newline inside strings is escaped: one message, one line.
	 * Fifteen digits print 0.05 as 0.05, and are more than seconds with
	 * milliseconds need; replies written as text (jsonw) give the same. */
	const size_t flags = JSONW_DUMP_FLAGS;
	size_t n;
	char *bigger;

	for (;;) {
		if ((n = json_dumpb(value, scratch, cap, flags)) == 0)
			return -1;
		if (n < cap)
			break;
		if ((bigger = realloc(scratch, n + 4096)) == NULL)
			return -1;
		scratch = bigger;
		cap = n + 4096;
	}
	*line = scratch;
	*len = n;
	return 0;
}

int
conn_add_json(struct evbuffer *buf, const json_t *value)
{
	char *line;
	size_t len;

	if (conn_dump(value, &line, &len) != 0)
		return -1;
	return evbuffer_add(buf, line, len);
}

/* Where a whole message goes: behind the open stream, or out. */
static struct evbuffer *
conn_queue(struct conn *conn, size_t n)
{
	const char *why;

	if (conn->bev == NULL || conn->dropping)
		return NULL;
	if ((why = conn_over(conn, n)) != NULL) {
		conn_drop(conn, why);
		return NULL;
	}
	return conn->streaming ? conn->waiting :
	    bufferevent_get_output(conn->bev);
}

void
conn_send(struct conn *conn, const json_t *msg)
{
	struct evbuffer *out;
	char *line;
	size_t len;

	if (conn->bev == NULL || conn->dropping)
		return;
	if (conn_dump(msg, &line, &len) != 0) {
		conn_drop(conn, "could not be sent a reply (out of memory)");
		return;
	}
	line[len++] = '\n';
	if ((out = conn_queue(conn, len)) != NULL && evbuffer_add(out, line,
	    len) != 0)
		conn_drop(conn, "could not be sent a reply (out of memory)");
}

void
conn_send_text(struct conn *conn, const char *line, size_t len)
{
	struct evbuffer *out;

	if ((out = conn_queue(conn, len)) != NULL && evbuffer_add(out, line,
	    len) != 0)
		conn_drop(conn, "could not be sent a reply (out of memory)");
}

void
conn_send_buffer(struct conn *conn, struct evbuffer *msg)
{
	struct evbuffer *out;

	if ((out = conn_queue(conn, evbuffer_get_length(msg))) != NULL)
		evbuffer_add_buffer(out, msg);
	else
		evbuffer_drain(msg, evbuffer_get_length(msg));
}

int
conn_stream_begin(struct conn *conn)
{
	if (conn->streaming)
		return -1;
	conn->streaming = true;
	return 0;
}

void
conn_stream_write(struct conn *conn, struct evbuffer *buf)
{
	const char *why;

	if (conn->bev == NULL || conn->dropping) {
		evbuffer_drain(buf, evbuffer_get_length(buf));
		return;
	}
	if ((why = conn_over(conn, evbuffer_get_length(buf))) != NULL) {
		conn_drop(conn, why);
		evbuffer_drain(buf, evbuffer_get_length(buf));
		return;
	}
	evbuffer_add_buffer(bufferevent_get_output(conn->bev), buf);
}

void
conn_stream_end(struct conn *conn)
{
	conn->streaming = false;
	if (conn->bev == NULL)
		return;
	if (!conn->dropping)
		evbuffer_add_buffer(bufferevent_get_output(conn->bev),
		    conn->waiting);
	else
		evbuffer_drain(conn->waiting,
		    evbuffer_get_length(conn->waiting));
	conn_maybe_finish(conn);
}

bool
conn_congested(struct conn *conn)
{
	if (conn->bev == NULL || conn->dropping)
		return true;
	if (evbuffer_get_length(bufferevent_get_output(conn->bev)) <=
	    CONN_HIGH)
		return false;
	conn->want_room = true;
	return true;
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

pid_t
conn_pid(const struct conn *conn)
{
	return conn->pid;
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
	return conn->bev != NULL && !conn->dropping;
}

int
conn_start(struct triaged *td)
{
	struct conns *cs;

	if ((cs = calloc(1, sizeof *cs)) == NULL)
		return -1;
	TAILQ_INIT(&cs->list);
	if ((cs->trim_ev = evtimer_new(td->base, conn_trim_cb, cs)) == NULL) {
		free(cs);
		return -1;
	}
	td->conns = cs;
	return 0;
}

void
conn_stop(struct triaged *td)
{
	if (td->conns == NULL)
		return;
	event_free(td->conns->trim_ev);
	free(td->conns);
	td->conns = NULL;
}

struct conn *
conn_first(const struct triaged *td)
{
	return TAILQ_FIRST(&td->conns->list);
}

struct conn *
conn_next(struct conn *conn)
{
	return TAILQ_NEXT(conn, entry);
}

unsigned
conn_count(const struct triaged *td)
{
	return td->conns->n;
}

unsigned
conn_count_uid(const struct triaged *td, uid_t uid)
{
	const struct conn *conn;
	unsigned n = 0;

	TAILQ_FOREACH(conn, &td->conns->list, entry)
		if (conn->uid == uid)
			n++;
	return n;
}

void
conn_set_closed_cb(struct triaged *td, void (*cb)(void *), void *arg)
{
	td->conns->closed_cb = cb;
	td->conns->closed_arg = arg;
}
