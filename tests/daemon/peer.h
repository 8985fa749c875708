/* peer.h - for the daemon tests that drive connections on a bare loop: the
 * client's end of a socket pair, read by that same loop, line by line. */
#ifndef TRIAGE_TEST_PEER_H
#define TRIAGE_TEST_PEER_H

#include <stdbool.h>
#include <stddef.h>

struct conn;
struct evbuffer;
struct event;
struct loop;
struct triaged;

struct peer {
	struct loop *loop;
	int fd;			/* the client's end */
	int conn_fd;		/* the daemon's end: conn_new's to close */
	struct event *ev;	/* reads fd into in, while reading */
	struct evbuffer *in;	/* read and not taken yet */
	bool eof;		/* the daemon's end is closed */
	struct conn *conn;	/* peer_conn's */
	bool closed;		/* its close hooks have run */
};

/*
 * A socket pair on l's loop: conn_fd is for conn_new, which owns it from
 * then on; fd is read by the loop into in. Fails the test on error; the
 * caller's, for peer_free.
 */
struct peer *peer_new(struct loop *l);
/* Closes the client's end, and the connection of peer_conn. */
void peer_free(struct peer *p);
/*
 * td's connection on the daemon's end (conn_new), p's: referenced for the
 * test, which may look at it once closed (closed then says so). Fails
 * the test on error.
 */
struct conn *peer_conn(struct peer *p, struct triaged *td);

/* Writes all of text now (the socket's buffer takes it). */
void peer_send(struct peer *p, const char *text);
/* Whether the loop reads the client's end: a client that does not read
 * its replies, then does. */
void peer_reading(struct peer *p, bool on);
/* Bytes sent that the daemon's end has not read yet. */
size_t peer_unread(const struct peer *p);
/*
 * The next line, without its newline, allocated; NULL once the daemon's
 * end has closed without one. Runs the loop until then, failing the test
 * after LOOP_SAFETY_SEC.
 */
char *peer_line(struct peer *p);
/* Runs the loop until the daemon's end closes; what was read before is
 * kept in in. */
void peer_wait_eof(struct peer *p);
/* Fails the test unless the next line is exactly want. */
void peer_expect(struct peer *p, const char *want);

#endif
