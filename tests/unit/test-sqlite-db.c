/* test-sqlite-db.c - sqlite_db_*: real SQLite files in a temporary
 * directory: a new file's settings, every field of a job there and back,
 * transactions, pruning, migration from version 1, and the files
 * sqlite_db_open must refuse. */
#include <limits.h>
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
#include <sqlite3.h>

#include "sqlite-db.h"
#include "job.h"
#include "tsupport-clock.h"
#include "tsupport-dir.h"

/* The schema of version 1, as triage wrote it: files out there look like
 * this, whatever sqlite-schema.c becomes. */
#define V1_SCHEMA							\
	"CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT,"	\
	" name TEXT NOT NULL, argv TEXT NOT NULL, env TEXT NOT NULL,"	\
	" cwd TEXT NOT NULL, priority TEXT NOT NULL, state TEXT NOT NULL,"	\
	" slots INTEGER NOT NULL, exclusive INTEGER NOT NULL,"		\
	" timeout_ms INTEGER NOT NULL, uid INTEGER NOT NULL,"		\
	" gid INTEGER NOT NULL, submitted_at INTEGER, started_at INTEGER,"	\
	" finished_at INTEGER, pid INTEGER, exit_code INTEGER,"	\
	" signal INTEGER, reason TEXT, attempt INTEGER NOT NULL,"	\
	" user_time REAL, system_time REAL, max_rss_kb INTEGER,"	\
	" stdout_truncated INTEGER NOT NULL DEFAULT 0,"			\
	" stderr_truncated INTEGER NOT NULL DEFAULT 0);"		\
	"PRAGMA user_version = 1;"

#define MAX_LOADED 32

/* Each test gets a fresh directory; db is <dir>/triage.db. */
struct fixture {
	char dir[64];
	char path[128];
};

static struct fixture *fx;

/* What sqlite_db_load handed over, in order. */
struct loaded {
	struct job *jobs[MAX_LOADED];
	size_t n;
	size_t stop_after;	/* the callback refuses job number stop_after
	    + 1 */
};

static int
fixture_setup(void **state)
{
	fx = calloc(1, sizeof *fx);
	if (fx == NULL)
		return -1;
	strcpy(fx->dir, "/tmp/test-db-XXXXXX");
	if (mkdtemp(fx->dir) == NULL)
		return -1;
	snprintf(fx->path, sizeof fx->path, "%s/triage.db", fx->dir);
	*state = fx;
	return 0;
}

static int
fixture_teardown(void **state)
{
	struct tsupport_err err;
	int rc;

	(void)state;
	rc = tsupport_dir_remove(fx->dir, &err);
	free(fx);
	fx = NULL;
	return rc;
}

/* Runs sql on path through a connection of its own, as an operator would. */
static void
raw_exec(const char *path, const char *sql)
{
	sqlite3 *sq;
	char *err = NULL;

	assert_int_equal(sqlite3_open(path, &sq), SQLITE_OK);
	if (sqlite3_exec(sq, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
	sqlite3_close(sq);
}

/* The first column of the first row of sql, as an integer. */
static int64_t
raw_int(const char *path, const char *sql)
{
	sqlite3 *sq;
	sqlite3_stmt *st;
	int64_t v;

	assert_int_equal(sqlite3_open(path, &sq), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(sq, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(sq);
	return v;
}

/* The rows of sql, each row's columns joined by '|', rows by '\n'. */
static void
raw_text(const char *path, const char *sql, char *buf, size_t size)
{
	sqlite3 *sq;
	sqlite3_stmt *st;
	const unsigned char *s;
	size_t len = 0;
	int i;

	buf[0] = '\0';
	assert_int_equal(sqlite3_open(path, &sq), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(sq, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		for (i = 0; i < sqlite3_column_count(st); i++) {
			s = sqlite3_column_text(st, i);
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
			    s != NULL ? (const char *)s : "NULL",
			    i + 1 < sqlite3_column_count(st) ? "|" : "\n");
			assert_true(len < size);
		}
	sqlite3_finalize(st);
	sqlite3_close(sq);
}

static struct sqlite_db *
open_ok(void)
{
	struct sqlite_db *db;
	char *cause = NULL;

	if ((db = sqlite_db_open(fx->path, &cause)) == NULL)
		fail_msg("sqlite_db_open: %s", cause);
	return db;
}

/* sqlite_db_open must refuse the file; returns the cause, which names the path.
 * */
static char *
open_bad(const char *path)
{
	char *cause = NULL;

	assert_null(sqlite_db_open(path, &cause));
	assert_non_null(cause);
	if (strstr(cause, path) == NULL)
		fail_msg("cause does not name %s: %s", path, cause);
	return cause;
}

static void
assert_contains(const char *s, const char *part)
{
	if (s == NULL || strstr(s, part) == NULL)
		fail_msg("\"%s\" does not contain \"%s\"", s ? s : "(null)",
		    part);
}

/* A new NULL-terminated vector of copies of the arguments. */
static char **
strv(const char *first, ...)
{
	const char *s;
	char **v;
	va_list ap;
	size_t n = 0;

	assert_non_null(v = calloc(16, sizeof *v));
	va_start(ap, first);
	for (s = first; s != NULL; s = va_arg(ap, const char *)) {
		assert_true(n < 15);
		assert_non_null(v[n++] = strdup(s));
	}
	va_end(ap);
	return v;
}

/* A job with only what the schema requires: everything else unknown. */
static struct job *
bare_job(uint64_t id, enum job_state state)
{
	struct job *job;

	assert_non_null(job = job_new());
	job->id = id;
	job->state = state;
	assert_non_null(job_extra_edit(job)->name = strdup("bare"));
	assert_int_equal(job_set_cwd(job, "/"), 0);
	assert_int_equal(job_set_priority(job, "normal"), 0);
	return job;
}

/* A job with every field set, none to its default. */
static struct job *
full_job(uint64_t id)
{
	struct job_extra *extra;
	struct job *job;

	assert_non_null(job = job_new());
	assert_non_null(extra = job_extra_edit(job));
	job->id = id;
	assert_non_null(extra->name =
	    strdup("it's \"quoted\"\nline two, caf\xc3\xa9 \xe2\x9c\x93"));
	assert_int_equal(job_set_argv(job, strv("/bin/sh", "-c",
	    "echo 'hello world' \"$X\"",
	    "\xe6\x97\xa5\xe6\x9c\xac", "", NULL)), 0);
	assert_int_equal(job_set_env(job, strv("X=a b", "EMPTY=", "NL=one\ntwo",
	    NULL)), 0);
	assert_int_equal(job_set_cwd(job, "/home/\xc3\xbcser/dir with space"),
	    0);
	assert_int_equal(job_set_priority(job, "high"), 0);
	/* Whom it runs as, by name: written at insert only. */
	assert_int_equal(job_set_user(job, "\xc3\xbcser"), 0);
	job->state = JOB_FAILED;
	job->slots = 3;
	job->exclusive = true;
	job->timeout_ms = 90061001;
	job->retries = 4;
	job->seq = -42;
	assert_non_null(extra->after = calloc(3, sizeof *extra->after));
	extra->after[0] = 9;
	extra->after[1] = 2;
	extra->after[2] = (uint64_t)1 << 40;
	extra->nafter = 3;
	job->uid = 4294967294u;
	job->gid = 1001;
	job->submitted_at = 1795000000123;
	job_run_edit(job)->started_at = 1795000001456;
	job_run_edit(job)->finished_at = 1795000002789;
	job_run_edit(job)->pid = 123456;
	job_run_edit(job)->exit_code = 3;
	job_run_edit(job)->signal = 9;
	assert_non_null(job_run_edit(job)->reason =
	    strdup("exited with 3 \"badly\"\n\xe2\x80\x94 it's over"));
	job->attempt = 7;
	job_run_edit(job)->user_time = 1.25;
	/* not exact in decimal: exact here */
	job_run_edit(job)->system_time = 0.1 + 0.2;
	job_run_edit(job)->max_rss_kb = (int64_t)1 << 40;
	job_run_edit(job)->stdout_truncated = true;
	job_run_edit(job)->stderr_truncated = false;
	assert_non_null(extra->labels = json_pack("{ss ss}", "team",
	    "caf\xc3\xa9", "ci.run-id", ""));
	job->held = true;
	extra->begin_at = 1796000000999;
	assert_non_null(extra->after_any = calloc(2, sizeof *extra->after_any));
	extra->after_any[0] = 3;
	extra->after_any[1] = (uint64_t)1 << 41;
	extra->nafter_any = 2;
	job->nice = 19;
	job->merge_output = true;
	job_run_edit(job)->stdout_dropped = (uint64_t)1 << 42;
	job_run_edit(job)->stderr_dropped = 1;
	job->memory = (uint64_t)INT64_MAX;
	job->frozen = true;
	job_run_edit(job)->peak_memory = (int64_t)1 << 36;
	job_run_edit(job)->oom = true;
	assert_int_equal(job_set_cgroup(job, "triage/5 Ã©"), 0);
	assert_non_null(extra->resources = json_pack("{si sI}", "gpu", 2,
	    "lic-\xc3\xa9", (json_int_t)4000000000));
	assert_non_null(extra->devices = json_pack("{s[ss]}", "gpu", "0",
	    "nv:1"));
	assert_non_null(extra->key = strdup("order \xc3\xa9 17"));
	return job;
}

static void
assert_strv_equal(char *const *a, char *const *b)
{
	size_t i;

	/* A job read back always has a vector, empty for none. */
	assert_non_null(b);
	for (i = 0; a != NULL && a[i] != NULL; i++) {
		assert_non_null(b[i]);
		assert_string_equal(a[i], b[i]);
	}
	assert_null(b[i]);
}

static void
assert_opt_string_equal(const char *a, const char *b)
{
	if (a == NULL)
		assert_null(b);
	else {
		assert_non_null(b);
		assert_string_equal(a, b);
	}
}

/* Two of a job's objects (labels, resources, devices), NULL for none,
 * are the same. */
static void
assert_opt_json_equal(const json_t *a, const json_t *b)
{
	if (a == NULL)
		assert_null(b);
	else if (!json_equal(a, b))
		fail_msg("%s is not %s", json_dumps(b, JSON_COMPACT),
		    json_dumps(a, JSON_COMPACT));
}

/* Every persisted field of want equals that of got. */
static void
assert_job_equal(const struct job *want, const struct job *got)
{
	size_t i;

	assert_int_equal(want->id, got->id);
	assert_string_equal(job_name(want), job_name(got));
	assert_strv_equal(want->argv, got->argv);
	/* An ended job's environment is loaded only when asked for. */
	if (job_state_terminal(got->state))
		assert_null(got->env);
	else
		assert_strv_equal(want->env, got->env);
	assert_string_equal(want->cwd, got->cwd);
	assert_string_equal(want->priority, got->priority);
	if (want->user == NULL)
		assert_null(got->user);
	else
		assert_string_equal(want->user, got->user);
	assert_int_equal(want->state, got->state);
	assert_int_equal(want->slots, got->slots);
	assert_int_equal(want->exclusive, got->exclusive);
	assert_int_equal(want->timeout_ms, got->timeout_ms);
	assert_int_equal(want->retries, got->retries);
	assert_int_equal(want->seq, got->seq);
	assert_int_equal(want->extra->nafter, got->extra->nafter);
	if (want->extra->nafter == 0)
		assert_null(got->extra->after);
	for (i = 0; i < want->extra->nafter; i++)
		assert_int_equal(want->extra->after[i], got->extra->after[i]);
	assert_int_equal(want->uid, got->uid);
	assert_int_equal(want->gid, got->gid);
	assert_int_equal(want->submitted_at, got->submitted_at);
	assert_int_equal(want->run->started_at, got->run->started_at);
	assert_int_equal(want->run->finished_at, got->run->finished_at);
	assert_int_equal(want->run->pid, got->run->pid);
	assert_int_equal(want->run->exit_code, got->run->exit_code);
	assert_int_equal(want->run->signal, got->run->signal);
	assert_opt_string_equal(want->run->reason, got->run->reason);
	assert_int_equal(want->attempt, got->attempt);
	assert_true(want->run->user_time == got->run->user_time);
	assert_true(want->run->system_time == got->run->system_time);
	assert_int_equal(want->run->max_rss_kb, got->run->max_rss_kb);
	assert_int_equal(want->run->stdout_truncated,
	    got->run->stdout_truncated);
	assert_int_equal(want->run->stderr_truncated,
	    got->run->stderr_truncated);
	assert_opt_json_equal(want->extra->labels, got->extra->labels);
	assert_int_equal(want->held, got->held);
	assert_int_equal(want->extra->begin_at, got->extra->begin_at);
	assert_int_equal(want->extra->nafter_any, got->extra->nafter_any);
	for (i = 0; i < want->extra->nafter_any; i++)
		assert_int_equal(want->extra->after_any[i],
		    got->extra->after_any[i]);
	assert_int_equal(want->nice, got->nice);
	assert_int_equal(want->merge_output, got->merge_output);
	assert_int_equal(want->run->stdout_dropped, got->run->stdout_dropped);
	assert_int_equal(want->run->stderr_dropped, got->run->stderr_dropped);
	assert_int_equal(want->memory, got->memory);
	assert_int_equal(want->frozen, got->frozen);
	assert_int_equal(want->run->peak_memory, got->run->peak_memory);
	assert_int_equal(want->run->oom, got->run->oom);
	assert_opt_string_equal(want->run->cgroup, got->run->cgroup);
	assert_opt_json_equal(want->extra->resources, got->extra->resources);
	assert_opt_json_equal(want->extra->devices, got->extra->devices);
	assert_opt_string_equal(want->extra->key, got->extra->key);
}

static int
load_cb(struct job *job, void *arg)
{
	struct loaded *l = arg;

	if (l->n >= MAX_LOADED || (l->stop_after != 0 &&
	    l->n == l->stop_after)) {
		job_free(job);
		return -1;
	}
	l->jobs[l->n++] = job;
	return 0;
}

static void
loaded_free(struct loaded *l)
{
	while (l->n > 0)
		job_free(l->jobs[--l->n]);
}

/* Loads every job into l, which must be empty. */
static void
load_ok(struct sqlite_db *db, struct loaded *l)
{
	char *cause = NULL;

	assert_int_equal(l->n, 0);
	if (sqlite_db_load(db, load_cb, l, &cause) == -1)
		fail_msg("sqlite_db_load: %s", cause);
}

/* Inserts each job in one transaction and frees it. */
static void
insert_jobs(struct sqlite_db *db, struct job **jobs, size_t n)
{
	char *cause = NULL;
	size_t i;

	assert_int_equal(sqlite_db_begin(db, &cause), 0);
	for (i = 0; i < n; i++) {
		if (sqlite_db_insert(db, jobs[i], &cause) == -1)
			fail_msg("sqlite_db_insert: %s", cause);
		job_free(jobs[i]);
	}
	if (sqlite_db_commit(db, &cause) == -1)
		fail_msg("sqlite_db_commit: %s", cause);
}

static void
test_new_file(void **state)
{
	struct job *job = bare_job(1, JOB_QUEUED);
	char wal[160], mode[32];
	struct stat st;
	struct sqlite_db *db;

	(void)state;
	db = open_ok();
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	insert_jobs(db, &job, 1);

	/* While open, writes go to the WAL, which has the database's mode. */
	snprintf(wal, sizeof wal, "%s-wal", fx->path);
	assert_int_equal(stat(wal, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	raw_text(fx->path, "PRAGMA journal_mode", mode, sizeof mode);
	assert_string_equal(mode, "wal\n");
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"),
	    SQLITE_SCHEMA_VERSION);
	sqlite_db_close(db);

	/* WAL mode is a property of the file: it stays after close. */
	raw_text(fx->path, "PRAGMA journal_mode", mode, sizeof mode);
	assert_string_equal(mode, "wal\n");
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"),
	    SQLITE_SCHEMA_VERSION);
}

/* Every field there and back, through insert, update, and delete. */
/* Every column a job's life changes, set to something new. */
static void
change_life(struct job *job)
{
	job->state = JOB_SUCCEEDED;
	job->retries = 7;
	job->seq = INT64_MAX;
	job_run_edit(job)->started_at = 1800000000000;
	job_run_edit(job)->finished_at = 1800000000500;
	job_run_edit(job)->pid = 4242;
	job_run_edit(job)->exit_code = 0;
	job_run_edit(job)->signal = 0;
	free(job->run->reason);
	assert_non_null(job_run_edit(job)->reason = strdup(""));
	job->attempt = 2;
	job_run_edit(job)->user_time = 0;
	job_run_edit(job)->system_time = 0;
	job_run_edit(job)->max_rss_kb = 0;
	job_run_edit(job)->stdout_truncated = false;
	job_run_edit(job)->stderr_truncated = true;
	/* What the update method changes too. */
	free(job->extra->name);
	assert_non_null(job_extra_edit(job)->name =
	    strdup("renamed \xe2\x9c\x93"));
	assert_int_equal(job_set_priority(job, "low"), 0);
	job->timeout_ms = 0;
	json_decref(job->extra->labels);
	job_extra_edit(job)->labels = NULL;
	job->held = false;
	job_extra_edit(job)->begin_at = -1;
	job->nice = 0;
	job_run_edit(job)->stdout_dropped = 0;
	job_run_edit(job)->stderr_dropped = 77;
	job->memory = 1 << 20;
	job->frozen = false;
	job_run_edit(job)->peak_memory = -1;
	job_run_edit(job)->oom = false;
	assert_int_equal(job_set_cgroup(job, NULL), 0);
	/* Updated: the resources it asks for; a new attempt: no devices. */
	json_decref(job->extra->resources);
	assert_non_null(job_extra_edit(job)->resources = json_pack("{si}",
	    "gpu", 1));
	json_decref(job->extra->devices);
	job_extra_edit(job)->devices = NULL;
}

static void
free_strv(char **v)
{
	char **p;

	for (p = v; p != NULL && *p != NULL; p++)
		free(*p);
	free(v);
}

static void
test_round_trip(void **state)
{
	struct loaded l = { 0 };
	struct job *job = full_job(5), *want, *upd;
	char **env;
	size_t i;
	char *cause = NULL;
	struct sqlite_db *db;

	(void)state;
	db = open_ok();
	insert_jobs(db, &job, 1);
	load_ok(db, &l);
	assert_int_equal(l.n, 1);
	want = full_job(5);
	assert_job_equal(want, l.jobs[0]);
	loaded_free(&l);

	/* Update writes what a job's life changes and nothing else: the rest
	 * stays as inserted, whatever memory holds (its env dropped, say). */
	job_free(want);
	want = full_job(5);
	upd = full_job(5);
	change_life(want);
	change_life(upd);
	job_drop_env(upd);
	upd->slots = 9;
	upd->uid = 0;
	upd->merge_output = false;
	job_extra_edit(upd)->nafter_any = 1;
	assert_int_equal(sqlite_db_begin(db, &cause), 0);
	if (sqlite_db_update(db, upd, &cause) == -1)
		fail_msg("sqlite_db_update: %s", cause);
	assert_int_equal(sqlite_db_commit(db, &cause), 0);
	load_ok(db, &l);
	assert_int_equal(l.n, 1);
	assert_job_equal(want, l.jobs[0]);
	loaded_free(&l);
	job_free(upd);

	/* The environment can be read back on its own. */
	assert_int_equal(sqlite_db_env(db, 5, &env, &cause), 0);
	for (i = 0; want->env[i] != NULL; i++)
		assert_string_equal(env[i], want->env[i]);
	assert_null(env[i]);
	free_strv(env);
	assert_int_equal(sqlite_db_env(db, 6, &env, &cause), -1);
	assert_non_null(strstr(cause, "6"));
	free(cause);
	cause = NULL;
	job_free(want);

	assert_int_equal(sqlite_db_begin(db, &cause), 0);
	assert_int_equal(sqlite_db_delete(db, 5, &cause), 0);
	/* Deleting what is gone is no error. */
	assert_int_equal(sqlite_db_delete(db, 5, &cause), 0);
	assert_int_equal(sqlite_db_commit(db, &cause), 0);
	load_ok(db, &l);
	assert_int_equal(l.n, 0);
	sqlite_db_close(db);
	assert_null(cause);
}

/* Jobs inserted SQLITE_DB_INSERT_ROWS at a time come back as those inserted one
 * by one do, each its own: row k of the statement is job k. */
static void
test_insert_rows(void **state)
{
	const struct job *rows[SQLITE_DB_INSERT_ROWS];
	struct job *jobs[2 * SQLITE_DB_INSERT_ROWS], *want;
	struct loaded l = { 0 };
	char *cause = NULL;
	struct sqlite_db *db;
	size_t i;

	(void)state;
	db = open_ok();
	for (i = 0; i < 2 * SQLITE_DB_INSERT_ROWS; i++)
		jobs[i] = i % 2 == 0 ? full_job(10 + i) :
		    bare_job(10 + i, JOB_QUEUED);
	assert_int_equal(sqlite_db_begin(db, &cause), 0);
	for (i = 0; i < 2 * SQLITE_DB_INSERT_ROWS; i += SQLITE_DB_INSERT_ROWS) {
		memcpy(rows, &jobs[i], sizeof rows);
		if (sqlite_db_insert_rows(db, rows, &cause) == -1)
			fail_msg("sqlite_db_insert_rows: %s", cause);
	}
	assert_int_equal(sqlite_db_commit(db, &cause), 0);
	load_ok(db, &l);
	assert_int_equal(l.n, 2 * SQLITE_DB_INSERT_ROWS);
	for (i = 0; i < 2 * SQLITE_DB_INSERT_ROWS; i++) {
		want = i % 2 == 0 ? full_job(10 + i) :
		    bare_job(10 + i, JOB_QUEUED);
		assert_job_equal(want, l.jobs[i]);
		job_free(want);
		job_free(jobs[i]);
	}
	loaded_free(&l);

	/* One row that cannot go in (an id taken) fails the statement,
	 * which writes none of its rows. */
	for (i = 0; i < SQLITE_DB_INSERT_ROWS; i++)
		jobs[i] = bare_job(100 + i, JOB_QUEUED);
	jobs[SQLITE_DB_INSERT_ROWS - 1]->id = 10;
	memcpy(rows, jobs, sizeof rows);
	assert_int_equal(sqlite_db_begin(db, &cause), 0);
	assert_int_equal(sqlite_db_insert_rows(db, rows, &cause), -1);
	assert_contains(cause, "jobs 100 to 10");
	free(cause);
	cause = NULL;
	sqlite_db_rollback(db);
	load_ok(db, &l);
	assert_int_equal(l.n, 2 * SQLITE_DB_INSERT_ROWS);
	loaded_free(&l);
	for (i = 0; i < SQLITE_DB_INSERT_ROWS; i++)
		job_free(jobs[i]);
	sqlite_db_close(db);
}

/* A job with every optional field unknown comes back unknown, not 0. */
static void
test_round_trip_unknown(void **state)
{
	struct loaded l = { 0 };
	struct job *job = bare_job(1, JOB_QUEUED), *want;
	char buf[256];
	struct sqlite_db *db;

	(void)state;
	db = open_ok();
	insert_jobs(db, &job, 1);
	load_ok(db, &l);
	assert_int_equal(l.n, 1);
	want = bare_job(1, JOB_QUEUED);
	assert_job_equal(want, l.jobs[0]);
	assert_int_equal(l.jobs[0]->submitted_at, -1);
	assert_int_equal(l.jobs[0]->run->pid, 0);
	assert_int_equal(l.jobs[0]->run->exit_code, -1);
	assert_true(l.jobs[0]->run->user_time < 0);
	assert_int_equal(l.jobs[0]->run->max_rss_kb, -1);
	job_free(want);
	loaded_free(&l);
	sqlite_db_close(db);

	/* In the file, unknown is NULL and the vectors are empty arrays. */
	raw_text(fx->path, "SELECT argv, env, \"after\", submitted_at,"
	    " started_at, finished_at, pid, exit_code, signal, reason,"
	    " user_time, system_time, max_rss_kb FROM jobs", buf, sizeof buf);
	assert_string_equal(buf, "[]|[]|NULL|NULL|NULL|NULL|NULL|NULL|NULL|"
	    "NULL|NULL|NULL|NULL\n");
}

/* JSON columns are readable by an operator with the sqlite3 shell. */
static void
test_json_columns(void **state)
{
	struct job *job = full_job(2);
	char buf[512];
	struct sqlite_db *db;

	(void)state;
	db = open_ok();
	insert_jobs(db, &job, 1);
	sqlite_db_close(db);
	raw_text(fx->path, "SELECT argv, \"after\" FROM jobs", buf, sizeof buf);
	assert_string_equal(buf, "[\"/bin/sh\",\"-c\","
	    "\"echo 'hello world' \\\"$X\\\"\",\"\xe6\x97\xa5\xe6\x9c\xac\",\"\"]"
	    "|[9,2,1099511627776]\n");
}

/*
 * argv, env and cwd that are not UTF-8 (file names are bytes) are stored
 * in a form PostgreSQL's text takes too: {"base64": ...} in the arrays,
 * and as the cwd column's whole text (a path starts with '/', so no stored
 * cwd reads as one); they load back as the same bytes.
 */
static struct job *
bytes_job(void)
{
	struct job *job = bare_job(5, JOB_QUEUED);

	assert_int_equal(job_set_argv(job, strv("/tmp/r\xff", "%s",
	    "\xff\xfex", NULL)), 0);
	assert_int_equal(job_set_env(job, strv("V=\xfe\xff", "P=/bin",
	    NULL)), 0);
	assert_int_equal(job_set_cwd(job, "/tmp/\xff\xfe" "d"), 0);
	job_set_name(job, NULL);
	return job;
}

static void
test_bytes_not_utf8(void **state)
{
	struct job *job = bytes_job(), *got;
	struct loaded l = { 0 };
	char buf[512], **env;
	struct sqlite_db *db;

	(void)state;
	db = open_ok();
	insert_jobs(db, &job, 1);
	sqlite_db_close(db);
	raw_text(fx->path, "SELECT argv, env, cwd FROM jobs", buf, sizeof buf);
	assert_string_equal(buf, "[{\"base64\":\"L3RtcC9y/w==\"},\"%s\","
	    "{\"base64\":\"//54\"}]|[{\"base64\":\"Vj3+/w==\"},\"P=/bin\"]|"
	    "{\"base64\":\"L3RtcC///mQ=\"}\n");
	db = open_ok();
	load_ok(db, &l);
	assert_int_equal(l.n, 1);
	got = l.jobs[0];
	job = bytes_job();
	assert_strv_equal(job->argv, got->argv);
	assert_strv_equal(job->env, got->env);
	assert_string_equal(job->cwd, got->cwd);
	assert_string_equal(job_name(got), "r\\xff");
	assert_int_equal(sqlite_db_env(db, 5, &env, NULL), 0);
	assert_strv_equal(job->env, env);
	free_strv(env);
	loaded_free(&l);
	sqlite_db_close(db);
	job_free(job);
}

/* Job i of test_plain_and_escaped_vectors. */
static struct job *
vector_job(size_t i)
{
	static const char *const argvs[][4] = {
		{ "/bin/true", NULL },
		{ "sh", "-c", "", NULL },
		{ "a\"b", "back\\slash", "tab\t", NULL },
		{ "caf\xc3\xa9", "x", NULL },
		{ NULL },
	};
	struct job *job = bare_job(i + 1, JOB_QUEUED);
	char **v;
	size_t k;

	assert_non_null(v = calloc(5, sizeof *v));
	for (k = 0; argvs[i][k] != NULL; k++)
		assert_non_null(v[k] = strdup(argvs[i][k]));
	assert_int_equal(job_set_argv(job, v), 0);
	assert_int_equal(job_set_env(job, strv(i < 4 ? "A=1" : "B=2",
	    "PATH=/bin", NULL)), 0);
	return job;
}

/*
 * Plain arrays (what json_dumps writes for ASCII without escapes) are read
 * without jansson, the rest with it: both give the same vectors, and jobs
 * that share an environment share its copy after a load.
 */
static void
test_plain_and_escaped_vectors(void **state)
{
	struct loaded l = { 0 };
	struct job *jobs[5], *want;
	struct sqlite_db *db;
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++)
		jobs[i] = vector_job(i);
	db = open_ok();
	insert_jobs(db, jobs, 5);
	load_ok(db, &l);
	assert_int_equal(l.n, 5);
	for (i = 0; i < 5; i++) {
		want = vector_job(i);
		assert_strv_equal(want->argv, l.jobs[i]->argv);
		assert_strv_equal(want->env, l.jobs[i]->env);
		job_free(want);
	}
	assert_ptr_equal(l.jobs[0]->env, l.jobs[3]->env);
	assert_ptr_not_equal(l.jobs[0]->env, l.jobs[4]->env);
	assert_null(l.jobs[4]->argv[0]);
	loaded_free(&l);
	sqlite_db_close(db);
}

static void
test_load_order(void **state)
{
	struct job *jobs[] = {
		bare_job(5, JOB_QUEUED), bare_job(2, JOB_RUNNING),
		bare_job(9, JOB_LOST), bare_job(3, JOB_QUEUED),
	};
	struct loaded l = { 0 };
	char *cause = NULL;
	struct sqlite_db *db;

	(void)state;
	db = open_ok();
	insert_jobs(db, jobs, 4);
	load_ok(db, &l);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.jobs[0]->id, 2);
	assert_int_equal(l.jobs[1]->id, 3);
	assert_int_equal(l.jobs[2]->id, 5);
	assert_int_equal(l.jobs[3]->id, 9);
	assert_int_equal(l.jobs[3]->state, JOB_LOST);
	loaded_free(&l);

	/* A callback that says stop stops the load. */
	l.stop_after = 2;
	assert_int_equal(sqlite_db_load(db, load_cb, &l, &cause), -1);
	assert_string_equal(cause, "stopped");
	free(cause);
	assert_int_equal(l.n, 2);
	loaded_free(&l);

	/* ... and the next load starts from the beginning again. */
	l.stop_after = 0;
	load_ok(db, &l);
	assert_int_equal(l.n, 4);
	loaded_free(&l);
	sqlite_db_close(db);
}

static void
test_max_id(void **state)
{
	struct job *jobs[] = {
		bare_job(1, JOB_QUEUED), bare_job(2, JOB_QUEUED),
		bare_job(3, JOB_QUEUED),
	};
	struct job *next;
	char *cause = NULL;
	struct sqlite_db *db;
	uint64_t id = 99;

	(void)state;
	db = open_ok();
	assert_int_equal(sqlite_db_max_id(db, &id, &cause), 0);
	assert_int_equal(id, 0);
	insert_jobs(db, jobs, 3);
	assert_int_equal(sqlite_db_begin(db, &cause), 0);
	assert_int_equal(sqlite_db_delete(db, 3, &cause), 0);
	assert_int_equal(sqlite_db_commit(db, &cause), 0);
	assert_int_equal(sqlite_db_max_id(db, &id, &cause), 0);
	assert_int_equal(id, 3);
	sqlite_db_close(db);

	/* Across a restart too: id 3 is never given again. */
	db = open_ok();
	assert_int_equal(sqlite_db_max_id(db, &id, &cause), 0);
	assert_int_equal(id, 3);
	next = bare_job(id + 1, JOB_QUEUED);
	insert_jobs(db, &next, 1);
	assert_int_equal(sqlite_db_max_id(db, &id, &cause), 0);
	assert_int_equal(id, 4);
	sqlite_db_close(db);
	assert_null(cause);
}

static void
test_rollback(void **state)
{
	struct job *jobs[] = { bare_job(1, JOB_QUEUED) };
	struct job *job;
	struct loaded l = { 0 };
	char *cause = NULL;
	struct sqlite_db *db;

	(void)state;
	db = open_ok();
	insert_jobs(db, jobs, 1);

	assert_int_equal(sqlite_db_begin(db, &cause), 0);
	job = bare_job(2, JOB_QUEUED);
	assert_int_equal(sqlite_db_insert(db, job, &cause), 0);
	job_free(job);
	job = bare_job(1, JOB_RUNNING);
	assert_int_equal(sqlite_db_update(db, job, &cause), 0);
	job_free(job);
	sqlite_db_rollback(db);
	/* Without a transaction, rollback does nothing. */
	sqlite_db_rollback(db);

	load_ok(db, &l);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.jobs[0]->id, 1);
	assert_int_equal(l.jobs[0]->state, JOB_QUEUED);
	loaded_free(&l);
	sqlite_db_close(db);
	assert_null(cause);
}

static void
test_commit_persists(void **state)
{
	struct job *jobs[] = {
		bare_job(1, JOB_QUEUED), full_job(2), bare_job(3, JOB_QUEUED),
	};
	struct loaded l = { 0 };
	struct job *want;
	struct sqlite_db *db;

	(void)state;
	db = open_ok();
	insert_jobs(db, jobs, 3);
	sqlite_db_close(db);

	db = open_ok();
	load_ok(db, &l);
	assert_int_equal(l.n, 3);
	want = full_job(2);
	assert_job_equal(want, l.jobs[1]);
	job_free(want);
	loaded_free(&l);
	sqlite_db_close(db);
}

/* n commits of an update of job each, its attempt one more every time. */
static void
update_commits(struct sqlite_db *db, struct job *job, int n)
{
	char *cause = NULL;
	int i;

	for (i = 0; i < n; i++) {
		job->attempt++;
		if (sqlite_db_begin(db, &cause) == -1 ||
		    sqlite_db_update(db, job, &cause) == -1 ||
		    sqlite_db_commit(db, &cause) == -1)
			fail_msg("update: %s", cause);
	}
}

/*
 * Checkpoints come from a thread of their own once the WAL holds
 * SQLITE_CKPT_PAGES, as the commits go on; what was committed before,
 * during and after them is all there after a reopen.
 */
static void
test_checkpoints_off_the_writer(void **state)
{
	struct job *job = full_job(1), *copy = full_job(1);
	struct loaded l = { 0 };
	struct sqlite_db *db;
	int64_t deadline;

	(void)state;
	db = open_ok();
	insert_jobs(db, &copy, 1);
	assert_int_equal(sqlite_db_checkpoints(db), 0);
	/* At least a page a commit. */
	update_commits(db, job, 1100);
	deadline = tsupport_clock_ms() + 30000;
	while (sqlite_db_checkpoints(db) == 0 &&
	    tsupport_clock_left_ms(deadline) > 0)
		update_commits(db, job, 10);
	assert_true(sqlite_db_checkpoints(db) > 0);
	update_commits(db, job, 100);
	sqlite_db_close(db);

	db = open_ok();
	load_ok(db, &l);
	assert_int_equal(l.n, 1);
	assert_job_equal(job, l.jobs[0]);
	loaded_free(&l);
	sqlite_db_close(db);
	job_free(job);
}

/* A failed write names the job and leaves the transaction to roll back. */
static void
test_write_errors(void **state)
{
	struct job *jobs[] = { bare_job(1, JOB_QUEUED) };
	struct job *job;
	struct loaded l = { 0 };
	char *cause = NULL;
	struct sqlite_db *db;

	(void)state;
	db = open_ok();
	insert_jobs(db, jobs, 1);

	assert_int_equal(sqlite_db_begin(db, &cause), 0);
	job = bare_job(2, JOB_QUEUED);
	assert_int_equal(sqlite_db_insert(db, job, &cause), 0);
	job_free(job);
	job = bare_job(1, JOB_QUEUED);
	assert_int_equal(sqlite_db_insert(db, job, &cause), -1);
	assert_contains(cause, "cannot insert job 1: UNIQUE constraint");
	free(cause);
	cause = NULL;
	job_free(job);

	job = bare_job(77, JOB_QUEUED);
	assert_int_equal(sqlite_db_update(db, job, &cause), -1);
	assert_contains(cause, "job 77");
	free(cause);
	cause = NULL;
	job_free(job);

	/* A NOT NULL column left NULL in memory. */
	job = bare_job(3, JOB_QUEUED);
	job_set_cwd(job, NULL);
	assert_int_equal(sqlite_db_insert(db, job, &cause), -1);
	assert_contains(cause, "NOT NULL constraint failed: jobs.cwd");
	free(cause);
	cause = NULL;
	job_free(job);

	sqlite_db_rollback(db);
	load_ok(db, &l);
	assert_int_equal(l.n, 1);
	loaded_free(&l);
	sqlite_db_close(db);
}

/* A job finished at ms, in state. */
static struct job *
finished_job(uint64_t id, enum job_state state, int64_t ms)
{
	struct job *job = bare_job(id, state);

	job_run_edit(job)->finished_at = ms;
	return job;
}

static void
test_expired(void **state)
{
	struct job *jobs[] = {
		finished_job(1, JOB_SUCCEEDED, 100),
		finished_job(2, JOB_FAILED, 300),
		finished_job(3, JOB_QUEUED, -1),
		finished_job(4, JOB_RUNNING, -1),
		finished_job(5, JOB_CANCELED, 200),
		finished_job(6, JOB_LOST, 500),
		finished_job(7, JOB_TIMED_OUT, 50),
		/* Back in the queue after a retry, with its old end time. */
		finished_job(8, JOB_QUEUED, 10),
		finished_job(9, JOB_SUCCEEDED, 100),
		finished_job(10, JOB_SUCCEEDED, 400),
	};
	uint64_t ids[8];
	char *cause = NULL;
	struct sqlite_db *db;
	size_t n = 99;

	(void)state;
	db = open_ok();
	insert_jobs(db, jobs, sizeof jobs / sizeof jobs[0]);

	assert_int_equal(sqlite_db_expired(db, 400, ids, 8, &n, &cause), 0);
	assert_int_equal(n, 5);
	assert_int_equal(ids[0], 7);
	assert_int_equal(ids[1], 1);	/* 1 and 9 finished together */
	assert_int_equal(ids[2], 9);
	assert_int_equal(ids[3], 5);
	assert_int_equal(ids[4], 2);

	assert_int_equal(sqlite_db_expired(db, 400, ids, 2, &n, &cause), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], 7);
	assert_int_equal(ids[1], 1);

	assert_int_equal(sqlite_db_expired(db, 400, ids, 0, &n, &cause), 0);
	assert_int_equal(n, 0);
	assert_int_equal(sqlite_db_expired(db, 50, ids, 8, &n, &cause), 0);
	assert_int_equal(n, 0);
	assert_int_equal(sqlite_db_expired(db, INT64_MAX, ids, 8, &n, &cause),
	    0);
	assert_int_equal(n, 7);
	sqlite_db_close(db);
	assert_null(cause);
}

/* sqlite_db_expired's query (copied here) is served by the partial index, in
 * order, without a sort. */
static void
test_expired_uses_index(void **state)
{
	char plan[512];

	(void)state;
	sqlite_db_close(open_ok());
	raw_text(fx->path, "EXPLAIN QUERY PLAN SELECT id FROM jobs"
	    " WHERE state NOT IN ('queued','running') AND finished_at < 5"
	    " ORDER BY finished_at, id LIMIT 10", plan, sizeof plan);
	assert_contains(plan, "USING INDEX jobs_finished");
	if (strstr(plan, "TEMP B-TREE") != NULL)
		fail_msg("the query sorts: %s", plan);
}

/* Writes a version-1 file by hand with one job in it. */
static void
write_v1(const char *extra_sql)
{
	raw_exec(fx->path, V1_SCHEMA
	    "INSERT INTO jobs (id, name, argv, env, cwd, priority, state,"
	    " slots, exclusive, timeout_ms, uid, gid, submitted_at,"
	    " started_at, finished_at, pid, exit_code, signal, reason,"
	    " attempt, user_time, system_time, max_rss_kb)"
	    " VALUES (4, 'old', '[\"make\",\"-j4\"]', '[\"HOME=/root\"]',"
	    " '/src', 'low', 'succeeded', 2, 0, 60000, 1000, 100, 1000,"
	    " 2000, 3000, 4242, 0, NULL, NULL, 1, 0.5, 0.25, 2048);");
	if (extra_sql != NULL)
		raw_exec(fx->path, extra_sql);
}

static void
test_migrate_v1(void **state)
{
	struct loaded l = { 0 };
	struct job *job;
	char *cause = NULL, buf[64], **env;
	struct sqlite_db *db;
	uint64_t id;

	(void)state;
	write_v1(NULL);
	db = open_ok();
	load_ok(db, &l);
	assert_int_equal(l.n, 1);
	job = l.jobs[0];
	assert_int_equal(job->id, 4);
	assert_int_equal(job->seq, 4);
	assert_int_equal(job->retries, 0);
	assert_null(job->extra->after);
	assert_int_equal(job->extra->nafter, 0);
	assert_string_equal(job->extra->name, "old");
	assert_string_equal(job->argv[1], "-j4");
	assert_null(job->argv[2]);
	assert_null(job->env);		/* ended: read when asked for */
	assert_int_equal(sqlite_db_env(db, 4, &env, &cause), 0);
	assert_string_equal(env[0], "HOME=/root");
	free_strv(env);
	assert_int_equal(job->state, JOB_SUCCEEDED);
	assert_int_equal(job->slots, 2);
	assert_int_equal(job->timeout_ms, 60000);
	assert_int_equal(job->run->finished_at, 3000);
	assert_int_equal(job->run->pid, 4242);
	assert_int_equal(job->run->exit_code, 0);
	assert_int_equal(job->run->signal, 0);
	assert_null(job->run->reason);
	assert_true(job->run->user_time == 0.5);
	assert_int_equal(job->run->max_rss_kb, 2048);
	loaded_free(&l);
	assert_int_equal(sqlite_db_max_id(db, &id, &cause), 0);
	assert_int_equal(id, 4);
	sqlite_db_close(db);

	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"),
	    SQLITE_SCHEMA_VERSION);
	raw_text(fx->path, "SELECT name FROM sqlite_master WHERE type = 'index'"
	    " AND tbl_name = 'jobs'", buf, sizeof buf);
	assert_string_equal(buf, "jobs_finished\n");
	raw_text(fx->path, "SELECT name FROM sqlite_master WHERE type = 'table'"
	    " AND name = 'paused'", buf, sizeof buf);
	assert_string_equal(buf, "paused\n");
}

/*
 * A file the last release wrote (schema 4, tests/unit/fixtures: a real
 * daemon's, dumped) comes up with every job as it was and protocol v1.1's
 * fields at their defaults.
 */
/* Runs the SQL of a file of tests/unit/fixtures into the database. */
static void
raw_exec_fixture(const char *name)
{
	char path[256], sql[8192];
	size_t n;
	FILE *f;

	snprintf(path, sizeof path, "tests/unit/fixtures/%s", name);
	assert_non_null(f = fopen(path, "r"));
	n = fread(sql, 1, sizeof sql - 1, f);
	assert_true(n > 0 && n < sizeof sql - 1);
	sql[n] = '\0';
	fclose(f);
	raw_exec(fx->path, sql);
}

/* Opens the file of a fixture at schema version, which sqlite_db_open brings to
 * SQLITE_SCHEMA_VERSION, and loads its jobs into l. */
static struct sqlite_db *
open_fixture(const char *name, int version, struct loaded *l)
{
	struct sqlite_db *db;

	raw_exec_fixture(name);
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), version);
	db = open_ok();
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"),
	    SQLITE_SCHEMA_VERSION);
	load_ok(db, l);
	return db;
}

static void
test_migrate_v4(void **state)
{
	struct loaded l = { 0 };
	struct job *job;
	struct sqlite_db *db;
	size_t i;

	(void)state;
	db = open_fixture("store-v4.sql", 4, &l);
	assert_int_equal(l.n, 4);
	for (i = 0; i < l.n; i++) {
		job = l.jobs[i];
		assert_int_equal(job->id, i + 1);
		assert_null(job->extra->labels);
		assert_false(job->held);
		assert_int_equal(job->extra->begin_at, -1);
		assert_null(job->extra->after_any);
		assert_int_equal(job->nice, 0);
		assert_false(job->merge_output);
		assert_int_equal(job->run->stdout_dropped, 0);
		assert_int_equal(job->run->stderr_dropped, 0);
	}
	assert_int_equal(l.jobs[0]->state, JOB_SUCCEEDED);
	assert_string_equal(l.jobs[0]->argv[2], "echo hello");
	assert_int_equal(l.jobs[1]->state, JOB_FAILED);
	assert_string_equal(l.jobs[1]->run->reason, "exited with status 1");
	assert_int_equal(l.jobs[2]->state, JOB_QUEUED);
	assert_int_equal(l.jobs[2]->extra->nafter, 1);
	assert_int_equal(l.jobs[2]->extra->after[0], 1);
	assert_int_equal(l.jobs[3]->retries, 2);
	assert_int_equal(l.jobs[3]->timeout_ms, 30000);
	loaded_free(&l);
	sqlite_db_close(db);
}

/*
 * A file the last release wrote (schema 5, a real daemon's, dumped) comes
 * up with every job as it was, no node for any, and nodes stored from then
 * on.
 */
static void
test_migrate_v5(void **state)
{
	struct loaded l = { 0 };
	struct job *job;
	char *cause = NULL, buf[64];
	struct sqlite_db *db;
	size_t i;

	(void)state;
	db = open_fixture("store-v5.sql", 5, &l);
	assert_int_equal(l.n, 4);
	for (i = 0; i < l.n; i++) {
		assert_int_equal(l.jobs[i]->id, i + 1);
		assert_null(l.jobs[i]->node);
		assert_null(l.jobs[i]->extra->pinned_node);
		/* Schema 8's: nothing declared, nothing measured. */
		assert_int_equal(l.jobs[i]->memory, 0);
		assert_false(l.jobs[i]->frozen);
		assert_int_equal(l.jobs[i]->run->peak_memory, -1);
		assert_false(l.jobs[i]->run->oom);
		assert_null(l.jobs[i]->run->cgroup);
		/* Schema 9's: none asked for, none given. */
		assert_null(l.jobs[i]->extra->resources);
		assert_null(l.jobs[i]->extra->devices);
		/* Schema 10's: no key. */
		assert_null(l.jobs[i]->extra->key);
	}
	assert_int_equal(l.jobs[0]->state, JOB_SUCCEEDED);
	assert_string_equal(json_string_value(json_object_get(
	    l.jobs[0]->extra->labels, "team")), "ops");
	assert_int_equal(l.jobs[1]->state, JOB_FAILED);
	assert_int_equal(l.jobs[1]->nice, 5);
	assert_true(l.jobs[1]->merge_output);
	assert_true(l.jobs[2]->held);
	assert_int_equal(l.jobs[2]->extra->after_any[0], 1);
	assert_true(l.jobs[3]->extra->begin_at > 0);

	/* A job that began on a node, and one pinned to another. */
	job = l.jobs[3];
	assert_int_equal(job_set_node(job, "build-7"), 0);
	assert_int_equal(sqlite_db_update(db, job, &cause), 0);
	job = l.jobs[2];
	assert_int_equal(job_set_node(job, "build-7"), 0);
	assert_int_equal(job_set_pinned_node(job, "build-8"), 0);
	assert_int_equal(sqlite_db_update(db, job, &cause), 0);
	loaded_free(&l);
	sqlite_db_close(db);
	raw_text(fx->path, "SELECT id || ' ' || ifnull(node, '-') || ' ' ||"
	    " ifnull(pinned_node, '-') FROM jobs WHERE id >= 3 ORDER BY id",
	        buf,
	    sizeof buf);
	/* pinned_node is the submission's: written at insert only. */
	assert_string_equal(buf, "3 build-7 -\n4 build-7 -\n");

	raw_exec(fx->path, "UPDATE jobs SET pinned_node = 'build-8' WHERE "
	    "id = 3");
	db = open_ok();
	load_ok(db, &l);
	assert_null(l.jobs[1]->node);
	assert_string_equal(l.jobs[2]->node, "build-7");
	assert_string_equal(l.jobs[2]->extra->pinned_node, "build-8");
	assert_string_equal(l.jobs[3]->node, "build-7");
	/* Shared, as cwd is, by every job of a node. */
	assert_ptr_equal(l.jobs[2]->node, l.jobs[3]->node);
	assert_null(l.jobs[3]->extra->pinned_node);
	loaded_free(&l);
	sqlite_db_close(db);
}

/* A migration that fails half way leaves the file as it was. */
static void
test_migrate_atomic(void **state)
{
	char *cause;

	(void)state;
	/* Step 2 creates this index last, and fails on it. */
	write_v1("CREATE INDEX jobs_finished ON jobs(name)");
	cause = open_bad(fx->path);
	assert_contains(cause, "from schema version 1 to 2");
	assert_contains(cause, "jobs_finished already exists");
	free(cause);
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 1);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM"
	    " pragma_table_info('jobs') WHERE name IN ('seq', 'retries')"), 0);
	assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM jobs"), 1);
}

static void
test_newer_refused(void **state)
{
	char *cause;

	(void)state;
	raw_exec(fx->path, "PRAGMA user_version = 99");
	cause = open_bad(fx->path);
	assert_contains(cause, "newer triage");
	assert_contains(cause, "schema version 99");
	{
		char knows[32];

		snprintf(knows, sizeof knows, "knows up to %d",
		    SQLITE_SCHEMA_VERSION);
		assert_contains(cause, knows);
	}
	free(cause);
	assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 99);
}

static void
test_not_a_database(void **state)
{
	char junk[4096], *cause;
	struct stat st;
	FILE *f;

	(void)state;
	memset(junk, 'x', sizeof junk);
	assert_non_null(f = fopen(fx->path, "w"));
	assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
	assert_int_equal(fclose(f), 0);
	cause = open_bad(fx->path);
	assert_contains(cause, "is not a triage database (file is not a "
	    "database)");
	free(cause);
	/* Untouched. */
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_size, sizeof junk);
}

/* Somebody else's SQLite file: tables, but no schema version. */
static void
test_foreign_database(void **state)
{
	char *cause;

	(void)state;
	raw_exec(fx->path, "CREATE TABLE photos (id INTEGER PRIMARY KEY)");
	cause = open_bad(fx->path);
	assert_contains(cause, "is not a triage database");
	free(cause);
}

static void
test_unopenable(void **state)
{
	char path[160], *cause;

	(void)state;
	/* A directory, which even root cannot open as a file. */
	cause = open_bad(fx->dir);
	assert_contains(cause, "cannot open");
	free(cause);

	snprintf(path, sizeof path, "%s/missing/triage.db", fx->dir);
	cause = open_bad(path);
	assert_contains(cause, "No such file or directory");
	free(cause);
}

/* A row sqlite_db_load cannot make sense of fails the load, naming the job.
 * Each call has a database file of its own. */
static void
load_bad(const char *sql, const char *part)
{
	static int nfile;
	struct job *jobs[] = {
		bare_job(6, JOB_QUEUED), bare_job(7, JOB_QUEUED),
	};
	struct loaded l = { 0 };
	char *cause = NULL;
	struct sqlite_db *db;

	snprintf(fx->path, sizeof fx->path, "%s/bad%d.db", fx->dir, nfile++);
	db = open_ok();
	insert_jobs(db, jobs, 2);
	raw_exec(fx->path, sql);
	assert_int_equal(sqlite_db_load(db, load_cb, &l, &cause), -1);
	assert_contains(cause, "cannot load job 7: ");
	assert_contains(cause, part);
	free(cause);
	assert_int_equal(l.n, 1);	/* job 6 was fine */
	loaded_free(&l);
	sqlite_db_close(db);
}

static void
test_bad_rows(void **state)
{
	(void)state;
	load_bad("UPDATE jobs SET state = 'bogus' WHERE id = 7",
	    "unknown state \"bogus\"");
	load_bad("UPDATE jobs SET argv = '[\"a\", ' WHERE id = 7",
	    "column argv is not JSON");
	load_bad("UPDATE jobs SET env = '{\"A\": \"1\"}' WHERE id = 7",
	    "column env is not a JSON array");
	load_bad("UPDATE jobs SET argv = '[\"a\", 2]' WHERE id = 7",
	    "column argv holds a non-string");
	load_bad("UPDATE jobs SET \"after\" = '[1, \"x\"]' WHERE id = 7",
	    "column after holds something not a job id");
	load_bad("UPDATE jobs SET slots = 'many' WHERE id = 7",
	    "column slots is not an integer");
	load_bad("UPDATE jobs SET exclusive = 2 WHERE id = 7",
	    "column exclusive is out of range (2)");
	load_bad("UPDATE jobs SET name = x'00' WHERE id = 7",
	    "column name is not text");
	load_bad("UPDATE jobs SET user_time = -1 WHERE id = 7",
	    "column user_time is negative");
	load_bad("UPDATE jobs SET node = 'a b' WHERE id = 7",
	    "column node is not a node name");
	load_bad("UPDATE jobs SET pinned_node = x'41' WHERE id = 7",
	    "column pinned_node is not text");
	load_bad("UPDATE jobs SET labels = '{\"a\": 1}' WHERE id = 7",
	    "column labels holds a non-string");
	load_bad("UPDATE jobs SET resources = '[\"gpu\"]' WHERE id = 7",
	    "column resources is not a JSON object");
	load_bad("UPDATE jobs SET resources = '{\"gpu\": 0}' WHERE id = 7",
	    "column resources holds a count that is not a positive integer");
	load_bad("UPDATE jobs SET resources = '{\"gpu\": \"1\"}' WHERE id = 7",
	    "column resources holds a count");
	load_bad("UPDATE jobs SET devices = '{\"gpu\": \"0\"}' WHERE id = 7",
	    "column devices holds something not a list of unit names");
	load_bad("UPDATE jobs SET devices = '{\"gpu\": []}' WHERE id = 7",
	    "column devices holds something not a list");
	load_bad("UPDATE jobs SET devices = '{\"gpu\": [0]}' WHERE id = 7",
	    "column devices holds something not a list");
	load_bad("UPDATE jobs SET devices = '{\"gpu\": [\"\"]}' WHERE id = 7",
	    "column devices holds something not a list");
	load_bad("UPDATE jobs SET devices = '{' WHERE id = 7",
	    "column devices is not JSON");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, fixture_setup,	\
	fixture_teardown)
		T(test_new_file),
		T(test_round_trip),
		T(test_insert_rows),
		T(test_round_trip_unknown),
		T(test_json_columns),
		T(test_bytes_not_utf8),
		T(test_plain_and_escaped_vectors),
		T(test_load_order),
		T(test_max_id),
		T(test_rollback),
		T(test_commit_persists),
		T(test_checkpoints_off_the_writer),
		T(test_write_errors),
		T(test_expired),
		T(test_expired_uses_index),
		T(test_migrate_v1),
		T(test_migrate_v4),
		T(test_migrate_v5),
		T(test_migrate_atomic),
		T(test_newer_refused),
		T(test_not_a_database),
		T(test_foreign_database),
		T(test_unopenable),
		T(test_bad_rows),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
