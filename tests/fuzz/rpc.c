/* rpc.c - fuzz target: JSON-RPC decoding of a request line (blank, -32700,
 * -32600, one request or a batch) and the classification of each request. */
#include <stdbool.h>

#include "fuzz.h"
#include "rpc-codes.h"
#include "rpc-decode.h"

static void
fuzz_request(json_t *msg)
{
	struct rpc_call call;

	if (rpc_decode_request(msg, &call) != 0) {
		FUZZ_ASSERT(call.code == RPC_INVALID_REQUEST);
		FUZZ_ASSERT(call.message != NULL && call.message[0] != '\0');
		FUZZ_ASSERT(call.method == NULL);
		return;
	}
	FUZZ_ASSERT(json_is_object(msg));
	FUZZ_ASSERT(call.method != NULL);
	FUZZ_ASSERT(call.id == NULL || json_is_string(call.id) ||
	    json_is_number(call.id) || json_is_null(call.id));
	FUZZ_ASSERT(call.id == json_object_get(msg, "id"));
}

/* Input: max_batch - 1 (one byte), then the line. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	unsigned max_batch = (unsigned)fuzz_u8(&in) + 1;
	struct rpc_line line;
	size_t i;

	rpc_decode_line((const char *)in.p, in.n, max_batch, &line);
	switch (line.kind) {
	case RPC_LINE_BLANK:
		FUZZ_ASSERT(line.msg == NULL);
		break;
	case RPC_LINE_ERROR:
		FUZZ_ASSERT(line.msg == NULL);
		FUZZ_ASSERT(line.code == RPC_PARSE_ERROR ||
		    line.code == RPC_INVALID_REQUEST);
		FUZZ_ASSERT(memchr(line.message, '\0',
		    sizeof line.message) != NULL);
		break;
	case RPC_LINE_ONE:
		FUZZ_ASSERT(line.msg != NULL && !json_is_array(line.msg));
		fuzz_request(line.msg);
		break;
	case RPC_LINE_BATCH:
		FUZZ_ASSERT(json_is_array(line.msg));
		FUZZ_ASSERT(json_array_size(line.msg) > 0 &&
		    json_array_size(line.msg) <= max_batch);
		for (i = 0; i < json_array_size(line.msg); i++)
			fuzz_request(json_array_get(line.msg, i));
		break;
	}
	json_decref(line.msg);
	return 0;
}
