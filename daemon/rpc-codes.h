/* rpc-codes.h - the JSON-RPC error codes of protocol.md, apart so that the
 * pure decoder (rpc-decode.c) needs nothing else of rpc.h. */
#ifndef TRIAGED_RPC_CODES_H
#define TRIAGED_RPC_CODES_H

#define RPC_PARSE_ERROR		-32700
#define RPC_INVALID_REQUEST	-32600
#define RPC_METHOD_NOT_FOUND	-32601
#define RPC_INVALID_PARAMS	-32602
#define RPC_INTERNAL_ERROR	-32603
#define RPC_NO_SUCH_JOB		-32001
#define RPC_PERMISSION_DENIED	-32002
#define RPC_QUEUE_FULL		-32003
#define RPC_SHUTTING_DOWN	-32004
#define RPC_WRONG_STATE		-32005
#define RPC_CONFIG_REJECTED	-32006

#endif
