/* test-rpc-loop.c - the JSON-RPC layer alone on a bare event_base, over one
 * end of a socket pair: replies byte for byte, batches, notifications,
 * errors, deferred and streamed results, a connection closed under them. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "bare.h"
#include "config.h"
#include "conn.h"
#include "loop.h"
#include "peer.h"
#include "rpc.h"
#include "triaged.h"

#define NLATER	8
#define ECHO_1	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"}\n"

struct fx {
	struct loop loop;	/* first (loop_new) */
	struct triaged td;
	struct peer *peer;
	struct conn *conn;
	int ndispatched;
	char last_method[32];
	struct rpc_req *later[NLATER];	/* deferred by "later" */
	int withdrawn;
	/* "big": a streamed result of big_n integers */
	struct rpc_req *big;
	size_t big_i, big_n;
	struct evbuffer *big_out;
};

static struct fx *
fx_of(struct rpc_req *req)
{
	return (struct fx *)(void *)((char *)rpc_daemon(req) -
	    offsetof(struct fx, td));
}

static void
later_withdraw_cb(struct rpc_req *req, void *arg)
{
	struct fx *fx = arg;
	int i;

	for (i = 0; i < NLATER; i++)
		if (fx->later[i] == req)
			fx->later[i] = NULL;
	fx->withdrawn++;
	if (fx->big == req)
		fx->big = NULL;
}

static void big_room_cb(struct rpc_req *, void *);

/* Writes the next integers of "big", as long as the client keeps up. */
static void
big_more(struct fx *fx)
{
	struct rpc_req *req = fx->big;
	size_t stop;
	json_t *v;

	while (fx->big == req) {
		if (fx->big_i == fx->big_n) {
			evbuffer_add(fx->big_out, "]", 1);
			fx->big = NULL;
			rpc_result_end(req);
			return;
		}
		stop = fx->big_i + 1000 < fx->big_n ? fx->big_i + 1000 :
		    fx->big_n;
		for (; fx->big_i < stop; fx->big_i++) {
			if (fx->big_i > 0)
				evbuffer_add(fx->big_out, ",", 1);
			v = json_integer((json_int_t)fx->big_i);
			assert_int_equal(rpc_result_add_json(fx->big_out, v),
			    0);
			json_decref(v);
		}
		/* The last piece goes with the end: a small result is
		 * never flushed. */
		if (fx->big_i < fx->big_n &&
		    rpc_result_flush(req, big_room_cb, fx))
			return;
	}
}

static void
big_room_cb(struct rpc_req *req, void *arg)
{
	(void)req;
	big_more(arg);
}

/* The methods of the test: echo (its params), text (a result given as
 * text), error, limit, later (answered by the test), big (streamed). */
static void
dispatch(struct rpc_req *req, const char *method, json_t *params)
{
	struct fx *fx = fx_of(req);
	int i;

	fx->ndispatched++;
	snprintf(fx->last_method, sizeof fx->last_method, "%s", method);
	if (strcmp(method, "echo") == 0)
		rpc_reply(req, params != NULL ? json_incref(params) :
		    json_null());
	else if (strcmp(method, "text") == 0)
		rpc_reply_text(req, "[1,\"two\"]", 9);
	else if (strcmp(method, "error") == 0)
		rpc_error(req, RPC_INVALID_PARAMS, "f", "bad\nthing %d", 5);
	else if (strcmp(method, "data") == 0)
		rpc_error_data(req, RPC_WRONG_STATE, json_pack("{si}", "x", 1),
		    "state %s", "wrong");
	else if (strcmp(method, "limit") == 0)
		rpc_limit(req, "max_queued", "%d queued", 3);
	else if (strcmp(method, "later") == 0) {
		for (i = 0; i < NLATER && fx->later[i] != NULL; i++)
			;
		assert_true(i < NLATER);
		fx->later[i] = req;
		rpc_defer(req, later_withdraw_cb, fx);
	} else if (strcmp(method, "big") == 0) {
		assert_null(fx->big);
		fx->big = req;
		fx->big_i = 0;
		fx->big_n = (size_t)json_integer_value(json_object_get(params,
		    "n"));
		rpc_defer(req, later_withdraw_cb, fx);
		assert_non_null(fx->big_out = rpc_result_begin(req));
		evbuffer_add(fx->big_out, "[", 1);
		big_more(fx);
	} else
		rpc_error(req, RPC_METHOD_NOT_FOUND, "method", "no method %s",
		    method);
}

static int
setup(void **state)
{
	struct fx *fx;

	if ((fx = loop_new(sizeof *fx, "test-rpc-loop")) == NULL)
		return -1;
	bare_init(&fx->td, fx->loop.base);
	assert_int_equal(conn_start(&fx->td), 0);
	assert_int_equal(rpc_start(&fx->td, dispatch), 0);
	fx->peer = peer_new(&fx->loop);
	fx->conn = peer_conn(fx->peer, &fx->td);
	assert_int_equal(rpc_attach(fx->conn), 0);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;

	peer_free(fx->peer);
	conn_stop(&fx->td);
	rpc_stop(&fx->td);
	bare_clear(&fx->td);
	loop_free(fx);
	return 0;
}

static void
replies_are_the_envelope_byte_for_byte(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;

	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\","
	    "\"params\":{\"a\":[1,\"x\"],\"b\":0.05,\"c\":\"\\n\"}}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"a\":[1,\"x\"],\"b\":0.05,\"c\":\"\\n\"}}");
	peer_send(p, "{\"method\":\"echo\",\"id\":\"s\","
	    "\"jsonrpc\":\"2.0\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":null}");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"echo\","
	    "\"params\":[]}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":[]}");
	/* A result given as text has the same envelope, whatever the id. */
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"text\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":[1,\"two\"]}");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":\"é\","
	    "\"method\":\"text\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":\"é\",\"result\":"
	    "[1,\"two\"]}");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":2.5,\"method\":\"text\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":2.5,\"result\":"
	    "[1,\"two\"]}");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":-3,\"method\":\"echo\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":-3,\"result\":null}");
}

static void
errors_are_one_line_with_their_data(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;

	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"error\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":"
	    "-32602,\"message\":\"bad thing 5\",\"data\":{\"field\":\"f\"}}}");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"data\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":"
	    "-32005,\"message\":\"state wrong\",\"data\":{\"x\":1}}}");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"limit\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":"
	    "-32003,\"message\":\"3 queued\",\"data\":{\"limit\":"
	    "\"max_queued\"}}}");
	/* Outside any request: id null. */
	rpc_send_limit(fx->conn, "max_clients_per_user", "uid %d", 7);
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32003,\"message\":\"uid 7\",\"data\":{\"limit\":"
	    "\"max_clients_per_user\"}}}");
	rpc_send_error(fx->conn, NULL, RPC_SHUTTING_DOWN, "going %s", "away");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32004,\"message\":\"going away\",\"data\":{}}}");
}

static void
parse_error_is_answered_and_the_connection_goes_on(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;

	peer_send(p, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32700,\"message\":\"parse error: unexpected token near end "
	    "of file at column 38\",\"data\":{}}}");
	peer_send(p, "[]\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32600,\"message\":\"an empty batch is not a request\","
	    "\"data\":{}}}");
	/* Answered even without an id, which is then null. */
	peer_send(p, "{\"jsonrpc\":\"1.0\",\"method\":\"echo\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32600,\"message\":\"\\\"jsonrpc\\\" must be \\\"2.0\\\"\","
	    "\"data\":{\"field\":\"jsonrpc\"}}}");
	peer_send(p, "\n  \t\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"echo\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":null}");
	assert_int_equal(fx->ndispatched, 1);
}

static void
notification_is_handled_and_never_answered(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;

	peer_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\","
	    "\"params\":{\"n\":1}}\n");
	/* Not even with an error. */
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}\n");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"text\"}\n");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"echo\"}\n");
	/* The first line back answers the last request. */
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":null}");
	assert_int_equal(fx->ndispatched, 4);
	/* A batch of notifications only: no line at all. */
	peer_send(p, "[{\"jsonrpc\":\"2.0\",\"method\":\"echo\"},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"error\"}]\n");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"echo\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":null}");
	assert_int_equal(fx->ndispatched, 7);
	assert_string_equal(fx->last_method, "echo");
}

static void
batch_is_one_array_in_order_without_notifications(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;

	peer_send(p, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\","
	    "\"params\":{\"a\":1}},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"echo\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"text\"},"
	    "5]\n");
	peer_expect(p, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":1}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,"
	    "\"message\":\"no method nope\",\"data\":{\"field\":\"method\"}}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":[1,\"two\"]},"
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
	    "\"message\":\"a request must be a JSON object\",\"data\":{}}}]");
	assert_int_equal(fx->ndispatched, 4);
}

/* A batch's replies come as its members are answered; the line, once the
 * last one is. */
static void
batch_waits_for_its_deferred_members(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;

	peer_send(p, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"later\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\"}]\n");
	LOOP_WAIT_FOR(&fx->loop, fx->later[0] != NULL);
	/* Lines sent meanwhile wait for the batch to be started only. */
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"echo\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":null}");
	rpc_reply(fx->later[0], json_string("done"));
	fx->later[0] = NULL;
	peer_expect(p, "[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null},"
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"done\"}]");
}

static void
deferred_replies_go_in_the_order_answered(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;

	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"later\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"later\"}\n");
	LOOP_WAIT_FOR(&fx->loop, fx->later[1] != NULL);
	assert_int_equal(conn_npending(fx->conn), 2);
	rpc_reply(fx->later[1], json_integer(2));
	fx->later[1] = NULL;
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":2}");
	rpc_error(fx->later[0], RPC_NO_SUCH_JOB, "id", "gone");
	fx->later[0] = NULL;
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
	    "-32001,\"message\":\"gone\",\"data\":{\"field\":\"id\"}}}");
	assert_int_equal(conn_npending(fx->conn), 0);
	assert_int_equal(fx->withdrawn, 0);
}

/* A client that sends its requests and EOF still gets the deferred
 * answers; one that closes withdraws them, the batch's too. */
static void
closing_withdraws_what_is_deferred(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;

	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"later\"}\n");
	assert_int_equal(shutdown(p->fd, SHUT_WR), 0);
	LOOP_WAIT_FOR(&fx->loop, fx->later[0] != NULL &&
	    peer_unread(p) == 0);
	assert_false(fx->peer->closed);
	rpc_reply(fx->later[0], json_true());
	fx->later[0] = NULL;
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":true}");
	peer_wait_eof(p);
	assert_true(fx->peer->closed);
	assert_int_equal(fx->withdrawn, 0);
}

/* EOF alone may be a client done sending: its connection goes once a
 * write fails, and what it had deferred is withdrawn. */
static void
closed_connection_withdraws_its_requests(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;

	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"later\"}\n"
	    "[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"later\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"echo\"}]\n");
	LOOP_WAIT_FOR(&fx->loop, fx->later[1] != NULL);
	close(p->fd);
	p->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	rpc_reply(fx->later[0], json_true());
	fx->later[0] = NULL;
	LOOP_WAIT_FOR(&fx->loop, fx->peer->closed);
	assert_int_equal(fx->withdrawn, 1);
	assert_null(fx->later[1]);
}

static void
line_over_max_request_is_refused_then_closed(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;
	char line[1200];

	fx->td.cfg->max_request = 1024;
	memset(line, 'x', sizeof line - 2);
	line[sizeof line - 2] = '\n';
	line[sizeof line - 1] = '\0';
	peer_send(p, line);
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32600,\"message\":\"request longer than max_request (1024 "
	    "bytes)\",\"data\":{}}}");
	peer_wait_eof(p);
	assert_true(fx->peer->closed);
	assert_int_equal(fx->ndispatched, 0);
}

/* Checks line is a reply to id whose result is the integers 0 .. n-1. */
static void
assert_big_reply(const json_t *reply, json_int_t id, size_t n)
{
	const json_t *result = json_object_get(reply, "result");
	size_t i;

	assert_int_equal(json_integer_value(json_object_get(reply, "id")), id);
	assert_int_equal(json_array_size(result), n);
	for (i = 0; i < n; i++)
		if (json_integer_value(json_array_get(result, i)) !=
		    (json_int_t)i)
			fail_msg("element %zu is not %zu", i, i);
}

/* Over the congestion mark (1 MiB unsent), it waits for the client. */
static void
streamed_result_is_one_line_alone_or_in_a_batch(void **state)
{
	struct fx *fx = *state;
	struct peer *p = fx->peer;
	json_t *msg;
	char *line;

	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"big\","
	    "\"params\":{\"n\":3}}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[0,1,2]}");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":\"é\",\"method\":\"big\","
	    "\"params\":{\"n\":2}}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":\"é\",\"result\":[0,1]}");
	peer_send(p, "[{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"big\","
	    "\"params\":{\"n\":2}},{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"echo\"}]\n");
	peer_expect(p, "[{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":[0,1]},"
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":null}]");
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":0.5,\"method\":\"big\","
	    "\"params\":{\"n\":300000}}\n");
	line = peer_line(p);
	assert_non_null(line);
	assert_memory_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":0.5,"
	    "\"result\":[0,1,", 38);
	free(line);
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"big\","
	    "\"params\":{\"n\":300000}}\n");
	line = peer_line(p);
	assert_non_null(line);
	assert_memory_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":"
	    "[0,1,", 36);
	assert_non_null(msg = json_loads(line, 0, NULL));
	assert_big_reply(msg, 2, 300000);
	assert_int_equal(json_object_size(msg), 3);
	json_decref(msg);
	free(line);
	peer_send(p, "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"echo\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"big\","
	    "\"params\":{\"n\":300000}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"text\"}]\n");
	line = peer_line(p);
	assert_non_null(line);
	assert_memory_equal(line, "[{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":"
	    "null},{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":[0,1,", 74);
	assert_string_equal(line + strlen(line) - 45, ",{\"jsonrpc\":"
	    "\"2.0\",\"id\":5,\"result\":[1,\"two\"]}]");
	assert_non_null(msg = json_loads(line, 0, NULL));
	assert_int_equal(json_array_size(msg), 3);
	assert_big_reply(json_array_get(msg, 1), 4, 300000);
	json_decref(msg);
	free(line);
	assert_int_equal(fx->withdrawn, 0);
}

static void
other_dispatch(struct rpc_req *req, const char *method, json_t *params)
{
	(void)method;
	(void)params;
	rpc_reply(req, json_string("other"));
}

/* Two daemons in one process: each connection goes to its own's methods. */
static void
each_daemon_answers_with_its_own_methods(void **state)
{
	struct fx *fx = *state;
	struct triaged other = { 0 };
	struct peer *p2 = peer_new(&fx->loop);

	bare_init(&other, fx->loop.base);
	assert_int_equal(conn_start(&other), 0);
	assert_int_equal(rpc_start(&other, other_dispatch), 0);
	assert_int_equal(rpc_attach(peer_conn(p2, &other)), 0);
	peer_send(p2, ECHO_1);
	peer_send(fx->peer, ECHO_1);
	peer_expect(p2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"other\"}");
	peer_expect(fx->peer, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}");
	assert_int_equal(fx->ndispatched, 1);
	peer_free(p2);
	rpc_stop(&other);
	conn_stop(&other);
	bare_clear(&other);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(replies_are_the_envelope_byte_for_byte),
		T(errors_are_one_line_with_their_data),
		T(parse_error_is_answered_and_the_connection_goes_on),
		T(notification_is_handled_and_never_answered),
		T(batch_is_one_array_in_order_without_notifications),
		T(batch_waits_for_its_deferred_members),
		T(deferred_replies_go_in_the_order_answered),
		T(closing_withdraws_what_is_deferred),
		T(closed_connection_withdraws_its_requests),
		T(line_over_max_request_is_refused_then_closed),
		T(streamed_result_is_one_line_alone_or_in_a_batch),
		T(each_daemon_answers_with_its_own_methods),
#undef T
	};

	/* As the daemon: a write to a closed peer fails, and says so. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("rpc-loop", tests, NULL, NULL);
}
