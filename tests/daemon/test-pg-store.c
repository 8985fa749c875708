/* test-pg-store.c - the PostgreSQL store on a bare event_base and a real
 * server: a burst of changes goes out as several commits, nobody is told a
 * change is written before its commit is, and a claim another node beat
 * goes to an alternate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "harness.h"
#include "job.h"
#include "pg-private.h"
#include "store.h"
#include "tpg.h"

/* More than one commit writes (PG_STORE_COMMIT_ROWS in store/pg-store.c). */
#define BURST 2500

struct fixture {
	struct tpg *pg;
	const char *db;
	char *conninfo;
	struct event_base *base;
	struct store *st;
	struct job *jobs[BURST];
	int added;
	/* The generations told written, in order, and whether the rows of
	 * the burst were all written each time (read from the database). */
	uint64_t told[64];
	bool all_held[64];
	int ntold;
	uint64_t burst_gen;
};

static struct job *
new_job(void)
{
	struct job *job = job_new();
	char **env, **argv;

	assert_non_null(job);
	argv = calloc(2, sizeof *argv);
	argv[0] = strdup("true");
	assert_int_equal(job_set_argv(job, argv), 0);
	env = calloc(1, sizeof *env);
	assert_int_equal(job_set_env(job, env), 0);
	assert_int_equal(job_set_cwd(job, "/"), 0);
	assert_int_equal(job_set_priority(job, "normal"), 0);
	job->submitted_at = 1700000000000;
	return job;
}

static void
added_cb(struct job *job, bool ok, const char *cause, void *arg)
{
	struct fixture *fx = arg;

	assert_true(ok);
	assert_null(cause);
	assert_int_not_equal(job->id, 0);
	fx->added++;
}

static long
held_rows(struct fixture *fx)
{
	PGresult *res = tpg_query(fx->pg, "store",
	    "SELECT count(*) FROM triage_jobs WHERE held <> 0");
	long n = strtol(PQgetvalue(res, 0, 0), NULL, 10);

	PQclear(res);
	return n;
}

static void
committed_cb(uint64_t generation, const char *cause, void *arg)
{
	struct fixture *fx = arg;

	assert_null(cause);
	if (fx->burst_gen == 0 || fx->ntold == 64)
		return;
	fx->told[fx->ntold] = generation;
	fx->all_held[fx->ntold++] = held_rows(fx) == BURST;
}

/* A store of node n1 on a database of its own, name. */
static int
setup_db(void **state, const char *name)
{
	struct store_pg_options o = { NULL, "n1", 2, "[priority.normal]\n",
	    30000, 11000 };
	struct fixture *fx;
	char *cause = NULL;

	if (tpg_group == NULL)
		skip();
	fx = calloc(1, sizeof *fx);
	assert_non_null(fx);
	fx->pg = tpg_group;
	fx->db = name;
	fx->conninfo = tpg_createdb(fx->pg, name);
	o.conninfo = fx->conninfo;
	fx->base = event_base_new();
	assert_non_null(fx->base);
	fx->st = store_open_pg(fx->base, &o, &cause);
	if (fx->st == NULL)
		fail_msg("store_open_pg: %s", cause);
	store_set_committed_cb(fx->st, committed_cb, fx);
	*state = fx;
	return 0;
}

static int
setup(void **state)
{
	return setup_db(state, "store");
}

static int
setup_results(void **state)
{
	return setup_db(state, "results");
}

static int
setup_claims(void **state)
{
	return setup_db(state, "claims");
}

static int
setup_inserted(void **state)
{
	return setup_db(state, "inserted");
}

static int
setup_plan(void **state)
{
	return setup_db(state, "plan");
}

static int
setup_poll(void **state)
{
	return setup_db(state, "poll");
}

static int
teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx == NULL)
		return 0;
	store_close(fx->st);
	event_base_free(fx->base);
	free(fx->conninfo);
	free(fx);
	return 0;
}

/* Runs the loop until *n reaches want, or fails after the deadline. */
static void
loop_until(struct fixture *fx, const int *n, int want)
{
	int64_t deadline = tdeadline(60000);

	while (*n < want) {
		tcheck_deadline(deadline, "%d of %d", *n, want);
		event_base_loop(fx->base, EVLOOP_ONCE);
	}
}

/*
 * Thousands of jobs changed in one turn of the loop are written by several
 * commits, the loop free between them; every generation told written before
 * the last of them is older than the burst's, and once the burst's is told,
 * every row holds its change.
 */
static void
test_burst_of_changes_is_written_in_slices(void **state)
{
	struct fixture *fx = *state;
	int i, last = -1;

	for (i = 0; i < BURST; i++) {
		fx->jobs[i] = new_job();
		assert_int_equal(store_add(fx->st, fx->jobs[i], added_cb, fx),
		    0);
	}
	loop_until(fx, &fx->added, BURST);
	assert_int_equal(held_rows(fx), 0);
	for (i = 0; i < BURST; i++) {
		fx->jobs[i]->held = true;
		store_update(fx->st, fx->jobs[i]);
	}
	fx->burst_gen = store_generation(fx->st);
	while (last < 0) {
		event_base_loop(fx->base, EVLOOP_ONCE);
		for (i = 0; i < fx->ntold; i++)
			if (fx->told[i] >= fx->burst_gen) {
				last = i;
				break;
			}
	}
	/* Three commits at least, each told as it ends. */
	assert_true(last >= 2);
	for (i = 0; i < last; i++) {
		assert_true(fx->told[i] < fx->burst_gen);
		if (i > 0)
			assert_true(fx->told[i] >= fx->told[i - 1]);
	}
	assert_true(fx->all_held[last]);
	assert_false(store_pending(fx->st));
}

static void
synced_cb(const char *cause, void *arg)
{
	assert_null(cause);
	(*(int *)arg)++;
}

/* What a query's one value says, as text (a new string). */
static char *
query_text(struct fixture *fx, const char *sql)
{
	PGresult *res = tpg_query(fx->pg, "results", sql);
	char *s = strdup(PQgetisnull(res, 0, 0) ? "NULL" :
	    PQgetvalue(res, 0, 0));

	PQclear(res);
	assert_non_null(s);
	return s;
}

/*
 * A job's result is written with its end, in the row's JSON form, and
 * another node's daemon reads it back as it was (a string; bytes with a
 * NUL as {"base64": ...}; truncated or not); a new attempt writes none.
 */
static void
test_results_reach_other_nodes(void **state)
{
	struct store_pg_options o = { NULL, "n2", 2, "[priority.normal]\n",
	    30000, 11000 };
	struct fixture *fx = *state;
	struct store *other;
	const struct job *back;
	char *cause = NULL, *text;
	int i, synced = 0;

	for (i = 0; i < 3; i++) {
		fx->jobs[i] = new_job();
		assert_int_equal(store_add(fx->st, fx->jobs[i], added_cb, fx),
		    0);
	}
	loop_until(fx, &fx->added, 3);
	fx->jobs[0]->state = JOB_SUCCEEDED;
	assert_int_equal(job_set_result(fx->jobs[0], "42\n", 3, false), 0);
	fx->jobs[1]->state = JOB_FAILED;
	assert_int_equal(job_set_result(fx->jobs[1], "a\0\377", 3, true), 0);
	fx->jobs[2]->state = JOB_FAILED;
	assert_int_equal(job_set_result(fx->jobs[2], "old", 3, false), 0);
	for (i = 0; i < 3; i++)
		store_update(fx->st, fx->jobs[i]);
	assert_int_equal(store_sync(fx->st, synced_cb, &synced), 0);
	loop_until(fx, &synced, 1);
	job_new_attempt(fx->jobs[2]);
	fx->jobs[2]->state = JOB_QUEUED;
	store_update(fx->st, fx->jobs[2]);
	assert_int_equal(store_sync(fx->st, synced_cb, &synced), 0);
	loop_until(fx, &synced, 2);

	text = query_text(fx, "SELECT result || ' ' || result_truncated FROM"
	    " triage_jobs ORDER BY id LIMIT 1");
	assert_string_equal(text, "\"42\\n\" 0");
	free(text);

	o.conninfo = fx->conninfo;
	if ((other = store_open_pg(fx->base, &o, &cause)) == NULL)
		fail_msg("store_open_pg: %s", cause);
	back = store_get(other, fx->jobs[0]->id);
	assert_string_equal(json_string_value(back->run->result), "42\n");
	assert_false(back->run->result_truncated);
	back = store_get(other, fx->jobs[1]->id);
	assert_string_equal(json_string_value(json_object_get(
	    back->run->result, "base64")), "YQD/");
	assert_true(back->run->result_truncated);
	back = store_get(other, fx->jobs[2]->id);
	assert_null(back->run->result);
	assert_false(back->run->result_truncated);
	store_close(other);
}

/* The second node of the claims' test, on a loop of its own: it hears of
 * no other node's NOTIFY while the test runs the first one's. */
struct claimer {
	struct event_base *base;
	struct store *st;
	uint64_t alts[4];	/* alternates_cb's answer, by id */
	size_t nalts;
	uint64_t moved_from, moved_to;
	int refused;		/* STORE_CHANGE_CLAIM_REFUSED told */
	uint64_t written;
};

static size_t
claimer_alternates_cb(const struct job *job, struct job **out, size_t max,
    void *arg)
{
	struct claimer *b = arg;
	size_t i, n = 0;

	(void)job;
	for (i = 0; i < b->nalts && n < max; i++)
		if ((out[n] = store_get(b->st, b->alts[i])) != NULL)
			n++;
	return n;
}

static void
claimer_moved_cb(struct job *from, struct job *to, void *arg)
{
	struct claimer *b = arg;

	b->moved_from = from->id;
	b->moved_to = to->id;
}

static void
claimer_changed_cb(struct job *job, enum store_change what,
    const struct job_status *before, void *arg)
{
	struct claimer *b = arg;

	(void)job;
	(void)before;
	b->refused += what == STORE_CHANGE_CLAIM_REFUSED;
}

static void
claimer_written_cb(uint64_t write, void *arg)
{
	((struct claimer *)arg)->written = write;
}

/* Node n2 claims job id (begun there, as the daemon does), and waits for
 * the claim to be written. */
static void
claimer_claim(struct claimer *b, uint64_t id)
{
	struct job *job = store_get(b->st, id);
	uint64_t gen;
	int64_t deadline = tdeadline(30000);

	assert_non_null(job);
	job_run_edit(job)->begun = true;
	assert_int_equal(job_set_node(job, "n2"), 0);
	gen = store_claim(b->st, job);
	while (b->written < gen) {
		tcheck_deadline(deadline, "claim of job %llu",
		    (unsigned long long)id);
		event_base_loop(b->base, EVLOOP_ONCE);
	}
}

/* The row of job id as "begun node version". */
static char *
claims_row(struct fixture *fx, uint64_t id)
{
	char sql[160];
	PGresult *res;
	char *text;

	snprintf(sql, sizeof sql, "SELECT begun || ' ' || coalesce(node, "
	    "'-') || ' ' || version FROM triage_jobs WHERE id = %llu",
	    (unsigned long long)id);
	res = tpg_query(fx->pg, fx->db, sql);
	assert_int_equal(PQntuples(res), 1);
	text = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	assert_non_null(text);
	return text;
}

/* What a daemon's added callback does with a job it would start at once:
 * it claims it there (its row was inserted begun on n1). */
struct inserted {
	struct fixture *fx;
	uint64_t gen;		/* store_claim's answer */
	uint64_t written;	/* the last written_cb */
	int added;
};

static void
inserted_added_cb(struct job *job, bool ok, const char *cause, void *arg)
{
	struct inserted *in = arg;

	assert_true(ok);
	assert_null(cause);
	in->gen = store_claim(in->fx->st, job);
	in->added++;
}

static void
inserted_written_cb(uint64_t write, void *arg)
{
	((struct inserted *)arg)->written = write;
}

/*
 * A job inserted begun on this node (the daemon saw it would start at
 * once) is claimed by its insert: the claim made in its added callback is
 * that commit's, told written with it, and writes nothing more. A job
 * inserted queued is claimed by an update of its own, as ever.
 */
static void
test_insert_claims_a_job_begun_here(void **state)
{
	struct fixture *fx = *state;
	struct inserted in = { fx, 0, 0, 0 };
	const struct store_commit_stats *stats = store_commit_stats(fx->st);
	struct job *job = new_job();
	int64_t deadline = tdeadline(30000);
	char *row;

	store_set_written_cb(fx->st, inserted_written_cb, &in);
	job_run_edit(job)->begun = true;
	assert_int_equal(job_set_node(job, "n1"), 0);
	assert_int_equal(store_add(fx->st, job, inserted_added_cb, &in), 0);
	loop_until(fx, &in.added, 1);
	assert_int_not_equal(in.gen, 0);
	assert_true(in.written >= in.gen);
	assert_int_equal(stats->commits, 1);
	assert_int_equal(stats->claims, 1);
	assert_false(store_pending(fx->st));
	assert_false(job->store.claimed);
	row = claims_row(fx, job->id);
	assert_string_equal(row, "1 n1 1");
	free(row);

	job = new_job();
	assert_int_equal(store_add(fx->st, job, inserted_added_cb, &in), 0);
	loop_until(fx, &in.added, 2);
	while (in.written < in.gen) {
		tcheck_deadline(deadline, "the claim of job %llu",
		    (unsigned long long)job->id);
		event_base_loop(fx->base, EVLOOP_ONCE);
	}
	assert_int_equal(stats->commits, 3);
	assert_int_equal(stats->claims, 2);
}

/*
 * Node n2's claim of a job node n1 took first (behind its back: no NOTIFY)
 * goes to the first of its alternates still queued and not held by another
 * transaction, the claim's own row as the daemon would write it, and the
 * job it named is told refused; with no alternate left, the claim is
 * refused outright.
 */
static void
test_beaten_claim_goes_to_an_alternate(void **state)
{
	struct store_pg_options o = { NULL, "n2", 2, "[priority.normal]\n",
	    30000, 11000 };
	struct fixture *fx = *state;
	struct claimer b = { 0 };
	char *cause = NULL, *row, sql[200];
	PGconn *locker;
	PGresult *res;
	uint64_t id[5];
	int i;

	for (i = 0; i < 5; i++) {
		fx->jobs[i] = new_job();
		assert_int_equal(store_add(fx->st, fx->jobs[i], added_cb, fx),
		    0);
	}
	loop_until(fx, &fx->added, 5);
	for (i = 0; i < 5; i++)
		id[i] = fx->jobs[i]->id;
	assert_non_null(b.base = event_base_new());
	o.conninfo = fx->conninfo;
	if ((b.st = store_open_pg(b.base, &o, &cause)) == NULL)
		fail_msg("store_open_pg: %s", cause);
	store_set_claim_alternates(b.st, claimer_alternates_cb,
	    claimer_moved_cb, &b);
	store_set_changed_cb(b.st, claimer_changed_cb, &b);
	store_set_written_cb(b.st, claimer_written_cb, &b);
	/* Once a claim of n2's is written, it has read what changed since
	 * it loaded the jobs (a claim waits for that): from then on it
	 * reads only on a NOTIFY. */
	claimer_claim(&b, id[4]);

	/* n1 takes job 0; another transaction holds job 1's row. */
	snprintf(sql, sizeof sql, "UPDATE triage_jobs SET begun = 1, node ="
	    " 'n1', version = version + 1 WHERE id = %llu",
	    (unsigned long long)id[0]);
	PQclear(tpg_query(fx->pg, "claims", sql));
	assert_non_null(locker = PQconnectdb(fx->conninfo));
	assert_int_equal(PQstatus(locker), CONNECTION_OK);
	snprintf(sql, sizeof sql, "BEGIN; SELECT 1 FROM triage_jobs WHERE id ="
	    " %llu FOR UPDATE", (unsigned long long)id[1]);
	res = PQexec(locker, sql);
	assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	PQclear(res);

	b.alts[0] = id[1];
	b.alts[1] = id[2];
	b.alts[2] = id[3];
	b.nalts = 3;
	claimer_claim(&b, id[0]);
	assert_int_equal(b.moved_from, id[0]);
	assert_int_equal(b.moved_to, id[2]);
	assert_int_equal(b.refused, 1);
	row = claims_row(fx, id[2]);
	assert_string_equal(row, "1 n2 2");
	free(row);
	assert_int_equal(store_get(b.st, id[2])->store.version, 2);
	row = claims_row(fx, id[0]);
	assert_string_equal(row, "1 n1 2");
	free(row);
	row = claims_row(fx, id[1]);
	assert_string_equal(row, "0 - 1");
	free(row);
	res = PQexec(locker, "COMMIT");
	PQclear(res);
	PQfinish(locker);

	/* Job 1 taken behind its back too, and job 3 with it: its only
	 * alternate is gone, and the claim is refused. */
	snprintf(sql, sizeof sql, "UPDATE triage_jobs SET begun = 1, node ="
	    " 'n1', version = version + 1 WHERE id IN (%llu, %llu)",
	    (unsigned long long)id[1], (unsigned long long)id[3]);
	PQclear(tpg_query(fx->pg, "claims", sql));
	b.alts[0] = id[3];
	b.nalts = 1;
	b.moved_from = b.moved_to = 0;
	claimer_claim(&b, id[1]);
	assert_int_equal(b.moved_to, 0);
	assert_int_equal(b.refused, 2);
	assert_int_equal(store_commit_stats(b.st)->claims, 3);
	assert_int_equal(store_commit_stats(b.st)->claims_moved, 1);
	assert_int_equal(store_commit_stats(b.st)->claims_refused, 1);
	store_close(b.st);
	event_base_free(b.base);
}

/*
 * A read of what other nodes changed finds the rows by the index of their
 * writing transactions, whatever the read's snapshot: its generic plan
 * (the one a prepared statement settles on) never scans every job, as the
 * finished ones stay in the table.
 */
static void
test_read_of_changes_uses_the_txid_index(void **state)
{
	struct fixture *fx = *state;
	PGresult *res;
	int i, rows;
	bool scans_jobs = false, uses_txid = false;

	for (i = 0; i < 1000; i++) {
		fx->jobs[i] = new_job();
		assert_int_equal(store_add(fx->st, fx->jobs[i], added_cb, fx),
		    0);
	}
	loop_until(fx, &fx->added, 1000);
	res = tpg_query(fx->pg, "plan", "SET plan_cache_mode ="
	    " force_generic_plan; PREPARE r AS " PG_STORE_SYNC("NULL::boolean")
	    "; EXPLAIN EXECUTE r('1:1:')");
	assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	rows = PQntuples(res);
	for (i = 0; i < rows; i++) {
		if (strstr(PQgetvalue(res, i, 0), "Seq Scan on triage_jobs"))
			scans_jobs = true;
		if (strstr(PQgetvalue(res, i, 0), "triage_jobs_txid"))
			uses_txid = true;
	}
	PQclear(res);
	assert_false(scans_jobs);
	assert_true(uses_txid);
}

/*
 * A change no NOTIFY told of (a notification lost) reaches another node
 * all the same while a job is queued anywhere: it reads what changed at
 * least once a second.
 */
static void
test_poll_reads_changes_no_notify_told(void **state)
{
	struct store_pg_options o = { NULL, "n2", 2, "[priority.normal]\n",
	    30000, 11000 };
	struct fixture *fx = *state;
	struct event_base *base;
	struct store *other;
	const struct job *seen;
	char *cause = NULL, sql[160];
	int64_t deadline;
	int synced = 0;

	fx->jobs[0] = new_job();
	assert_int_equal(store_add(fx->st, fx->jobs[0], added_cb, fx), 0);
	loop_until(fx, &fx->added, 1);
	assert_non_null(base = event_base_new());
	o.conninfo = fx->conninfo;
	if ((other = store_open_pg(base, &o, &cause)) == NULL)
		fail_msg("store_open_pg: %s", cause);
	assert_non_null(store_get(other, fx->jobs[0]->id));
	/* Its connection up and its first read of changes done: the read
	 * goes out as the connection comes up, ahead of the commit. */
	assert_int_equal(store_sync(other, synced_cb, &synced), 0);
	deadline = tdeadline(30000);
	while (synced == 0) {
		tcheck_deadline(deadline, "the second node's first commit");
		event_base_loop(base, EVLOOP_ONCE);
	}
	/* Behind every node's back: no NOTIFY. */
	snprintf(sql, sizeof sql, "UPDATE triage_jobs SET name = 'polled',"
	    " version = version + 1 WHERE id = %llu",
	    (unsigned long long)fx->jobs[0]->id);
	PQclear(tpg_query(fx->pg, "poll", sql));
	deadline = tdeadline(5000);
	for (;;) {
		seen = store_get(other, fx->jobs[0]->id);
		if (seen != NULL && job_name(seen) != NULL &&
		    strcmp(job_name(seen), "polled") == 0)
			break;
		tcheck_deadline(deadline, "the change read without a NOTIFY");
		event_base_loop(base, EVLOOP_ONCE);
	}
	store_close(other);
	event_base_free(base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_burst_of_changes_is_written_in_slices, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_results_reach_other_nodes, setup_results, teardown),
		cmocka_unit_test_setup_teardown(
		    test_beaten_claim_goes_to_an_alternate, setup_claims,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_insert_claims_a_job_begun_here, setup_inserted,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_read_of_changes_uses_the_txid_index, setup_plan,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_poll_reads_changes_no_notify_told, setup_poll,
		    teardown),
	};

	return cmocka_run_group_tests(tests, tpg_group_setup,
	    tpg_group_teardown);
}
