/* envelope.h - the JSON-RPC 2.0 envelope of every message the daemon
 * writes: results, errors, notifications, and its own requests. */
#ifndef TRIAGED_ENVELOPE_H
#define TRIAGED_ENVELOPE_H

#include <stdint.h>

#include <jansson.h>

struct jsonw;

/*
 * {"jsonrpc":"2.0","id":id,"result":result} and the same with "error":
 * id borrowed (NULL: null), result and error stolen. A new object, or
 * NULL when out of memory (or when result or error is NULL).
 */
json_t *envelope_result(json_t *id, json_t *result);
json_t *envelope_error(json_t *id, json_t *error);
/* {"jsonrpc":"2.0","method":method,"params":params}, params stolen; NULL
 * when out of memory (or params is NULL). */
json_t *envelope_notification(const char *method, json_t *params);
/* {"jsonrpc":"2.0","id":id,"method":method,"params":params}, params
 * stolen and left out when NULL; NULL when out of memory. */
json_t *envelope_request(uint64_t id, const char *method, json_t *params);

/*
 * A result's envelope as text, around a result already written as text:
 * envelope_result_open writes what comes before it to w, the bytes the
 * daemon's dump of envelope_result's object has there; ENVELOPE_CLOSE
 * comes after it.
 */
void envelope_result_open(struct jsonw *w, const json_t *id);
#define ENVELOPE_CLOSE "}"

#endif
