/* envelope.c - the JSON-RPC 2.0 envelope of every message the daemon
 * writes: results, errors, notifications, and its own requests. */
#include <stdint.h>

#include <jansson.h>

#include "envelope.h"
#include "jsonw.h"

#define ENVELOPE_VERSION "2.0"
/* envelope_result's object as dumped, before and after its id. */
#define ENVELOPE_ID "{\"jsonrpc\":\"" ENVELOPE_VERSION "\",\"id\":"
#define ENVELOPE_RESULT ",\"result\":"

static json_t *
envelope_reply(json_t *id, const char *key, json_t *value)
{
	return json_pack("{ss sO so}", "jsonrpc", ENVELOPE_VERSION,
	    "id", id != NULL ? id : json_null(), key, value);
}

json_t *
envelope_result(json_t *id, json_t *result)
{
	return envelope_reply(id, "result", result);
}

json_t *
envelope_error(json_t *id, json_t *error)
{
	return envelope_reply(id, "error", error);
}

json_t *
envelope_notification(const char *method, json_t *params)
{
	return json_pack("{ss ss so}", "jsonrpc", ENVELOPE_VERSION,
	    "method", method, "params", params);
}

json_t *
envelope_request(uint64_t id, const char *method, json_t *params)
{
	return json_pack("{s:s,s:I,s:s,s:o?}", "jsonrpc", ENVELOPE_VERSION,
	    "id", (json_int_t)id, "method", method, "params", params);
}

void
envelope_result_open(struct jsonw *w, const json_t *id)
{
	jsonw_raw(w, ENVELOPE_ID, sizeof ENVELOPE_ID - 1);
	/* An integer as jansson's dump writes it, without the dump. */
	if (id == NULL)
		jsonw_null(w);
	else if (json_is_integer(id))
		jsonw_int(w, json_integer_value(id));
	else
		jsonw_json(w, id);
	jsonw_raw(w, ENVELOPE_RESULT, sizeof ENVELOPE_RESULT - 1);
}
