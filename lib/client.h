/* client.h - the C client library of triaged's socket: connect, JSON-RPC
 * calls (one at a time or pipelined), and watch notifications. */
#ifndef TRIAGE_CLIENT_H
#define TRIAGE_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct caller_env;
struct client;

/*
 * Not a JSON-RPC code: the connection failed, closed, or timed out, or the
 * daemon sent a line that is not a JSON-RPC message. errno then tells which:
 * ETIMEDOUT (timeout_ms passed; nothing is lost, a later call reads on),
 * ECONNRESET or EPIPE (the daemon closed the connection), EPROTO (a
 * malformed or unexpected message, which is dropped), ENOMEM, or what
 * recv/send said. After a JSON-RPC error errno is 0.
 */
#define CLIENT_ERR_TRANSPORT 1

/* The last choice of client_socket_path(): the system daemon's socket. */
#define CLIENT_SOCKET_SYSTEM "/run/triage/triage.sock"

struct client_error {
	int code;		/* the JSON-RPC error code, or CLIENT_ERR_TRANSPORT */
	char message[512];	/* one line, for people */
	char field[64];		/* error.data.field, "" when none */
	char errors[4096];	/* error.data.errors, one line each, joined
				 * by '\n' (cut short when longer); "" when
				 * none */
};

/*
 * Connects to the daemon's socket at path. Returns the client, or NULL with
 * *cause set (allocated) to one line naming the path and why, e.g.
 * "cannot connect to /run/triage/triage.sock: No such file or directory
 * (is triaged running?)".
 */
struct client *client_connect(const char *path, char **cause);
void client_free(struct client *c);

/* What a reconnecting client tells its caller, who decides what to say. */
enum client_outage {
	CLIENT_OUTAGE_LOST,	/* the connection broke; reconnecting */
	CLIENT_OUTAGE_BACK,	/* connected again, watches renewed */
};
typedef void (*client_outage_cb)(const char *path, enum client_outage what,
    void *arg);

/* The bound a tool gives client_reconnect() unless told otherwise: a
 * restart or an upgrade of the daemon takes seconds, not minutes. */
#define CLIENT_RECONNECT_DEFAULT_MS (5 * 60 * 1000)
/* Between attempts to reach the daemon: the first wait, doubled each
 * time up to the last. */
#define CLIENT_RECONNECT_FIRST_MS 50
#define CLIENT_RECONNECT_MAX_MS 2000

/*
 * Makes c survive a restart of the daemon: when the connection breaks
 * (ECONNRESET, EPIPE) during client_call() of a read-side method (get,
 * wait, output, list, stats, watch) or client_notification(), it connects
 * to the same path again, as long as the daemon is away (ECONNREFUSED,
 * ENOENT, EAGAIN), waiting CLIENT_RECONNECT_FIRST_MS doubling to
 * CLIENT_RECONNECT_MAX_MS between attempts, renews every watch made with
 * client_call() with the same params, and sends the call again. Any other
 * method fails as before: a submit or a cancel whose answer was lost may
 * have been done, and doing it twice is not the caller's wish. Pipelined
 * requests (client_send) are not sent again either. give_up_ms bounds one
 * outage (0, the default: never reconnect); past it the call fails with
 * the transport error. cb, if not NULL, hears of each outage once, as it
 * begins and once it is over.
 */
void client_reconnect(struct client *c, int give_up_ms, client_outage_cb cb,
    void *arg);

/*
 * Calls method with params (the reference is stolen; NULL sends none) and
 * waits up to timeout_ms (-1: for ever) for its response. Responses to other
 * ids are kept for client_recv(), notifications for client_notification().
 * Returns the result (a new reference), or NULL with *err filled in. An
 * error response with id null (the daemon could not read the request, e.g.
 * a line over max_request) counts as this call's.
 */
json_t *client_call(struct client *c, const char *method, json_t *params,
    int timeout_ms, struct client_error *err);

/* Pipelining: sends a request and returns its id, or -1 with *err set. */
int64_t client_send(struct client *c, const char *method, json_t *params,
    struct client_error *err);
/*
 * Waits for the next response to any request sent (kept ones first) and
 * sets *id to its id. Returns its result (a new reference), or NULL with
 * *err filled in: a JSON-RPC error (*id set, or -1 for an error with id
 * null) or a transport one (*id -1).
 */
json_t *client_recv(struct client *c, int64_t *id, int timeout_ms,
    struct client_error *err);

/* Waits for the next notification; returns the whole message
 * {"jsonrpc","method","params"} (a new reference), or NULL with *err. */
json_t *client_notification(struct client *c, int timeout_ms,
    struct client_error *err);

/* For tests and tools: sends bytes as they are, and reads the next message
 * of any kind (response, batch, notification) as parsed JSON. */
int client_send_raw(struct client *c, const void *buf, size_t len);
json_t *client_read_message(struct client *c, int timeout_ms,
    struct client_error *err);

/* The connection's socket, for a caller that waits on many clients in
 * poll(2): once it is readable, client_recv() with timeout_ms 0 takes
 * every response that came, until it fails with ETIMEDOUT. Borrowed; a
 * new one after client_reconnect() connected again, -1 after it gave up. */
int client_fd(const struct client *c);

/*
 * The socket path, as protocol.md orders it: flag if not NULL, then
 * env->triage_socket ($TRIAGE_SOCKET), then config_socket if not NULL (the
 * daemon's config key), then $XDG_RUNTIME_DIR/triage/triage.sock
 * (env->xdg_runtime_dir) for a non-root user (env->euid not 0), then
 * CLIENT_SOCKET_SYSTEM. That user's daemon takes the runtime path when the
 * runtime directory exists (and makes triage/ in it); a client takes it
 * only when triage/ exists there, that is when the user runs a daemon of
 * their own, and otherwise reaches the system daemon. An empty variable
 * counts as unset, and a relative $XDG_RUNTIME_DIR is ignored, as the XDG
 * spec says. Allocated; NULL when out of memory.
 */
char *client_socket_path(const char *flag, const char *config_socket,
    const struct caller_env *env, bool for_daemon);

#endif
