/* test-jobtable.c - the table of a store's jobs: by id, and in submission
 * order (submitted_at, then id) as a cluster's blocks of ids leave it. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "job.h"
#include "jobtable.h"
#include "tsupport-clock.h"

static struct job *
at_job(uint64_t id, int64_t at)
{
	struct job *job = job_new();

	assert_non_null(job);
	job->id = id;
	job->submitted_at = at;
	return job;
}

/* The ids in submission order from after_id, at most n, into ids; how
 * many. */
static size_t
walk(const struct jobtable *t, uint64_t after_id, uint64_t *ids, size_t n)
{
	const struct job *job;
	size_t k = 0;

	while (k < n && (job = jobtable_next_submitted(t, after_id)) != NULL)
		after_id = ids[k++] = job->id;
	return k;
}

/*
 * Two nodes' blocks of ids (1.. and 65..) submitted alternately, one
 * arriving late (added out of order): the walk is by time, then id; a
 * removal leaves the rest; a cursor whose job was removed goes on where
 * the next id stands.
 */
static void
test_submission_order_across_blocks(void **state)
{
	static const struct { uint64_t id; int64_t at; } in[] = {
		{ 1, 100 }, { 65, 101 }, { 2, 102 }, { 66, 102 }, { 3, 103 },
		{ 67, 105 }, { 4, 104 },
	};
	static const uint64_t want[] = { 1, 65, 2, 66, 3, 4, 67 };
	struct jobtable t = { .by_submission = true };
	uint64_t ids[16];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof in / sizeof in[0]; i++)
		assert_int_equal(jobtable_add(&t, at_job(in[i].id, in[i].at)),
		    0);
	n = walk(&t, 0, ids, 16);
	assert_int_equal(n, 7);
	for (i = 0; i < n; i++)
		assert_int_equal(ids[i], want[i]);
	/* Paging: after 66 come 3, 4, 67. */
	assert_int_equal(walk(&t, 66, ids, 16), 3);
	assert_int_equal(ids[0], 3);
	assert_int_equal(ids[2], 67);
	/* 66 removed: a cursor at 66 goes on from 67's place... */
	job_free(jobtable_remove(&t, 66));
	assert_int_equal(walk(&t, 66, ids, 16), 1);
	assert_int_equal(ids[0], 67);
	/* ...and the walk skips it. */
	assert_int_equal(walk(&t, 0, ids, 16), 6);
	assert_int_equal(ids[3], 3);
	/* Added again (a row replaced): in its place. */
	assert_int_equal(jobtable_add(&t, at_job(66, 102)), 0);
	assert_int_equal(walk(&t, 2, ids, 1), 1);
	assert_int_equal(ids[0], 66);
	assert_null(jobtable_next_submitted(&t, 67));
	assert_null(jobtable_next_submitted(&t, UINT64_MAX));
	jobtable_free(&t);
}

/* Many removals (sweeps) keep both orders whole. */
static void
test_removals_sweep(void **state)
{
	struct jobtable t = { .by_submission = true };
	const struct job *job;
	uint64_t id, last = 0;
	size_t n = 0;

	(void)state;
	for (id = 1; id <= 1000; id++)
		assert_int_equal(jobtable_add(&t, at_job(id, (int64_t)(id %
		    100))), 0);
	for (id = 1; id <= 1000; id += 2)
		job_free(jobtable_remove(&t, id));
	for (id = 0; (job = jobtable_next_submitted(&t, id)) != NULL;
	    id = job->id) {
		assert_int_equal(job->id % 2, 0);
		assert_true(n == 0 || job->submitted_at > (int64_t)(last % 100) ||
		    (job->submitted_at == (int64_t)(last % 100) &&
		    job->id > last));
		last = job->id;
		n++;
	}
	assert_int_equal(n, 500);
	assert_int_equal(jobtable_count(&t), 500);
	jobtable_free(&t);
}

/* One host's table keeps no second order: its ids are its submission
 * order, whatever the clock said (it may step back). */
static void
test_one_host_walks_by_id(void **state)
{
	struct jobtable t = { 0 };
	uint64_t ids[4];

	(void)state;
	assert_int_equal(jobtable_add(&t, at_job(1, 200)), 0);
	assert_int_equal(jobtable_add(&t, at_job(2, 100)), 0);
	assert_int_equal(jobtable_add(&t, at_job(3, 150)), 0);
	assert_int_equal(t.order.n, 0);
	assert_int_equal(walk(&t, 0, ids, 4), 3);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	assert_int_equal(ids[2], 3);
	assert_int_equal(walk(&t, 1, ids, 4), 2);
	assert_int_equal(ids[0], 2);
	jobtable_free(&t);
}

/*
 * 1,000,000 jobs of two nodes' interleaved blocks: what adding them costs,
 * and a page of 1,000 from the middle (the list's cursor): no sort of the
 * whole table per call.
 */
static void
test_a_million_jobs(void **state)
{
	enum { N = 1000000, BLOCK = 64, PAGE = 1000 };
	struct jobtable t = { .by_submission = true };
	uint64_t ids[PAGE], id, after;
	double t0, add_ms, page_ms;
	size_t i;

	(void)state;
	t0 = tsupport_clock_ms_f();
	for (i = 0; i < N; i++) {
		/* Node 0 takes the even blocks, node 1 the odd ones; they
		 * submit alternately, one a millisecond. */
		id = (i % 2 == 0 ? 0 : BLOCK) + (i / 2) / BLOCK * 2 * BLOCK +
		    (i / 2) % BLOCK + 1;
		assert_int_equal(jobtable_add(&t, at_job(id, (int64_t)i)), 0);
	}
	add_ms = tsupport_clock_ms_f() - t0;
	after = jobtable_next_submitted(&t, 0)->id;
	for (i = 0; i < N / 2; i++)
		after = jobtable_next_submitted(&t, after)->id;
	t0 = tsupport_clock_ms_f();
	assert_int_equal(walk(&t, after, ids, PAGE), PAGE);
	page_ms = tsupport_clock_ms_f() - t0;
	for (i = 1; i < PAGE; i++)
		assert_true(jobtable_get(&t, ids[i])->submitted_at >
		    jobtable_get(&t, ids[i - 1])->submitted_at);
	/* Figures only: bounds of time belong in make bench. */
	print_message("1,000,000 jobs in two nodes' blocks: added in %.0f ms, "
	    "a page of 1,000 from the middle in %.2f ms\n", add_ms, page_ms);
	jobtable_free(&t);
}

/*
 * Lookups over ids spread unevenly (runs, gaps of every size up to a
 * billion, a few outliers near the top of the range) and with removals
 * left as tombstones: get, next and remove agree with a plain scan, for
 * every id present, every one between, and those beyond either end.
 */
static void
test_lookups_over_uneven_ids(void **state)
{
	enum { N = 5000 };
	struct jobtable t = { 0 };
	uint64_t *ids = calloc(N, sizeof *ids), id = 0, probe, want;
	bool *gone = calloc(N, sizeof *gone);
	unsigned seed = 11;
	struct job *job;
	size_t i, k;

	(void)state;
	assert_non_null(ids);
	assert_non_null(gone);
	for (i = 0; i < N; i++) {
		seed = seed * 1103515245 + 12345;
		switch ((seed >> 16) % 8) {
		case 0:
			id += 1 + (seed >> 8) % 1000;
			break;
		case 1:
			id += 1 + (uint64_t)((seed >> 4) % 1000) * 1000000;
			break;
		default:
			id++;
		}
		if (i == N - 3)
			id = (uint64_t)INT64_MAX - 1000;
		ids[i] = id;
		assert_int_equal(jobtable_add(&t, at_job(id, (int64_t)i)), 0);
	}
	/* Fewer than a quarter: tombstones stay, unswept. */
	for (i = 0; i < N / 5; i++) {
		seed = seed * 1103515245 + 12345;
		k = (seed >> 8) % N;
		if (gone[k])
			continue;
		job = jobtable_remove(&t, ids[k]);
		assert_non_null(job);
		job_free(job);
		gone[k] = true;
	}
	for (i = 0, k = 0; i < N; i++) {
		job = jobtable_get(&t, ids[i]);
		if (gone[i])
			assert_null(job);
		else
			assert_int_equal(job->id, ids[i]);
		/* Between this id and the next, and the next live one. */
		probe = ids[i] + 1;
		if (i + 1 < N && probe < ids[i + 1])
			assert_null(jobtable_get(&t, probe));
		for (k = i + 1; k < N && gone[k]; k++)
			;
		want = k < N ? ids[k] : 0;
		job = jobtable_next(&t, ids[i]);
		if (want == 0)
			assert_null(job);
		else
			assert_int_equal(job->id, want);
	}
	assert_null(jobtable_get(&t, 0));
	assert_null(jobtable_get(&t, UINT64_MAX >> 1));
	for (k = 0; gone[k]; k++)
		;
	assert_int_equal(jobtable_next(&t, 0)->id, ids[k]);
	jobtable_free(&t);
	free(ids);
	free(gone);
}

/* A job of uid with key (NULL: none). */
static struct job *
key_job(uint64_t id, uid_t uid, const char *key)
{
	struct job *job = at_job(id, (int64_t)id);

	job->uid = uid;
	if (key != NULL)
		assert_non_null(job_extra_edit(job)->key = strdup(key));
	return job;
}

/* Jobs are found by uid and key from their add to their removal; a job
 * without a key is not indexed; the first of two with one key keeps it. */
static void
test_jobs_by_key(void **state)
{
	struct jobtable t = { 0 };

	(void)state;
	assert_int_equal(jobtable_add(&t, key_job(1, 1000, "a")), 0);
	assert_int_equal(jobtable_add(&t, key_job(2, 1001, "a")), 0);
	assert_int_equal(jobtable_add(&t, key_job(3, 1000, "b")), 0);
	assert_int_equal(jobtable_add(&t, key_job(4, 1000, NULL)), 0);
	assert_int_equal(jobtable_by_key(&t, 1000, "a")->id, 1);
	assert_int_equal(jobtable_by_key(&t, 1001, "a")->id, 2);
	assert_int_equal(jobtable_by_key(&t, 1000, "b")->id, 3);
	assert_null(jobtable_by_key(&t, 1001, "b"));
	assert_null(jobtable_by_key(&t, 1000, "c"));
	/* A second job of (1000, "a"), as a store could only load from a
	 * database written by hand: the first keeps the key, and the
	 * second's removal leaves it. */
	assert_int_equal(jobtable_add(&t, key_job(5, 1000, "a")), 0);
	assert_int_equal(jobtable_by_key(&t, 1000, "a")->id, 1);
	job_free(jobtable_remove(&t, 5));
	assert_int_equal(jobtable_by_key(&t, 1000, "a")->id, 1);
	job_free(jobtable_remove(&t, 1));
	assert_null(jobtable_by_key(&t, 1000, "a"));
	assert_int_equal(jobtable_by_key(&t, 1001, "a")->id, 2);
	job_free(jobtable_remove(&t, 4));
	assert_int_equal(jobtable_by_key(&t, 1000, "b")->id, 3);
	jobtable_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submission_order_across_blocks),
		cmocka_unit_test(test_removals_sweep),
		cmocka_unit_test(test_one_host_walks_by_id),
		cmocka_unit_test(test_a_million_jobs),
		cmocka_unit_test(test_lookups_over_uneven_ids),
		cmocka_unit_test(test_jobs_by_key),
	};

	return cmocka_run_group_tests_name("jobtable", tests, NULL, NULL);
}
