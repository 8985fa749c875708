/* peer.c - for the daemon tests that drive connections on a bare loop: the
 * client's end of a socket pair, read by that same loop, line by line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "conn.h"
#include "loop.h"
#include "peer.h"

static void
peer_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peer *p = arg;
	int n;

	(void)what;
	n = evbuffer_read(p->in, fd, -1);
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
		p->eof = true;
		event_del(p->ev);
	}
}

struct peer *
peer_new(struct loop *l)
{
	struct peer *p;
	int sv[2];

	assert_non_null(p = calloc(1, sizeof *p));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv), 0);
	p->loop = l;
	p->conn_fd = sv[0];
	p->fd = sv[1];
	assert_int_equal(evutil_make_socket_nonblocking(p->fd), 0);
	assert_non_null(p->in = evbuffer_new());
	assert_non_null(p->ev = event_new(l->base, p->fd, EV_READ | EV_PERSIST,
	    peer_read_cb, p));
	peer_reading(p, true);
	return p;
}

void
peer_free(struct peer *p)
{
	if (p == NULL)
		return;
	if (p->conn != NULL) {
		conn_close(p->conn);
		conn_unref(p->conn);
	}
	event_free(p->ev);
	evbuffer_free(p->in);
	close(p->fd);
	free(p);
}

static void
peer_closed_cb(struct conn *conn, void *arg)
{
	struct peer *p = arg;

	(void)conn;
	if (p->closed)
		loop_bad(p->loop, "a connection's close hooks ran twice");
	p->closed = true;
}

struct conn *
peer_conn(struct peer *p, struct triaged *td)
{
	assert_null(p->conn);
	assert_non_null(p->conn = conn_new(td, p->conn_fd));
	conn_ref(p->conn);
	assert_non_null(conn_on_close(p->conn, peer_closed_cb, p));
	return p->conn;
}

void
peer_send(struct peer *p, const char *text)
{
	size_t len = strlen(text);

	assert_int_equal(write(p->fd, text, len), (ssize_t)len);
}

void
peer_reading(struct peer *p, bool on)
{
	if (on && !p->eof)
		assert_int_equal(event_add(p->ev, NULL), 0);
	else
		event_del(p->ev);
}

size_t
peer_unread(const struct peer *p)
{
	int n = 0;

	assert_int_equal(ioctl(p->conn_fd, FIONREAD, &n), 0);
	return (size_t)n;
}

/* A whole line read, or the end of what will come. */
static bool
peer_has_line(const struct peer *p)
{
	return p->eof || evbuffer_search_eol(p->in, NULL, NULL,
	    EVBUFFER_EOL_LF).pos >= 0;
}

char *
peer_line(struct peer *p)
{
	LOOP_WAIT_FOR(p->loop, peer_has_line(p));
	return evbuffer_readln(p->in, NULL, EVBUFFER_EOL_LF);
}

void
peer_wait_eof(struct peer *p)
{
	LOOP_WAIT_FOR(p->loop, p->eof);
}

void
peer_expect(struct peer *p, const char *want)
{
	char *line = peer_line(p);

	if (line == NULL)
		fail_msg("the connection closed; expected %s", want);
	if (strcmp(line, want) != 0)
		fail_msg("got      %s\nexpected %s", line, want);
	free(line);
}
