/* server.h - the listening socket: refuse to start beside a live daemon,
 * bind under a tight umask, accept up to max_clients connections. */
#ifndef TRIAGED_SERVER_H
#define TRIAGED_SERVER_H

#include <stdint.h>

struct server;
struct triaged;

/*
 * Before anything else starts: 0 when path is free (a stale socket nobody
 * answers on is removed), -1 with *cause set when a daemon answers there or
 * the path is unusable.
 */
int server_check(const char *path, char **cause);

/*
 * Socket activation: 1 when systemd handed the daemon its listening socket
 * (*fd, and *path its address, allocated), 0 when it did not, -1 with
 * *cause set when what it handed is not one listening Unix stream socket.
 * Call it once, before anything forks.
 */
int server_activated(int *fd, char **path, char **cause);

/* Binds and listens on the Unix socket path (free: server_check), with
 * cfg's socket_mode and socket_group, under a umask that lets nobody in
 * before they are set. The socket, or -1 with *cause set (allocated). */
struct config;
int server_bind_unix(const struct config *cfg, const char *path,
    char **cause);

/* Listens on fd, from server_activated(), or (fd < 0) binds path with the
 * config's socket_mode and socket_group and listens. NULL with *cause set
 * (allocated) on failure. */
struct server *server_open(struct triaged *td, const char *path, int fd,
    char **cause);
/* No new connections; existing ones go on. */
void server_stop_accepting(struct server *srv);
/* The daemon is done: every client gets its pending replies, then the loop
 * exits (after SERVER_DRAIN_MS at most, for clients that never read). */
void server_drain(struct server *srv);
/* Connections taken on as clients since the start, and those turned away
 * by max_clients or max_clients_per_user; 0 and 0 for a NULL srv (not
 * listening yet). */
void server_counts(const struct server *srv, uint64_t *accepted,
    uint64_t *refused);
/* Closes every client, and the socket. */
void server_close(struct server *srv);

#endif
