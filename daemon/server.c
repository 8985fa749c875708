/* server.c - the listening socket: refuse to start beside a live daemon,
 * bind under a tight umask, accept up to max_clients connections. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "conn.h"
#include "log.h"
#include "rpc.h"
#include "server.h"
#include "timefmt.h"
#include "triaged.h"

/* How long the last replies may take to leave before the daemon exits. */
#define SERVER_DRAIN_MS 2000
/* Out of descriptors, accepting pauses and is tried again this often (and
 * at once when a client leaves): a pending connection is then no busy
 * loop of failing accepts, and a shortage no client caused (a job's
 * files, a worker's socket) still ends. */
#define SERVER_STARVED_RETRY_MS 200

struct server {
	struct triaged *td;
	struct evconnlistener *listener;
	struct event *drain_ev;	/* the deadline of a drain */
	char *path;		/* NULL: not ours to unlink */
	bool accepting;
	bool draining;		/* exit once the last client is gone */
	bool fd_starved;	/* paused: out of file descriptors */
	struct event *retry_ev;	/* the next try while fd_starved */
	uint64_t starved_since_ms;	/* 0: accepts are not failing */
	unsigned starved_tries;	/* accepts that failed in this episode */
	time_t last_refusal_log;
	uint64_t accepted;	/* taken on as clients */
	uint64_t refused;	/* turned away by max_clients(_per_user) */
};

static int
server_address(const char *path, struct sockaddr_un *sun, char **cause)
{
	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun->sun_path) {
		if (asprintf(cause, "socket path %s is too long (at most %zu "
		    "bytes)", path, sizeof sun->sun_path - 1) < 0)
			*cause = NULL;
		return -1;
	}
	strcpy(sun->sun_path, path);
	return 0;
}

int
server_check(const char *path, char **cause)
{
	struct sockaddr_un sun;
	int fd, rc;

	if (server_address(path, &sun, cause) != 0)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		goto fail;
	rc = connect(fd, (struct sockaddr *)&sun, sizeof sun);
	close(fd);
	if (rc == 0) {
		if (asprintf(cause, "another triaged is answering on %s",
		    path) < 0)
			*cause = NULL;
		return -1;
	}
	if (errno == ENOENT)
		return 0;
	if (errno == ECONNREFUSED) {
		/* A socket nobody listens on: left by a daemon that died. */
		if (unlink(path) != 0 && errno != ENOENT)
			goto fail;
		return 0;
	}
fail:
	if (asprintf(cause, "%s: %s", path, strerror(errno)) < 0)
		*cause = NULL;
	return -1;
}

static void
server_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct server *srv = arg;
	const struct config *cfg = srv->td->cfg;
	struct conn *conn;
	time_t now;

	(void)l;
	(void)sa;
	(void)salen;
	if (conn_count(srv->td) >= srv->td->cfg->max_clients) {
		now = time(NULL);
		if (now != srv->last_refusal_log) {
			log_warnx("max_clients (%u) reached: refusing a "
			    "connection", srv->td->cfg->max_clients);
			srv->last_refusal_log = now;
		}
		srv->refused++;
		close(fd);
		return;
	}
	if ((conn = conn_new(srv->td, fd)) == NULL) {
		log_warn("cannot take a connection");
		close(fd);
		return;
	}
	/* One user's connections must leave room for everyone else's. */
	if (conn_count_uid(srv->td, conn_uid(conn)) >
	    cfg->max_clients_per_user) {
		if ((now = time(NULL)) != srv->last_refusal_log) {
			log_warnx("uid %u has %u connections open "
			    "(max_clients_per_user): refusing another",
			    (unsigned)conn_uid(conn),
			    cfg->max_clients_per_user);
			srv->last_refusal_log = now;
		}
		rpc_send_limit(conn, "max_clients_per_user",
		    "uid %u has %u connections open already; the limit is "
		    "%u (max_clients_per_user)", (unsigned)conn_uid(conn),
		    cfg->max_clients_per_user, cfg->max_clients_per_user);
		srv->refused++;
		conn_finish(conn);
		return;
	}
	/* Its lines are JSON-RPC requests. */
	if (rpc_attach(conn) != 0) {
		log_warnx("cannot take a connection: out of memory");
		conn_close(conn);
		return;
	}
	srv->accepted++;
}

void
server_counts(const struct server *srv, uint64_t *accepted,
    uint64_t *refused)
{
	*accepted = srv != NULL ? srv->accepted : 0;
	*refused = srv != NULL ? srv->refused : 0;
}

/* Accepting again, after a pause for want of descriptors; the retry
 * timer stays armed, to see whether the episode is over. */
static void
server_resume(struct server *srv)
{
	if (!srv->fd_starved)
		return;
	srv->fd_starved = false;
	if (srv->accepting)
		evconnlistener_enable(srv->listener);
}

/* A pause is over: accepting again. A whole period without a failed
 * accept since the last resume: the episode is over. */
static void
server_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval calm = { 0,
	    SERVER_STARVED_RETRY_MS * 1000 };
	struct server *srv = arg;

	(void)fd;
	(void)what;
	if (srv->fd_starved) {
		server_resume(srv);
		evtimer_add(srv->retry_ev, &calm);
		return;
	}
	log_notice("accepting clients again, after %llu ms short of "
	    "descriptors (%u accepts paused)", (unsigned long long)
	    (timefmt_mono_ms() - srv->starved_since_ms), srv->starved_tries);
	srv->starved_since_ms = 0;
	srv->starved_tries = 0;
}

/*
 * Out of descriptors (or memory): the connection stays in the backlog, and
 * the listener would report it again at once, for ever. So accepting
 * pauses until a client leaves or SERVER_STARVED_RETRY_MS pass, and the
 * warning comes once per episode, not once per try; its end is told too
 * (server_retry_cb).
 */
static void
server_error_cb(struct evconnlistener *l, void *arg)
{
	static const struct timeval retry = { 0,
	    SERVER_STARVED_RETRY_MS * 1000 };
	struct server *srv = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct rlimit rl;

	if (err != EMFILE && err != ENFILE && err != ENOBUFS &&
	    err != ENOMEM) {
		log_warnx("accept: %s", strerror(err));
		return;
	}
	evconnlistener_disable(l);
	srv->fd_starved = true;
	srv->starved_tries++;
	if (evtimer_add(srv->retry_ev, &retry) != 0)
		log_warnx("accept: cannot arm the retry timer; accepting "
		    "again when a client leaves");
	if (srv->starved_since_ms != 0)
		return;
	srv->starved_since_ms = timefmt_mono_ms();
	if (err == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0)
		log_warnx("accept: %s (%u clients, descriptor limit %llu): "
		    "pausing new connections until descriptors free up",
		    strerror(err), conn_count(srv->td),
		    (unsigned long long)rl.rlim_cur);
	else
		log_warnx("accept: %s (%u clients): pausing new connections "
		    "until resources free up", strerror(err),
		    conn_count(srv->td));
}

static void
server_conn_closed_cb(void *arg)
{
	struct server *srv = arg;

	if (srv->draining && conn_count(srv->td) == 0) {
		event_base_loopexit(srv->td->base, NULL);
		return;
	}
	server_resume(srv);
}

int
server_bind_unix(const struct config *cfg, const char *path, char **cause)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd;

	if (server_address(path, &sun, cause) != 0)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) < 0)
		goto fail;
	/* Nobody may connect before the mode and group are right. */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		umask(old);
		goto fail;
	}
	umask(old);
	if (cfg->has_socket_group && chown(path, (uid_t)-1,
	    cfg->socket_gid) != 0)
		goto fail_bound;
	if (chmod(path, cfg->socket_mode) != 0)
		goto fail_bound;
	if (listen(fd, SOMAXCONN) != 0)
		goto fail_bound;
	return fd;
fail_bound:
	unlink(path);
fail:
	if (asprintf(cause, "%s: %s", path, strerror(errno)) < 0)
		*cause = NULL;
	if (fd >= 0)
		close(fd);
	return -1;
}

int
server_activated(int *fd, char **path, char **cause)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof sun;
	int n;

	/* Unset: the workers and the jobs must not take them for theirs. */
	if ((n = sd_listen_fds(1)) <= 0) {
		if (n < 0 && asprintf(cause, "socket activation: %s",
		    strerror(-n)) < 0)
			*cause = NULL;
		return n < 0 ? -1 : 0;
	}
	if (n != 1) {
		if (asprintf(cause, "socket activation handed %d sockets; "
		    "triage.socket must pass exactly one (ListenStream= once)",
		    n) < 0)
			*cause = NULL;
		return -1;
	}
	*fd = SD_LISTEN_FDS_START;
	if (sd_is_socket_unix(*fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
		if (asprintf(cause, "socket activation handed fd %d, which is "
		    "not a listening Unix stream socket (ListenStream= with a "
		    "path, Accept=no)", *fd) < 0)
			*cause = NULL;
		return -1;
	}
	memset(&sun, 0, sizeof sun);
	if (getsockname(*fd, (struct sockaddr *)&sun, &len) != 0 ||
	    len <= offsetof(struct sockaddr_un, sun_path) ||
	    sun.sun_path[0] == '\0')
		*path = strdup("(socket from systemd)");
	else
		*path = strndup(sun.sun_path, len -
		    offsetof(struct sockaddr_un, sun_path));
	if (*path == NULL || evutil_make_socket_nonblocking(*fd) != 0 ||
	    evutil_make_socket_closeonexec(*fd) != 0) {
		if (asprintf(cause, "socket activation: cannot take fd %d",
		    *fd) < 0)
			*cause = NULL;
		return -1;
	}
	return 1;
}

struct server *
server_open(struct triaged *td, const char *path, int fd, char **cause)
{
	struct server *srv;

	if ((srv = calloc(1, sizeof *srv)) == NULL ||
	    (fd < 0 && (srv->path = strdup(path)) == NULL)) {
		free(srv);
		*cause = strdup("out of memory");
		return NULL;
	}
	srv->td = td;
	if ((srv->retry_ev = evtimer_new(td->base, server_retry_cb, srv))
	    == NULL) {
		free(srv->path);
		free(srv);
		*cause = strdup("out of memory");
		return NULL;
	}
	if (fd < 0 && (fd = server_bind_unix(td->cfg, path, cause)) < 0) {
		event_free(srv->retry_ev);
		free(srv->path);
		free(srv);
		return NULL;
	}
	/* Backlog 0: the socket already listens with SOMAXCONN, and any
	 * other value makes libevent call listen() again with it (-1 means
	 * 128), which refuses bursts of non-blocking connects. */
	srv->listener = evconnlistener_new(td->base, server_accept_cb, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (srv->listener == NULL) {
		close(fd);
		if (srv->path != NULL)
			unlink(srv->path);
		event_free(srv->retry_ev);
		free(srv->path);
		free(srv);
		*cause = strdup("cannot listen: out of memory");
		return NULL;
	}
	evconnlistener_set_error_cb(srv->listener, server_error_cb);
	conn_set_closed_cb(srv->td, server_conn_closed_cb, srv);
	srv->accepting = true;
	return srv;
}

void
server_stop_accepting(struct server *srv)
{
	if (srv == NULL || !srv->accepting)
		return;
	srv->accepting = false;
	evtimer_del(srv->retry_ev);
	evconnlistener_free(srv->listener);
	srv->listener = NULL;
	/* The path goes now, so a new daemon can start beside our last
	 * clients; nobody can connect to it any more anyway. A socket from
	 * systemd stays: it starts the next daemon on the next connection. */
	if (srv->path != NULL)
		unlink(srv->path);
}

static void
server_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;

	(void)fd;
	(void)what;
	log_warnx("some clients did not read their last replies in time");
	event_base_loopexit(srv->td->base, NULL);
}

void
server_drain(struct server *srv)
{
	struct timeval tv = { SERVER_DRAIN_MS / 1000,
	    (SERVER_DRAIN_MS % 1000) * 1000 };
	struct conn *conn, *next;

	if (srv->draining)
		return;
	server_stop_accepting(srv);
	srv->draining = true;
	if (conn_count(srv->td) == 0) {
		event_base_loopexit(srv->td->base, NULL);
		return;
	}
	if ((srv->drain_ev = evtimer_new(srv->td->base, server_drain_cb,
	    srv)) == NULL || evtimer_add(srv->drain_ev, &tv) != 0)
		event_base_loopexit(srv->td->base, &tv);
	for (conn = conn_first(srv->td); conn != NULL; conn = next) {
		next = conn_next(conn);
		conn_finish(conn);
	}
}

void
server_close(struct server *srv)
{
	struct conn *conn;

	if (srv == NULL)
		return;
	server_stop_accepting(srv);
	conn_set_closed_cb(srv->td, NULL, NULL);
	while ((conn = conn_first(srv->td)) != NULL)
		conn_close(conn);
	if (srv->drain_ev != NULL)
		event_free(srv->drain_ev);
	event_free(srv->retry_ev);
	free(srv->path);
	free(srv);
}
