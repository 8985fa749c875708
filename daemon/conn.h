/* conn.h - one client connection: line framing with the max_request limit,
 * the peer's credentials, its pending requests, and its outgoing messages. */
#ifndef TRIAGED_CONN_H
#define TRIAGED_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

struct triaged;
struct conn;
struct rpc_req;

/* Takes fd (a connected socket); NULL with errno set if it cannot. */
struct conn *conn_new(struct triaged *td, int fd);
/* Closes the connection at once: pending requests are withdrawn. */
void conn_close(struct conn *conn);

/* Reads no more, and closes once its pending output is written: for the
 * last replies before the daemon exits. */
void conn_finish(struct conn *conn);
/* Sends one message (a line); a connection too far behind is dropped. */
void conn_send(struct conn *conn, const json_t *msg);

struct triaged *conn_daemon(const struct conn *conn);
uid_t conn_uid(const struct conn *conn);
gid_t conn_gid(const struct conn *conn);
/* Root, the daemon's own uid, or a member of admin_group. */
bool conn_is_admin(const struct conn *conn);
bool conn_alive(const struct conn *conn);

/* Pending requests: rpc.c keeps them here so a close can withdraw them. */
void conn_ref(struct conn *conn);
void conn_unref(struct conn *conn);
void conn_add_pending(struct conn *conn, struct rpc_req *req);
void conn_remove_pending(struct conn *conn, struct rpc_req *req);
unsigned conn_npending(const struct conn *conn);

/* Every open connection: for notifications. */
struct conn *conn_first(void);
struct conn *conn_next(struct conn *conn);
unsigned conn_count(void);

/* The watch filter of a connection: NULL when it does not watch. */
struct watch;
struct watch *conn_watch(const struct conn *conn);
void conn_set_watch(struct conn *conn, struct watch *w);

/* Called whenever a connection closes, so the server can accept again. */
void conn_set_closed_cb(void (*cb)(void *), void *arg);

#endif
