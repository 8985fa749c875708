/* rpc.c - JSON-RPC 2.0 over a connection's lines: decoding, checking against
 * the method's descriptor, batches, and replies that may come later. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "method.h"
#include "rpc.h"

/* protocol.md: nesting deeper than this is a parse error. */
#define RPC_MAX_DEPTH 64

/* The replies of one batch, sent together once the last is in. */
struct rpc_batch {
	struct conn *conn;
	json_t *replies;
	size_t outstanding;
};

struct triaged *
rpc_daemon(const struct rpc_req *req)
{
	return conn_daemon(req->conn);
}

/* The message is one line for people, whatever a client's input held. */
static json_t *
rpc_error_object(int code, const char *fmt, va_list ap)
{
	char msg[1024], *p;

	vsnprintf(msg, sizeof msg, fmt, ap);
	for (p = msg; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return json_pack("{si ss s{}}", "code", code, "message", msg, "data");
}

static json_t *
rpc_envelope(json_t *id, const char *key, json_t *value)
{
	return json_pack("{ss sO so}", "jsonrpc", "2.0",
	    "id", id != NULL ? id : json_null(), key, value);
}

void
rpc_send_error(struct conn *conn, json_t *id, int code, const char *fmt, ...)
{
	json_t *err, *msg;
	va_list ap;

	va_start(ap, fmt);
	err = rpc_error_object(code, fmt, ap);
	va_end(ap);
	if (err == NULL || (msg = rpc_envelope(id, "error", err)) == NULL)
		return;
	conn_send(conn, msg);
	json_decref(msg);
}

static void
rpc_batch_done(struct rpc_batch *batch)
{
	if (--batch->outstanding > 0)
		return;
	/* A batch of notifications only gets no reply at all. */
	if (json_array_size(batch->replies) > 0 && conn_alive(batch->conn))
		conn_send(batch->conn, batch->replies);
	json_decref(batch->replies);
	conn_unref(batch->conn);
	free(batch);
}

static void
rpc_req_free(struct rpc_req *req)
{
	if (req->withdraw_cb != NULL)
		conn_remove_pending(req->conn, req);
	if (req->batch != NULL)
		rpc_batch_done(req->batch);
	conn_unref(req->conn);
	json_decref(req->id);
	free(req);
}

/* Sends (or, in a batch, keeps) the reply msg, stolen; frees req. */
static void
rpc_finish(struct rpc_req *req, json_t *msg)
{
	if (msg != NULL && req->id != NULL) {
		if (req->batch != NULL)
			json_array_append(req->batch->replies, msg);
		else
			conn_send(req->conn, msg);
	}
	json_decref(msg);
	rpc_req_free(req);
}

void
rpc_reply(struct rpc_req *req, json_t *result)
{
	if (result == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	rpc_finish(req, rpc_envelope(req->id, "result", result));
}

void
rpc_error(struct rpc_req *req, int code, const char *field, const char *fmt,
    ...)
{
	json_t *err;
	va_list ap;

	va_start(ap, fmt);
	err = rpc_error_object(code, fmt, ap);
	va_end(ap);
	if (err != NULL && field != NULL)
		json_object_set_new(json_object_get(err, "data"), "field",
		    json_string(field));
	rpc_finish(req, err != NULL ? rpc_envelope(req->id, "error", err) :
	    NULL);
}

void
rpc_defer(struct rpc_req *req, rpc_withdraw_cb cb, void *arg)
{
	req->withdraw_cb = cb;
	req->withdraw_arg = arg;
	conn_add_pending(req->conn, req);
}

void
rpc_withdraw(struct rpc_req *req)
{
	req->withdraw_cb(req, req->withdraw_arg);
	rpc_finish(req, NULL);
}

/*
 * jansson nests as deep as it is asked to; the protocol stops at 64. Counts
 * brackets outside strings; only the depth is judged here, jansson judges
 * the rest.
 */
static bool
rpc_too_deep(const char *s, size_t len)
{
	bool in_string = false;
	int depth = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (in_string) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_string = false;
		} else if (s[i] == '"')
			in_string = true;
		else if (s[i] == '[' || s[i] == '{') {
			if (++depth > RPC_MAX_DEPTH)
				return true;
		} else if (s[i] == ']' || s[i] == '}')
			depth--;
	}
	return false;
}

static const char *
rpc_type_name(unsigned types)
{
	switch (types) {
	case PARAM_STRING:
		return "a string";
	case PARAM_INTEGER:
		return "an integer";
	case PARAM_NUMBER:
		return "a number";
	case PARAM_BOOLEAN:
		return "a boolean";
	case PARAM_ARRAY:
		return "an array";
	case PARAM_OBJECT:
		return "an object";
	default:
		return "of another type";
	}
}

/* Every key known, every type right, every required param there. */
static bool
rpc_check_params(struct rpc_req *req, const struct method *m, json_t *params)
{
	const struct method_param *p;
	const char *key;
	json_t *value;

	json_object_foreach(params, key, value) {
		for (p = m->params; p->name != NULL; p++)
			if (strcmp(p->name, key) == 0)
				break;
		if (p->name == NULL) {
			rpc_error(req, RPC_INVALID_PARAMS, key,
			    "%s has no param \"%s\"", m->name, key);
			return false;
		}
		if (!((1u << json_typeof(value)) & p->types)) {
			rpc_error(req, RPC_INVALID_PARAMS, key,
			    "%s: \"%s\" must be %s", m->name, key,
			    p->type_name ? p->type_name : rpc_type_name(p->types));
			return false;
		}
	}
	for (p = m->params; p->name != NULL; p++)
		if (p->required && json_object_get(params, p->name) == NULL) {
			rpc_error(req, RPC_INVALID_PARAMS, p->name,
			    "%s needs \"%s\"", m->name, p->name);
			return false;
		}
	return true;
}

static bool
rpc_valid_id(const json_t *id)
{
	return json_is_string(id) || json_is_number(id) || json_is_null(id);
}

static void
rpc_handle_one(struct conn *conn, json_t *msg, struct rpc_batch *batch)
{
	const struct method *m;
	struct rpc_req *req;
	json_t *id, *method, *params, *version;
	json_t *empty = NULL;

	if ((req = calloc(1, sizeof *req)) == NULL) {
		rpc_send_error(conn, NULL, RPC_INTERNAL_ERROR, "out of memory");
		if (batch != NULL)
			rpc_batch_done(batch);
		return;
	}
	req->conn = conn;
	conn_ref(conn);
	req->batch = batch;

	if (!json_is_object(msg)) {
		req->id = json_null();
		rpc_error(req, RPC_INVALID_REQUEST, NULL,
		    "a request must be a JSON object");
		return;
	}
	id = json_object_get(msg, "id");
	if (id != NULL)
		req->id = rpc_valid_id(id) ? json_incref(id) : json_null();
	version = json_object_get(msg, "jsonrpc");
	method = json_object_get(msg, "method");
	params = json_object_get(msg, "params");
	if (id != NULL && !rpc_valid_id(id)) {
		rpc_error(req, RPC_INVALID_REQUEST, "id",
		    "\"id\" must be a string, a number or null");
		return;
	}
	if (!json_is_string(version) ||
	    strcmp(json_string_value(version), "2.0") != 0) {
		if (req->id == NULL)
			req->id = json_null();
		rpc_error(req, RPC_INVALID_REQUEST, "jsonrpc",
		    "\"jsonrpc\" must be \"2.0\"");
		return;
	}
	if (!json_is_string(method)) {
		if (req->id == NULL)
			req->id = json_null();
		rpc_error(req, RPC_INVALID_REQUEST, "method",
		    "\"method\" must be a string");
		return;
	}
	if ((m = method_find(json_string_value(method))) == NULL) {
		rpc_error(req, RPC_METHOD_NOT_FOUND, NULL,
		    "unknown method \"%s\"", json_string_value(method));
		return;
	}
	if (params != NULL && !json_is_object(params)) {
		rpc_error(req, RPC_INVALID_PARAMS, "params",
		    "params must be an object of named params");
		return;
	}
	if ((m->flags & METHOD_ADMIN) && !conn_is_admin(conn)) {
		rpc_error(req, RPC_PERMISSION_DENIED, NULL,
		    "%s is for admins only (root, the daemon's user, or "
		    "admin_group)", m->name);
		return;
	}
	if (params == NULL && (params = empty = json_object()) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	if (rpc_check_params(req, m, params))
		m->handler(req, params);
	json_decref(empty);
}

void
rpc_handle_line(struct conn *conn, const char *line, size_t len)
{
	struct rpc_batch *batch;
	json_error_t jerr;
	json_t *msg;
	size_t i, n;

	for (i = 0; i < len && strchr(" \t\r", line[i]) != NULL; i++)
		;
	if (i == len)
		return;		/* blank lines are ignored */
	if (rpc_too_deep(line, len)) {
		rpc_send_error(conn, NULL, RPC_PARSE_ERROR,
		    "parse error: nested deeper than %d", RPC_MAX_DEPTH);
		return;
	}
	if ((msg = json_loadb(line, len, JSON_DECODE_ANY, &jerr)) == NULL) {
		rpc_send_error(conn, NULL, RPC_PARSE_ERROR,
		    "parse error: %s at column %d", jerr.text, jerr.column);
		return;
	}
	if (!json_is_array(msg)) {
		rpc_handle_one(conn, msg, NULL);
		json_decref(msg);
		return;
	}
	if ((n = json_array_size(msg)) == 0) {
		rpc_send_error(conn, NULL, RPC_INVALID_REQUEST,
		    "an empty batch is not a request");
		json_decref(msg);
		return;
	}
	if ((batch = calloc(1, sizeof *batch)) == NULL ||
	    (batch->replies = json_array()) == NULL) {
		free(batch);
		rpc_send_error(conn, NULL, RPC_INTERNAL_ERROR, "out of memory");
		json_decref(msg);
		return;
	}
	batch->conn = conn;
	conn_ref(conn);
	/* One extra count, so the batch is not sent before every member
	 * has at least started. */
	batch->outstanding = n + 1;
	for (i = 0; i < n; i++)
		rpc_handle_one(conn, json_array_get(msg, i), batch);
	rpc_batch_done(batch);
	json_decref(msg);
}
