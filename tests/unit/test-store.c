/* test-store.c - the job store on a real SQLite file and a bare event_base:
 * group commit, what a failed commit leaves, and what survives a reopen. */
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
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <sqlite3.h>

#include "job.h"
#include "store.h"
#include "tsupport-dir.h"

struct fixture {
	char dir[64];
	char path[128];
	struct event_base *base;
	struct store *st;
	int added, failed, synced, sync_failed;
	uint64_t ids[16];
};

static struct job *
new_job(const char *name)
{
	struct job *job = job_new();
	char **env, **argv;

	assert_non_null(job);
	job_extra_edit(job)->name = strdup(name);
	argv = calloc(2, sizeof *argv);
	argv[0] = strdup("true");
	assert_int_equal(job_set_argv(job, argv), 0);
	env = calloc(2, sizeof *env);
	env[0] = strdup("A=1");
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

	if (ok) {
		/* The first few, for the tests that look. */
		if (fx->added < (int)(sizeof fx->ids / sizeof fx->ids[0]))
			fx->ids[fx->added] = job->id;
		fx->added++;
		assert_null(cause);
	} else {
		assert_non_null(cause);
		fx->failed++;
		job_free(job);
	}
}

static void
synced_cb(const char *cause, void *arg)
{
	struct fixture *fx = arg;

	if (cause == NULL)
		fx->synced++;
	else
		fx->sync_failed++;
}

static void
reopen(struct fixture *fx)
{
	char *cause = NULL;

	store_close(fx->st);
	fx->st = store_open(fx->base, fx->path, &cause);
	if (fx->st == NULL)
		fail_msg("%s", cause);
}

static int
setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof *fx);
	char *cause = NULL;

	snprintf(fx->dir, sizeof fx->dir, "/tmp/test-store-XXXXXX");
	if (mkdtemp(fx->dir) == NULL)
		return -1;
	snprintf(fx->path, sizeof fx->path, "%s/triage.db", fx->dir);
	fx->base = event_base_new();
	if ((fx->st = store_open(fx->base, fx->path, &cause)) == NULL) {
		fprintf(stderr, "%s\n", cause);
		return -1;
	}
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *fx = *state;
	struct tsupport_err err;

	store_close(fx->st);
	event_base_free(fx->base);
	if (tsupport_dir_remove(fx->dir, &err) == -1)
		return -1;
	free(fx);
	return 0;
}

/* One turn of the loop: the commit runs. */
static void
turn(struct fixture *fx)
{
	assert_int_equal(event_base_loop(fx->base, EVLOOP_ONCE |
	    EVLOOP_NONBLOCK), 0);
}

static void
new_jobs_are_stored_together_after_the_turn(void **state)
{
	struct fixture *fx = *state;
	struct job *a = new_job("a"), *b = new_job("b"), *c = new_job("c");

	assert_int_equal(store_add(fx->st, a, added_cb, fx), 0);
	assert_int_equal(store_add(fx->st, b, added_cb, fx), 0);
	assert_int_equal(store_add(fx->st, c, added_cb, fx), 0);
	/* Ids are given at once; the jobs join only with the commit. */
	assert_int_equal(a->id, 1);
	assert_int_equal(c->id, 3);
	assert_null(store_get(fx->st, 1));
	assert_int_equal(fx->added, 0);
	turn(fx);
	assert_int_equal(fx->added, 3);
	assert_int_equal(fx->ids[0], 1);
	assert_int_equal(fx->ids[2], 3);
	assert_ptr_equal(store_get(fx->st, 2), b);
	assert_int_equal(store_count(fx->st), 3);
	/* One commit for the three, timed. */
	assert_int_equal(store_commit_stats(fx->st)->commits, 1);
	assert_int_equal(store_commit_stats(fx->st)->failures, 0);
	assert_int_equal(store_commit_stats(fx->st)->seconds.count, 1);
	assert_true(store_commit_stats(fx->st)->seconds.sum > 0);
	reopen(fx);
	assert_int_equal(store_count(fx->st), 3);
	assert_string_equal(store_get(fx->st, 3)->extra->name, "c");
}

static void
changes_and_removals_survive_a_reopen(void **state)
{
	struct fixture *fx = *state;
	struct job *job;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(store_add(fx->st, new_job("x"), added_cb, fx),
		    0);
	turn(fx);
	job = store_get(fx->st, 2);
	job->state = JOB_FAILED;
	job_run_edit(job)->exit_code = 3;
	store_update(fx->st, job);
	store_update(fx->st, job);	/* twice in a turn: written once */
	assert_int_equal(store_remove(fx->st, 3), 0);
	assert_int_equal(store_remove(fx->st, 3), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(store_sync(fx->st, synced_cb, fx), 0);
	turn(fx);
	assert_int_equal(fx->synced, 1);
	reopen(fx);
	assert_int_equal(store_count(fx->st), 2);
	assert_int_equal(store_get(fx->st, 2)->state, JOB_FAILED);
	assert_int_equal(store_get(fx->st, 2)->run->exit_code, 3);
	assert_null(store_get(fx->st, 3));
	/* The removed newest id is not given again. */
	assert_int_equal(store_add(fx->st, new_job("y"), added_cb, fx), 0);
	turn(fx);
	assert_int_equal(fx->ids[fx->added - 1], 4);
	assert_int_equal(store_next(fx->st, 2)->id, 4);
}

/* A job's result is written with its end, and reads back as it was: a
 * string, bytes with a NUL ({"base64": ...}), truncated or not; a new
 * attempt's row has none. */
static void
results_survive_a_reopen(void **state)
{
	struct fixture *fx = *state;
	const struct job *back;
	struct job *job;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(store_add(fx->st, new_job("r"), added_cb, fx),
		    0);
	turn(fx);
	job = store_get(fx->st, 1);
	job->state = JOB_SUCCEEDED;
	assert_int_equal(job_set_result(job, "42\n", 3, false), 0);
	store_update(fx->st, job);
	job = store_get(fx->st, 2);
	job->state = JOB_FAILED;
	assert_int_equal(job_set_result(job, "a\0\377", 3, true), 0);
	store_update(fx->st, job);
	job = store_get(fx->st, 3);
	job->state = JOB_FAILED;
	assert_int_equal(job_set_result(job, "old", 3, false), 0);
	store_update(fx->st, job);
	turn(fx);
	job_new_attempt(job);
	job->state = JOB_QUEUED;
	store_update(fx->st, job);
	turn(fx);
	reopen(fx);
	back = store_get(fx->st, 1);
	assert_string_equal(json_string_value(back->run->result), "42\n");
	assert_false(back->run->result_truncated);
	back = store_get(fx->st, 2);
	assert_string_equal(json_string_value(json_object_get(
	    back->run->result, "base64")), "YQD/");
	assert_true(back->run->result_truncated);
	back = store_get(fx->st, 3);
	assert_null(back->run->result);
	assert_false(back->run->result_truncated);
}

static void
without_grouping_each_job_commits_alone(void **state)
{
	struct fixture *fx = *state;
	int i;

	store_set_grouping(fx->st, false);
	for (i = 0; i < 5; i++)
		assert_int_equal(store_add(fx->st, new_job("z"), added_cb, fx),
		    0);
	turn(fx);
	assert_int_equal(fx->added, 5);
	reopen(fx);
	assert_int_equal(store_count(fx->st), 5);
}

/*
 * A commit that cannot be written (here a file size limit, a full disk in
 * life): the new jobs go back to their callers and are nowhere; a change
 * waits in memory and is written once writing works again.
 */
static void
a_failed_commit_leaves_nothing_half_done(void **state)
{
	struct fixture *fx = *state;
	const struct store_commit_stats *stats = store_commit_stats(fx->st);
	struct rlimit old, small = { 0, 0 };
	struct job *job;
	char big[8192];
	uint64_t commits;
	int i;

	assert_int_equal(store_add(fx->st, new_job("kept"), added_cb, fx), 0);
	turn(fx);
	assert_int_equal(fx->added, 1);
	commits = stats->commits;
	assert_int_equal(stats->failures, 0);

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	small.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	for (i = 0; i < 3; i++) {
		job = new_job(big);
		assert_int_equal(store_add(fx->st, job, added_cb, fx), 0);
	}
	job = store_get(fx->st, 1);
	job->state = JOB_SUCCEEDED;
	store_update(fx->st, job);
	assert_int_equal(store_sync(fx->st, synced_cb, fx), 0);
	turn(fx);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);

	assert_int_equal(fx->failed, 3);
	assert_int_equal(fx->added, 1);
	assert_int_equal(fx->sync_failed, 1);
	assert_int_equal(store_count(fx->st), 1);
	assert_int_equal(stats->commits, commits + 1);
	assert_int_equal(stats->failures, 1);
	/* The change is kept, and goes with the next commit. */
	assert_int_equal(store_add(fx->st, new_job("after"), added_cb, fx), 0);
	turn(fx);
	assert_int_equal(fx->added, 2);
	assert_int_equal(stats->commits, commits + 2);
	assert_int_equal(stats->failures, 1);
	assert_int_equal(stats->seconds.count, stats->commits);
	reopen(fx);
	assert_int_equal(store_count(fx->st), 2);
	assert_int_equal(store_get(fx->st, 1)->state, JOB_SUCCEEDED);
}

/*
 * Removals anywhere, in any order, leave lookups and iteration right
 * whether or not their tombstones have been swept yet, and survive a
 * reopen.
 */
static void
removals_keep_lookups_and_iteration(void **state)
{
	enum { N = 200 };
	struct fixture *fx = *state;
	bool gone[N + 1] = { false };
	struct job *job;
	uint64_t id, want;
	size_t live = N, pos;
	unsigned seed = 7;
	int i, k;

	for (i = 0; i < N; i++)
		assert_int_equal(store_add(fx->st, new_job("r"), added_cb, fx),
		    0);
	turn(fx);
	for (k = 0; k < 150; k++) {
		seed = seed * 1103515245 + 12345;
		id = 1 + (seed >> 8) % N;
		if (gone[id]) {
			assert_int_equal(store_remove(fx->st, id), -1);
			assert_int_equal(errno, ENOENT);
			continue;
		}
		assert_int_equal(store_remove(fx->st, id), 0);
		gone[id] = true;
		live--;
		assert_null(store_get(fx->st, id));
		assert_int_equal(store_count(fx->st), live);
		/* Every live job in order, from anywhere. */
		id = (seed >> 4) % (N + 1);
		for (want = id + 1; want <= N && gone[want]; want++)
			;
		job = store_next(fx->st, id);
		if (want > N)
			assert_null(job);
		else
			assert_int_equal(job->id, want);
	}
	for (want = N; gone[want]; want--)
		;
	assert_int_equal(store_last(fx->st)->id, want);
	/* Iteration steps over the tombstones too. */
	for (pos = 0, i = 0; (job = store_iter(fx->st, &pos)) != NULL; i++)
		assert_false(gone[job->id]);
	assert_int_equal(i, live);
	turn(fx);
	reopen(fx);
	assert_int_equal(store_count(fx->st), live);
	for (id = 0, i = 0; (job = store_next(fx->st, id)) != NULL;
	    id = job->id) {
		assert_false(gone[job->id]);
		i++;
	}
	assert_int_equal(i, live);
}

/* The attempt job id's row has on disk now, read apart from the store. */
static int
attempt_on_disk(const struct fixture *fx, uint64_t id)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int attempt;

	assert_int_equal(sqlite3_open_v2(fx->path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
	    "SELECT attempt FROM jobs WHERE id = ?1", -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	attempt = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return attempt;
}

/*
 * Claims go ahead of a commit that waits for the disk, in a turn of their
 * own, and that commit does not write their rows again; a change made to a
 * claimed job in between is written by it all the same, as is a change
 * that must survive a power loss to the job claimed.
 */
static void
claims_go_ahead_and_what_follows_is_written(void **state)
{
	struct fixture *fx = *state;
	struct job *a, *b, *c;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(store_add(fx->st, new_job("c"), added_cb, fx),
		    0);
	turn(fx);
	a = store_get(fx->st, 1);
	b = store_get(fx->st, 2);
	c = store_get(fx->st, 3);
	a->attempt = 2;
	(void)store_claim(fx->st, a);
	c->attempt = 2;
	(void)store_claim(fx->st, c);
	c->state = JOB_RUNNING;
	store_update(fx->st, c);
	b->state = JOB_CANCELED;
	store_update(fx->st, b);
	turn(fx);
	/* The claims are written; the commit is the next turn's. */
	assert_int_equal(attempt_on_disk(fx, 1), 2);
	assert_int_equal(attempt_on_disk(fx, 3), 2);
	assert_true(store_pending(fx->st));
	a->attempt = 3;
	store_update(fx->st, a);
	turn(fx);
	assert_false(store_pending(fx->st));
	assert_int_equal(attempt_on_disk(fx, 1), 3);
	reopen(fx);
	assert_int_equal(store_get(fx->st, 1)->attempt, 3);
	assert_int_equal(store_get(fx->st, 2)->state, JOB_CANCELED);
	assert_int_equal(store_get(fx->st, 3)->state, JOB_RUNNING);
	assert_int_equal(store_get(fx->st, 3)->attempt, 2);

	/* A claimed job whose change must reach the disk, alone in its
	 * turn: the commit still has its row to write, and its fsync. */
	b = store_get(fx->st, 2);
	b->attempt = 5;
	(void)store_claim(fx->st, b);
	store_update(fx->st, b);
	turn(fx);
	assert_true(store_pending(fx->st));
	turn(fx);
	assert_false(store_pending(fx->st));
	assert_int_equal(attempt_on_disk(fx, 2), 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    new_jobs_are_stored_together_after_the_turn, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    changes_and_removals_survive_a_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(results_survive_a_reopen, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    without_grouping_each_job_commits_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    a_failed_commit_leaves_nothing_half_done, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    removals_keep_lookups_and_iteration, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    claims_go_ahead_and_what_follows_is_written, setup,
		    teardown),
	};

	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
