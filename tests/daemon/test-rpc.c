/* test-rpc.c - the wire protocol against a real triaged: framing, JSON-RPC
 * errors with their codes, batches, notifications, pipelining, limits. */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

static struct tdaemon *d;

static int
setup(void **state)
{
	d = tdaemon_start("max_request = 4KiB\nsocket_mode = 0666\n"
	    "max_batch = 8\n"
	    "[priority.high]\nrank = 0\n"
	    "[priority.normal]\nrank = 10\n"
	    "[priority.tiny]\nrank = 20\nmax_queued = 2\n");
	/* Others may reach the socket (the ownership tests). */
	chmod(d->dir, 0755);
	*state = d;
	return 0;
}

/* Sends a raw line and returns the one message that comes back. */
static json_t *
raw(struct triage_client *c, const char *line)
{
	struct triage_error e;
	json_t *msg;

	assert_int_equal(client_send_raw(c, line, strlen(line)), 0);
	if ((msg = client_read_message(c, 30000, &e)) == NULL)
		fail_msg("no reply to %s: %s", line, e.message);
	return msg;
}

static int
error_code(const json_t *msg)
{
	return (int)json_integer_value(json_object_get(json_object_get(msg,
	    "error"), "code"));
}

static const char *
error_field(const json_t *msg)
{
	return json_string_value(json_object_get(json_object_get(
	    json_object_get(msg, "error"), "data"), "field"));
}

static void
test_malformed_json_then_good_request_on_same_connection(void **state)
{
	struct triage_client *c = tconnect(d);
	json_t *msg;

	(void)state;
	msg = raw(c, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \n");
	assert_int_equal(error_code(msg), -32700);
	assert_true(json_is_null(json_object_get(msg, "id")));
	json_decref(msg);
	msg = raw(c, "\xff\xfe not utf-8\n");
	assert_int_equal(error_code(msg), -32700);
	json_decref(msg);
	msg = raw(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"stats\"}\n");
	assert_int_equal(json_integer_value(json_object_get(msg, "id")), 7);
	assert_non_null(json_object_get(msg, "result"));
	json_decref(msg);
	triage_client_free(c);
}

static void
test_nesting_deeper_than_64_is_a_parse_error(void **state)
{
	struct triage_client *c = tconnect(d);
	char line[512];
	json_t *msg;
	int i, n = 0;

	(void)state;
	n += sprintf(line + n, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stats\","
	    "\"params\":{\"x\":");
	for (i = 0; i < 64; i++)
		line[n++] = '[';
	for (i = 0; i < 64; i++)
		line[n++] = ']';
	n += sprintf(line + n, "}}\n");
	msg = raw(c, line);
	assert_int_equal(error_code(msg), -32700);
	json_decref(msg);
	triage_client_free(c);
}

static void
test_invalid_requests_get_32600(void **state)
{
	static const char *const bad[] = {
		"[]\n",
		"42\n",
		"{\"id\":1,\"method\":\"stats\"}\n",
		"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"stats\"}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"stats\"}\n",
	};
	struct triage_client *c = tconnect(d);
	json_t *msg;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		msg = raw(c, bad[i]);
		assert_int_equal(error_code(msg), -32600);
		json_decref(msg);
	}
	/* The connection is still good. */
	json_decref(tcall(c, "stats", "{}"));
	triage_client_free(c);
}

static void
test_unknown_method_and_bad_params(void **state)
{
	struct triage_client *c = tconnect(d);
	struct triage_error e;

	(void)state;
	assert_int_equal(tcall_error(c, "frobnicate", &e, "{}"), -32601);
	assert_int_equal(tcall_error(c, "submit", &e, "{}"), -32602);
	assert_string_equal(e.field, "argv");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[]}", "argv"), -32602);
	assert_string_equal(e.field, "argv");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[ss]}", "argv",
	    "true", ""), -32602);
	assert_int_equal(tcall_error(c, "submit", &e, "{ss}", "argv",
	    "true"), -32602);
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]ss}", "argv",
	    "true", "priority", "urgent"), -32602);
	assert_string_equal(e.field, "priority");
	assert_non_null(strstr(e.message, "high, normal, tiny"));
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]si}", "argv",
	    "true", "slots", 99), -32602);
	assert_string_equal(e.field, "slots");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]sf}", "argv",
	    "true", "timeout", -1.0), -32602);
	assert_string_equal(e.field, "timeout");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]ss}", "argv",
	    "true", "cwd", "relative/dir"), -32602);
	assert_string_equal(e.field, "cwd");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s{si}}", "argv",
	    "true", "env", "X", 1), -32602);
	assert_string_equal(e.field, "env.X");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]si}", "argv",
	    "true", "timout", 5), -32602);
	assert_string_equal(e.field, "timout");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]si}", "argv",
	    "true", "retries", -1), -32602);
	assert_string_equal(e.field, "retries");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s[i]}", "argv",
	    "true", "after", 999999), -32602);
	assert_string_equal(e.field, "after");
	assert_non_null(strstr(e.message, "999999"));
	assert_int_equal(tcall_error(c, "get", &e, "{ss}", "id", "1"), -32602);
	assert_int_equal(tcall_error(c, "output", &e, "{sisi}", "id", 1,
	    "stream", 3), -32602);
	assert_int_equal(tcall_error(c, "list", &e, "{s[s]}", "state",
	    "sleeping"), -32602);
	triage_client_free(c);
}

static void
test_no_such_job(void **state)
{
	struct triage_client *c = tconnect(d);
	struct triage_error e;

	(void)state;
	assert_int_equal(tcall_error(c, "get", &e, "{si}", "id", 999999),
	    -32001);
	assert_int_equal(tcall_error(c, "cancel", &e, "{si}", "id", 999999),
	    -32001);
	assert_int_equal(tcall_error(c, "wait", &e, "{si}", "id", 999999),
	    -32001);
	triage_client_free(c);
}

static void
test_queue_full(void **state)
{
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t a, b, gate;

	(void)state;
	/* One in the semaphore (paused), one waiting for a job to end:
	 * both count. */
	json_decref(tcall(c, "pause", "{ss}", "priority", "tiny"));
	gate = tsubmit(c, "{s[ss]}", "argv", "sleep", "300");
	a = tsubmit(c, "{s[s]ss}", "argv", "true", "priority", "tiny");
	b = tsubmit(c, "{s[s]sss[I]}", "argv", "true", "priority", "tiny",
	    "after", (json_int_t)gate);
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]ss}", "argv",
	    "true", "priority", "tiny"), -32003);
	assert_non_null(strstr(e.message, "max_queued"));
	json_decref(tcall(c, "resume", "{ss}", "priority", "tiny"));
	json_decref(twait(c, a));
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)gate));
	json_decref(twait(c, b));
	/* Room again. */
	json_decref(twait(c, tsubmit(c, "{s[s]ss}", "argv", "true", "priority",
	    "tiny")));
	triage_client_free(c);
}

/* Runs fn as uid/gid 65534 in a child; returns its exit code. */
static int
as_nobody(int (*fn)(void))
{
	pid_t pid;
	int status;

	if ((pid = fork()) == 0) {
		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
		    setuid(65534) != 0)
			_exit(100);
		_exit(fn());
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int64_t root_job;

/* Exit codes: 0 all as expected, else which check failed. */
static int
nobody_checks(void)
{
	struct triage_error e;
	struct triage_client *c;
	char *cause;
	json_t *res, *p;

	if ((c = triage_client_connect(d->sock, &cause)) == NULL)
		return 1;
	p = json_pack("{sI}", "id", (json_int_t)root_job);
	if (triage_client_call(c, "cancel", p, 30000, &e) != NULL || e.code
	    != -32002)
		return 2;
	p = json_pack("{sIss}", "id", (json_int_t)root_job, "stream", "stdout");
	if (triage_client_call(c, "output", p, 30000, &e) != NULL || e.code
	    != -32002)
		return 3;
	if (triage_client_call(c, "pause", NULL, 30000, &e) != NULL || e.code
	    != -32002)
		return 4;
	/* Reading is for anyone. */
	p = json_pack("{sI}", "id", (json_int_t)root_job);
	if ((res = triage_client_call(c, "get", p, 30000, &e)) == NULL)
		return 5;
	json_decref(res);
	triage_client_free(c);
	return 0;
}

static void
test_permission_denied_for_others_jobs_and_pause(void **state)
{
	struct triage_client *c = tconnect(d);
	json_t *job;

	(void)state;
	if (geteuid() != 0) {
		print_message("not root: cannot test another user's access\n");
		skip();
	}
	root_job = tsubmit(c, "{s[s]}", "argv", "true");
	assert_int_equal(as_nobody(nobody_checks), 0);
	job = twait(c, root_job);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(json_integer_value(json_object_get(job, "uid")), 0);
	json_decref(job);
	triage_client_free(c);
}

static void
test_batches_and_notifications(void **state)
{
	struct triage_client *c = tconnect(d);
	static const char quiet[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"stats\"}\n"
	    "[{\"jsonrpc\":\"2.0\",\"method\":\"stats\"}]\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}\n\n  \n";
	json_t *msg, *r;
	size_t i;
	bool seen[3] = { false };

	(void)state;
	msg = raw(c, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stats\"},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"stats\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"},"
	    "7]\n");
	assert_true(json_is_array(msg));
	assert_int_equal(json_array_size(msg), 3);
	json_array_foreach(msg, i, r) {
		if (json_integer_value(json_object_get(r, "id")) == 1) {
			assert_non_null(json_object_get(r, "result"));
			seen[0] = true;
		} else if (json_integer_value(json_object_get(r, "id")) == 2) {
			assert_int_equal(error_code(r), -32601);
			seen[1] = true;
		} else {
			assert_true(json_is_null(json_object_get(r, "id")));
			assert_int_equal(error_code(r), -32600);
			seen[2] = true;
		}
	}
	assert_true(seen[0] && seen[1] && seen[2]);
	json_decref(msg);
	/* Notifications alone, in a batch or not, get nothing back: the
	 * next message is the answer to the request after them. */
	assert_int_equal(client_send_raw(c, quiet, strlen(quiet)), 0);
	msg = raw(c, "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"stats\"}\n");
	assert_string_equal(json_string_value(json_object_get(msg, "id")),
	    "last");
	json_decref(msg);
	triage_client_free(c);
}

static void
test_batch_over_max_batch_is_refused(void **state)
{
	static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,"
	    "\"method\":\"stats\"}";
	struct triage_client *c = tconnect(d);
	char line[1024];
	size_t len;
	json_t *msg;
	int i;

	(void)state;
	/* max_batch is 8 here: 9 are refused with one error, none run. */
	line[0] = '[';
	len = 1;
	for (i = 1; i <= 9; i++) {
		if (i > 1)
			line[len++] = ',';
		len += (size_t)snprintf(line + len, sizeof line - len, req, i);
	}
	snprintf(line + len, sizeof line - len, "]\n");
	msg = raw(c, line);
	assert_true(json_is_object(msg));
	assert_int_equal(error_code(msg), -32600);
	assert_true(json_is_null(json_object_get(msg, "id")));
	assert_non_null(strstr(json_string_value(json_object_get(
	    json_object_get(msg, "error"), "message")), "max_batch (8)"));
	json_decref(msg);
	/* The connection stays open, and 8 are fine. */
	len = 1;
	for (i = 1; i <= 8; i++) {
		if (i > 1)
			line[len++] = ',';
		len += (size_t)snprintf(line + len, sizeof line - len, req, i);
	}
	snprintf(line + len, sizeof line - len, "]\n");
	msg = raw(c, line);
	assert_true(json_is_array(msg));
	assert_int_equal(json_array_size(msg), 8);
	json_decref(msg);
	triage_client_free(c);
}

/* The jobs of a list result, checked to be in ascending id order. */
static const json_t *
list_jobs(const json_t *reply)
{
	const json_t *jobs = json_object_get(json_object_get(reply, "result"),
	    "jobs"), *job;
	json_int_t last = 0;
	size_t i;

	assert_true(json_is_array(jobs));
	json_array_foreach(jobs, i, job) {
		assert_true(tjint(job, "id") > last);
		last = tjint(job, "id");
	}
	return jobs;
}

/*
 * A batch whose replies are large goes out as they come, on one line, and
 * a member waiting for a job does not hold back the client's next request;
 * its reply comes once the batch's line is complete.
 */
static void
test_large_batch_reply_is_one_array_beside_other_replies(void **state)
{
	enum { N = 600 };
	static const char fmt[] = "["
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"list\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"stats\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"list\","
	    "\"params\":{\"limit\":100000}},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"list\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"nope\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"wait\","
	    "\"params\":{\"id\":%lld,\"timeout\":0.5}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"list\","
	    "\"params\":{\"state\":[\"queued\"]}}]\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"method\":\"stats\"}\n";
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	const json_t *jobs1 = NULL, *jobs3 = NULL, *r;
	json_t *msgs[2], *res;
	bool seen[7] = { false };
	int64_t id, ids[N];
	char line[2048];
	size_t i;
	int k;

	(void)state;
	/* Enough jobs for the lists' replies to be written out in pieces,
	 * queued in a paused priority so that they stay as they are. */
	json_decref(tcall(c, "pause", "{ss}", "priority", "high"));
	for (k = 0; k < N; k++)
		assert_true(triage_client_send(c, "submit",
		    json_pack("{s[s]ss}", "argv", "true", "priority", "high"),
		    &e) > 0);
	for (k = 0; k < N; k++) {
		if ((res = triage_client_recv(c, &id, 30000, &e)) == NULL)
			fail_msg("submit failed: %s", e.message);
		ids[k] = tjint(res, "id");
		json_decref(res);
	}
	snprintf(line, sizeof line, fmt, (long long)ids[0]);
	assert_int_equal(client_send_raw(c, line, strlen(line)), 0);
	for (k = 0; k < 2; k++)
		if ((msgs[k] = client_read_message(c, 30000, &e)) == NULL)
			fail_msg("no reply: %s", e.message);
	/* The batch's line, then the reply that waited behind it. */
	assert_true(json_is_array(msgs[0]));
	assert_string_equal(json_string_value(json_object_get(msgs[1], "id")),
	    "after");
	assert_int_equal(json_array_size(msgs[0]), 6);
	json_array_foreach(msgs[0], i, r) {
		id = json_integer_value(json_object_get(r, "id"));
		assert_true(id >= 1 && id <= 6 && !seen[id]);
		seen[id] = true;
		if (id == 1)
			jobs1 = list_jobs(r);
		else if (id == 3)
			jobs3 = list_jobs(r);
		else if (id == 5)
			list_jobs(r);
		else if (id == 4)
			assert_int_equal(error_code(r), -32601);
		else if (id == 6)
			assert_string_equal(tstate(json_object_get(r,
			    "result")), "queued");
	}
	/* Fewer than 1000 jobs: the two lists name the same ones. */
	assert_true(json_array_size(jobs1) >= N);
	assert_int_equal(json_array_size(jobs1), json_array_size(jobs3));
	for (i = 0; i < json_array_size(jobs1); i++)
		assert_int_equal(tjint(json_array_get(jobs1, i), "id"),
		    tjint(json_array_get(jobs3, i), "id"));
	json_decref(msgs[0]);
	json_decref(msgs[1]);
	for (k = 0; k < N; k++)
		assert_true(triage_client_send(c, "cancel", json_pack("{sI}",
		    "id", (json_int_t)ids[k]), &e) > 0);
	for (k = 0; k < N; k++)
		json_decref(triage_client_recv(c, &id, 30000, &e));
	json_decref(tcall(c, "resume", "{ss}", "priority", "high"));
	triage_client_free(c);
}

static void
test_pipelined_requests_all_answered(void **state)
{
	enum { N = 200 };
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t ids[N], id;
	bool got[N] = { false };
	json_t *res;
	int i, k;

	(void)state;
	for (i = 0; i < N; i++) {
		ids[i] = triage_client_send(c, i % 2 ? "stats" : "submit",
		    i % 2 ? NULL : json_pack("{s[s]}", "argv", "true"), &e);
		assert_true(ids[i] > 0);
	}
	for (i = 0; i < N; i++) {
		res = triage_client_recv(c, &id, 30000, &e);
		assert_non_null(res);
		for (k = 0; k < N; k++)
			if (ids[k] == id) {
				assert_false(got[k]);
				got[k] = true;
			}
		json_decref(res);
	}
	for (i = 0; i < N; i++)
		assert_true(got[i]);
	triage_client_free(c);
}

static void
test_line_over_max_request_closes_connection(void **state)
{
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	char *big = malloc(8192);
	json_t *msg;

	(void)state;
	memset(big, ' ', 8192);
	memcpy(big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stats\"", 40);
	big[8190] = '}';
	big[8191] = '\n';
	assert_int_equal(client_send_raw(c, big, 8192), 0);
	msg = client_read_message(c, 30000, &e);
	assert_non_null(msg);
	assert_int_equal(error_code(msg), -32600);
	assert_true(json_is_null(json_object_get(msg, "id")));
	json_decref(msg);
	/* ...and then the connection is closed. */
	assert_null(client_read_message(c, 30000, &e));
	assert_int_equal(e.code, TRIAGE_ERR_TRANSPORT);
	triage_client_free(c);
	free(big);
	/* Others are not affected. */
	c = tconnect(d);
	json_decref(tcall(c, "stats", "{}"));
	triage_client_free(c);
}

static void
test_replies_are_one_line_whatever_the_strings(void **state)
{
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t id;

	(void)state;
	id = tsubmit(c, "{s[ss]ss}", "argv", "echo", "a\nb", "name",
	    "two\nlines");
	job = twait(c, id);
	assert_string_equal(json_string_value(json_object_get(job, "name")),
	    "two\nlines");
	json_decref(job);
	triage_client_free(c);
}

static void
test_error_field_names_the_param(void **state)
{
	struct triage_client *c = tconnect(d);
	json_t *msg;

	(void)state;
	msg = raw(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"submit\","
	    "\"params\":{\"argv\":[\"true\"],\"slots\":\"two\"}}\n");
	assert_int_equal(error_code(msg), -32602);
	assert_string_equal(error_field(msg), "slots");
	json_decref(msg);
	msg = raw(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"submit\","
	    "\"params\":[\"true\"]}\n");
	assert_int_equal(error_code(msg), -32602);
	json_decref(msg);
	triage_client_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_json_then_good_request_on_same_connection),
		cmocka_unit_test(test_nesting_deeper_than_64_is_a_parse_error),
		cmocka_unit_test(test_invalid_requests_get_32600),
		cmocka_unit_test(test_unknown_method_and_bad_params),
		cmocka_unit_test(test_no_such_job),
		cmocka_unit_test(test_queue_full),
		cmocka_unit_test(test_permission_denied_for_others_jobs_and_pause),
		cmocka_unit_test(test_batches_and_notifications),
		cmocka_unit_test(test_batch_over_max_batch_is_refused),
		cmocka_unit_test(test_large_batch_reply_is_one_array_beside_other_replies),
		cmocka_unit_test(test_pipelined_requests_all_answered),
		cmocka_unit_test(test_line_over_max_request_closes_connection),
		cmocka_unit_test(test_replies_are_one_line_whatever_the_strings),
		cmocka_unit_test(test_error_field_names_the_param),
	};

	return cmocka_run_group_tests_name("rpc", tests, setup,
	    tdaemon_group_teardown);
}
