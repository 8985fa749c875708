/* test-limits.c - each per-user and per-connection bound of the config,
 * exceeded: a clear error naming it, and nobody else affected. */
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

/* A paused priority keeps what is submitted to it queued. */
#define PAUSED_PRIORITY "[priority.held]\nrank = 5\n" \
	"[priority.normal]\nrank = 10\n"

/* Fails the test unless e is -32003 for the config key, named in the
 * message as "(KEY)". */
static void
assert_limit(const struct triage_error *e, int code, const char *key)
{
	char want[64];

	assert_int_equal(code, -32003);
	snprintf(want, sizeof want, "(%s)", key);
	if (strstr(e->message, want) == NULL)
		fail_msg("\"%s\" does not name %s", e->message, key);
}

static int64_t
submit_held(struct triage_client *c)
{
	return tsubmit(c, "{s[ss] ss}", "argv", "sleep", "60", "priority",
	    "held");
}

/* One uid may not fill the queues: past max_queued_per_user its submits
 * are refused, a cancel makes room again, and others still get in. */
static void
test_max_queued_per_user(void **state)
{
	struct tdaemon *d = tdaemon_start("max_queued_per_user = 3\n"
	    PAUSED_PRIORITY);
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t ids[3];
	int i;

	(void)state;
	json_decref(tcall(c, "pause", "{ss}", "priority", "held"));
	for (i = 0; i < 3; i++)
		ids[i] = submit_held(c);
	assert_limit(&e, tcall_error(c, "submit", &e, "{s[s]}", "argv",
	    "true"), "max_queued_per_user");
	assert_non_null(strstr(e.message, "has 3 jobs queued"));
	json_decref(tcall(c, "cancel", "{sI}", "id", ids[0]));
	ids[0] = submit_held(c);
	assert_limit(&e, tcall_error(c, "submit", &e, "{s[s]}", "argv",
	    "true"), "max_queued_per_user");
	/* Nor do jobs that ran, or ended otherwise. */
	for (i = 0; i < 3; i++)
		json_decref(tcall(c, "cancel", "{sI}", "id", ids[i]));
	for (i = 0; i < 3; i++)
		json_decref(twait(c, tsubmit(c, "{s[s]}", "argv", "true")));
	tdaemon_end(d, c);
}

/* The limits' refusals count one job as one job, not "1 jobs". */
static void
test_limits_say_one_job(void **state)
{
	struct tdaemon *d = tdaemon_start("max_queued_per_user = 1\n"
	    "[priority.held]\nrank = 5\nmax_queued = 1\n"
	    "[priority.normal]\nrank = 10\n");
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t id;

	(void)state;
	json_decref(tcall(c, "pause", "{ss}", "priority", "held"));
	id = submit_held(c);
	assert_limit(&e, tcall_error(c, "submit", &e, "{s[s]ss}", "argv",
	    "true", "priority", "held"), "max_queued");
	if (strstr(e.message, "is full: 1 job queued (max_queued)") == NULL)
		fail_msg("not one job: %s", e.message);
	assert_limit(&e, tcall_error(c, "submit", &e, "{s[s]}", "argv",
	    "true"), "max_queued_per_user");
	if (strstr(e.message, " has 1 job queued; the limit is 1") == NULL)
		fail_msg("not one job: %s", e.message);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	tdaemon_end(d, c);
}

/* A connection's parked waits are bounded; other connections are not
 * held to its count. */
static void
test_max_waits(void **state)
{
	struct tdaemon *d = tdaemon_start("max_waits = 2\n" PAUSED_PRIORITY);
	struct triage_client *c = tconnect(d), *other = tconnect(d);
	struct triage_error e;
	int64_t id, got, third;
	json_t *res;
	int i;

	(void)state;
	json_decref(tcall(c, "pause", "{ss}", "priority", "held"));
	id = submit_held(c);
	for (i = 0; i < 2; i++)
		assert_true(triage_client_send(c, "wait", json_pack("{sI}",
		    "id", id), &e) > 0);
	third = triage_client_send(c, "wait", json_pack("{sI}", "id", id), &e);
	assert_true(third > 0);
	res = triage_client_recv(c, &got, 30000, &e);
	assert_null(res);
	assert_int_equal(got, third);
	assert_limit(&e, e.code, "max_waits");
	assert_true(triage_client_send(other, "wait", json_pack("{sI}", "id",
	    id), &e) > 0);
	json_decref(tcall(c, "cancel", "{sI}", "id", id));
	for (i = 0; i < 2; i++) {
		res = triage_client_recv(c, &got, 30000, &e);
		assert_non_null(res);
		assert_string_equal(tstate(res), "canceled");
		json_decref(res);
	}
	res = triage_client_recv(other, &got, 30000, &e);
	assert_non_null(res);
	json_decref(res);
	triage_client_free(other);
	tdaemon_end(d, c);
}

/* Watches add up, to max_watches per connection; a job two of them
 * match is told once. */
static void
test_max_watches(void **state)
{
	struct tdaemon *d = tdaemon_start("max_watches = 2\n");
	struct triage_client *c = tconnect(d), *other = tconnect(d);
	struct triage_error e;
	json_t *note;
	int64_t id;

	(void)state;
	json_decref(tcall(c, "watch", "{ss}", "priority", "normal"));
	json_decref(tcall(c, "watch", "{}"));
	assert_limit(&e, tcall_error(c, "watch", &e, "{}"), "max_watches");
	json_decref(tcall(other, "watch", "{}"));
	id = tsubmit(other, "{s[s]}", "argv", "true");
	json_decref(twait(other, id));
	/* queued, running, succeeded: each once. */
	note = tnotification(c);
	assert_string_equal(tstate(note), "queued");
	json_decref(note);
	note = tnotification(c);
	assert_string_equal(tstate(note), "running");
	json_decref(note);
	note = tnotification(c);
	assert_string_equal(tstate(note), "succeeded");
	json_decref(note);
	assert_null(triage_client_notification(c, 200, &e));
	triage_client_free(other);
	tdaemon_end(d, c);
}

/*
 * One uid's connections past max_clients_per_user get an error line with
 * id null naming the key, and are closed; another user still gets in.
 */
static void
test_max_clients_per_user(void **state)
{
	struct tdaemon *d = tdaemon_start("max_clients_per_user = 2\n"
	    "socket_mode = 0666\n");
	struct triage_client *a = tconnect(d), *b = tconnect(d), *third, *other;
	struct triage_error e;
	char *cause = NULL;
	int64_t deadline;
	json_t *msg;

	(void)state;
	third = tconnect(d);
	msg = client_read_message(third, 30000, &e);
	if (msg == NULL)
		fail_msg("no refusal on the third connection: %d %s", e.code,
		    e.message);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    msg, "error"), "code")), -32003);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(msg, "error"), "data"), "limit")),
	    "max_clients_per_user");
	json_decref(msg);
	assert_null(client_read_message(third, 30000, &e));
	triage_client_free(third);
	json_decref(tcall(a, "stats", "{}"));
	if (geteuid() == 0 && getpwuid(2) != NULL) {
		assert_int_equal(chmod(d->dir, 0711), 0);
		assert_int_equal(setegid(2), 0);
		assert_int_equal(seteuid(2), 0);
		other = triage_client_connect(d->sock, &cause);
		assert_int_equal(seteuid(0), 0);
		assert_int_equal(setegid(0), 0);
		assert_non_null(other);
		json_decref(tcall(other, "stats", "{}"));
		triage_client_free(other);
	}
	/* One of ours gone, there is room for one more, once the daemon
	 * has seen it go. */
	triage_client_free(b);
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (;;) {
		third = tconnect(d);
		msg = triage_client_call(third, "stats", NULL, 30000, &e);
		triage_client_free(third);
		if (msg != NULL)
			break;
		assert_int_equal(e.code, -32003);
		tcheck_deadline(deadline, "room for a connection");
		usleep(10000);
	}
	json_decref(msg);
	tdaemon_end(d, a);
}

/*
 * A client that never reads what it asked for is cut off once it is
 * max_unread behind, instead of growing the daemon; the others go on.
 */
static void
test_max_unread(void **state)
{
	struct tdaemon *d = tdaemon_start("max_unread = 64KiB\n"
	    "max_request = 4KiB\n");
	struct triage_client *sink = tconnect(d), *c = tconnect(d);
	static char batch[4000];
	size_t len = 0;
	int i;

	(void)state;
	/* stats replies of ~600 bytes, 60 to a line, never read. */
	batch[len++] = '[';
	for (i = 0; i < 60; i++)
		len += (size_t)snprintf(batch + len, sizeof batch - len,
		    "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"stats\"}",
		    i ? "," : "", i);
	assert_true(len + 2 < sizeof batch);
	batch[len++] = ']';
	batch[len++] = '\n';
	for (i = 0; i < 400 && !tlog_has(d, "max_unread"); i++)
		if (client_send_raw(sink, batch, len) != 0)
			break;
	twait_log(d, "is not reading its replies (over 65536 bytes unread: "
	    "max_unread)");
	json_decref(tcall(c, "stats", "{}"));
	triage_client_free(sink);
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_queued_per_user),
		cmocka_unit_test(test_limits_say_one_job),
		cmocka_unit_test(test_max_waits),
		cmocka_unit_test(test_max_watches),
		cmocka_unit_test(test_max_clients_per_user),
		cmocka_unit_test(test_max_unread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
