/* test-pg-conn.c - store/pg-conn.c on a bare event_base against a real
 * PostgreSQL (tpg): batches, prepared statements, NOTIFY, losses and
 * reconnection. */
#include <errno.h>
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
#include <event2/event.h>
#include <libpq-fe.h>

#include "loop.h"
#include "pg-conn.h"
#include "tpg.h"
#include "tproxy.h"

#define WAIT_FOR(fx, cond)	LOOP_WAIT_FOR(&(fx)->loop, cond)
/* Statements of a batch whose results the fixture keeps. */
#define KEEP		8
/* The big batch: more bytes than a socket's buffers hold, many times. */
#define BIG_ROWS	10000
#define BIG_VALUE	1024

/* What a batch's callback saw. */
struct tbatch {
	struct fx	*fx;
	int		 calls;
	int		 seq;		/* when, among the fixture's batches */
	bool		 in_call;	/* called inside pg_conn_batch */
	size_t		 n;
	char		 cause[512];
	ExecStatusType	 status[KEEP];
	char		 value[KEEP][64];	/* row 0, column 0 */
	char		 error[KEEP][256];
	int		 ntuples[KEEP];
	bool		 free_in_cb;	/* pg_conn_free from the callback */
};

struct fx {
	struct loop	 loop;		/* first (loop_new) */
	struct tpg	*pg;		/* the group's server */
	char		 db[32];
	char		*conninfo;	/* of db */
	struct pg_conn	*c;
	bool		 in_batch;	/* inside pg_conn_batch */
	int		 ups, downs;	/* state_cb calls */
	bool		 up;
	char		 cause[512];	/* the last down's */
	int		 notifies;
	char		 channel[64], payload[256];
	int		 seq;
	bool		 ticked;	/* fx_run_for's timer went off */
};

/* The server all the tests share; each has a database of its own. */

static void
state_cb(bool up, const char *cause, void *arg)
{
	struct fx *fx = arg;

	if (up == fx->up && fx->ups + fx->downs > 0)
		loop_bad(&fx->loop, "state_cb(%d) twice in a row", up);
	if (up != (cause == NULL))
		loop_bad(&fx->loop, "state_cb(%d) with cause %s", up, cause);
	fx->up = up;
	if (up)
		fx->ups++;
	else {
		fx->downs++;
		snprintf(fx->cause, sizeof fx->cause, "%s", cause);
	}
}

static void
notify_cb(const char *channel, const char *payload, void *arg)
{
	struct fx *fx = arg;

	fx->notifies++;
	snprintf(fx->channel, sizeof fx->channel, "%s", channel);
	snprintf(fx->payload, sizeof fx->payload, "%s", payload);
}

static void
batch_cb(PGresult *const *results, size_t n, const char *cause, void *arg)
{
	struct tbatch *b = arg;
	size_t i;

	b->calls++;
	b->seq = ++b->fx->seq;
	b->in_call = b->fx->in_batch;
	b->n = n;
	if (cause != NULL) {
		if (results != NULL || n != 0)
			loop_bad(&b->fx->loop, "results with cause %s", cause);
		snprintf(b->cause, sizeof b->cause, "%s", cause);
	}
	for (i = 0; results != NULL && i < n && i < KEEP; i++) {
		b->status[i] = PQresultStatus(results[i]);
		b->ntuples[i] = PQntuples(results[i]);
		snprintf(b->value[i], sizeof b->value[i], "%s",
		    PQntuples(results[i]) > 0 && PQnfields(results[i]) > 0 ?
		    PQgetvalue(results[i], 0, 0) : "");
		snprintf(b->error[i], sizeof b->error[i], "%s",
		    PQresultErrorMessage(results[i]));
	}
	if (b->free_in_cb) {
		pg_conn_free(b->fx->c);
		b->fx->c = NULL;
	}
}

/* Sends a batch of SQL statements without parameters. */
static void
fx_batch(struct fx *fx, struct tbatch *b, const char *const *sql, size_t n)
{
	struct pg_conn_stmt stmts[KEEP];
	size_t i;

	assert_true(n <= KEEP);
	memset(stmts, 0, sizeof stmts);
	b->fx = fx;
	for (i = 0; i < n; i++)
		stmts[i].sql = sql[i];
	fx->in_batch = true;
	assert_int_equal(pg_conn_batch(fx->c, stmts, n, batch_cb, b), 0);
	fx->in_batch = false;
}
#define SQL(...)	((const char *const []){ __VA_ARGS__ })
#define NSQL(...)	(sizeof SQL(__VA_ARGS__) / sizeof (const char *))
#define BATCH(fx, b, ...)	fx_batch(fx, b, SQL(__VA_ARGS__),	\
	NSQL(__VA_ARGS__))

/* A connection to fx's database, not started. */
static void
fx_new(struct fx *fx, const char *conninfo)
{
	char *cause = NULL;

	fx->c = pg_conn_new(fx->loop.base, conninfo, state_cb, notify_cb, fx,
	    &cause);
	if (fx->c == NULL)
		fail_msg("pgconn_new: %s", cause);
}

/* ...started, and up. */
static void
fx_up(struct fx *fx)
{
	assert_int_equal(pg_conn_start(fx->c), 0);
	WAIT_FOR(fx, fx->ups == 1);
	assert_true(pg_conn_up(fx->c));
}

static void
fx_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fx *fx = arg;

	(void)fd;
	(void)what;
	fx->ticked = true;
}

/* Runs the loop for ms: time for what the connection does by itself
 * (attempts to reconnect) to happen, or what it must not do to. */
static void
fx_run_for(struct fx *fx, int ms)
{
	struct timeval tv = { ms / 1000, ms % 1000 * 1000 };

	fx->ticked = false;
	assert_int_equal(event_base_once(fx->loop.base, -1, EV_TIMEOUT,
	    fx_tick_cb, fx, &tv), 0);
	WAIT_FOR(fx, fx->ticked);
}

static int
setup(void **state)
{
	static int ndb;
	struct fx *fx;

	*state = NULL;
	if (tpg_group == NULL)
		return 0;	/* each test skips (cmocka: not from a setup) */
	assert_non_null(fx = loop_new(sizeof *fx, "pgconn"));
	*state = fx;
	fx->pg = tpg_group;
	snprintf(fx->db, sizeof fx->db, "t%d", ++ndb);
	fx->conninfo = tpg_createdb(fx->pg, fx->db);
	return 0;
}

/* The test's fixture; skips the test when PostgreSQL is not installed. */
static struct fx *
fx_get(void **state)
{
	if (*state == NULL)
		skip();
	return *state;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;

	if (fx == NULL)
		return 0;
	pg_conn_free(fx->c);
	free(fx->conninfo);
	loop_free(fx);
	return 0;
}

/* BEGIN; INSERT; SELECT; COMMIT as one batch, with a parameter. */
static void
test_batch_results(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch b = { 0 };
	const char *values[] = { "forty-two" };
	struct pg_conn_stmt stmts[] = {
		{ .sql = "BEGIN" },
		{ .sql = "INSERT INTO t VALUES ($1)", .nparams = 1,
		    .values = values },
		{ .sql = "SELECT v FROM t" },
		{ .sql = "SELECT current_setting('application_name')" },
		{ .sql = "COMMIT" },
	};
	PGresult *res;

	PQclear(tpg_query(fx->pg, fx->db, "CREATE TABLE t (v text)"));
	fx_new(fx, fx->conninfo);
	fx_up(fx);
	b.fx = fx;
	fx->in_batch = true;
	assert_int_equal(pg_conn_batch(fx->c, stmts, 5, batch_cb, &b), 0);
	fx->in_batch = false;
	values[0] = "changed after the call";
	WAIT_FOR(fx, b.calls == 1);
	assert_false(b.in_call);
	assert_string_equal(b.cause, "");
	assert_int_equal(b.n, 5);
	assert_int_equal(b.status[0], PGRES_COMMAND_OK);
	assert_int_equal(b.status[1], PGRES_COMMAND_OK);
	assert_int_equal(b.status[2], PGRES_TUPLES_OK);
	assert_int_equal(b.ntuples[2], 1);
	assert_string_equal(b.value[2], "forty-two");
	assert_string_equal(b.value[3], "triaged");
	assert_int_equal(b.status[4], PGRES_COMMAND_OK);
	/* Committed: another connection sees it. */
	res = tpg_query(fx->pg, fx->db, "SELECT v FROM t");
	assert_int_equal(PQntuples(res), 1);
	assert_string_equal(PQgetvalue(res, 0, 0), "forty-two");
	PQclear(res);
	assert_int_equal(fx->downs, 0);
}

/* Several batches in flight at once end in the order they were given. */
static void
test_batches_in_order(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch b[4] = { { 0 } };
	int i;

	fx_new(fx, fx->conninfo);
	fx_up(fx);
	BATCH(fx, &b[0], "SELECT pg_sleep(0.05), 'slow'");
	BATCH(fx, &b[1], "SELECT 'b1'", "SELECT 'b1 again'");
	BATCH(fx, &b[2], "SELECT 'b2'");
	BATCH(fx, &b[3], "SELECT 'b3'");
	WAIT_FOR(fx, b[3].calls == 1);
	for (i = 0; i < 4; i++) {
		assert_int_equal(b[i].calls, 1);
		assert_int_equal(b[i].seq, i + 1);
		assert_string_equal(b[i].cause, "");
	}
	assert_string_equal(b[1].value[1], "b1 again");
	assert_string_equal(b[3].value[0], "b3");
}

/* A conninfo's own application_name wins over "triaged". */
static void
test_application_name_of_conninfo(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch b = { 0 };
	char conninfo[600];

	snprintf(conninfo, sizeof conninfo, "%s application_name=mine",
	    fx->conninfo);
	fx_new(fx, conninfo);
	fx_up(fx);
	BATCH(fx, &b, "SELECT current_setting('application_name')");
	WAIT_FOR(fx, b.calls == 1);
	assert_string_equal(b.value[0], "mine");
}

/* An error ends the batch: the statements after it are aborted, the
 * connection goes on. */
static void
test_error_aborts_the_rest(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch b = { 0 }, after = { 0 };

	fx_new(fx, fx->conninfo);
	fx_up(fx);
	BATCH(fx, &b, "SELECT 1", "SELECT * FROM no_such_table",
	    "SELECT 2", "SELECT 3");
	BATCH(fx, &after, "SELECT 'after'");
	WAIT_FOR(fx, after.calls == 1);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.n, 4);
	assert_int_equal(b.status[0], PGRES_TUPLES_OK);
	assert_int_equal(b.status[1], PGRES_FATAL_ERROR);
	assert_non_null(strstr(b.error[1], "no_such_table"));
	assert_int_equal(b.status[2], PGRES_PIPELINE_ABORTED);
	assert_int_equal(b.status[3], PGRES_PIPELINE_ABORTED);
	assert_string_equal(after.cause, "");
	assert_string_equal(after.value[0], "after");
	assert_true(pg_conn_up(fx->c));
	assert_int_equal(fx->downs, 0);
}

/* A bad statement is refused from the loop, the connection untouched. */
static void
test_bad_statement(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch b = { .fx = fx };
	struct pg_conn_stmt stmts[] = {
		{ .sql = "SELECT 1" },
		{ .nparams = 0 },
	};

	fx_new(fx, fx->conninfo);
	fx_up(fx);
	fx->in_batch = true;
	assert_int_equal(pg_conn_batch(fx->c, stmts, 2, batch_cb, &b), 0);
	fx->in_batch = false;
	WAIT_FOR(fx, b.calls == 1);
	assert_false(b.in_call);
	assert_string_equal(b.cause,
	    "statement 1: neither a prepared statement's name nor SQL");
	assert_true(pg_conn_up(fx->c));
}

/* Prepared statements, with a binary bytea parameter, before and after
 * the server's restart: they are prepared again on the new connection. */
static void
test_prepared_survive_reconnection(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch b1 = { 0 }, b2 = { 0 };
	const char bin[] = { 'a', '\0', 'b' };
	const char *values[] = { "1", bin };
	const int lengths[] = { 0, sizeof bin };
	const int formats[] = { 0, 1 };
	struct pg_conn_stmt stmts[] = {
		{ .name = "ins", .nparams = 2, .values = values,
		    .lengths = lengths, .formats = formats },
		{ .name = "count" },
		{ .sql = "SELECT encode(b, 'hex') FROM t" },
	};

	PQclear(tpg_query(fx->pg, fx->db, "CREATE TABLE t (k int, b bytea)"));
	fx_new(fx, fx->conninfo);
	assert_int_equal(pg_conn_prepare(fx->c, "ins",
	    "INSERT INTO t VALUES ($1, $2)"), 0);
	assert_int_equal(pg_conn_prepare(fx->c, "count",
	    "SELECT count(*) FROM t"), 0);
	fx_up(fx);
	assert_int_equal(pg_conn_prepare(fx->c, "late", "SELECT 1"), -1);
	assert_int_equal(errno, EBUSY);
	b1.fx = fx;
	assert_int_equal(pg_conn_batch(fx->c, stmts, 3, batch_cb, &b1), 0);
	WAIT_FOR(fx, b1.calls == 1);
	assert_int_equal(b1.status[0], PGRES_COMMAND_OK);
	assert_string_equal(b1.value[1], "1");
	assert_string_equal(b1.value[2], "610062");

	tpg_restart(fx->pg);
	WAIT_FOR(fx, fx->ups == 2);
	assert_int_equal(fx->downs, 1);
	assert_string_equal(fx->cause,
	    "terminating connection due to administrator command");
	values[0] = "2";
	b2.fx = fx;
	assert_int_equal(pg_conn_batch(fx->c, stmts, 2, batch_cb, &b2), 0);
	WAIT_FOR(fx, b2.calls == 1);
	assert_string_equal(b2.cause, "");
	assert_int_equal(b2.status[0], PGRES_COMMAND_OK);
	assert_string_equal(b2.value[1], "2");
}

/* A statement that does not prepare: the connection is down, saying
 * which statement and why. */
static void
test_bad_prepare(void **state)
{
	struct fx *fx = fx_get(state);

	fx_new(fx, fx->conninfo);
	assert_int_equal(pg_conn_prepare(fx->c, "broken",
	    "SELECT * FROM no_such_table"), 0);
	assert_int_equal(pg_conn_start(fx->c), 0);
	WAIT_FOR(fx, fx->downs == 1);
	assert_int_equal(fx->ups, 0);
	assert_false(pg_conn_up(fx->c));
	assert_string_equal(fx->cause, "preparing statement broken: "
	    "relation \"no_such_table\" does not exist");
}

/* NOTIFYs on the channels LISTENed to, names quoted, come through. */
static void
test_notify(void **state)
{
	struct fx *fx = fx_get(state);

	fx_new(fx, fx->conninfo);
	assert_int_equal(pg_conn_listen(fx->c, "jobs"), 0);
	assert_int_equal(pg_conn_listen(fx->c, "Mixed \"Case\""), 0);
	fx_up(fx);
	PQclear(tpg_query(fx->pg, fx->db, "NOTIFY jobs, 'hello'"));
	WAIT_FOR(fx, fx->notifies == 1);
	assert_string_equal(fx->channel, "jobs");
	assert_string_equal(fx->payload, "hello");
	PQclear(tpg_query(fx->pg, fx->db,
	    "SELECT pg_notify('Mixed \"Case\"', '')"));
	WAIT_FOR(fx, fx->notifies == 2);
	assert_string_equal(fx->channel, "Mixed \"Case\"");
	assert_string_equal(fx->payload, "");
	/* Not listened to: nothing comes; a later one still does. */
	PQclear(tpg_query(fx->pg, fx->db, "NOTIFY other, 'x'"));
	PQclear(tpg_query(fx->pg, fx->db, "NOTIFY jobs, 'again'"));
	WAIT_FOR(fx, fx->notifies == 3);
	assert_string_equal(fx->channel, "jobs");
	assert_string_equal(fx->payload, "again");
}

/*
 * The server stops: the state changes once, the batch in flight gets a
 * cause, new ones fail at once (from the loop), and when the server is
 * back the connection comes back by itself, LISTENing again.
 */
static void
test_server_stopped(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch slow = { 0 }, down = { 0 }, back = { 0 };

	fx_new(fx, fx->conninfo);
	assert_int_equal(pg_conn_listen(fx->c, "jobs"), 0);
	fx_up(fx);
	BATCH(fx, &slow, "SELECT pg_sleep(60)");
	/* Stop once the statement runs, not before it has arrived. */
	for (;;) {
		PGresult *res = tpg_query(fx->pg, fx->db, "SELECT count(*) "
		    "FROM pg_stat_activity WHERE query = "
		    "'SELECT pg_sleep(60)' AND state = 'active'");
		bool running = strcmp(PQgetvalue(res, 0, 0), "1") == 0;

		PQclear(res);
		if (running)
			break;
		fx_run_for(fx, 10);
	}
	tpg_stop(fx->pg);
	WAIT_FOR(fx, fx->downs == 1);
	assert_false(pg_conn_up(fx->c));
	/* The server's word, not libpq's "closed unexpectedly". */
	assert_string_equal(fx->cause,
	    "terminating connection due to administrator command");
	WAIT_FOR(fx, slow.calls == 1);
	assert_string_equal(slow.cause, "connection to PostgreSQL lost: "
	    "terminating connection due to administrator command");

	BATCH(fx, &down, "SELECT 1");
	assert_int_equal(down.calls, 0);
	WAIT_FOR(fx, down.calls == 1);
	assert_false(down.in_call);
	assert_non_null(strstr(down.cause, "not connected to PostgreSQL: "));

	/* Attempts fail while the server is away: no more state changes. */
	fx_run_for(fx, 500);
	assert_int_equal(fx->downs, 1);
	assert_int_equal(fx->ups, 1);

	tpg_restart(fx->pg);
	WAIT_FOR(fx, fx->ups == 2);
	assert_int_equal(fx->downs, 1);
	BATCH(fx, &back, "SELECT 'back'");
	WAIT_FOR(fx, back.calls == 1);
	assert_string_equal(back.value[0], "back");
	PQclear(tpg_query(fx->pg, fx->db, "NOTIFY jobs, 'after'"));
	WAIT_FOR(fx, fx->notifies == 1);
	assert_string_equal(fx->payload, "after");
}

/* The server is killed (-9) and recovers: the connection comes back. */
static void
test_server_crashed(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch b = { 0 };

	fx_new(fx, fx->conninfo);
	fx_up(fx);
	tpg_crash_restart(fx->pg);
	WAIT_FOR(fx, fx->ups == 2);
	assert_int_equal(fx->downs, 1);
	assert_non_null(strstr(fx->cause,
	    "server closed the connection unexpectedly; "));
	BATCH(fx, &b, "SELECT 'recovered'");
	WAIT_FOR(fx, b.calls == 1);
	assert_string_equal(b.value[0], "recovered");
}

/*
 * A split that closes nothing (tproxy_cut): with batches out, the server's
 * silence past the bound takes the connection for dead, its batches fail
 * saying so, and once the split heals it comes back. Idle, with nothing
 * out, no silence counts.
 */
static void
test_silence_bound_gives_up_a_silent_connection(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch before = { 0 }, cut = { 0 }, back = { 0 };
	struct tproxy *px;
	char conninfo[512];

	px = tproxy_start(tpg_host(fx->pg), tpg_port(fx->pg));
	snprintf(conninfo, sizeof conninfo, "host=%s port=%d dbname=%s",
	    tproxy_dir(px), tpg_port(fx->pg), fx->db);
	fx_new(fx, conninfo);
	pg_conn_set_silence_max(fx->c, 300);
	fx_up(fx);
	BATCH(fx, &before, "SELECT 'before'");
	WAIT_FOR(fx, before.calls == 1);
	assert_string_equal(before.value[0], "before");
	fx_run_for(fx, 600);
	assert_int_equal(fx->downs, 0);

	tproxy_cut(px);
	BATCH(fx, &cut, "SELECT 'cut'");
	WAIT_FOR(fx, fx->downs == 1);
	assert_string_equal(fx->cause, "no answer from PostgreSQL for 300 ms");
	WAIT_FOR(fx, cut.calls == 1);
	assert_string_equal(cut.cause, "connection to PostgreSQL lost: "
	    "no answer from PostgreSQL for 300 ms");

	tproxy_heal(px);
	WAIT_FOR(fx, fx->ups == 2);
	BATCH(fx, &back, "SELECT 'back'");
	WAIT_FOR(fx, back.calls == 1);
	assert_string_equal(back.value[0], "back");
	pg_conn_free(fx->c);
	fx->c = NULL;
	tproxy_free(px);
}

#define REFUSED "bad PostgreSQL connection string: "

/* conninfo is refused, saying want after REFUSED. */
static void
assert_refused(struct fx *fx, const char *conninfo, const char *want)
{
	char *cause = NULL;

	assert_null(pg_conn_new(fx->loop.base, conninfo, state_cb, NULL, fx,
	    &cause));
	assert_non_null(cause);
	assert_true(strncmp(cause, REFUSED, strlen(REFUSED)) == 0);
	assert_string_equal(cause + strlen(REFUSED), want);
	free(cause);
}

/* A connection string libpq cannot parse is refused without repeating
 * what may be a password. */
static void
test_conninfo_unparsable(void **state)
{
	struct fx *fx = fx_get(state);
	char *cause = NULL;

	assert_refused(fx, "host=x no_such_option=1",
	    "invalid connection option \"...\"");
	assert_refused(fx, "dbname=x s3cret",
	    "missing \"=\" after \"...\" in connection info string");
	assert_refused(fx, "host=h port=1 password='s3",
	    "unterminated quoted string in connection info string");
	assert_null(pg_conn_new(fx->loop.base, "postgresql://u:s3cret%zz@h/d",
	    state_cb, NULL, fx, &cause));
	assert_non_null(strstr(cause, REFUSED));
	assert_null(strstr(cause, "s3cret"));
	assert_null(strchr(cause, '\n'));
	free(cause);
}

/* No server where the conninfo points: down once, with libpq's reason and
 * never the password; batches fail from the loop. */
static void
test_conninfo_unreachable(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch b = { 0 };
	char conninfo[300];

	snprintf(conninfo, sizeof conninfo,
	    "host=%s port=1 password=s3cret dbname=x", fx->loop.dir);
	fx_new(fx, conninfo);
	BATCH(fx, &b, "SELECT 1");
	WAIT_FOR(fx, b.calls == 1);
	assert_string_equal(b.cause, "not connected to PostgreSQL: "
	    "not started");
	assert_int_equal(pg_conn_start(fx->c), 0);
	assert_int_equal(pg_conn_start(fx->c), -1);
	WAIT_FOR(fx, fx->downs == 1);
	assert_non_null(strstr(fx->cause, "No such file or directory"));
	assert_null(strstr(fx->cause, "s3cret"));
	assert_null(strchr(fx->cause, '\n'));
	fx_run_for(fx, 400);
	assert_int_equal(fx->downs, 1);
	assert_int_equal(fx->ups, 0);
	memset(&b, 0, sizeof b);
	BATCH(fx, &b, "SELECT 1");
	WAIT_FOR(fx, b.calls == 1);
	assert_non_null(strstr(b.cause, "not connected to PostgreSQL: "));
	assert_non_null(strstr(b.cause, "No such file or directory"));
}

/* 10,000 INSERTs of 1 KiB in one batch, far more than the socket holds:
 * sent as the socket takes them, while the results are read. */
static void
test_big_batch(void **state)
{
	struct fx *fx = fx_get(state);
	struct pg_conn_stmt *stmts;
	struct tbatch b = { 0 }, small = { 0 };
	char *value;
	const char *values[1];
	PGresult *res;
	size_t i;

	PQclear(tpg_query(fx->pg, fx->db, "CREATE TABLE t (v text)"));
	fx_new(fx, fx->conninfo);
	fx_up(fx);
	assert_non_null(value = malloc(BIG_VALUE + 1));
	memset(value, 'x', BIG_VALUE);
	value[BIG_VALUE] = '\0';
	values[0] = value;
	assert_non_null(stmts = calloc(BIG_ROWS + 2, sizeof *stmts));
	stmts[0].sql = "BEGIN";
	for (i = 1; i <= BIG_ROWS; i++)
		stmts[i] = (struct pg_conn_stmt){ .sql =
		    "INSERT INTO t VALUES ($1)", .nparams = 1,
		    .values = values };
	stmts[BIG_ROWS + 1].sql = "COMMIT";
	b.fx = fx;
	assert_int_equal(pg_conn_batch(fx->c, stmts, BIG_ROWS + 2, batch_cb,
	    &b), 0);
	/* Copied: the caller's memory is its own again. */
	memset(value, 'y', BIG_VALUE);
	free(stmts);
	BATCH(fx, &small, "SELECT count(*) FROM t");
	WAIT_FOR(fx, small.calls == 1);
	assert_int_equal(b.calls, 1);
	assert_string_equal(b.cause, "");
	assert_int_equal(b.n, BIG_ROWS + 2);
	assert_int_equal(b.status[KEEP - 1], PGRES_COMMAND_OK);
	assert_string_equal(small.value[0], "10000");
	res = tpg_query(fx->pg, fx->db,
	    "SELECT count(*) FROM t WHERE v = repeat('x', 1024)");
	assert_string_equal(PQgetvalue(res, 0, 0), "10000");
	PQclear(res);
	free(value);
}

/* Up and idle, the connection wakes the loop for nothing: no timer, no
 * polling (the cluster's idle daemons must cost no queries, no CPU). */
static void
test_idle_costs_no_wakeups(void **state)
{
	struct fx *fx = fx_get(state);
	struct timeval tv = { 0, 300 * 1000 };
	struct tbatch b = { 0 };
	int turns = 0;

	fx_new(fx, fx->conninfo);
	assert_int_equal(pg_conn_listen(fx->c, "jobs"), 0);
	fx_up(fx);
	BATCH(fx, &b, "SELECT 1");
	WAIT_FOR(fx, b.calls == 1);
	fx->ticked = false;
	assert_int_equal(event_base_once(fx->loop.base, -1, EV_TIMEOUT,
	    fx_tick_cb, fx, &tv), 0);
	while (!fx->ticked) {
		assert_int_not_equal(event_base_loop(fx->loop.base,
		    EVLOOP_ONCE), -1);
		turns++;
	}
	/* The one turn that ran the tick itself. */
	assert_int_equal(turns, 1);
	assert_true(pg_conn_up(fx->c));
}

/* pg_conn_free fails what is out with "closing", from inside a callback
 * too. */
static void
test_free_with_batches_out(void **state)
{
	struct fx *fx = fx_get(state);
	struct tbatch first = { .free_in_cb = true }, second = { 0 },
	    third = { 0 };

	fx_new(fx, fx->conninfo);
	fx_up(fx);
	BATCH(fx, &first, "SELECT 1");
	BATCH(fx, &second, "SELECT pg_sleep(60)");
	BATCH(fx, &third, "SELECT 3");
	WAIT_FOR(fx, first.calls == 1);
	assert_null(fx->c);
	assert_int_equal(second.calls, 1);
	assert_string_equal(second.cause, "closing");
	assert_int_equal(third.calls, 1);
	assert_string_equal(third.cause, "closing");
	assert_true(second.seq < third.seq);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_batch_results),
		T(test_batches_in_order),
		T(test_application_name_of_conninfo),
		T(test_error_aborts_the_rest),
		T(test_bad_statement),
		T(test_prepared_survive_reconnection),
		T(test_bad_prepare),
		T(test_notify),
		T(test_server_stopped),
		T(test_server_crashed),
		T(test_silence_bound_gives_up_a_silent_connection),
		T(test_conninfo_unparsable),
		T(test_conninfo_unreachable),
		T(test_big_batch),
		T(test_idle_costs_no_wakeups),
		T(test_free_with_batches_out),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, tpg_group_setup,
	    tpg_group_teardown);
}
