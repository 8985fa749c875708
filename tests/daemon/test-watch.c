/* test-watch.c - `watch` subscriptions alone on a bare event_base, on the
 * jobs of a real state machine, over socket pairs: notifications in the
 * order of the commits, filters, a connection told once, a watcher gone. */
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
#include <event2/buffer.h>
#include <jansson.h>

#include "conn.h"
#include "jobs.h"
#include "loop.h"
#include "machine.h"
#include "peer.h"
#include "rpc.h"
#include "served.h"
#include "watch.h"

#define WAIT_FOR(s, cond)	LOOP_WAIT_FOR(&(s)->m->loop, cond)
#define MAX_IDS		8
#define MAX_WATCHES	3
/* What precedes the job in every notification, byte for byte. */
#define NOTIFICATION \
	"{\"jsonrpc\":\"2.0\",\"method\":\"job\",\"params\":{"

/* "watch": {"ids": [...], "priority": name}, as the watch method hands
 * them on; answered with true, or the error of a connection with
 * MAX_WATCHES already. */
static void
dispatch(struct rpc_req *req, const char *method, json_t *params)
{
	const json_t *ids = json_object_get(params, "ids");
	uint64_t v[MAX_IDS];
	size_t n = json_array_size(ids), i;
	struct watch *w;
	int rc;

	if (strcmp(method, "watch") != 0 || n > MAX_IDS) {
		rpc_error(req, RPC_INVALID_PARAMS, NULL, "not for this test");
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = (uint64_t)json_integer_value(json_array_get(ids, i));
	if ((w = watch_new(v, n, json_string_value(json_object_get(params,
	    "priority")))) == NULL ||
	    (rc = watch_add(req->conn, w, MAX_WATCHES)) == -1) {
		watch_free(w);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
	} else if (rc == -2) {
		watch_free(w);
		rpc_limit(req, "max_watches", "too many");
	} else
		rpc_reply(req, json_true());
}

/* As main.c wires it. */
static void
watch_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	(void)arg;
	watch_notify(td, ev->view);
}

static int
setup(void **state)
{
	struct served *s;

	if ((s = served_new("test-watch", dispatch)) == NULL ||
	    jobs_listen(&s->m->td, watch_job_cb, NULL) != 0)
		return -1;
	*state = s;
	return 0;
}

static int
teardown(void **state)
{
	served_free(*state);
	return 0;
}

/* Asks p to watch (params, an object's members) as request rid. */
static void
watch(struct peer *p, int rid, const char *params)
{
	char line[256];
	json_t *r;

	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
	    "\"method\":\"watch\",\"params\":{%s}}\n", rid, params);
	peer_send(p, line);
	r = served_result(p, rid);
	assert_true(json_is_true(r));
	json_decref(r);
}

/* p, with MAX_WATCHES, asks for one more: refused. */
static void
watch_refused(struct peer *p)
{
	peer_send(p, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"watch\"}\n");
	peer_expect(p, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":"
	    "-32003,\"message\":\"too many\",\"data\":{\"limit\":"
	    "\"max_watches\"}}}");
}

/* The next notification p has: its job's id and state. */
static void
next_event(struct peer *p, uint64_t *id, const char **state)
{
	static char buf[32];
	char *line = peer_line(p);
	json_t *msg, *job;

	if (line == NULL)
		fail_msg("the connection closed; expected a notification");
	msg = json_loads(line, 0, NULL);
	if (strncmp(line, NOTIFICATION, sizeof NOTIFICATION - 1) != 0 ||
	    json_object_size(msg) != 3)
		fail_msg("not a notification: %s", line);
	job = json_object_get(msg, "params");
	*id = (uint64_t)json_integer_value(json_object_get(job, "id"));
	snprintf(buf, sizeof buf, "%s", json_string_value(json_object_get(job,
	    "state")));
	*state = buf;
	json_decref(msg);
	free(line);
}

/* Fails the test unless the next notification of p is the change e. */
static void
expect_event(struct peer *p, const struct machine_ev *e)
{
	const char *state;
	uint64_t id;

	next_event(p, &id, &state);
	if (id != e->id || strcmp(state, job_state_name(e->to)) != 0)
		fail_msg("notified of job %llu %s, expected %llu %s",
		    (unsigned long long)id, state, (unsigned long long)e->id,
		    job_state_name(e->to));
}

/* Every change of every job, once each, in the order the state machine
 * published them (the order of their commits). */
static void
events_come_in_commit_order(void **state)
{
	struct served *s = *state;
	struct machine *m = s->m;
	struct peer *a = served_peer(s);
	uint64_t id[3];
	int i;

	watch(a, 1, "");
	for (i = 0; i < 3; i++)
		id[i] = machine_submit(m, machine_gated(m, i));
	WAIT_FOR(s, machine_is(m, id[0], JOB_RUNNING) &&
	    machine_is(m, id[1], JOB_RUNNING));
	machine_open_gate(m, 1, 0);
	WAIT_FOR(s, machine_is(m, id[2], JOB_RUNNING));
	machine_open_gate(m, 2, 4);
	machine_open_gate(m, 0, 0);
	WAIT_FOR(s, machine_is(m, id[0], JOB_SUCCEEDED) &&
	    machine_is(m, id[2], JOB_FAILED));
	assert_int_equal(m->nev, 9);
	for (i = 0; i < m->nev; i++)
		expect_event(a, &m->ev[i]);
	/* And nothing more: the next line is the next reply. */
	watch(a, 2, "");
}

/* A filter by ids, one by priority; a connection two of whose watches
 * match a job is told once; one over the limit is refused. */
static void
filters_and_a_connection_told_once(void **state)
{
	struct served *s = *state;
	struct machine *m = s->m;
	struct peer *byid = served_peer(s), *byprio = served_peer(s);
	struct peer *other = served_peer(s);
	uint64_t id[2];
	char ids[64];
	int i, first;

	id[0] = served_submit(s, machine_gated(m, 0));
	WAIT_FOR(s, machine_is(m, id[0], JOB_RUNNING));
	snprintf(ids, sizeof ids, "\"ids\":[999,%llu]",
	    (unsigned long long)id[0]);
	watch(byid, 1, ids);
	watch(byid, 2, "\"priority\":\"normal\"");
	watch(byprio, 1, "\"priority\":\"normal\"");
	watch(other, 1, "\"priority\":\"high\"");
	watch(other, 2, "\"ids\":[998]");
	watch(other, 3, "\"ids\":[997]");
	watch_refused(other);
	first = m->nev;
	id[1] = served_submit(s, machine_job(m, (const char *const []){ "true",
	    NULL }));
	machine_open_gate(m, 0, 0);
	WAIT_FOR(s, machine_is(m, id[0], JOB_SUCCEEDED) &&
	    machine_is(m, id[1], JOB_SUCCEEDED));
	/* Job 0's end, and job 1's changes (by the second watch of byid). */
	assert_true(m->nev - first >= 4);
	for (i = first; i < m->nev; i++) {
		expect_event(byid, &m->ev[i]);
		expect_event(byprio, &m->ev[i]);
	}
	/* other: nothing, as its next line shows. */
	watch_refused(other);
}

/* A connection that closes takes its watches with it: the others are
 * still told, and once none watches, the daemon keeps no list. */
static void
a_watcher_gone(void **state)
{
	struct served *s = *state;
	struct machine *m = s->m;
	struct triaged *td = &m->td;
	struct peer *a = served_peer(s), *b = served_peer(s);
	uint64_t id;
	int first;

	assert_null(td->watchers);
	watch(a, 1, "");
	watch(a, 2, "");
	watch(b, 1, "");
	assert_non_null(td->watchers);
	conn_close(a->conn);
	assert_non_null(td->watchers);
	first = m->nev;
	id = served_submit(s, machine_job(m, (const char *const []){ "true",
	    NULL }));
	WAIT_FOR(s, machine_is(m, id, JOB_SUCCEEDED));
	for (; first < m->nev; first++)
		expect_event(b, &m->ev[first]);
	conn_close(b->conn);
	assert_null(td->watchers);
	/* Changes now go to nobody. */
	id = served_submit(s, machine_job(m, (const char *const []){ "true",
	    NULL }));
	WAIT_FOR(s, machine_is(m, id, JOB_SUCCEEDED));
	assert_int_equal(evbuffer_get_length(b->in), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(events_come_in_commit_order),
		T(filters_and_a_connection_told_once),
		T(a_watcher_gone),
#undef T
	};

	/* As the daemon: a write to a closed peer fails, and says so. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("watch", tests, NULL, NULL);
}
