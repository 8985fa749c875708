/* rpc-decode.c - JSON-RPC 2.0 decoding of a request line and of each
 * request in it, pure (no connection, no daemon): rpc.c's, to be fuzzed. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rpc-codes.h"
#include "rpc-decode.h"

/*
 * Before jansson builds anything: false when nesting goes deeper than the
 * protocol's 64; *members is how many elements a top-level array holds
 * (0 when the line is no array). Counts brackets and commas outside
 * strings only; jansson judges the rest.
 */
static bool
rpc_decode_scan(const char *s, size_t len, size_t *members)
{
	bool in_string = false, array = false;
	size_t i, commas = 0;
	int depth = 0;

	for (i = 0; i < len; i++) {
		if (in_string) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_string = false;
		} else if (s[i] == '"')
			in_string = true;
		else if (s[i] == '[' || s[i] == '{') {
			if (depth == 0 && s[i] == '[')
				array = true;
			if (++depth > RPC_MAX_DEPTH)
				return false;
		} else if (s[i] == ']' || s[i] == '}')
			depth--;
		else if (s[i] == ',' && depth == 1)
			commas++;
	}
	*members = array ? commas + 1 : 0;
	return true;
}

void
rpc_decode_line(const char *line, size_t len, unsigned max_batch,
    struct rpc_line *out)
{
	json_error_t jerr;
	size_t i, n;

	out->msg = NULL;
	out->kind = RPC_LINE_ERROR;
	for (i = 0; i < len && strchr(" \t\r", line[i]) != NULL; i++)
		;
	if (i == len) {
		out->kind = RPC_LINE_BLANK;
		return;
	}
	if (!rpc_decode_scan(line, len, &n)) {
		out->code = RPC_PARSE_ERROR;
		snprintf(out->message, sizeof out->message,
		    "parse error: nested deeper than %d", RPC_MAX_DEPTH);
		return;
	}
	if (n > max_batch) {
		out->code = RPC_INVALID_REQUEST;
		snprintf(out->message, sizeof out->message,
		    "a batch of %zu requests is over max_batch (%u)", n,
		    max_batch);
		return;
	}
	if ((out->msg = json_loadb(line, len, JSON_DECODE_ANY, &jerr))
	    == NULL) {
		out->code = RPC_PARSE_ERROR;
		snprintf(out->message, sizeof out->message,
		    "parse error: %s at column %d", jerr.text, jerr.column);
		return;
	}
	if (!json_is_array(out->msg)) {
		out->kind = RPC_LINE_ONE;
		return;
	}
	if (json_array_size(out->msg) == 0) {
		json_decref(out->msg);
		out->msg = NULL;
		out->code = RPC_INVALID_REQUEST;
		snprintf(out->message, sizeof out->message,
		    "an empty batch is not a request");
		return;
	}
	out->kind = RPC_LINE_BATCH;
}

static bool
rpc_decode_valid_id(const json_t *id)
{
	return json_is_string(id) || json_is_number(id) || json_is_null(id);
}

/* Fills call's error; -1. */
static int
rpc_decode_fail(struct rpc_call *call, const char *field, const char *message)
{
	call->code = RPC_INVALID_REQUEST;
	call->field = field;
	call->message = message;
	return -1;
}

int
rpc_decode_request(json_t *msg, struct rpc_call *call)
{
	json_t *id, *version, *method;

	memset(call, 0, sizeof *call);
	if (!json_is_object(msg))
		return rpc_decode_fail(call, NULL,
		    "a request must be a JSON object");
	id = json_object_get(msg, "id");
	if (id != NULL && !rpc_decode_valid_id(id))
		return rpc_decode_fail(call, "id",
		    "\"id\" must be a string, a number or null");
	call->id = id;
	version = json_object_get(msg, "jsonrpc");
	method = json_object_get(msg, "method");
	if (!json_is_string(version) ||
	    strcmp(json_string_value(version), "2.0") != 0)
		return rpc_decode_fail(call, "jsonrpc",
		    "\"jsonrpc\" must be \"2.0\"");
	if (!json_is_string(method))
		return rpc_decode_fail(call, "method",
		    "\"method\" must be a string");
	call->method = json_string_value(method);
	call->params = json_object_get(msg, "params");
	return 0;
}
