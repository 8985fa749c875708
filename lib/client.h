/* client.h - what lib/client.c and lib/client-socket.c give triage's own
 * programs and tests beside the public API of <triage/client.h>. */
#ifndef TRIAGE_CLIENT_INTERNAL_H
#define TRIAGE_CLIENT_INTERNAL_H

/*
 * None of this is exported by libtriage.so.0 (no TRIAGE_API): the daemon
 * and the tests link these through the internal archive, and the library
 * keeps its ABI to what <triage/client.h> documents.
 */

#include <stdbool.h>
#include <stddef.h>

#include "triage/client.h"

struct caller_env;

/* For tests and tools: sends bytes as they are (0, or -1 with errno), and
 * reads the next message of any kind (response, batch, notification) as
 * parsed JSON (a new reference, or NULL with *err filled in). */
int client_send_raw(struct triage_client *c, const void *buf, size_t len);
json_t *client_read_message(struct triage_client *c, int timeout_ms,
    struct triage_error *err);

/*
 * The socket path, as protocol.md orders it: flag if not NULL, then
 * env->triage_socket ($TRIAGE_SOCKET), then config_socket if not NULL (the
 * daemon's config key), then $XDG_RUNTIME_DIR/triage/triage.sock
 * (env->xdg_runtime_dir) for a non-root user (env->euid not 0), then
 * TRIAGE_SOCKET_SYSTEM. That user's daemon takes the runtime path when the
 * runtime directory exists (and makes triage/ in it); a client takes it
 * only when triage/ exists there, that is when the user runs a daemon of
 * their own, and otherwise reaches the system daemon. An empty variable
 * counts as unset, and a relative $XDG_RUNTIME_DIR is ignored, as the XDG
 * spec says. Allocated; NULL when out of memory. triage_client_socket_path()
 * is this for a client, with the process's own environment.
 */
char *client_socket_resolve(const char *flag, const char *config_socket,
    const struct caller_env *env, bool for_daemon);

#endif
