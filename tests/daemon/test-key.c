/* test-key.c - idempotent submission through a real triaged: a key names one
 * job of its user while the job is kept, across a crash and across nodes. */
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "client.h"
#include "harness.h"
#include "job.h"
#include "tnodes.h"
#include "tpg.h"

/* A submit of `true` with key: its result (fails the test on an error). */
static json_t *
submit_key(struct triage_client *c, const char *key)
{
	return tcall(c, "submit", "{s[s] ss ss}", "argv", "true", "key", key,
	    "cwd", "/");
}

static bool
existing(const json_t *job)
{
	return json_is_true(json_object_get(job, "existing"));
}

/* How many of the jobs `list` shows have this key. */
static int
count_key(struct triage_client *c, const char *key)
{
	json_t *res = tcall(c, "list", "{}"), *job;
	int n = 0;
	size_t i;

	json_array_foreach(json_object_get(res, "jobs"), i, job)
		if (json_is_string(json_object_get(job, "key")) &&
		    strcmp(tjstr(job, "key"), key) == 0)
			n++;
	json_decref(res);
	return n;
}

/* The first submit makes the job; the same key again returns it, marked,
 * and makes nothing; another key is another job. get shows the key. */
static void
test_same_key_same_job(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	json_t *first, *again, *other, *got;

	(void)state;
	first = submit_key(c, "order-17");
	assert_false(existing(first));
	assert_string_equal(tjstr(first, "key"), "order-17");
	again = submit_key(c, "order-17");
	assert_true(existing(again));
	assert_int_equal(tjint(again, "id"), tjint(first, "id"));
	other = submit_key(c, "order-18");
	assert_false(existing(other));
	assert_int_not_equal(tjint(other, "id"), tjint(first, "id"));
	got = tget(c, tjint(first, "id"));
	assert_string_equal(tjstr(got, "key"), "order-17");
	assert_null(json_object_get(got, "existing"));
	assert_int_equal(count_key(c, "order-17"), 1);
	json_decref(got);
	/* A job without a key has "key": null. */
	got = tget(c, tsubmit(c, "{s[s]}", "argv", "true"));
	assert_true(json_is_null(json_object_get(got, "key")));
	json_decref(got);
	json_decref(first);
	json_decref(again);
	json_decref(other);
	tdaemon_end(d, c);
}

/* Every bad key is refused naming the field, and makes nothing. */
static void
test_bad_keys_are_refused(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	char longest[JOB_KEY_MAX + 2];
	json_t *job;

	(void)state;
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s] ss}", "argv",
	    "true", "key", ""), -32602);
	assert_string_equal(e.field, "key");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s] si}", "argv",
	    "true", "key", 7), -32602);
	assert_string_equal(e.field, "key");
	memset(longest, 'k', sizeof longest);
	longest[JOB_KEY_MAX + 1] = '\0';
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s] ss}", "argv",
	    "true", "key", longest), -32602);
	assert_string_equal(e.field, "key");
	assert_non_null(strstr(e.message, "257"));
	/* The longest there may be is taken. */
	longest[JOB_KEY_MAX] = '\0';
	job = submit_key(c, longest);
	assert_false(existing(job));
	json_decref(job);
	tdaemon_end(d, c);
}

/* Two submits of one key in one batch, and two pipelined: the second
 * waits for the first's commit and gets its job. */
static void
test_same_key_at_once(void **state)
{
	static const char batch[] = "["
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"submit\",\"params\":"
	    "{\"argv\":[\"true\"],\"key\":\"twice\"}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"submit\",\"params\":"
	    "{\"argv\":[\"true\"],\"key\":\"twice\"}}]\n";
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	json_t *msg, *a, *b, *res[2];
	int64_t rid[2], got;
	int i;

	(void)state;
	assert_int_equal(client_send_raw(c, batch, strlen(batch)), 0);
	msg = client_read_message(c, HARNESS_TIMEOUT_MS, &e);
	assert_non_null(msg);
	assert_int_equal(json_array_size(msg), 2);
	a = json_object_get(json_array_get(msg, 0), "result");
	b = json_object_get(json_array_get(msg, 1), "result");
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(tjint(a, "id"), tjint(b, "id"));
	assert_true(existing(a) != existing(b));
	json_decref(msg);

	for (i = 0; i < 2; i++) {
		rid[i] = triage_client_send(c, "submit", json_pack("{s[s] ss}",
		    "argv", "true", "key", "piped"), &e);
		assert_true(rid[i] >= 0);
	}
	for (i = 0; i < 2; i++) {
		res[i] = triage_client_recv(c, &got, HARNESS_TIMEOUT_MS, &e);
		assert_non_null(res[i]);
		assert_int_equal(got, rid[i]);
	}
	assert_int_equal(tjint(res[0], "id"), tjint(res[1], "id"));
	assert_false(existing(res[0]));
	assert_true(existing(res[1]));
	assert_int_equal(count_key(c, "piped"), 1);
	json_decref(res[0]);
	json_decref(res[1]);
	tdaemon_end(d, c);
}

/* A key is its user's: another user's same key is another job. */
static void
test_keys_are_per_user(void **state)
{
	struct passwd *pw = getpwnam("nobody");
	struct tdaemon *d;
	struct triage_client *c, *other;
	json_t *mine, *theirs;

	(void)state;
	if (geteuid() != 0 || pw == NULL)
		skip();
	d = tdaemon_start("run_as_submitter = yes\n");
	c = tconnect(d);
	mine = submit_key(c, "shared-name");
	/* nobody passes through the daemon's dir to its socket. */
	assert_int_equal(chmod(d->dir, 0711), 0);
	assert_int_equal(seteuid(pw->pw_uid), 0);
	other = tconnect(d);
	assert_int_equal(seteuid(0), 0);
	theirs = submit_key(other, "shared-name");
	assert_false(existing(theirs));
	assert_int_not_equal(tjint(theirs, "id"), tjint(mine, "id"));
	json_decref(theirs);
	theirs = submit_key(other, "shared-name");
	assert_true(existing(theirs));
	json_decref(theirs);
	json_decref(mine);
	triage_client_free(other);
	tdaemon_end(d, c);
}

/* The key is kept while the job is: a retry keeps it; once the job is
 * removed, the key makes a new job. */
static void
test_key_lasts_as_long_as_its_job(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	json_t *job, *again;
	int64_t id;

	(void)state;
	job = tcall(c, "submit", "{s[ss] ss ss}", "argv", "false", "x",
	    "key", "flaky", "cwd", "/");
	id = tjint(job, "id");
	json_decref(job);
	tassert_ends(c, id, "failed");
	json_decref(tcall(c, "retry", "{si}", "id", id));
	again = submit_key(c, "flaky");
	assert_true(existing(again));
	assert_int_equal(tjint(again, "id"), id);
	json_decref(again);
	tassert_ends(c, id, "failed");
	json_decref(tcall(c, "remove", "{si}", "id", id));
	again = submit_key(c, "flaky");
	assert_false(existing(again));
	assert_int_not_equal(tjint(again, "id"), id);
	json_decref(again);
	tdaemon_end(d, c);
}

/*
 * A service that submits, loses the daemon before it reads the answer,
 * and submits again with the key, has one job: the one on disk when the
 * daemon crashed, else the new one. Once with the job certainly stored
 * (seen by another connection) before the kill -9, then several times
 * with the kill at once, the submission's fate unknown.
 */
static void
test_key_across_a_crash(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d), *seer;
	struct triage_error e;
	char key[32];
	json_t *job, *list;
	int64_t deadline;
	int round, n;

	(void)state;
	for (round = 0; round < 4; round++) {
		snprintf(key, sizeof key, "crash-%d", round);
		assert_true(triage_client_send(c, "submit",
		    json_pack("{s[s] ss ss}", "argv", "true", "key", key, "cwd",
		    "/"), &e) >= 0);
		if (round == 0) {
			/* Stored: another client sees it. */
			seer = tconnect(d);
			deadline = tdeadline(HARNESS_TIMEOUT_MS);
			while ((n = count_key(seer, key)) == 0)
				tcheck_deadline(deadline, "job with key %s "
				    "never listed", key);
			triage_client_free(seer);
		}
		tdaemon_crash(d);
		triage_client_free(c);
		tdaemon_restart(d);
		c = tconnect(d);
		n = count_key(c, key);
		assert_true(round > 0 || n == 1);
		job = submit_key(c, key);
		/* What was on disk is the answer; nothing else was made. */
		assert_true(existing(job) == (n == 1));
		assert_int_equal(count_key(c, key), 1);
		json_decref(job);
	}
	list = tcall(c, "list", "{}");
	assert_int_equal(json_array_size(json_object_get(list, "jobs")), 4);
	json_decref(list);
	tdaemon_end(d, c);
}

/*
 * Two nodes given the same key at once, before either has heard of the
 * other's job: one job in the cluster, and both submitters get it, one of
 * them marked "existing" (the database's unique index decides).
 */
static void
test_same_key_on_two_nodes_at_once(void **state)
{
	struct tnodes *cl = tnodes_start(2, 2, "");
	struct triage_error e;
	json_t *res[2];
	int64_t rid[2], got;
	char key[32];
	int round, i, fresh;

	(void)state;
	for (round = 0; round < 20; round++) {
		snprintf(key, sizeof key, "race-%d", round);
		for (i = 0; i < 2; i++) {
			rid[i] = triage_client_send(cl->c[i], "submit",
			    json_pack("{s[s] ss ss s b}", "argv", "true",
			    "key", key, "cwd", "/", "hold", true), &e);
			assert_true(rid[i] >= 0);
		}
		fresh = 0;
		for (i = 0; i < 2; i++) {
			res[i] = triage_client_recv(cl->c[i], &got,
			    HARNESS_TIMEOUT_MS, &e);
			if (res[i] == NULL)
				fail_msg("node %d: %s", i, e.message);
			fresh += !existing(res[i]);
		}
		assert_int_equal(tjint(res[0], "id"), tjint(res[1], "id"));
		assert_int_equal(fresh, 1);
		json_decref(res[0]);
		json_decref(res[1]);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(count_key(cl->c[i], "race-0"), 1);
	/* The database's index decided at least once: both requests were
	 * sent before either was answered, so each node looked before it
	 * could have read the other's job (else every round above would
	 * have tested only the memory of one). */
	assert_true(tlog_has(cl->d[0], "was taken at once by another") ||
	    tlog_has(cl->d[1], "was taken at once by another"));
	tnodes_end(cl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_key_same_job),
		cmocka_unit_test(test_bad_keys_are_refused),
		cmocka_unit_test(test_same_key_at_once),
		cmocka_unit_test(test_keys_are_per_user),
		cmocka_unit_test(test_key_lasts_as_long_as_its_job),
		cmocka_unit_test(test_key_across_a_crash),
	};
	const struct CMUnitTest cluster[] = {
		cmocka_unit_test(test_same_key_on_two_nodes_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) |
	    cmocka_run_group_tests_name("cluster", cluster, tpg_group_setup,
	    tpg_group_teardown);
}
