/* rpc-decode.h - JSON-RPC 2.0 decoding of a request line and of each
 * request in it, pure (no connection, no daemon): rpc.c's, to be fuzzed. */
#ifndef TRIAGED_RPC_DECODE_H
#define TRIAGED_RPC_DECODE_H

#include <stddef.h>

#include <jansson.h>

/* The protocol's limit on nesting, checked before jansson builds a tree. */
#define RPC_MAX_DEPTH 64

enum rpc_line_kind {
	RPC_LINE_BLANK,		/* ignored: no reply */
	RPC_LINE_ERROR,		/* answered with code, message, id null */
	RPC_LINE_ONE,		/* msg: one request, maybe not valid */
	RPC_LINE_BATCH,		/* msg: a non-empty array of them */
};

struct rpc_line {
	enum rpc_line_kind kind;
	json_t *msg;		/* ONE and BATCH: the caller's to decref */
	int code;		/* ERROR: RPC_PARSE_ERROR or
				 * RPC_INVALID_REQUEST */
	char message[1024];	/* ERROR */
};

/*
 * Decodes one line (its newline removed): blank, malformed (-32700: not
 * JSON, nested deeper than RPC_MAX_DEPTH), a batch over max_batch or empty
 * (-32600), one request or a batch. Fills out; always succeeds, but for
 * ENOMEM, which looks like a parse error.
 */
void rpc_decode_line(const char *line, size_t len, unsigned max_batch,
    struct rpc_line *out);

/* One request of a line, classified. */
struct rpc_call {
	json_t *id;		/* borrowed from msg; NULL: a notification
				 * (but see rpc_decode_request) */
	const char *method;	/* borrowed from msg */
	json_t *params;		/* borrowed; NULL when absent */
	int code;		/* on error: RPC_INVALID_REQUEST */
	const char *field;	/* on error: the member at fault, or NULL */
	const char *message;	/* on error: a constant */
};

/*
 * Checks msg is a JSON-RPC 2.0 request: an object, with "jsonrpc": "2.0",
 * a string "method" and an id that is a string, a number or null when
 * there. 0 with call's id, method and params; or -1 with code, field and
 * message, and id the one to answer with: msg's when valid, else NULL
 * meaning null (an invalid request is answered even without an id).
 */
int rpc_decode_request(json_t *msg, struct rpc_call *call);

#endif
