/* http-api.c - /api/jobs and /api/priorities: each request becomes the
 * JSON-RPC call a client would make, and its reply the HTTP answer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http-private.h"
#include "http-rpc.h"
#include "log.h"
#include "rpc-codes.h"

/* An HTTP request waiting for its call's reply. */
struct http_api_call {
	struct http *h;
	struct evhttp_request *req;
	uint64_t id;
};

static int
http_api_status(int code)
{
	switch (code) {
	case RPC_NO_SUCH_JOB:
	case RPC_METHOD_NOT_FOUND:
		return 404;
	case RPC_PERMISSION_DENIED:
		return 403;
	case RPC_WRONG_STATE:
		return 409;
	case RPC_QUEUE_FULL:
		return 429;
	case RPC_SHUTTING_DOWN:
		return 503;
	case RPC_INVALID_PARAMS:
	case RPC_INVALID_REQUEST:
	case RPC_CONFIG_REJECTED:
		return 400;
	default:
		return 500;
	}
}

/* The client went away first: nobody waits for the reply. */
static void
http_api_gone_cb(void *arg)
{
	struct http_api_call *c = arg;

	http_request_orphaned(c->req);
	http_rpc_forget(c->h->rpc, c->id);
	free(c);
}

static void
http_api_reply_cb(json_t *result, json_t *error, void *arg)
{
	struct http_api_call *c = arg;
	json_t *code, *msg;

	http_conn_watch(c->h, c->req, NULL, NULL);
	if (result != NULL)
		http_reply_json(c->req, json_incref(result));
	else {
		code = json_object_get(error, "code");
		msg = json_object_get(error, "message");
		http_error(c->req, http_api_status((int)json_integer_value(
		    code)), (int)json_integer_value(code), "%s",
		    json_is_string(msg) ? json_string_value(msg) : "failed");
	}
	free(c);
}

/* Sends method(params) for req; the reply answers it. */
static void
http_api_call(struct http *h, struct evhttp_request *req, const char *method,
    json_t *params)
{
	struct http_api_call *c;

	if ((c = calloc(1, sizeof *c)) == NULL) {
		json_decref(params);
		http_error(req, 500, RPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	c->h = h;
	c->req = req;
	c->id = http_rpc_call(h->rpc, method, params, http_api_reply_cb, c);
	if (evhttp_request_get_command(req) == EVHTTP_REQ_POST)
		http_log_peer(req, evhttp_request_get_uri(req));
	if (c->id == 0) {
		free(c);
		http_error(req, 500, RPC_INTERNAL_ERROR, "the daemon could not "
		    "be asked (out of memory or descriptors)");
		return;
	}
	http_conn_watch(h, req, http_api_gone_cb, c);
}

/* A whole decimal number, and only that. */
static int
http_api_int(const char *s, json_int_t *out)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(s, &end, 10);
	if (s[0] == '\0' || *end != '\0' || errno != 0)
		return -1;
	*out = n;
	return 0;
}

/* Query parameters copied into params as the method takes them: names in
 * ints are numbers, "state" a list split on commas, "held" a boolean, the
 * rest strings. -1 after answering 400 for a bad one or an unknown one. */
static int
http_api_params(struct evhttp_request *req, const char *const *allowed,
    json_t *params)
{
	const char *query = evhttp_uri_get_query(
	    evhttp_request_get_evhttp_uri(req));
	struct evkeyvalq kv;
	struct evkeyval *p;
	json_int_t n;
	json_t *v, *states;
	char *copy, *tok, *save;
	size_t i;
	int rc = 0;

	TAILQ_INIT(&kv);
	if (query != NULL && evhttp_parse_query_str(query, &kv) != 0) {
		http_error(req, 400, RPC_INVALID_PARAMS, "a query string that "
		    "does not parse");
		return -1;
	}
	TAILQ_FOREACH(p, &kv, next) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(allowed[i], p->key) == 0)
				break;
		if (allowed[i] == NULL) {
			http_error(req, 400, RPC_INVALID_PARAMS, "%s: unknown "
			    "query parameter", p->key);
			rc = -1;
			break;
		}
		if (strcmp(p->key, "state") == 0) {
			states = json_array();
			copy = strdup(p->value);
			for (tok = copy ? strtok_r(copy, ",", &save) : NULL;
			    tok != NULL; tok = strtok_r(NULL, ",", &save))
				json_array_append_new(states, json_string(tok));
			free(copy);
			v = states;
		} else if (strcmp(p->key, "held") == 0) {
			if (strcmp(p->value, "true") != 0 &&
			    strcmp(p->value, "false") != 0) {
				http_error(req, 400, RPC_INVALID_PARAMS,
				    "held: expected true or false");
				rc = -1;
				break;
			}
			v = json_boolean(strcmp(p->value, "true") == 0);
		} else if (strcmp(p->key, "limit") == 0 ||
		    strcmp(p->key, "after_id") == 0 ||
		    strcmp(p->key, "offset") == 0) {
			if (http_api_int(p->value, &n) != 0) {
				http_error(req, 400, RPC_INVALID_PARAMS,
				    "%s: expected a whole number, not \"%s\"",
				    p->key, p->value);
				rc = -1;
				break;
			}
			v = json_integer(n);
		} else
			v = json_string(p->value);
		if (v == NULL || json_object_set_new(params, p->key, v) != 0) {
			http_error(req, 500, RPC_INTERNAL_ERROR,
			    "out of memory");
			rc = -1;
			break;
		}
	}
	evhttp_clear_headers(&kv);
	return rc;
}

/* The id of "/api/jobs/ID..." and what follows it in *rest. */
static int
http_api_job_id(const char *p, json_int_t *id, const char **rest)
{
	char *end;
	long long n;

	if (*p < '1' || *p > '9')
		return -1;
	errno = 0;
	n = strtoll(p, &end, 10);
	if (errno != 0 || (*end != '\0' && *end != '/'))
		return -1;
	*id = n;
	*rest = end;
	return 0;
}

static void
http_api_jobs(struct http *h, struct evhttp_request *req, const char *p)
{
	static const char *const list_params[] = { "state", "priority",
	    "limit", "after_id", "held", "name", NULL };
	static const char *const output_params[] = { "stream", "offset",
	    "limit", NULL };
	static const char *const none[] = { NULL };
	static const char *const actions[] = { "cancel", "hold", "release",
	    "retry", "freeze", "thaw", NULL };
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const char *rest;
	json_int_t id;
	json_t *params;
	size_t i;

	if ((params = json_object()) == NULL) {
		http_error(req, 500, RPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	if (*p == '\0') {
		if (cmd != EVHTTP_REQ_GET)
			goto not_allowed;
		if (http_api_params(req, list_params, params) != 0)
			goto done;
		http_api_call(h, req, "list", params);
		return;
	}
	if (*p != '/' || http_api_job_id(p + 1, &id, &rest) != 0)
		goto not_found;
	json_object_set_new(params, "id", json_integer(id));
	if (*rest == '\0' || strcmp(rest, "/output") == 0) {
		if (cmd != EVHTTP_REQ_GET)
			goto not_allowed;
		if (http_api_params(req, *rest == '\0' ? none : output_params,
		    params) != 0)
			goto done;
		if (*rest != '\0' && json_object_get(params, "stream") == NULL)
			json_object_set_new(params, "stream",
			    json_string("stdout"));
		http_api_call(h, req, *rest == '\0' ? "get" : "output", params);
		return;
	}
	for (i = 0; actions[i] != NULL; i++)
		if (rest[0] == '/' && strcmp(rest + 1, actions[i]) == 0)
			break;
	if (actions[i] == NULL)
		goto not_found;
	if (cmd != EVHTTP_REQ_POST)
		goto not_allowed;
	http_api_call(h, req, actions[i], params);
	return;
not_allowed:
	http_error(req, 405, 0, "%s does not take %s", evhttp_request_get_uri(
	    req), cmd == EVHTTP_REQ_POST ? "POST" : "GET");
	goto done;
not_found:
	http_error(req, 404, 0, "no such page: %s",
	    evhttp_request_get_uri(req));
done:
	json_decref(params);
}

/* /api/priorities/NAME/pause and /resume. */
static void
http_api_priorities(struct http *h, struct evhttp_request *req,
    const char *p)
{
	const char *slash;
	char name[64];
	size_t len;
	bool pause;

	if (*p != '/' || (slash = strchr(p + 1, '/')) == NULL ||
	    (len = (size_t)(slash - p - 1)) == 0 || len >= sizeof name ||
	    (strcmp(slash, "/pause") != 0 && strcmp(slash, "/resume") != 0)) {
		http_error(req, 404, 0, "no such page: %s",
		    evhttp_request_get_uri(req));
		return;
	}
	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		http_error(req, 405, 0, "%s takes POST",
		    evhttp_request_get_uri(req));
		return;
	}
	memcpy(name, p + 1, len);
	name[len] = '\0';
	pause = strcmp(slash, "/pause") == 0;
	http_api_call(h, req, pause ? "pause" : "resume",
	    json_pack("{s:s}", "priority", name));
}

void
http_api_route(struct http *h, struct evhttp_request *req, const char *path)
{
	if (strncmp(path, "/api/jobs", 9) == 0)
		http_api_jobs(h, req, path + 9);
	else if (strncmp(path, "/api/priorities", 15) == 0)
		http_api_priorities(h, req, path + 15);
	else
		http_error(req, 404, 0, "no such page: %s", path);
}
