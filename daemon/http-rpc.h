/* http-rpc.h - the dashboard's requests as JSON-RPC over a socket pair into
 * the daemon's own rpc layer: the same methods, checks and replies as any
 * client's, with the daemon's own uid (an admin). */
#ifndef TRIAGED_HTTP_RPC_H
#define TRIAGED_HTTP_RPC_H

#include <stdint.h>

#include <jansson.h>

struct http_rpc;
struct triaged;

/* The reply: result or error (the JSON-RPC error object), both borrowed
 * for the call. */
typedef void (*http_rpc_cb)(json_t *result, json_t *error, void *arg);

/* NULL out of memory or descriptors. */
struct http_rpc *http_rpc_open(struct triaged *td);
/* Pending calls are dropped without their callbacks. */
void http_rpc_close(struct http_rpc *r);

/* Calls method with params (stolen; NULL for none); cb runs from the loop
 * with the reply. A call id, or 0 when the call could not be sent (cb
 * never runs). */
uint64_t http_rpc_call(struct http_rpc *r, const char *method,
    json_t *params, http_rpc_cb cb, void *arg);
/* Nobody waits for call id any more: its callback will not run. */
void http_rpc_forget(struct http_rpc *r, uint64_t id);

#endif
