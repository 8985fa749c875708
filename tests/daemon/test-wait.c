/* test-wait.c - `wait` requests alone on a bare event_base, parked on the
 * jobs of a real state machine, asked and answered over socket pairs:
 * several on one job, one on a job that has ended, a timeout, a waiter
 * whose connection closes. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "conn.h"
#include "jobs.h"
#include "loop.h"
#include "machine.h"
#include "peer.h"
#include "rpc.h"
#include "served.h"
#include "wait.h"

#define WAIT_FOR(s, cond)	LOOP_WAIT_FOR(&(s)->m->loop, cond)
#define MAX_IDS	8

static struct served *fx;
static int nwaits;		/* wait requests taken */

/*
 * "wait": {"ids": [...], "one": true|false, "timeout": ms, "now": bool},
 * as the wait method hands them on; each id must be a job of the store.
 */
static void
dispatch(struct rpc_req *req, const char *method, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	const json_t *ids = json_object_get(params, "ids");
	uint64_t v[MAX_IDS];
	size_t n = json_array_size(ids), i;

	if (strcmp(method, "wait") != 0 || n == 0 || n > MAX_IDS) {
		rpc_error(req, RPC_INVALID_PARAMS, NULL, "not for this test");
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = (uint64_t)json_integer_value(json_array_get(ids, i));
	nwaits++;
	if (wait_add(td, req, v, n, json_is_true(json_object_get(params,
	    "one")), (uint64_t)json_integer_value(json_object_get(params,
	    "timeout")), json_is_true(json_object_get(params, "now")),
	    rpc_reply) != 0)
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
}

static int
setup(void **state)
{
	nwaits = 0;
	if ((fx = served_new("test-wait", dispatch)) == NULL ||
	    wait_start(&fx->m->td) != 0 ||
	    jobs_listen(&fx->m->td, wait_job_cb, NULL) != 0)
		return -1;
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct served *s = *state;
	struct triaged *td = &s->m->td;
	int i;

	/* The clients first: what they wait for is withdrawn. */
	for (i = 0; i < s->npeers; i++)
		peer_free(s->peers[i]);
	s->npeers = 0;
	wait_stop(td);
	served_free(s);
	return 0;
}

/* Sends request rid: a wait for the n ids, with more params after them
 * (",\"one\":true"). */
static void
send_wait(struct peer *p, int rid, const uint64_t *ids, size_t n,
    const char *more)
{
	char line[256];
	size_t len, i;

	len = (size_t)snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\","
	    "\"id\":%d,\"method\":\"wait\",\"params\":{\"ids\":[", rid);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(line + len, sizeof line - len, "%s%llu",
		    i > 0 ? "," : "", (unsigned long long)ids[i]);
	snprintf(line + len, sizeof line - len, "]%s}}\n", more);
	peer_send(p, line);
}

/* Fails the test unless job is job id in state. */
static void
assert_job(const json_t *job, uint64_t id, const char *state)
{
	if ((uint64_t)json_integer_value(json_object_get(job, "id")) != id ||
	    strcmp(json_string_value(json_object_get(job, "state")), state)
	    != 0)
		fail_msg("job %s, not %llu %s", json_dumps(job, JSON_COMPACT),
		    (unsigned long long)id, state);
}

/* Reads the result of request rid, which must be {"jobs": [...]}: each
 * job of ids in the state of states. */
static void
expect_jobs(struct peer *p, int rid, const uint64_t *ids,
    const char *const *states, size_t n)
{
	json_t *r = served_result(p, rid), *jobs = json_object_get(r, "jobs");
	size_t i;

	assert_int_equal(json_object_size(r), 1);
	assert_int_equal(json_array_size(jobs), n);
	for (i = 0; i < n; i++)
		assert_job(json_array_get(jobs, i), ids[i], states[i]);
	json_decref(r);
}

/* Reads the result of request rid, which must be the job object of id in
 * state (a wait with "one"); its exit_code, or -1. */
static int
expect_job(struct peer *p, int rid, uint64_t id, const char *state)
{
	json_t *r = served_result(p, rid);
	int code;

	assert_job(r, id, state);
	code = json_is_integer(json_object_get(r, "exit_code")) ?
	    (int)json_integer_value(json_object_get(r, "exit_code")) : -1;
	json_decref(r);
	return code;
}

/* Every waiter of a job hears its end: on several connections, twice on
 * one, and once for an id a request names twice. */
static void
several_waiters_on_one_job(void **state)
{
	struct served *s = *state;
	struct peer *a = served_peer(s), *b = served_peer(s);
	uint64_t id = served_submit(s, machine_gated(s->m, 0));
	const uint64_t twice[] = { id, id };

	send_wait(a, 1, &id, 1, ",\"one\":true");
	send_wait(a, 2, twice, 2, "");
	send_wait(b, 3, &id, 1, ",\"one\":true");
	WAIT_FOR(s, nwaits == 3);
	WAIT_FOR(s, machine_is(s->m, id, JOB_RUNNING));
	machine_open_gate(s->m, 0, 0);
	expect_job(a, 1, id, "succeeded");
	expect_jobs(a, 2, twice, (const char *const []){ "succeeded",
	    "succeeded" }, 2);
	expect_job(b, 3, id, "succeeded");
}

/* A job that has ended is answered at once, as it is now; with one that
 * has not, the answer waits for it, in the order of ids. */
static void
waiter_on_an_ended_job(void **state)
{
	struct served *s = *state;
	struct peer *a = served_peer(s);
	uint64_t done = served_submit(s, machine_job(s->m,
	    (const char *const []){ "sh", "-c", "exit 3", NULL }));
	uint64_t gated = served_submit(s, machine_gated(s->m, 0));
	const uint64_t both[] = { gated, done };

	WAIT_FOR(s, machine_is(s->m, done, JOB_FAILED));
	send_wait(a, 1, &done, 1, ",\"one\":true");
	assert_int_equal(expect_job(a, 1, done, "failed"), 3);
	/* Running, and held there by its gate: the state the "now" answer
	 * must show cannot move while the loop turns for it. */
	WAIT_FOR(s, machine_is(s->m, gated, JOB_RUNNING));
	send_wait(a, 2, both, 2, "");
	/* Nothing yet: a request sent after it is answered first. */
	send_wait(a, 3, &gated, 1, ",\"now\":true");
	expect_jobs(a, 3, &gated, (const char *const []){ "running" }, 1);
	machine_open_gate(s->m, 0, 0);
	expect_jobs(a, 2, both, (const char *const []){ "succeeded",
	    "failed" }, 2);
}

/* At its timeout, a wait is answered with the job as it is then. */
static void
waiter_timing_out_gets_the_job_as_it_is(void **state)
{
	struct served *s = *state;
	struct peer *a = served_peer(s);
	uint64_t id = served_submit(s, machine_gated(s->m, 0));

	WAIT_FOR(s, machine_is(s->m, id, JOB_RUNNING));
	send_wait(a, 1, &id, 1, ",\"one\":true,\"timeout\":50");
	expect_job(a, 1, id, "running");
	assert_true(machine_is(s->m, id, JOB_RUNNING));
	machine_open_gate(s->m, 0, 0);
	WAIT_FOR(s, machine_is(s->m, id, JOB_SUCCEEDED));
}

/* A waiter whose connection closes is withdrawn, its timer with it: the
 * job's end answers the others only. (Under ASan, a withdrawn wait that
 * stayed parked is a use after free.) */
static void
waiter_whose_connection_closes(void **state)
{
	struct served *s = *state;
	struct peer *a = served_peer(s), *b = served_peer(s);
	uint64_t id = served_submit(s, machine_gated(s->m, 0));

	send_wait(a, 1, &id, 1, ",\"one\":true,\"timeout\":60000");
	send_wait(a, 2, &id, 1, ",\"one\":true");
	send_wait(b, 3, &id, 1, ",\"one\":true");
	WAIT_FOR(s, nwaits == 3);
	assert_int_equal(conn_npending(a->conn), 2);
	conn_close(a->conn);
	assert_true(a->closed);
	machine_open_gate(s->m, 0, 0);
	expect_job(b, 3, id, "succeeded");
	assert_int_equal(conn_npending(b->conn), 0);
	/* The next wait on it is answered at once, alone. */
	send_wait(b, 4, &id, 1, ",\"one\":true");
	expect_job(b, 4, id, "succeeded");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(several_waiters_on_one_job),
		T(waiter_on_an_ended_job),
		T(waiter_timing_out_gets_the_job_as_it_is),
		T(waiter_whose_connection_closes),
#undef T
	};

	/* As the daemon: a write to a closed peer fails, and says so. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("wait", tests, NULL, NULL);
}
