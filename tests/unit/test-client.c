/* test-client.c - the client library on its own: connect's errors, and its
 * framing and queues against bytes a test socket writes (no daemon). */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client.h"
#include "tsupport-clock.h"

/* The test's own waits for the client give up after this. */
#define PEER_TIMEOUT_MS 10000

struct fixture {
	char dir[64];
	char path[128];
	int listener;
	int peer;		/* the test's end of the client's connection */
	struct triage_client *c;
};

static int
setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof *fx);
	struct sockaddr_un sun;
	char *cause = NULL;

	if (fx == NULL)
		return -1;
	snprintf(fx->dir, sizeof fx->dir, "/tmp/test-client.XXXXXX");
	if (mkdtemp(fx->dir) == NULL)
		return -1;
	snprintf(fx->path, sizeof fx->path, "%s/sock", fx->dir);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, fx->path);
	fx->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fx->listener == -1 ||
	    bind(fx->listener, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    listen(fx->listener, 1) == -1)
		return -1;
	/* The backlog completes the connection before accept(). */
	if ((fx->c = triage_client_connect(fx->path, &cause)) == NULL) {
		fprintf(stderr, "%s\n", cause);
		free(cause);
		return -1;
	}
	if ((fx->peer = accept(fx->listener, NULL, NULL)) == -1)
		return -1;
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *fx = *state;

	triage_client_free(fx->c);
	if (fx->peer != -1)
		close(fx->peer);
	close(fx->listener);
	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/* Writes s as the daemon would. */
static void
peer_write(struct fixture *fx, const char *s)
{
	size_t len = strlen(s);

	assert_int_equal(write(fx->peer, s, len), (ssize_t)len);
}

/* Reads one line the client sent; returns it allocated, without '\n'.
 * Fails the test if the line is not all there within PEER_TIMEOUT_MS. */
static char *
peer_read_line(struct fixture *fx)
{
	struct pollfd pfd = { .fd = fx->peer, .events = POLLIN };
	int64_t deadline = tsupport_clock_ms() + PEER_TIMEOUT_MS, left;
	char buf[4096], ch;
	size_t len = 0;
	int ready;

	while (len < sizeof buf - 1) {
		left = deadline - tsupport_clock_ms();
		ready = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (ready == -1 && errno == EINTR)
			continue;
		if (ready != 1) {
			buf[len] = '\0';
			fail_msg("timed out waiting for a line from the "
			    "client; got \"%s\"", buf);
		}
		assert_int_equal(read(fx->peer, &ch, 1), 1);
		if (ch == '\n')
			break;
		buf[len++] = ch;
	}
	buf[len] = '\0';
	return strdup(buf);
}

static void
connect_names_a_missing_socket(void **state)
{
	char *cause = NULL;

	(void)state;
	errno = 0;
	assert_null(triage_client_connect("/nonexistent/triage.sock", &cause));
	assert_int_equal(errno, ENOENT);
	assert_non_null(cause);
	assert_string_equal(cause, "cannot connect to /nonexistent/triage.sock: "
	    "No such file or directory (is triaged running?)");
	free(cause);
}

static void
connect_names_a_socket_nobody_listens_on(void **state)
{
	struct sockaddr_un sun;
	char dir[] = "/tmp/test-client.XXXXXX", path[64], want[160];
	char *cause = NULL;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/stale.sock", dir);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	/* A socket file left by a daemon that died. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	close(fd);

	assert_null(triage_client_connect(path, &cause));
	assert_int_equal(errno, ECONNREFUSED);
	snprintf(want, sizeof want, "cannot connect to %s: Connection refused "
	    "(is triaged running?)", path);
	assert_string_equal(cause, want);
	free(cause);
	unlink(path);
	rmdir(dir);
}

static void
connect_refuses_a_path_too_long(void **state)
{
	char path[200], *cause = NULL;

	(void)state;
	memset(path, 'x', sizeof path - 1);
	path[0] = '/';
	path[sizeof path - 1] = '\0';
	assert_null(triage_client_connect(path, &cause));
	assert_int_equal(errno, ENAMETOOLONG);
	assert_non_null(strstr(cause, path));
	assert_non_null(strstr(cause, "too long"));
	free(cause);
}

static void
call_sends_one_json_rpc_line(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;
	json_t *result;
	char *line;

	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}\n");
	result = triage_client_call(fx->c, "get", json_pack("{s:i}", "id", 5),
	    1000, &err);
	assert_non_null(result);
	assert_true(json_is_true(json_object_get(result, "ok")));
	json_decref(result);
	line = peer_read_line(fx);
	assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"get\",\"params\":{\"id\":5}}");
	free(line);

	/* No params: none sent; ids go on from 1. */
	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
	result = triage_client_call(fx->c, "stats", NULL, 1000, &err);
	assert_non_null(result);
	json_decref(result);
	line = peer_read_line(fx);
	assert_string_equal(line,
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"stats\"}");
	free(line);
}

static void
call_keeps_other_responses_and_notifications(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;
	json_t *result, *msg;
	int64_t id;

	assert_int_equal(triage_client_send(fx->c, "wait", json_pack("{s:i}",
	    "id", 7), &err), 1);
	/* Out of order, with blank lines and a notification between. */
	peer_write(fx, "\n  \r\n{\"jsonrpc\":\"2.0\",\"method\":\"job\","
	    "\"params\":{\"id\":7,\"state\":\"running\"}}\n\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"n\":2}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"n\":1}}\n");
	result = triage_client_call(fx->c, "get", NULL, 1000, &err);
	assert_non_null(result);
	assert_int_equal(json_integer_value(json_object_get(result, "n")), 2);
	json_decref(result);

	result = triage_client_recv(fx->c, &id, 1000, &err);
	assert_non_null(result);
	assert_int_equal(id, 1);
	assert_int_equal(json_integer_value(json_object_get(result, "n")), 1);
	json_decref(result);

	msg = triage_client_notification(fx->c, 1000, &err);
	assert_non_null(msg);
	assert_string_equal(json_string_value(json_object_get(msg, "method")),
	    "job");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    msg, "params"), "id")), 7);
	json_decref(msg);
}

static void
call_fills_the_daemons_error(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;

	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,"
	    "\"message\":\"unknown priority \\\"x\\\"\\nsecond line\","
	    "\"data\":{\"field\":\"priority\"}}}\n");
	assert_null(triage_client_call(fx->c, "submit", json_object(), 1000,
	    &err));
	assert_int_equal(err.code, -32602);
	assert_string_equal(err.message, "unknown priority \"x\" second line");
	assert_string_equal(err.field, "priority");

	/* No data: no field. */
	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32001,"
	    "\"message\":\"no such job\"}}\n");
	assert_null(triage_client_call(fx->c, "get", NULL, 1000, &err));
	assert_int_equal(err.code, -32001);
	assert_string_equal(err.message, "no such job");
	assert_string_equal(err.field, "");

	/* id null: the daemon could not read the request, ours. */
	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32600,\"message\":\"request too long\"}}\n");
	assert_null(triage_client_call(fx->c, "get", NULL, 1000, &err));
	assert_int_equal(err.code, -32600);
	assert_string_equal(err.message, "request too long");
}

static void
batch_responses_are_kept_one_by_one(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;
	json_t *result;
	int64_t id;

	assert_int_equal(client_send_raw(fx->c, "[]\n", 3), 0);
	peer_write(fx, "[{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":5},"
	    "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":6}]\n");
	result = triage_client_recv(fx->c, &id, 1000, &err);
	assert_int_equal(id, 5);
	assert_int_equal(json_integer_value(result), 5);
	json_decref(result);
	result = triage_client_recv(fx->c, &id, 1000, &err);
	assert_int_equal(id, 6);
	json_decref(result);
}

static void
long_lines_are_read_whole(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;
	size_t n = 3 * 1024 * 1024, i;
	char *line;
	json_t *msg;
	pid_t pid;
	int status;

	line = malloc(n + 64);
	assert_non_null(line);
	i = (size_t)sprintf(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"");
	memset(line + i, 'a', n);
	strcpy(line + i + n, "\"}\n");
	/* More than a socket buffer: written by a child as we read. */
	if ((pid = fork()) == 0) {
		size_t len = strlen(line), off = 0;
		ssize_t w;

		while (off < len && (w = write(fx->peer, line + off,
		    len - off)) > 0)
			off += (size_t)w;
		_exit(off == len ? 0 : 1);
	}
	msg = client_read_message(fx->c, 10000, &err);
	if (msg == NULL) {
		/* The writer may be blocked on a full socket: end it. */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("no message: %s", err.message);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
	assert_non_null(msg);
	assert_int_equal(json_string_length(json_object_get(msg, "result")), n);
	json_decref(msg);
	free(line);
}

static void
nul_bytes_survive(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;
	json_t *result;

	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"data\":"
	    "\"a\\u0000b\"}}\n");
	result = triage_client_call(fx->c, "output", NULL, 1000, &err);
	assert_non_null(result);
	assert_int_equal(json_string_length(json_object_get(result, "data")), 3);
	assert_memory_equal(json_string_value(json_object_get(result, "data")),
	    "a\0b", 3);
	json_decref(result);
}

static void
timeout_loses_nothing(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;
	json_t *msg;

	/* Half a message, then nothing: a timeout. */
	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"method\":");
	errno = 0;
	assert_null(triage_client_notification(fx->c, 50, &err));
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(err.code, TRIAGE_ERR_TRANSPORT);
	assert_non_null(strstr(err.message, fx->path));

	/* The rest arrives: the message is whole. */
	peer_write(fx, "\"job\",\"params\":{}}\n");
	msg = triage_client_notification(fx->c, 1000, &err);
	assert_non_null(msg);
	json_decref(msg);
}

static void
malformed_line_is_a_transport_error(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;
	json_t *result;

	peer_write(fx, "this is not json\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}\n");
	errno = 0;
	assert_null(triage_client_call(fx->c, "get", NULL, 1000, &err));
	assert_int_equal(err.code, TRIAGE_ERR_TRANSPORT);
	assert_int_equal(errno, EPROTO);
	assert_non_null(strstr(err.message, "malformed"));
	assert_non_null(strstr(err.message, fx->path));

	/* The bad line is dropped; the next one is read. */
	result = triage_client_recv(fx->c, &(int64_t){ 0 }, 1000, &err);
	assert_non_null(result);
	json_decref(result);

	/* JSON, but not a JSON-RPC message. */
	peer_write(fx, "42\n{\"x\":1}\n");
	assert_null(client_read_message(fx->c, 1000, &err));
	assert_int_equal(err.code, TRIAGE_ERR_TRANSPORT);
	assert_null(triage_client_notification(fx->c, 1000, &err));
	assert_int_equal(err.code, TRIAGE_ERR_TRANSPORT);
	assert_int_equal(errno, EPROTO);
}

static void
eof_is_a_transport_error(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;

	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"id\":1,");
	close(fx->peer);
	fx->peer = -1;
	errno = 0;
	assert_null(client_read_message(fx->c, 1000, &err));
	assert_int_equal(err.code, TRIAGE_ERR_TRANSPORT);
	assert_int_equal(errno, ECONNRESET);
	assert_non_null(strstr(err.message, fx->path));
	assert_non_null(strstr(err.message, "closed"));

	/* A call fails on the send (EPIPE) or the read, as clearly. */
	errno = 0;
	assert_null(triage_client_call(fx->c, "get", NULL, 1000, &err));
	assert_int_equal(err.code, TRIAGE_ERR_TRANSPORT);
	assert_true(errno == EPIPE || errno == ECONNRESET);
	assert_non_null(strstr(err.message, "closed"));
}

static void
send_to_a_closed_peer_does_not_raise_sigpipe(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;
	int i;

	close(fx->peer);
	fx->peer = -1;
	/* The first send may still succeed; none may kill us. */
	for (i = 0; i < 3; i++) {
		if (triage_client_send(fx->c, "get", NULL, &err) == -1)
			break;
	}
	assert_true(i < 3);
	assert_int_equal(err.code, TRIAGE_ERR_TRANSPORT);
	assert_non_null(strstr(err.message, "closed"));
}

static void
error_said_before_closing_is_reported(void **state)
{
	struct fixture *fx = *state;
	struct triage_error err;

	/* As the daemon does with a line over max_request. */
	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32600,\"message\":\"request line too long\"}}\n");
	shutdown(fx->peer, SHUT_RDWR);
	assert_null(triage_client_call(fx->c, "submit", json_object(), 1000,
	    &err));
	assert_int_equal(err.code, -32600);
	assert_string_equal(err.message, "request line too long");
}

/* What the outage callback heard: "lost" and "back", in order. */
struct outages {
	char said[256];
};

static void
outage_cb(const char *path, enum triage_outage what, void *arg)
{
	struct outages *o = arg;

	(void)path;
	strcat(o->said, what == TRIAGE_OUTAGE_LOST ? "lost " : "back ");
}

/*
 * A daemon come back, in a child: accepts one connection on the listener
 * and answers each request with {"method", "params"} of it, and a watch
 * also with a notification; writes each request's method and params to
 * fd, a line each. Exits 0 at the client's EOF.
 */
static void
reborn_daemon(int listener, int fd)
{
	char line[4096], *out, *text;
	json_t *req, *reply;
	size_t len = 0;
	int conn;
	char ch;
	struct pollfd pfd = { .fd = listener, .events = POLLIN };

	/* A client that never comes back fails the test, not hangs it. */
	if (poll(&pfd, 1, PEER_TIMEOUT_MS) != 1 ||
	    (conn = accept(listener, NULL, NULL)) == -1)
		_exit(1);
	while (read(conn, &ch, 1) == 1) {
		if (ch != '\n') {
			if (len < sizeof line - 1)
				line[len++] = ch;
			continue;
		}
		line[len] = '\0';
		len = 0;
		if ((req = json_loads(line, 0, NULL)) == NULL)
			_exit(2);
		reply = json_pack("{s:s,s:O,s:{s:O,s:O*}}", "jsonrpc", "2.0",
		    "id", json_object_get(req, "id"), "result", "method",
		    json_object_get(req, "method"), "params",
		    json_object_get(req, "params"));
		text = json_dumps(json_object_get(reply, "result"),
		    JSON_COMPACT | JSON_SORT_KEYS);
		dprintf(fd, "%s\n", text);
		free(text);
		out = json_dumps(reply, JSON_COMPACT);
		dprintf(conn, "%s\n", out);
		free(out);
		if (strcmp(json_string_value(json_object_get(req, "method")),
		    "watch") == 0)
			dprintf(conn, "{\"jsonrpc\":\"2.0\",\"method\":"
			    "\"job\",\"params\":{\"id\":7}}\n");
		json_decref(reply);
		json_decref(req);
	}
	_exit(0);
}

/* Starts reborn_daemon; its pid, and the read end of its log in *log. */
static pid_t
start_reborn(struct fixture *fx, int *log)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		reborn_daemon(fx->listener, p[1]);
	}
	assert_true(pid > 0);
	close(p[1]);
	*log = p[0];
	return pid;
}

/* Ends the client's connection, waits for reborn_daemon, and checks what
 * it was asked, in order. */
static void
end_reborn(struct fixture *fx, pid_t pid, int log, const char *want)
{
	char got[4096];
	ssize_t n, len = 0;
	int status;

	triage_client_free(fx->c);
	fx->c = NULL;
	while ((n = read(log, got + len, sizeof got - 1 - (size_t)len)) > 0)
		len += n;
	got[len] = '\0';
	close(log);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
	assert_string_equal(got, want);
}

/* For the tests of reconnect: a watch made, the daemon gone and come back
 * (reborn_daemon; its log into *log); the reborn daemon's pid. */
static pid_t
watch_then_restart(struct fixture *fx, struct outages *o, int *log)
{
	struct triage_error err;
	json_t *result;

	peer_write(fx, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
	result = triage_client_call(fx->c, "watch", json_pack("{s:[i]}", "ids",
	    7), 1000, &err);
	assert_non_null(result);
	json_decref(result);
	close(fx->peer);
	fx->peer = -1;
	triage_client_reconnect(fx->c, 10000, outage_cb, o);
	return start_reborn(fx, log);
}

static void
reconnect_renews_the_watch_and_sends_a_read_again(void **state)
{
	struct fixture *fx = *state;
	struct outages o = { "" };
	struct triage_error err;
	json_t *result;
	pid_t pid;
	int log;

	pid = watch_then_restart(fx, &o, &log);
	result = triage_client_call(fx->c, "get", json_pack("{s:i}", "id", 5),
	    10000, &err);
	if (result == NULL)
		fail_msg("get: %s", err.message);
	assert_string_equal(json_string_value(json_object_get(result,
	    "method")), "get");
	json_decref(result);
	assert_string_equal(o.said, "lost back ");
	/* The renewed watch's notification is there for the caller. */
	result = triage_client_notification(fx->c, 1000, &err);
	assert_non_null(result);
	json_decref(result);
	end_reborn(fx, pid, log,
	    "{\"method\":\"watch\",\"params\":{\"ids\":[7]}}\n"
	    "{\"method\":\"get\",\"params\":{\"id\":5}}\n");
}

static void
reconnect_goes_on_waiting_for_notifications(void **state)
{
	struct fixture *fx = *state;
	struct outages o = { "" };
	struct triage_error err;
	json_t *msg;
	pid_t pid;
	int log;

	pid = watch_then_restart(fx, &o, &log);
	msg = triage_client_notification(fx->c, 10000, &err);
	if (msg == NULL)
		fail_msg("notification: %s", err.message);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    msg, "params"), "id")), 7);
	json_decref(msg);
	assert_string_equal(o.said, "lost back ");
	end_reborn(fx, pid, log,
	    "{\"method\":\"watch\",\"params\":{\"ids\":[7]}}\n");
}

static void
reconnect_never_sends_a_change_again(void **state)
{
	struct fixture *fx = *state;
	struct pollfd pfd = { .fd = fx->listener, .events = POLLIN };
	struct outages o = { "" };
	struct triage_error err;

	triage_client_reconnect(fx->c, 10000, outage_cb, &o);
	close(fx->peer);
	fx->peer = -1;
	errno = 0;
	assert_null(triage_client_call(fx->c, "submit", json_object(), 1000,
	    &err));
	assert_int_equal(err.code, TRIAGE_ERR_TRANSPORT);
	assert_true(errno == EPIPE || errno == ECONNRESET);
	assert_string_equal(o.said, "");
	/* Nobody came back to the listener. */
	assert_int_equal(poll(&pfd, 1, 0), 0);
}

static void
reconnect_gives_up_after_its_bound(void **state)
{
	struct fixture *fx = *state;
	struct outages o = { "" };
	struct triage_error err;
	int64_t start;

	triage_client_reconnect(fx->c, 300, outage_cb, &o);
	close(fx->peer);
	fx->peer = -1;
	/* The daemon's socket is gone, as when it stops. */
	close(fx->listener);
	unlink(fx->path);
	fx->listener = socket(AF_UNIX, SOCK_STREAM, 0);
	start = tsupport_clock_ms();
	assert_null(triage_client_call(fx->c, "wait", json_pack("{s:i}", "id",
	    5), -1, &err));
	assert_true(tsupport_clock_ms() - start >= 300);
	assert_true(tsupport_clock_ms() - start < PEER_TIMEOUT_MS);
	assert_int_equal(err.code, TRIAGE_ERR_TRANSPORT);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err.message, fx->path));
	assert_string_equal(o.said, "lost ");
}

#define FX(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(connect_names_a_missing_socket),
		cmocka_unit_test(connect_names_a_socket_nobody_listens_on),
		cmocka_unit_test(connect_refuses_a_path_too_long),
		FX(call_sends_one_json_rpc_line),
		FX(call_keeps_other_responses_and_notifications),
		FX(call_fills_the_daemons_error),
		FX(batch_responses_are_kept_one_by_one),
		FX(long_lines_are_read_whole),
		FX(nul_bytes_survive),
		FX(timeout_loses_nothing),
		FX(malformed_line_is_a_transport_error),
		FX(eof_is_a_transport_error),
		FX(send_to_a_closed_peer_does_not_raise_sigpipe),
		FX(error_said_before_closing_is_reported),
		FX(reconnect_renews_the_watch_and_sends_a_read_again),
		FX(reconnect_goes_on_waiting_for_notifications),
		FX(reconnect_never_sends_a_change_again),
		FX(reconnect_gives_up_after_its_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
