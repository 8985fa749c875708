/* test-conn.c - one client connection alone on a bare event_base, over one
 * end of a socket pair: framing across reads, max_request, a peer gone
 * mid-line, the output's limits and flush, streams, holds, close hooks. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "bare.h"
#include "config.h"
#include "conn.h"
#include "loop.h"
#include "peer.h"
#include "triaged.h"

#define NLINES	16

struct fx {
	struct loop loop;	/* first (loop_new) */
	struct triaged td;
	struct peer *peer;
	struct conn *conn;
	char *lines[NLINES];	/* what line_cb got; NULL for a refusal */
	int nlines;
	int nrefused;
	int nroom;		/* room_cb calls */
	const char *reply;	/* line_cb answers each line with it */
	bool drop_on_line;	/* line_cb drops the connection */
	int hook_order[4];
	int nhooks;
};

static void
line_cb(struct conn *conn, const char *line, size_t len, void *arg)
{
	struct fx *fx = arg;

	if (fx->nlines == NLINES) {
		loop_bad(&fx->loop, "more lines than the test sent");
		return;
	}
	if (line == NULL)
		fx->nrefused++;
	else
		assert_non_null(fx->lines[fx->nlines] = strndup(line, len));
	fx->nlines++;
	if (fx->reply != NULL)
		conn_send_text(conn, fx->reply, strlen(fx->reply));
	if (fx->drop_on_line)
		conn_drop(conn, "was dropped by the test");
}

static void
room_cb(struct conn *conn, void *arg)
{
	struct fx *fx = arg;

	(void)conn;
	fx->nroom++;
}

static int
setup(void **state)
{
	struct fx *fx;

	if ((fx = loop_new(sizeof *fx, "test-conn")) == NULL)
		return -1;
	bare_init(&fx->td, fx->loop.base);
	assert_int_equal(conn_start(&fx->td), 0);
	fx->td.cfg->max_request = 1024;
	fx->peer = peer_new(&fx->loop);
	fx->conn = peer_conn(fx->peer, &fx->td);
	conn_set_reader(fx->conn, line_cb, room_cb, fx);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;
	int i;

	for (i = 0; i < fx->nlines; i++)
		free(fx->lines[i]);
	peer_free(fx->peer);
	conn_stop(&fx->td);
	bare_clear(&fx->td);
	loop_free(fx);
	return 0;
}

/* Runs the loop until the connection has read all the peer sent. */
static void
wait_read(struct fx *fx)
{
	LOOP_WAIT_FOR(&fx->loop, peer_unread(fx->peer) == 0);
}

static void
lines_split_across_reads_come_whole(void **state)
{
	struct fx *fx = *state;

	peer_send(fx->peer, "hel");
	wait_read(fx);
	assert_int_equal(fx->nlines, 0);
	peer_send(fx->peer, "lo\nwor");
	LOOP_WAIT_FOR(&fx->loop, fx->nlines == 1);
	wait_read(fx);
	assert_int_equal(fx->nlines, 1);
	assert_string_equal(fx->lines[0], "hello");
	peer_send(fx->peer, "ld\n\n");
	LOOP_WAIT_FOR(&fx->loop, fx->nlines == 3);
	assert_string_equal(fx->lines[1], "world");
	assert_string_equal(fx->lines[2], "");
	/* Several in one read, each on its own. */
	peer_send(fx->peer, "a\nbb\nccc\n");
	LOOP_WAIT_FOR(&fx->loop, fx->nlines == 6);
	assert_string_equal(fx->lines[3], "a");
	assert_string_equal(fx->lines[4], "bb");
	assert_string_equal(fx->lines[5], "ccc");
	assert_int_equal(fx->nrefused, 0);
	assert_false(fx->peer->closed);
}

/* max_request bytes and its newline is a line; one byte more is refused,
 * answered, and the connection then reads nothing more. */
static void
line_over_max_request_is_refused(void **state)
{
	struct fx *fx = *state;
	char line[1024 + 3];

	memset(line, 'x', 1024);
	line[1024] = '\n';
	line[1025] = '\0';
	peer_send(fx->peer, line);
	LOOP_WAIT_FOR(&fx->loop, fx->nlines == 1);
	assert_int_equal(strlen(fx->lines[0]), 1024);
	fx->reply = "refused\n";
	memset(line, 'y', 1025);
	line[1025] = '\n';
	line[1026] = '\0';
	peer_send(fx->peer, line);
	peer_send(fx->peer, "after\n");
	peer_expect(fx->peer, "refused");
	peer_wait_eof(fx->peer);
	assert_true(fx->peer->closed);
	assert_int_equal(fx->nlines, 2);
	assert_int_equal(fx->nrefused, 1);
}

/* A client that stops sending in the middle of a line: what it sent is
 * its last line, answered before the connection goes. */
static void
peer_closing_mid_line_gets_its_answer(void **state)
{
	struct fx *fx = *state;

	fx->reply = "bye\n";
	peer_send(fx->peer, "one\ntw");
	assert_int_equal(shutdown(fx->peer->fd, SHUT_WR), 0);
	peer_expect(fx->peer, "bye");
	peer_expect(fx->peer, "bye");
	peer_wait_eof(fx->peer);
	assert_true(fx->peer->closed);
	assert_int_equal(fx->nlines, 2);
	assert_string_equal(fx->lines[0], "one");
	assert_string_equal(fx->lines[1], "tw");
}

/* Work still owed keeps the connection of a client that sent EOF. */
static void
eof_waits_for_the_work_owed(void **state)
{
	struct fx *fx = *state;

	conn_work_begin(fx->conn);
	peer_send(fx->peer, "partial");
	close(fx->peer->fd);
	fx->peer->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	LOOP_WAIT_FOR(&fx->loop, fx->nlines == 1);
	assert_string_equal(fx->lines[0], "partial");
	assert_false(fx->peer->closed);
	assert_int_equal(conn_npending(fx->conn), 1);
	conn_work_end(fx->conn);
	assert_true(fx->peer->closed);
}

/* Makes the socket's buffers small, so that unsent output stays ours. */
static void
small_buffers(struct fx *fx)
{
	int size = 4096;

	assert_int_equal(setsockopt(fx->peer->conn_fd, SOL_SOCKET, SO_SNDBUF,
	    &size, sizeof size), 0);
	assert_int_equal(setsockopt(fx->peer->fd, SOL_SOCKET, SO_RCVBUF,
	    &size, sizeof size), 0);
}

/* Sends chunk after chunk to a client that does not read, a turn of the
 * loop between them, until stop says so; the bytes sent. */
static size_t
fill(struct fx *fx, size_t chunk, bool (*stop)(struct fx *))
{
	static char buf[65536];
	size_t sent = 0;
	int i;

	assert_true(chunk <= sizeof buf);
	memset(buf, 'z', chunk - 1);
	buf[chunk - 1] = '\n';
	for (i = 0; i < 10000 && !stop(fx); i++) {
		conn_send_text(fx->conn, buf, chunk);
		sent += chunk;
		assert_int_not_equal(event_base_loop(fx->loop.base,
		    EVLOOP_NONBLOCK), -1);
	}
	assert_true(stop(fx));
	return sent;
}

static bool
is_dropped(struct fx *fx)
{
	return !conn_alive(fx->conn);
}

static bool
is_congested(struct fx *fx)
{
	return conn_congested(fx->conn);
}

/* Past max_unread, on top of one request, the client is dropped. */
static void
client_not_reading_is_dropped_past_max_unread(void **state)
{
	struct fx *fx = *state;
	size_t sent;

	fx->td.cfg->max_unread = 64 << 10;
	small_buffers(fx);
	peer_reading(fx->peer, false);
	sent = fill(fx, 8192, is_dropped);
	/* Not before: the limit, and what the socket took (its buffers
	 * made small: under 64 KiB), but not much after. */
	assert_true(sent > (64 << 10) + 1024);
	assert_true(sent < (64 << 10) + 1024 + (64 << 10));
	LOOP_WAIT_FOR(&fx->loop, fx->peer->closed);
	assert_int_equal(fx->nroom, 0);
}

/* Over 1 MiB unsent, lines wait and nothing is produced; once the client
 * has read, the reader hears of the room and the lines come. */
static void
congested_output_waits_for_the_client(void **state)
{
	struct fx *fx = *state;
	size_t sent, got = 0;
	char *line;

	small_buffers(fx);
	peer_reading(fx->peer, false);
	sent = fill(fx, 65536, is_congested);
	assert_true(sent > 1 << 20);
	peer_send(fx->peer, "waits\n");
	LOOP_WAIT_FOR(&fx->loop, peer_unread(fx->peer) == 0 ||
	    fx->nlines > 0);
	assert_int_equal(fx->nlines, 0);
	assert_int_equal(fx->nroom, 0);
	peer_reading(fx->peer, true);
	while (got < sent) {
		assert_non_null(line = peer_line(fx->peer));
		got += strlen(line) + 1;
		free(line);
	}
	assert_int_equal(got, sent);
	LOOP_WAIT_FOR(&fx->loop, fx->nlines == 1);
	assert_string_equal(fx->lines[0], "waits");
	assert_int_equal(fx->nroom, 1);
	assert_true(conn_alive(fx->conn));
}

/* conn_finish: what was sent goes out whole, then the connection closes,
 * and reads no more meanwhile. */
static void
finish_flushes_then_closes(void **state)
{
	struct fx *fx = *state;
	int i;

	for (i = 0; i < 3; i++)
		conn_send_text(fx->conn, "last\n", 5);
	peer_send(fx->peer, "unread\n");
	conn_finish(fx->conn);
	for (i = 0; i < 3; i++)
		peer_expect(fx->peer, "last");
	peer_wait_eof(fx->peer);
	assert_true(fx->peer->closed);
	assert_int_equal(fx->nlines, 0);
}

/* A drop from inside the reader: no more lines, the close at the next
 * turn, never inside the callback. */
static void
drop_inside_the_reader_closes_next_turn(void **state)
{
	struct fx *fx = *state;

	fx->drop_on_line = true;
	peer_send(fx->peer, "one\ntwo\n");
	LOOP_WAIT_FOR(&fx->loop, fx->nlines == 1);
	assert_false(conn_alive(fx->conn));
	conn_send_text(fx->conn, "lost\n", 5);	/* dropped, not sent */
	peer_wait_eof(fx->peer);
	assert_true(fx->peer->closed);
	assert_int_equal(fx->nlines, 1);
	assert_int_equal(evbuffer_get_length(fx->peer->in), 0);
}

/* A message written in pieces: whole messages sent meanwhile wait behind
 * it, and the output is the stream, then them. */
static void
whole_messages_wait_behind_a_stream(void **state)
{
	struct fx *fx = *state;
	struct evbuffer *piece = evbuffer_new();

	assert_int_equal(conn_stream_begin(fx->conn), 0);
	assert_int_equal(conn_stream_begin(fx->conn), -1);
	evbuffer_add(piece, "[1,", 3);
	conn_stream_write(fx->conn, piece);
	assert_int_equal(evbuffer_get_length(piece), 0);
	conn_send_text(fx->conn, "whole\n", 6);
	evbuffer_add(piece, "2]\n", 3);
	conn_stream_write(fx->conn, piece);
	conn_stream_end(fx->conn);
	peer_expect(fx->peer, "[1,2]");
	peer_expect(fx->peer, "whole");
	evbuffer_free(piece);
}

/* Held, lines wait in the connection; let go, they come in order. */
static void
held_lines_wait_then_come_in_order(void **state)
{
	struct fx *fx = *state;

	conn_hold_lines(fx->conn, true);
	peer_send(fx->peer, "a\nb\n");
	wait_read(fx);
	assert_int_equal(fx->nlines, 0);
	conn_hold_lines(fx->conn, false);
	LOOP_WAIT_FOR(&fx->loop, fx->nlines == 2);
	assert_string_equal(fx->lines[0], "a");
	assert_string_equal(fx->lines[1], "b");
}

static void
hook_a_cb(struct conn *conn, void *arg)
{
	struct fx *fx = arg;

	(void)conn;
	fx->hook_order[fx->nhooks++] = 1;
}

static void
hook_b_cb(struct conn *conn, void *arg)
{
	struct fx *fx = arg;

	(void)conn;
	fx->hook_order[fx->nhooks++] = 2;
}

/* Close hooks run once, oldest first; a removed one never. */
static void
close_hooks_run_oldest_first(void **state)
{
	struct fx *fx = *state;
	struct conn_hook *gone;

	assert_non_null(conn_on_close(fx->conn, hook_a_cb, fx));
	assert_non_null(gone = conn_on_close(fx->conn, hook_a_cb, fx));
	assert_non_null(conn_on_close(fx->conn, hook_b_cb, fx));
	conn_hook_remove(fx->conn, gone);
	conn_close(fx->conn);
	assert_true(fx->peer->closed);
	assert_int_equal(fx->nhooks, 2);
	assert_int_equal(fx->hook_order[0], 1);
	assert_int_equal(fx->hook_order[1], 2);
	peer_wait_eof(fx->peer);
}

static void
count_cb(void *arg)
{
	(*(int *)arg)++;
}

/* Two daemons in one process: each knows its own connections only. */
static void
each_daemon_has_its_own_connections(void **state)
{
	struct fx *fx = *state;
	struct triaged other = { 0 };
	struct peer *p2;
	int closes = 0;

	bare_init(&other, fx->loop.base);
	assert_int_equal(conn_start(&other), 0);
	conn_set_closed_cb(&other, count_cb, &closes);
	p2 = peer_new(&fx->loop);
	peer_conn(p2, &other);
	assert_int_equal(conn_count(&fx->td), 1);
	assert_int_equal(conn_count(&other), 1);
	assert_int_equal(conn_count_uid(&other, conn_uid(p2->conn)), 1);
	assert_int_equal(conn_count_uid(&other, conn_uid(p2->conn) + 1), 0);
	assert_ptr_equal(conn_first(&other), p2->conn);
	assert_null(conn_next(p2->conn));
	conn_close(fx->conn);
	assert_int_equal(conn_count(&fx->td), 0);
	assert_null(conn_first(&fx->td));
	assert_int_equal(conn_count(&other), 1);
	assert_int_equal(closes, 0);
	peer_free(p2);
	assert_int_equal(closes, 1);
	assert_int_equal(conn_count(&other), 0);
	conn_stop(&other);
	bare_clear(&other);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(lines_split_across_reads_come_whole),
		T(line_over_max_request_is_refused),
		T(peer_closing_mid_line_gets_its_answer),
		T(eof_waits_for_the_work_owed),
		T(client_not_reading_is_dropped_past_max_unread),
		T(congested_output_waits_for_the_client),
		T(finish_flushes_then_closes),
		T(drop_inside_the_reader_closes_next_turn),
		T(whole_messages_wait_behind_a_stream),
		T(held_lines_wait_then_come_in_order),
		T(close_hooks_run_oldest_first),
		T(each_daemon_has_its_own_connections),
#undef T
	};

	/* As the daemon: a write to a closed peer fails, and says so. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("conn", tests, NULL, NULL);
}
