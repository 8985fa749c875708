/* test-jobcols.c - the list of a job's columns (store/jobcols.h) against what
 * is made of it: SQLite's jobs table, jobrow.c's code, the statements. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "job.h"
#include "jobcols.h"
#include "jobrow.h"
#include "sqlite-schema.h"

/* The jobs table of SQLite has no column of its own: every one is a job's. */
static const char *const sqlite_own[] = { NULL };

/* What a row held, as a sink was given it and a source gives it back. */
struct row {
	int puts[JOBROW_NCOLUMNS];	/* values put in each column */
	int asked[JOBROW_NCOLUMNS];	/* types asked of each */
	enum jobrow_type type[JOBROW_NCOLUMNS];
	int64_t i[JOBROW_NCOLUMNS];
	double d[JOBROW_NCOLUMNS];
	char *s[JOBROW_NCOLUMNS];
};

static int
row_null(void *ctx, int col)
{
	struct row *r = ctx;

	r->puts[col]++;
	r->type[col] = JOBROW_NULL;
	return 0;
}

static int
row_integer(void *ctx, int col, int64_t v)
{
	struct row *r = ctx;

	r->puts[col]++;
	r->type[col] = JOBROW_INTEGER;
	r->i[col] = v;
	return 0;
}

static int
row_real(void *ctx, int col, double v)
{
	struct row *r = ctx;

	r->puts[col]++;
	r->type[col] = JOBROW_REAL;
	r->d[col] = v;
	return 0;
}

static int
row_owned(void *ctx, int col, char *s)
{
	struct row *r = ctx;

	r->puts[col]++;
	r->type[col] = JOBROW_TEXT;
	free(r->s[col]);
	r->s[col] = s;
	return 0;
}

static int
row_text(void *ctx, int col, const char *s)
{
	return row_owned(ctx, col, strdup(s));
}

static const char *
row_error(void *ctx)
{
	(void)ctx;
	return "cannot happen";
}

static const struct jobrow_sink row_sink = {
	row_null, row_integer, row_real, row_text, row_owned, row_error,
};

static enum jobrow_type
row_type(void *ctx, int col)
{
	struct row *r = ctx;

	r->asked[col]++;
	return r->type[col];
}

static int64_t
row_get_integer(void *ctx, int col)
{
	return ((struct row *)ctx)->i[col];
}

static double
row_get_real(void *ctx, int col)
{
	struct row *r = ctx;

	return r->type[col] == JOBROW_REAL ? r->d[col] : (double)r->i[col];
}

static const char *
row_get_text(void *ctx, int col, size_t *len)
{
	struct row *r = ctx;

	*len = strlen(r->s[col]);
	return r->s[col];
}

static const char *
row_name(void *ctx, int col)
{
	(void)ctx;
	return jobcols[col].name;
}

static const struct jobrow_source row_source = {
	row_type, row_get_integer, row_get_real, row_get_text, row_name,
};

static void
row_clear(struct row *r)
{
	int col;

	for (col = 0; col < JOBROW_NCOLUMNS; col++)
		free(r->s[col]);
	memset(r, 0, sizeof *r);
}

static char **
strv2(const char *a, const char *b)
{
	char **v = calloc(3, sizeof *v);

	assert_non_null(v);
	assert_non_null(v[0] = strdup(a));
	if (b != NULL)
		assert_non_null(v[1] = strdup(b));
	return v;
}

/* A queued job (its environment is read back) with every field set, none
 * to what stands for unknown. */
static struct job *
full_job(void)
{
	struct job_extra *extra;
	struct job *job = job_new();
	struct job_run *run;

	assert_non_null(job);
	assert_non_null(extra = job_extra_edit(job));
	job->id = 12;
	assert_non_null(extra->name = strdup("named"));
	assert_int_equal(job_set_argv(job, strv2("/bin/sh", "-c")), 0);
	assert_int_equal(job_set_env(job, strv2("A=1", "B=2")), 0);
	assert_int_equal(job_set_cwd(job, "/tmp"), 0);
	assert_int_equal(job_set_priority(job, "high"), 0);
	assert_int_equal(job_set_node(job, "n1"), 0);
	assert_int_equal(job_set_pinned_node(job, "n2"), 0);
	assert_int_equal(job_set_user(job, "alice"), 0);
	job->state = JOB_QUEUED;
	job->slots = 2;
	job->exclusive = true;
	job->timeout_ms = 5000;
	job->retries = 3;
	job->seq = -4;
	assert_non_null(extra->after = calloc(1, sizeof *extra->after));
	extra->after[0] = 5;
	extra->nafter = 1;
	assert_non_null(extra->after_any = calloc(1, sizeof *extra->after_any));
	extra->after_any[0] = 6;
	extra->nafter_any = 1;
	job->uid = 1000;
	job->gid = 1001;
	job->submitted_at = 1700000000000;
	job->attempt = 2;
	assert_non_null(extra->labels = json_pack("{ss}", "team", "a"));
	job->held = true;
	extra->begin_at = 1700000001000;
	job->nice = 7;
	job->merge_output = true;
	job->memory = 3u << 20;
	job->frozen = true;
	assert_non_null(extra->resources = json_pack("{si si}", "gpu", 2,
	    "licence", 1));
	assert_non_null(extra->devices = json_pack("{s[ss]}", "gpu", "0", "3"));
	assert_non_null(extra->key = strdup("order-17"));
	assert_non_null(run = job_run_edit(job));
	run->started_at = 1700000002000;
	run->finished_at = 1700000003000;
	run->pid = 4321;
	run->exit_code = 1;
	run->signal = 9;
	assert_non_null(run->reason = strdup("killed"));
	run->user_time = 0.5;
	run->system_time = 0.25;
	run->max_rss_kb = 2048;
	run->stdout_truncated = true;
	run->stderr_truncated = true;
	run->begun = true;
	run->start_ticks = 777;
	run->stdout_dropped = 10;
	run->stderr_dropped = 11;
	run->peak_memory = 5u << 20;
	run->oom = true;
	assert_int_equal(job_set_cgroup(job, "triage/job-12"), 0);
	/* Bytes with a NUL: the result's {"base64": ...} form. */
	assert_int_equal(job_set_result(job, "ok\0\377", 4, true), 0);
	return job;
}

/* The types a column's values may have as a sink is given them. */
static bool
row_type_fits(enum jobrow_type got, enum jobcol_type want)
{
	switch (want) {
	case JOBCOL_INTEGER:
		return got == JOBROW_INTEGER;
	case JOBCOL_REAL:
		return got == JOBROW_REAL;
	default:
		return got == JOBROW_TEXT;
	}
}

/* jobrow_put writes each column once, of its type: every one for an
 * INSERT, the id and those a job's life changes for an UPDATE. */
static void
test_every_column_written_once(void **state)
{
	struct job *job = full_job();
	struct row r = { 0 };
	char *cause = NULL;
	int col, want;

	(void)state;
	assert_int_equal(jobrow_put(job, true, &row_sink, &r, &cause), 0);
	for (col = 0; col < JOBROW_NCOLUMNS; col++) {
		if (r.puts[col] != 1)
			fail_msg("INSERT: column %s written %d times",
			    jobcols[col].name, r.puts[col]);
		if (!row_type_fits(r.type[col], jobcols[col].type))
			fail_msg("column %s written as type %d",
			    jobcols[col].name, r.type[col]);
	}
	row_clear(&r);
	assert_int_equal(jobrow_put(job, false, &row_sink, &r, &cause), 0);
	for (col = 0; col < JOBROW_NCOLUMNS; col++) {
		want = col == JOBROW_ID || jobcols_changes(col);
		if (r.puts[col] != want)
			fail_msg("UPDATE: column %s written %d times, not %d",
			    jobcols[col].name, r.puts[col], want);
	}
	row_clear(&r);
	job_free(job);
}

/* jobrow_get reads every column, and what it read puts back the same. */
static void
test_every_column_read(void **state)
{
	struct jobrow_cache cache = { 0 };
	struct job *job = full_job(), *back;
	struct row r = { 0 }, again = { 0 };
	char *cause = NULL;
	int col;

	(void)state;
	assert_int_equal(jobrow_put(job, true, &row_sink, &r, &cause), 0);
	if ((back = jobrow_get(&row_source, &r, &cache, &cause)) == NULL)
		fail_msg("jobrow_get: %s", cause);
	for (col = 0; col < JOBROW_NCOLUMNS; col++)
		if (r.asked[col] == 0)
			fail_msg("column %s is never read", jobcols[col].name);
	assert_int_equal(jobrow_put(back, true, &row_sink, &again, &cause),
	    0);
	for (col = 0; col < JOBROW_NCOLUMNS; col++) {
		assert_int_equal(again.type[col], r.type[col]);
		if (r.type[col] == JOBROW_TEXT)
			assert_string_equal(again.s[col], r.s[col]);
		else if (memcmp(&again.i[col], &r.i[col], sizeof r.i[col]) != 0
		    || memcmp(&again.d[col], &r.d[col], sizeof r.d[col]) != 0)
			fail_msg("column %s comes back another",
			    jobcols[col].name);
	}
	row_clear(&r);
	row_clear(&again);
	jobrow_cache_clear(&cache);
	job_free(back);
	job_free(job);
}

/* The items of list, split at ", ", into items (at most max); their count. */
static int
split(char *list, char **items, int max)
{
	char *p = list;
	int n = 0;

	while (n < max) {
		items[n++] = p;
		if ((p = strstr(p, ", ")) == NULL)
			break;
		*p = '\0';
		p += 2;
	}
	return n;
}

/* The statements' lists follow the columns: names, parameters, and an
 * UPDATE's SET in jobcols_set_order's order, FIRST ones first. */
static void
test_statements_follow_the_list(void **state)
{
	char names[] = JOBCOLS_NAMES, *item[JOBROW_NCOLUMNS + 1], want[64];
	char *values, *set;
	int i, n, col, prev, nchanges = 0;
	bool by_column;

	(void)state;
	assert_int_equal(split(names, item, JOBROW_NCOLUMNS + 1),
	    JOBROW_NCOLUMNS);
	for (col = 0; col < JOBROW_NCOLUMNS; col++)
		assert_string_equal(item[col], jobcols[col].name);

	assert_non_null(values = jobcols_values('?', 42));
	assert_int_equal(split(values, item, JOBROW_NCOLUMNS + 1),
	    JOBROW_NCOLUMNS);
	for (i = 0; i < JOBROW_NCOLUMNS; i++) {
		snprintf(want, sizeof want, "?%d", 42 + i);
		assert_string_equal(item[i], want);
	}
	free(values);

	for (col = 0; col < JOBROW_NCOLUMNS; col++)
		nchanges += jobcols_changes(col);
	assert_int_equal(nchanges, JOBCOLS_NCHANGES);
	for (i = 0; i < JOBCOLS_NCHANGES; i++) {
		col = jobcols_set_order[i];
		prev = i > 0 ? (int)jobcols_set_order[i - 1] : -1;
		assert_true(jobcols_changes(col));
		/* FIRST before LIFE, each in the columns' order. */
		assert_true(prev == -1 || jobcols[prev].role <
		    jobcols[col].role || (jobcols[prev].role ==
		    jobcols[col].role && prev < col));
	}
	for (by_column = false; ; by_column = true) {
		assert_non_null(set = jobcols_set(by_column ? '?' : '$',
		    by_column));
		n = split(set, item, JOBROW_NCOLUMNS + 1);
		assert_int_equal(n, JOBCOLS_NCHANGES);
		for (i = 0; i < n; i++) {
			col = jobcols_set_order[i];
			snprintf(want, sizeof want, "%s = %c%d",
			    jobcols[col].name, by_column ? '?' : '$',
			    by_column ? col + 1 : i + 2);
			assert_string_equal(item[i], want);
		}
		free(set);
		if (by_column)
			break;
	}
}

/* The columns of the jobs table of the file at path, migrated to the
 * newest schema from what sql makes (nothing: a new store), against the
 * list. */
static void
check_sqlite_table(const char *dir, const char *sql)
{
	const char *names[128];
	enum jobcol_type types[128];
	char path[256], *cause = NULL, *diff, *owned[128];
	const char *type;
	sqlite3_stmt *st;
	sqlite3 *sq;
	size_t n = 0;

	snprintf(path, sizeof path, "%s/triage.db", dir);
	unlink(path);
	assert_int_equal(sqlite3_open(path, &sq), SQLITE_OK);
	if (sql != NULL)
		assert_int_equal(sqlite3_exec(sq, sql, NULL, NULL, NULL),
		    SQLITE_OK);
	if (sqlite_schema_migrate(sq, path, &cause) != 0)
		fail_msg("sqlite_schema_migrate: %s", cause);
	assert_int_equal(sqlite3_prepare_v2(sq,
	    "SELECT name, type FROM pragma_table_info('jobs')", -1, &st,
	    NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && n < 128) {
		assert_non_null(owned[n] = strdup((const char *)
		    sqlite3_column_text(st, 0)));
		names[n] = owned[n];
		type = (const char *)sqlite3_column_text(st, 1);
		types[n++] = strcmp(type, "INTEGER") == 0 ? JOBCOL_INTEGER :
		    strcmp(type, "REAL") == 0 ? JOBCOL_REAL : JOBCOL_TEXT;
		if (strcmp(type, "INTEGER") != 0 && strcmp(type, "REAL") != 0
		    && strcmp(type, "TEXT") != 0)
			fail_msg("column %s is of type %s", names[n - 1],
			    type);
	}
	sqlite3_finalize(st);
	sqlite3_close(sq);
	diff = jobcols_diff(names, types, n, sqlite_own);
	while (n > 0)
		free(owned[--n]);
	if (diff != NULL)
		fail_msg("SQLite's jobs table and jobcols.h differ: %s", diff);
}

/* A new store's jobs table, and that of a store the release before last
 * wrote (migrated), hold exactly the listed columns. */
static void
test_sqlite_table_is_the_list(void **state)
{
	char dir[] = "/tmp/test-jobcols-XXXXXX", sql[8192], path[256];
	size_t n;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	check_sqlite_table(dir, NULL);
	assert_non_null(f = fopen("tests/unit/fixtures/store-v4.sql", "r"));
	n = fread(sql, 1, sizeof sql - 1, f);
	fclose(f);
	assert_true(n > 0 && n < sizeof sql - 1);
	sql[n] = '\0';
	check_sqlite_table(dir, sql);
	/* The files' journal is SQLite's default: gone at each commit. */
	snprintf(path, sizeof path, "%s/triage.db", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* A table with a column too many, one too few and one of another type is
 * told as such, whichever the columns. */
static void
test_diff_names_each_difference(void **state)
{
	static const char *const type[] = { "integer", "real", "text" };
	const char *names[JOBROW_NCOLUMNS + 1], *own[] = { "version", NULL };
	enum jobcol_type types[JOBROW_NCOLUMNS + 1];
	char buf[JOBROW_NCOLUMNS][64], want[4096], *diff;
	int col, retyped = 1, renamed = JOBROW_NCOLUMNS - 1;

	(void)state;
	for (col = 0; col < JOBROW_NCOLUMNS; col++) {
		snprintf(buf[col], sizeof buf[col], "%s", jobcols[col].name);
		if (buf[col][0] == '"')
			snprintf(buf[col], sizeof buf[col], "%.*s",
			    (int)strlen(jobcols[col].name) - 2,
			    jobcols[col].name + 1);
		names[col] = buf[col];
		types[col] = jobcols[col].type;
	}
	assert_null(jobcols_diff(names, types, JOBROW_NCOLUMNS, own));
	names[JOBROW_NCOLUMNS] = "version";
	types[JOBROW_NCOLUMNS] = JOBCOL_INTEGER;
	assert_null(jobcols_diff(names, types, JOBROW_NCOLUMNS + 1, own));
	names[JOBROW_NCOLUMNS] = "not_a_column";
	names[renamed] = "renamed_column";
	types[retyped] = (types[retyped] + 1) % 3;
	assert_non_null(diff = jobcols_diff(names, types, JOBROW_NCOLUMNS + 1,
	    own));
	snprintf(want, sizeof want, "%s: %s in the list, %s in the table; "
	    "%s: in the list, not in the table; renamed_column: in the table, "
	    "not in the list; not_a_column: in the table, not in the list",
	    buf[retyped], type[jobcols[retyped].type], type[types[retyped]],
	    buf[renamed]);
	assert_string_equal(diff, want);
	free(diff);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_column_written_once),
		cmocka_unit_test(test_every_column_read),
		cmocka_unit_test(test_statements_follow_the_list),
		cmocka_unit_test(test_sqlite_table_is_the_list),
		cmocka_unit_test(test_diff_names_each_difference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
