/* test-cli-queue.c - the triage command's queue operations (protocol 1.1)
 * against a real triaged: held, labelled, updated and delayed jobs. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cli.h"
#include "harness.h"
#include "timefmt.h"

/* The line of triage list's table (with the options given) for job id,
 * of daemon d; fails when there is none. Allocated. */
static char *
list_row_of(const struct tdaemon *d, const char *id, const char *opt)
{
	char *out, *err, *line, *save, *row = NULL, *end;

	assert_int_equal(tcli(d, &out, &err, "list", opt, NULL), 0);
	for (line = strtok_r(out, "\n", &save); line != NULL && row == NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strtol(line, &end, 10) == strtol(id, NULL, 10) &&
		    end != line)
			row = strdup(line);
	}
	if (row == NULL)
		fail_msg("job %s is not in triage list %s", id, opt);
	free(out);
	free(err);
	return row;
}

/* The same of the group's daemon. */
static char *
list_row(const char *id, const char *opt)
{
	return list_row_of(tcli_daemon, id, opt);
}

/* The words of a table row, for its columns. */
static void
assert_row_has(const char *row, const char *word)
{
	char copy[512], *w, *save;

	snprintf(copy, sizeof copy, "%s", row);
	for (w = strtok_r(copy, " ", &save); w != NULL;
	    w = strtok_r(NULL, " ", &save)) {
		if (strcmp(w, word) == 0)
			return;
	}
	fail_msg("no column \"%s\" in the row \"%s\"", word, row);
}

static void
test_held_job_with_labels_waits_until_released(void **state)
{
	char *out, *err, id[32], *row;
	json_t *job;

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--hold", "--label", "team=red",
	    "--label", "kind=build", "-n", "held-one", "--", "true", NULL),
	    &out, &err, id);
	job = tcli_status(tcli_daemon, id);
	assert_true(json_is_true(json_object_get(job, "held")));
	assert_string_equal(tjstr(job, "state"), "queued");
	assert_string_equal(tjstr(job, "pending_reason"), "held");
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(job, "labels"), "team")), "red");
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(job, "labels"), "kind")), "build");
	json_decref(job);

	/* The table's header and REASON column. */
	assert_int_equal(cli(&out, &err, "list", NULL), 0);
	assert_non_null(strstr(out, " REASON "));
	free(out);
	free(err);
	row = list_row(id, "--state=queued");
	assert_row_has(row, "held");
	assert_row_has(row, "held-one");
	free(row);

	/* A single id prints nothing, as cancel does; --json the job. */
	assert_int_equal(cli(&out, &err, "--json", "hold", id, NULL), 0);
	assert_non_null(strstr(out, "\"held\":true"));
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "release", id, NULL), 0);
	assert_string_equal(out, "");
	assert_string_equal(err, "");
	free(out);
	free(err);
	assert_int_equal(cli_rc("wait", id, NULL), 0);
}

static void
test_update_changes_a_queued_job_only(void **state)
{
	char *out, *err, id[32], said[200];
	json_t *job;

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--hold", "-p", "low", "-n",
	    "before", "--label", "old=1", "--memory", "64MiB", "--", "true",
	    NULL), &out, &err, id);
	job = tcli_status(tcli_daemon, id);
	assert_int_equal(tjint(job, "memory"), 64 << 20);
	json_decref(job);
	assert_int_equal(cli(&out, &err, "update", id, "-p", "high", "-n",
	    "after", "--label", "new=2", "--timeout", "5m", "--retries", "2",
	    "--memory", "1GiB", NULL), 0);
	assert_string_equal(out, "");
	free(out);
	free(err);
	job = tcli_status(tcli_daemon, id);
	assert_string_equal(tjstr(job, "priority"), "high");
	assert_string_equal(tjstr(job, "name"), "after");
	/* The labels given replace the old ones. */
	assert_int_equal(json_object_size(json_object_get(job, "labels")), 1);
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(job, "labels"), "new")), "2");
	assert_true(json_number_value(json_object_get(job, "timeout")) == 300);
	assert_int_equal(tjint(job, "memory"), 1 << 30);
	json_decref(job);
	assert_int_equal(cli(&out, &err, "--json", "update", id, "-n",
	    "again", NULL), 0);
	assert_non_null(strstr(out, "\"name\":\"again\""));
	free(out);
	free(err);

	assert_int_equal(cli_rc("release", id, NULL), 0);
	assert_int_equal(cli_rc("wait", id, NULL), 0);
	/* Finished: the daemon refuses, and says why. */
	assert_int_equal(cli(&out, &err, "update", id, "-n", "late", NULL), 1);
	snprintf(said, sizeof said, "triage: job %s has succeeded: only a "
	    "queued job can be updated\n", id);
	assert_string_equal(err, said);
	free(out);
	free(err);
	assert_int_equal(cli_rc("update", "999999", "-n", "x", NULL), 1);
}

/* ms since the epoch of a job's begin_at. */
static int64_t
begin_at(const json_t *job)
{
	int64_t ms;

	if (timefmt_parse(tjstr(job, "begin_at"), &ms) != 0)
		fail_msg("begin_at \"%s\" is not RFC 3339", tjstr(job,
		    "begin_at"));
	return ms;
}

static void
test_start_times_at_and_delay(void **state)
{
	char *out, *err, id[32], at[16], *row;
	int64_t before, ms;
	time_t t;
	struct tm tm;
	json_t *job;

	(void)state;
	before = timefmt_now();
	tcli_submitted(cli(&out, &err, "submit", "--delay", "1h", "--", "true",
	    NULL), &out, &err, id);
	job = tcli_status(tcli_daemon, id);
	ms = begin_at(job);
	assert_true(ms >= before + 3600 * 1000);
	assert_true(ms <= timefmt_now() + 3600 * 1000);
	assert_string_equal(tjstr(job, "pending_reason"), "begin_at");
	json_decref(job);
	row = list_row(id, "--state=queued");
	assert_row_has(row, "begin_at");
	free(row);
	/* Sooner: now. */
	assert_int_equal(cli_rc("update", id, "--delay", "0", NULL), 0);
	assert_int_equal(cli_rc("wait", id, NULL), 0);

	/* HH:MM: the next time the clock shows it, an hour or so ahead. */
	t = time(NULL) + 3600;
	assert_non_null(localtime_r(&t, &tm));
	snprintf(at, sizeof at, "%02d:%02d", tm.tm_hour, tm.tm_min);
	tcli_submitted(cli(&out, &err, "submit", "--at", at, "--", "true", NULL),
	    &out, &err, id);
	job = tcli_status(tcli_daemon, id);
	ms = begin_at(job);
	assert_true(ms > before);
	assert_true(ms <= timefmt_now() + 24 * 3600 * 1000);
	t = (time_t)(ms / 1000);
	assert_non_null(localtime_r(&t, &tm));
	snprintf(at + 8, sizeof at - 8, "%02d:%02d", tm.tm_hour, tm.tm_min);
	assert_string_equal(at + 8, at);
	json_decref(job);
	assert_int_equal(cli_rc("cancel", id, NULL), 0);

	/* A time gone by starts it at once. */
	assert_int_equal(cli_rc("submit", "--wait", "--at",
	    "2020-01-01T00:00:00Z", "--", "true", NULL), 0);
	/* A date that does not exist is the user's mistake. */
	assert_int_equal(cli(&out, &err, "submit", "--at",
	    "2027-02-29T10:00:00Z", "--", "true", NULL), 2);
	assert_non_null(strstr(err, "--at"));
	free(out);
	free(err);
}

static void
test_after_any_runs_whatever_the_first_did(void **state)
{
	char *out, *err, first[32], second[32];

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--", "sh", "-c", "exit 3", NULL),
	    &out, &err, first);
	tcli_submitted(cli(&out, &err, "submit", "--after-any", first, "--",
	    "true", NULL), &out, &err, second);
	assert_int_equal(cli_rc("wait", second, NULL), 0);
	assert_int_equal(cli_rc("wait", first, NULL), 3);
	assert_int_equal(cli_rc("submit", "--after-any", "999999", "--",
	    "true", NULL), 1);
}

/* Several ids: the first failure in the order given; an id the daemon
 * does not know counts as 1, and the others are still waited for. */
static void
test_wait_several_gives_the_first_failure(void **state)
{
	char *out, *err, ok[32], five[32], six[32], *line, *save;
	int n = 0;

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--", "true", NULL), &out, &err,
	    ok);
	tcli_submitted(cli(&out, &err, "submit", "--", "sh", "-c", "exit 5", NULL),
	    &out, &err, five);
	tcli_submitted(cli(&out, &err, "submit", "--", "sh", "-c", "exit 6", NULL),
	    &out, &err, six);
	assert_int_equal(cli_rc("wait", ok, six, five, NULL), 6);
	assert_int_equal(cli(&out, &err, "--json", "wait", ok, five, six,
	    NULL), 5);
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		assert_non_null(strstr(line, n++ == 0 ? "\"exit_code\":0" :
		    "\"state\":\"failed\""));
	assert_int_equal(n, 3);
	free(out);
	free(err);
	assert_int_equal(cli_rc("wait", ok, "999999", NULL), 1);
	assert_int_equal(cli_rc("wait", "999999", six, NULL), 1);
	assert_int_equal(cli_rc("wait", ok, ok, NULL), 0);
}

/* No id: the caller's latest job; --both: stdout, then stderr. */
static void
test_output_of_the_latest_job_and_both_streams(void **state)
{
	char *out, *err, id[32];

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--", "sh", "-c",
	    "echo to out; echo to err >&2", NULL), &out, &err, id);
	assert_int_equal(cli_rc("wait", id, NULL), 0);
	assert_int_equal(cli(&out, &err, "output", NULL), 0);
	assert_string_equal(out, "to out\n");
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "output", "--both", NULL), 0);
	assert_string_equal(out, "to out\nto err\n");
	assert_string_equal(err, "");
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "output", "--both", id, NULL), 0);
	assert_string_equal(out, "to out\nto err\n");
	free(out);
	free(err);
}

/* The lines of triage status id, of daemon d, which must succeed;
 * allocated. */
static char *
status_of(const struct tdaemon *d, const char *id)
{
	char *out, *err;

	assert_int_equal(tcli(d, &out, &err, "status", id, NULL), 0);
	free(err);
	return out;
}

/* Asserts that text has the line "KEY VALUE" (KEY, then the spaces that
 * align the values), or (value NULL) no line of key. */
static void
assert_line(const char *text, const char *key, const char *value)
{
	char *copy = strdup(text), *line, *save;
	const char *got;
	bool found = false;

	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, key, strlen(key)) != 0 ||
		    line[strlen(key)] != ' ')
			continue;
		if (value == NULL)
			fail_msg("a line \"%s\" in:\n%s", line, text);
		got = line + strlen(key) + strspn(line + strlen(key), " ");
		if (strcmp(got, value) != 0)
			fail_msg("%s \"%s\", not \"%s\", in:\n%s", key, got,
			    value, text);
		found = true;
	}
	if (value != NULL && !found)
		fail_msg("no line %s in:\n%s", key, text);
	free(copy);
}

/* Sets job id's devices in the SQLite file of d, stopped, as admission
 * would have at its grant, and starts d again. */
static void
give_devices(struct tdaemon *d, const char *id, const char *devices)
{
	char path[400], sql[300];
	sqlite3 *db;

	assert_int_equal(tdaemon_stop(d), 0);
	snprintf(path, sizeof path, "%s/triage.db", d->state);
	snprintf(sql, sizeof sql, "UPDATE jobs SET devices = '%s' WHERE id = "
	    "%s", devices, id);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_changes(db) != 1)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_close(db);
	tdaemon_restart(d);
}

/*
 * Protocol v1.2 through the CLI: --mem, --gpus and --res at submit and
 * update, what status and list show of them (and of the units a job was
 * given), and the daemon's refusals, said as they are.
 */
static void
test_memory_and_resources(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 2\nmemory = 8GiB\n"
	    "[resource.gpu]\nunits = 0,1,2,3\nenv = CUDA_VISIBLE_DEVICES\n"
	    "[resource.licence]\ncount = 2\n");
	char *out, *err, id[32], plain[32], *row, *text;
	json_t *job;
	int rc;

	(void)state;
	tcli_submitted(tcli(d, &out, &err, "submit", "--hold", "--mem", "2GiB",
	    "--gpus", "2", "--res", "licence=1", "--", "true", NULL), &out,
	    &err, id);
	job = tcli_status(d, id);
	assert_int_equal(tjint(job, "memory"), (json_int_t)2 << 30);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    job, "resources"), "gpu")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    job, "resources"), "licence")), 1);
	assert_int_equal(json_object_size(json_object_get(job, "resources")),
	    2);
	json_decref(job);
	text = status_of(d, id);
	assert_line(text, "memory:", "2GiB");
	assert_line(text, "resources:", "gpu=2 licence=1");
	assert_line(text, "devices:", NULL);
	free(text);
	row = list_row_of(d, id, "--state=queued");
	assert_row_has(row, "2GiB");
	assert_row_has(row, "gpu=2");
	assert_row_has(row, "licence=1");
	free(row);
	/* Nothing asked for: "-". */
	tcli_submitted(tcli(d, &out, &err, "submit", "--hold", "--", "true",
	    NULL), &out, &err, plain);
	row = list_row_of(d, plain, "--state=queued");
	assert_row_has(row, "-");
	free(row);
	assert_int_equal(tcli(d, &out, &err, "list", NULL), 0);
	assert_non_null(strstr(out, " USES "));
	free(out);
	free(err);

	/* update: the resources given replace all; --mem as --memory. */
	rc = tcli(d, &out, &err, "update", id, "--res", "licence=2", "--mem",
	    "1GiB", NULL);
	tcli_assert_said(rc, out, err, 0, "", "");
	text = status_of(d, id);
	assert_line(text, "resources:", "licence=2");
	assert_line(text, "memory:", "1GiB");
	free(text);
	rc = tcli(d, &out, &err, "update", id, "--gpus", "4", NULL);
	tcli_assert_said(rc, out, err, 0, "", "");
	text = status_of(d, id);
	assert_line(text, "resources:", "gpu=4");
	free(text);

	/* The daemon's refusals, as it says them. */
	rc = tcli(d, &out, &err, "submit", "--res", "fpga=1", "--", "true",
	    NULL);
	tcli_assert_said(rc, out, err, 1, "", "triage: unknown resource "
	    "\"fpga\" in \"resources\" (configured: gpu, licence)\n");
	rc = tcli(d, &out, &err, "submit", "--gpus", "5", "--", "true", NULL);
	tcli_assert_said(rc, out, err, 1, "", "triage: \"resources.gpu\" "
	    "asks for 5 units, and gpu has 4: the job could never start\n");
	rc = tcli(d, &out, &err, "update", id, "--res", "licence=3", NULL);
	tcli_assert_said(rc, out, err, 1, "", "triage: \"resources.licence\" "
	    "asks for 3 units, and licence has 2: the job could never "
	    "start\n");
	rc = tcli(d, &out, &err, "submit", "--mem", "16GiB", "--", "true",
	    NULL);
	tcli_assert_said(rc, out, err, 1, "", "triage: memory 16 GiB is more "
	    "than the memory budget, 8 GiB: it could never start\n");

	/* The units an attempt was given: in status, and in list in place
	 * of the count. The SQLite file is the only way in before
	 * admission gives them. */
	if (!tcluster()) {
		give_devices(d, id, "{\"gpu\":[\"0\",\"3\"]}");
		text = status_of(d, id);
		assert_line(text, "resources:", "gpu=4");
		assert_line(text, "devices:", "gpu=0,3");
		free(text);
		row = list_row_of(d, id, "--state=queued");
		assert_row_has(row, "1GiB");
		assert_row_has(row, "gpu:0,3");
		free(row);
	}
	tdaemon_end(d, NULL);
}

/*
 * freeze and thaw through the CLI, as hold and release: a running job
 * frozen (status and list say so), a job in a state it makes no sense for
 * named with it, one already so no error, and a label choosing.
 */
static void
test_freeze_and_thaw_a_running_job(void **state)
{
	struct triage_client *c = tconnect(tcli_daemon);
	char *out, *err, id[32], done[32], q[32], said[200], *row;
	json_t *job;
	int rc;

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--label", "grp=f1", "--",
	    "sleep", "600", NULL), &out, &err, id);
	(void)trunning_pid(c, strtoll(id, NULL, 10));
	rc = cli(&out, &err, "freeze", id, NULL);
	tcli_assert_said(rc, out, err, 0, "", "");
	job = tcli_status(tcli_daemon, id);
	assert_true(json_is_true(json_object_get(job, "frozen")));
	json_decref(job);
	assert_int_equal(cli(&out, &err, "status", id, NULL), 0);
	if (strstr(out, " running (frozen)\n") == NULL ||
	    strstr(out, "frozen:") == NULL)
		fail_msg("status does not say it is frozen:\n%s", out);
	free(out);
	free(err);
	row = list_row(id, "--state=running");
	assert_row_has(row, "frozen");
	free(row);
	rc = cli(&out, &err, "freeze", id, NULL);
	tcli_assert_said(rc, out, err, 0, "", "");

	tcli_queue(q, "--hold");
	snprintf(said, sizeof said, "triage: job %s is queued: only a running "
	    "job can be frozen\n", q);
	rc = cli(&out, &err, "freeze", q, NULL);
	tcli_assert_said(rc, out, err, 1, "", said);
	rc = cli(&out, &err, "thaw", q, NULL);
	tcli_assert_said(rc, out, err, 0, "", "");
	tcli_submitted(cli(&out, &err, "submit", "--wait", "--", "true",
	    NULL), &out, &err, done);
	snprintf(said, sizeof said, "triage: job %s has succeeded: only a "
	    "running job can be thawed\n", done);
	rc = cli(&out, &err, "thaw", done, NULL);
	tcli_assert_said(rc, out, err, 1, "", said);

	snprintf(said, sizeof said, "%s\n", id);
	rc = cli(&out, &err, "thaw", "--label", "grp=f1", NULL);
	tcli_assert_said(rc, out, err, 0, said, "");
	job = tcli_status(tcli_daemon, id);
	assert_false(json_is_true(json_object_get(job, "frozen")));
	json_decref(job);
	assert_int_equal(cli_rc("cancel", id, q, NULL), 0);
	tassert_ends(c, strtoll(id, NULL, 10), "canceled");
	triage_client_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_job_with_labels_waits_until_released),
		cmocka_unit_test(test_update_changes_a_queued_job_only),
		cmocka_unit_test(test_start_times_at_and_delay),
		cmocka_unit_test(test_after_any_runs_whatever_the_first_did),
		cmocka_unit_test(test_wait_several_gives_the_first_failure),
		cmocka_unit_test(test_output_of_the_latest_job_and_both_streams),
		cmocka_unit_test(test_freeze_and_thaw_a_running_job),
		cmocka_unit_test(test_memory_and_resources),
	};

	return cmocka_run_group_tests_name("cli-queue", tests, tcli_setup,
	    tdaemon_group_teardown);
}
