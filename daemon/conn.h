/* conn.h - one client connection: line framing with the max_request limit,
 * the peer's credentials, and its outgoing bytes, with backpressure. */
#ifndef TRIAGED_CONN_H
#define TRIAGED_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

struct evbuffer;
struct triaged;
struct conn;
struct conn_hook;

/* One complete line, without its newline; line is NULL (and len 0) for a
 * line longer than max_request, which the reader answers: the connection
 * then reads no more and closes once its output is written. */
typedef void (*conn_line_cb)(struct conn *conn, const char *line, size_t len,
    void *arg);
typedef void (*conn_hook_cb)(struct conn *conn, void *arg);

/* What td's connections share, into td->conns: 0, or -1 when out of
 * memory. conn_stop frees it; every connection is closed by then. */
int conn_start(struct triaged *td);
void conn_stop(struct triaged *td);

/* Takes fd (a connected socket); NULL with errno set if it cannot. Lines
 * read wait until conn_set_reader() says who takes them. */
struct conn *conn_new(struct triaged *td, int fd);
/*
 * Who reads the connection: line_cb gets each line; room_cb (may be NULL)
 * is called when output that was over the congestion mark has drained
 * (see conn_congested()).
 */
void conn_set_reader(struct conn *conn, conn_line_cb line_cb,
    conn_hook_cb room_cb, void *arg);
/* Closes the connection at once: the close hooks run, oldest first. */
void conn_close(struct conn *conn);
/* Reads no more, and closes once its pending output is written: for the
 * last replies before the daemon exits. */
void conn_finish(struct conn *conn);
/* Logs why (naming the client) and closes at the next turn of the loop:
 * safe from any callback. From now on conn_alive() is false and whatever
 * is sent is dropped. */
void conn_drop(struct conn *conn, const char *why);

/* cb(conn, arg) runs when conn closes, whatever the cause. Returns a handle
 * for conn_hook_remove(), or NULL when out of memory. A hook is freed
 * once it has run: forget it then. */
struct conn_hook *conn_on_close(struct conn *conn, conn_hook_cb cb, void *arg);
void conn_hook_remove(struct conn *conn, struct conn_hook *hook);

/* The reader stops the flow of lines (hold) while it finishes what it has,
 * and lets it go on; lines that arrive meanwhile wait, then reading stops. */
void conn_hold_lines(struct conn *conn, bool hold);
/* Work the reader still owes the client (a deferred reply, a batch): a
 * client that sent EOF keeps its connection until it is done. */
void conn_work_begin(struct conn *conn);
void conn_work_end(struct conn *conn);
unsigned conn_npending(const struct conn *conn);

/* Appends value serialized on one line, without the newline, to buf.
 * 0, or -1 when out of memory. */
int conn_add_json(struct evbuffer *buf, const json_t *value);
/* Sends one message (a line). A client too far behind, or one that would
 * take the daemon's unsent output over its budget, is dropped. */
void conn_send(struct conn *conn, const json_t *msg);
/* The same with a message already serialized in msg, newline included;
 * msg is emptied. */
void conn_send_buffer(struct conn *conn, struct evbuffer *msg);
/* The same with a message already serialized as text, newline
 * included. */
void conn_send_text(struct conn *conn, const char *line, size_t len);
/*
 * A message written in pieces straight to the output, for one too large
 * to hold: 0, or -1 when another stream is open. Until conn_stream_end(),
 * whole messages wait behind it. conn_stream_write() empties buf.
 */
int conn_stream_begin(struct conn *conn);
void conn_stream_write(struct conn *conn, struct evbuffer *buf);
void conn_stream_end(struct conn *conn);
/* True while more is waiting to be written than a client that reads
 * should ever have (or the connection is gone): produce no more until the
 * reader's room_cb. */
bool conn_congested(struct conn *conn);
/*
 * Bytes the reader keeps for this client outside the connection (a batch's
 * replies not sent yet): *held, now counted, becomes now. Counted against
 * the same limits as unsent output; returns -1 (the connection is then
 * dropped) when growing passes one, else 0.
 */
int conn_hold(struct conn *conn, size_t *held, size_t now);

struct triaged *conn_daemon(const struct conn *conn);
uid_t conn_uid(const struct conn *conn);
gid_t conn_gid(const struct conn *conn);
pid_t conn_pid(const struct conn *conn);
/* Root, the daemon's own uid, or a member of admin_group. */
bool conn_is_admin(const struct conn *conn);
/* False once closed or dropped. */
bool conn_alive(const struct conn *conn);

/* A connection is freed when it is closed and its last reference goes. */
void conn_ref(struct conn *conn);
void conn_unref(struct conn *conn);

/* Every open connection of td. */
struct conn *conn_first(const struct triaged *td);
struct conn *conn_next(struct conn *conn);
unsigned conn_count(const struct triaged *td);
/* How many of them are uid's. */
unsigned conn_count_uid(const struct triaged *td, uid_t uid);

/* Called whenever a connection of td closes, so the server can accept
 * again. */
void conn_set_closed_cb(struct triaged *td, void (*cb)(void *), void *arg);

#endif
