/* test-cluster-output.c - `output` of a job that runs or ran on another node
 * of a cluster: two daemons on one PostgreSQL, jobs pinned to b read at a. */
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"
#include "tpg.h"

/* max_output of both nodes: small, so that streams pass it cheaply. */
#define MAX_OUTPUT 100000
/* How long a test waits for what it polls (a job's end, its output). */
#define WAIT_MS 20000
#define POLL_MS 20

static struct tpg *pg;
static struct tdaemon *a, *b;
/* Each test's connections to a and b. */
static struct triage_client *ca, *cb;

/*
 * Node a runs nothing of these tests (the jobs are pinned to b); both
 * have the same priorities, as a cluster's nodes must, and low keeps the
 * tail of a stream.
 */
static struct tdaemon *
start_node(const char *conninfo, const char *node)
{
	struct passwd *pw = getpwuid(getuid());
	char extra[1024];

	snprintf(extra, sizeof extra, "slots = 2\nkill_grace = 1s\n"
	    "max_output = %d\n[priority.high]\nrank = 0\n"
	    "[priority.low]\nrank = 20\noutput_keep = tail\n"
	    "[cluster]\npostgresql = %s user=%s\nnode = %s\n", MAX_OUTPUT,
	    conninfo, pw != NULL ? pw->pw_name : "root", node);
	return tdaemon_start(extra);
}

static int
group_setup(void **state)
{
	char *conninfo;

	(void)state;
	if ((pg = tpg_start()) == NULL)
		return 0;
	conninfo = tpg_createdb(pg, "clout");
	/* b first: a reads the nodes there are as it starts. */
	b = start_node(conninfo, "b");
	a = start_node(conninfo, "a");
	free(conninfo);
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	if (a != NULL)
		assert_int_equal(tdaemon_stop(a), 0);
	if (b != NULL)
		assert_int_equal(tdaemon_stop(b), 0);
	tdaemon_free(a);
	tdaemon_free(b);
	tpg_free(pg);
	return 0;
}

static int
connect_both(void **state)
{
	(void)state;
	if (pg != NULL) {
		ca = tconnect(a);
		cb = tconnect(b);
	}
	return 0;
}

static int
disconnect_both(void **state)
{
	(void)state;
	triage_client_free(ca);
	triage_client_free(cb);
	ca = cb = NULL;
	return 0;
}

static void
need_pg(void)
{
	if (pg == NULL)
		skip();
}

/* A job running script under sh, submitted at a, pinned to b. */
static int64_t
submit_on_b(struct triage_client *c, const char *script, const char *priority,
    int retries)
{
	return tsubmit(c, "{s[sss] ss ss si}", "argv", "sh", "-c", script,
	    "node", "b", "priority", priority, "retries", retries);
}

static json_t *
page_at(struct triage_client *c, int64_t id, const char *stream,
    json_int_t offset, json_int_t limit)
{
	return tcall(c, "output", "{sI ss sI sI}", "id", (json_int_t)id,
	    "stream", stream, "offset", offset, "limit", limit);
}

/* Polls get at a until the job has ended; returns it. */
static json_t *
wait_ended(struct triage_client *c, int64_t id)
{
	int64_t deadline = tdeadline(WAIT_MS);
	const char *s;
	json_t *job;

	for (;;) {
		job = tget(c, id);
		s = tstate(job);
		if (strcmp(s, "queued") != 0 && strcmp(s, "running") != 0)
			return job;
		json_decref(job);
		tcheck_deadline(deadline, "job %lld did not end",
		    (long long)id);
		usleep(POLL_MS * 1000);
	}
}

/* Polls get at b until it knows the job a took. */
static json_t *
wait_known(struct triage_client *c, int64_t id)
{
	int64_t deadline = tdeadline(WAIT_MS);
	struct triage_error e;
	json_t *job;

	while ((job = triage_client_call(c, "get", json_pack("{sI}", "id",
	    (json_int_t)id), WAIT_MS, &e)) == NULL) {
		assert_int_equal(e.code, -32001);
		tcheck_deadline(deadline, "node b never knew job %lld",
		    (long long)id);
		usleep(POLL_MS * 1000);
	}
	return job;
}

/* The same, for a job that must succeed. */
static void
wait_succeeded(struct triage_client *c, int64_t id)
{
	json_t *job = wait_ended(c, id);

	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
}

/* Polls a's output of the stream until its data from offset 0 is want. */
static json_t *
page_when(struct triage_client *c, int64_t id, const char *stream,
    const char *want)
{
	int64_t deadline = tdeadline(WAIT_MS);
	json_t *page;

	for (;;) {
		page = page_at(c, id, stream, 0, 1 << 20);
		if (strcmp(tjstr(page, "data"), want) == 0)
			return page;
		json_decref(page);
		tcheck_deadline(deadline, "job %lld's %s never read \"%s\" at "
		    "node a", (long long)id, stream, want);
		usleep(POLL_MS * 1000);
	}
}

/* a's reply (read from the database) is b's (read from b's files), to the
 * byte, for the page asked. */
static void
assert_same_page(int64_t id,
    const char *stream, json_int_t offset, json_int_t limit)
{
	json_t *pa = page_at(ca, id, stream, offset, limit);
	json_t *pb = page_at(cb, id, stream, offset, limit);
	char *ta = json_dumps(pa, JSON_SORT_KEYS);
	char *tb = json_dumps(pb, JSON_SORT_KEYS);

	if (strcmp(ta, tb) != 0)
		fail_msg("job %lld's %s at offset %lld, limit %lld: node a "
		    "says %.400s, node b %.400s", (long long)id, stream,
		    (long long)offset, (long long)limit, ta, tb);
	free(ta);
	free(tb);
	json_decref(pa);
	json_decref(pb);
}

/* Every page the tests care for, a's the same as b's. */
static void
assert_same_everywhere(int64_t id,
    const char *stream, json_int_t size)
{
	static const json_int_t limits[] = { 1, 7, 1000, 65536, 1 << 20 };
	const json_int_t offsets[] = { 0, 1, size / 2, size - 1, size,
	    size + 10, -1, -10, -size, -size - 5, INT64_MAX, INT64_MIN };
	size_t i, j;

	for (i = 0; i < sizeof offsets / sizeof offsets[0]; i++)
		for (j = 0; j < sizeof limits / sizeof limits[0]; j++)
			assert_same_page(id, stream, offsets[i],
			    limits[j]);
}

static bool
jbool(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* Written, read at a while the job waits at its gate on b, then the rest
 * once it has ended: stdout and stderr both. */
static void
test_running_then_ended(void **state)
{
	char script[1200];
	json_t *page, *job;
	int64_t id;

	(void)state;
	need_pg();
	snprintf(script, sizeof script, "printf 'first\\n'; printf 'err1\\n'"
	    " >&2; %s; printf 'second\\n'; printf 'err2' >&2",
	    tgate_sh(b, "run-gate"));
	id = submit_on_b(ca, script, "high", 0);

	page = page_when(ca, id, "stdout", "first\n");
	assert_false(jbool(page, "eof"));
	assert_false(jbool(page, "truncated"));
	assert_int_equal(tjint(page, "dropped"), 0);
	assert_int_equal(tjint(page, "attempt"), 1);
	assert_int_equal(tjint(page, "next_offset"), 6);
	json_decref(page);
	json_decref(page_when(ca, id, "stderr", "err1\n"));
	job = tget(ca, id);
	assert_string_equal(tjstr(job, "node"), "b");
	json_decref(job);

	topen_gate(b, "run-gate");
	wait_succeeded(ca, id);
	/* Seen ended at a, its output is all there at once. */
	page = page_at(ca, id, "stdout", 0, 1 << 20);
	assert_string_equal(tjstr(page, "data"), "first\nsecond\n");
	assert_true(jbool(page, "eof"));
	json_decref(page);
	page = page_at(ca, id, "stderr", 0, 1 << 20);
	assert_string_equal(tjstr(page, "data"), "err1\nerr2");
	assert_true(jbool(page, "eof"));
	json_decref(page);
	assert_same_everywhere(id, "stdout", 13);
	assert_same_everywhere(id, "stderr", 10);
}

/* Bytes that are no UTF-8 come as base64, pages of any size and offset
 * (negative ones too) as at the node that ran the job, and pages read in
 * turn make up the stream. */
static void
test_binary_pages(void **state)
{
	enum { SIZE = 200000 };
	char script[256];
	json_t *page, *whole;
	json_int_t off;
	char *all, *part;
	size_t len = 0;
	int64_t id;

	(void)state;
	need_pg();
	/* Past a chunk of the database's (64 KiB), under max_output. */
	snprintf(script, sizeof script, "head -c %d /dev/urandom; "
	    "printf '\\377\\376' >&2", MAX_OUTPUT - 1);
	id = submit_on_b(ca, script, "high", 0);
	wait_succeeded(ca, id);

	page = page_at(ca, id, "stderr", 0, 100);
	assert_string_equal(tjstr(page, "encoding"), "base64");
	assert_string_equal(tjstr(page, "data"), "//4=");
	json_decref(page);
	assert_same_everywhere(id, "stdout", MAX_OUTPUT - 1);
	assert_same_everywhere(id, "stderr", 2);

	/* Pages of 6999 bytes, in turn, are b's one page. */
	whole = page_at(cb, id, "stdout", 0, 1 << 20);
	all = calloc(1, SIZE * 2);
	assert_non_null(all);
	for (off = 0; off < MAX_OUTPUT - 1; off = tjint(page, "next_offset")) {
		if (off > 0)
			json_decref(page);
		page = page_at(ca, id, "stdout", off, 6999);
		assert_string_equal(tjstr(page, "encoding"), "base64");
		part = strdup(tjstr(page, "data"));
		assert_non_null(part);
		memcpy(all + len, part, strlen(part));
		len += strlen(part);
		free(part);
		assert_true(tjint(page, "next_offset") > off);
	}
	assert_true(jbool(page, "eof"));
	json_decref(page);
	/* 6999 is a multiple of 3: the pieces of base64 join. */
	assert_string_equal(all, tjstr(whole, "data"));
	free(all);
	json_decref(whole);
}

/* Past max_output (head): cut there, truncated, read alike at a. */
static void
test_truncated(void **state)
{
	json_t *page;
	int64_t id;

	(void)state;
	need_pg();
	id = submit_on_b(ca, "seq 1 100000", "high", 0);
	wait_succeeded(ca, id);
	page = page_at(ca, id, "stdout", -10, 100);
	assert_true(jbool(page, "truncated"));
	assert_true(jbool(page, "eof"));
	assert_int_equal(tjint(page, "offset"), MAX_OUTPUT - 10);
	assert_int_equal(tjint(page, "dropped"), 0);
	json_decref(page);
	assert_same_everywhere(id, "stdout", MAX_OUTPUT);
}

/* Whether a's page from 0 is b's, ending with last (the job is quiet at
 * its gate then). */
static bool
same_now(int64_t id, const char *last)
{
	json_t *pa = page_at(ca, id, "stdout", 0, 1 << 20);
	json_t *pb = page_at(cb, id, "stdout", 0, 1 << 20);
	const char *data = tjstr(pb, "data");
	size_t len = strlen(data);
	bool same = json_equal(pa, pb) && len >= strlen(last) &&
	    strcmp(data + len - strlen(last), last) == 0;

	json_decref(pa);
	json_decref(pb);
	return same;
}

/* output_keep = tail: what b compacts away is dropped at a too, while the
 * job runs and once it has ended, with the same counts and offsets. */
static void
test_tail_dropped(void **state)
{
	int64_t id, deadline;
	char script[1200];
	json_t *page;

	(void)state;
	need_pg();
	snprintf(script, sizeof script, "seq 1 100000; %s; seq 100001 "
	    "150000", tgate_sh(b, "tail-gate"));
	id = submit_on_b(ca, script, "low", 0);
	json_decref(wait_known(cb, id));
	deadline = tdeadline(WAIT_MS);
	while (!same_now(id, "\n100000\n")) {
		tcheck_deadline(deadline, "job %lld's kept tail never read "
		    "alike at a and b", (long long)id);
		usleep(POLL_MS * 1000);
	}
	page = page_at(ca, id, "stdout", 0, 100);
	assert_true(tjint(page, "dropped") > 0);
	assert_true(jbool(page, "truncated"));
	assert_false(jbool(page, "eof"));
	json_decref(page);

	topen_gate(b, "tail-gate");
	wait_succeeded(ca, id);
	page = page_at(ca, id, "stdout", -7, 100);
	assert_string_equal(tjstr(page, "data"), "150000\n");
	assert_int_equal(tjint(page, "offset"), MAX_OUTPUT - 7);
	/* seq 1 150000 writes 938895 bytes. */
	assert_int_equal(tjint(page, "dropped"), 938895 - MAX_OUTPUT);
	assert_true(jbool(page, "truncated"));
	json_decref(page);
	assert_same_everywhere(id, "stdout", MAX_OUTPUT);
}

/* A retried job: its new attempt's output, afresh, at a as at b. */
static void
test_retry(void **state)
{
	char script[1200];
	json_t *page, *job;
	int64_t id;

	(void)state;
	need_pg();
	snprintf(script, sizeof script, "if [ -e %s/retried ]; then echo "
	    "second; else touch %s/retried; echo first try; exit 3; fi",
	    b->dir, b->dir);
	id = submit_on_b(ca, script, "high", 1);
	job = wait_ended(ca, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	page = page_at(ca, id, "stdout", 0, 100);
	assert_string_equal(tjstr(page, "data"), "second\n");
	assert_int_equal(tjint(page, "attempt"), 2);
	json_decref(page);
	assert_same_everywhere(id, "stdout", 7);
}

/* Opens the gate of the job the CLI follows once its first line is seen
 * at a: the CLI then has followed it through a write and its end. */
struct opener {
	int64_t id;
};

static void *
opener_main(void *arg)
{
	struct opener *o = arg;
	struct triage_client *c = tconnect(a);
	int64_t deadline = tdeadline(WAIT_MS);
	json_t *page;
	bool seen = false;

	while (!seen && tleft_ms(deadline) > 0) {
		page = page_at(c, o->id, "stdout", 0, 100);
		seen = strcmp(tjstr(page, "data"), "one\n") == 0;
		json_decref(page);
		if (!seen)
			usleep(POLL_MS * 1000);
	}
	triage_client_free(c);
	topen_gate(b, "follow-gate");
	return NULL;
}

/* triage output -f at a follows a job running on b to its end. */
static void
test_cli_follow(void **state)
{
	char script[1200], id[32], *out, *err;
	struct opener o;
	pthread_t t;

	(void)state;
	need_pg();
	snprintf(script, sizeof script, "echo one; %s; echo two",
	    tgate_sh(b, "follow-gate"));
	o.id = submit_on_b(ca, script, "high", 0);
	snprintf(id, sizeof id, "%lld", (long long)o.id);
	assert_int_equal(pthread_create(&t, NULL, opener_main, &o), 0);
	assert_int_equal(tcli(a, &out, &err, "output", "-f", id, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_string_equal(out, "one\ntwo\n");
	assert_string_equal(err, "");
	free(out);
	free(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_running_then_ended, connect_both,
		    disconnect_both),
		cmocka_unit_test_setup_teardown(test_binary_pages, connect_both,
		    disconnect_both),
		cmocka_unit_test_setup_teardown(test_truncated, connect_both,
		    disconnect_both),
		cmocka_unit_test_setup_teardown(test_tail_dropped, connect_both,
		    disconnect_both),
		cmocka_unit_test_setup_teardown(test_retry, connect_both,
		    disconnect_both),
		cmocka_unit_test_setup_teardown(test_cli_follow, connect_both,
		    disconnect_both),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
