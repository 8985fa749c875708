/* triage/client.h - libtriage, the C client library of triaged's socket:
 * connect, JSON-RPC calls (one at a time or pipelined), watch notifications. */
#ifndef TRIAGE_CLIENT_H
#define TRIAGE_CLIENT_H

/*
 * Installed as <triage/client.h>; `pkg-config --cflags --libs triage` gives
 * the flags. Every call blocks, for at most its timeout_ms (-1: no bound).
 * One struct triage_client is one connection, for one thread at a time.
 * libtriage(3) is the manual; triage-protocol(7) the methods and their
 * params, which are passed through as JSON (jansson's json_t).
 */

#include <stdint.h>

#include <jansson.h>

/* What the library exports (libtriage.so.0 is built with
 * -fvisibility=hidden and a version script): the functions below only. */
#if defined(__GNUC__) && __GNUC__ >= 4
#define TRIAGE_API __attribute__((visibility("default")))
#else
#define TRIAGE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One connection to triaged; its fields are the library's. */
struct triage_client;

/*
 * Not a JSON-RPC code: the connection failed, closed, or timed out, or the
 * daemon sent a line that is not a JSON-RPC message. errno then tells which:
 * ETIMEDOUT (timeout_ms passed; nothing is lost, a later call reads on),
 * ECONNRESET or EPIPE (the daemon closed the connection), EPROTO (a
 * malformed or unexpected message, which is dropped), ENOMEM, ENOTCONN
 * (a reconnecting client gave up), or what recv/send said. After a
 * JSON-RPC error errno is 0.
 */
#define TRIAGE_ERR_TRANSPORT 1

/* The last choice of triage_client_socket_path(): the system daemon's. */
#define TRIAGE_SOCKET_SYSTEM "/run/triage/triage.sock"

/* Why a call failed. The strings are always NUL-terminated, "" when none. */
struct triage_error {
	int code;		/* the JSON-RPC error code (triage-protocol(7)
				 * ERRORS), or TRIAGE_ERR_TRANSPORT */
	char message[512];	/* one line, for people */
	char field[64];		/* error.data.field: the param at fault */
	char errors[4096];	/* error.data.errors, one line each, joined
				 * by '\n' (cut short when longer) */
};

/* What a reconnecting client tells its caller, who decides what to say. */
enum triage_outage {
	TRIAGE_OUTAGE_LOST,	/* the connection broke; reconnecting */
	TRIAGE_OUTAGE_BACK,	/* connected again, watches renewed */
};
typedef void (*triage_outage_cb)(const char *path, enum triage_outage what,
    void *arg);

/* The bound the triage command gives triage_client_reconnect() unless told
 * otherwise: a restart or an upgrade of the daemon takes seconds. */
#define TRIAGE_RECONNECT_DEFAULT_MS (5 * 60 * 1000)
/* Between attempts to reach the daemon: the first wait, doubled each
 * time up to the last. */
#define TRIAGE_RECONNECT_FIRST_MS 50
#define TRIAGE_RECONNECT_MAX_MS 2000

/*
 * The library's version, "0.1.0": that of the triage release it came with,
 * which may be newer than the header a program was built with (the ABI of
 * libtriage.so.0 only grows). Static; never NULL.
 */
TRIAGE_API const char *triage_client_version(void);

/*
 * The socket path, as triage-protocol(7) orders it: flag if not NULL (a
 * --socket option, say), then $TRIAGE_SOCKET, then, for a user other than
 * root, $XDG_RUNTIME_DIR/triage/triage.sock if that user runs a daemon of
 * their own (the triage/ directory exists), then TRIAGE_SOCKET_SYSTEM. An
 * empty variable counts as unset, and a relative $XDG_RUNTIME_DIR is
 * ignored. Returns the path (the caller's, free(3) it), or NULL with errno
 * ENOMEM.
 */
TRIAGE_API char *triage_client_socket_path(const char *flag);

/*
 * Connects to the daemon's socket at path. Returns the client, to free with
 * triage_client_free(), or NULL with errno set and *cause set (the caller's,
 * free(3) it; NULL when out of memory) to one line naming the path and
 * why, e.g. "cannot connect to /run/triage/triage.sock: No such file or
 * directory (is triaged running?)". errno: what connect(2) said (ENOENT,
 * ECONNREFUSED, EACCES...), ENAMETOOLONG, ENOMEM.
 */
TRIAGE_API struct triage_client *triage_client_connect(const char *path,
    char **cause);

/* Closes the connection and frees c, with what it kept; NULL does nothing. */
TRIAGE_API void triage_client_free(struct triage_client *c);

/*
 * Makes c survive a restart of the daemon: when the connection breaks
 * (ECONNRESET, EPIPE) during triage_client_call() of a read-side method
 * (get, wait, output, list, stats, watch) or triage_client_notification(),
 * it connects to the same path again, as long as the daemon is away
 * (ECONNREFUSED, ENOENT, EAGAIN), waiting TRIAGE_RECONNECT_FIRST_MS doubling
 * to TRIAGE_RECONNECT_MAX_MS between attempts, renews every watch made with
 * triage_client_call() with the same params, and sends the call again. Any
 * other method fails as before: a submit or a cancel whose answer was lost
 * may have been done, and doing it twice is not the caller's wish.
 * Pipelined requests (triage_client_send) are not sent again either.
 * give_up_ms bounds one outage (0, the default: never reconnect); past it
 * the call fails with the transport error. cb, if not NULL, hears of each
 * outage once as it begins and once it is over, with arg; path is borrowed
 * for the call.
 */
TRIAGE_API void triage_client_reconnect(struct triage_client *c,
    int give_up_ms, triage_outage_cb cb, void *arg);

/*
 * Calls method with params (the reference is stolen, even on failure; NULL
 * sends none) and waits up to timeout_ms (-1: for ever) for its response.
 * Responses to other ids are kept for triage_client_recv(), notifications
 * for triage_client_notification(). Returns the result (a new reference:
 * json_decref() it), or NULL with *err filled in (err may be NULL) and
 * errno as TRIAGE_ERR_TRANSPORT says, 0 after a JSON-RPC error. An error
 * response with id null (the daemon could not read the request, e.g. a
 * line over its max_request) counts as this call's.
 */
TRIAGE_API json_t *triage_client_call(struct triage_client *c,
    const char *method, json_t *params, int timeout_ms,
    struct triage_error *err);

/*
 * Pipelining: sends a request (params stolen as by triage_client_call) and
 * returns its id, 1 for the connection's first and counting up, or -1 with
 * *err filled in and errno set; nothing waits for the response.
 */
TRIAGE_API int64_t triage_client_send(struct triage_client *c,
    const char *method, json_t *params, struct triage_error *err);

/*
 * Waits up to timeout_ms for the next response to any request sent (those
 * kept by triage_client_call first) and sets *id to its id. Returns its
 * result (a new reference), or NULL with *err filled in: a JSON-RPC error
 * (*id set, or -1 for an error with id null; errno 0) or a transport one
 * (*id -1). With timeout_ms 0 it takes only what has come (ETIMEDOUT
 * once there is no more).
 */
TRIAGE_API json_t *triage_client_recv(struct triage_client *c, int64_t *id,
    int timeout_ms, struct triage_error *err);

/*
 * Waits up to timeout_ms for the next notification (after a "watch" call:
 * triage-protocol(7)) and returns the whole message, {"jsonrpc", "method",
 * "params"}, a new reference; or NULL with *err filled in and errno set.
 * Responses that come meanwhile are kept for triage_client_recv().
 */
TRIAGE_API json_t *triage_client_notification(struct triage_client *c,
    int timeout_ms, struct triage_error *err);

/*
 * The connection's socket, for a caller that waits on many clients in
 * poll(2): once it is readable, triage_client_recv() with timeout_ms 0
 * takes every response that came, until it fails with ETIMEDOUT. Borrowed
 * (do not close it); a new one after triage_client_reconnect() connected
 * again, -1 after it gave up.
 */
TRIAGE_API int triage_client_fd(const struct triage_client *c);

#ifdef __cplusplus
}
#endif

#endif
