/* test-cli-select.c - triage acting on many jobs at once against a real
 * triaged: jobs chosen by priority, state, label and name, or by ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"

static void
test_cancel_chooses_by_priority_state_and_label(void **state)
{
	char *out, *err, a[32], b[32], c[32], want[100];

	(void)state;
	assert_int_equal(cli_rc("pause", "low", NULL), 0);
	tcli_queue(a, "-p", "low", "--label", "grp=c1");
	tcli_queue(b, "-p", "low", "--label", "grp=c1");
	tcli_queue(c, "-p", "normal", "--hold", "--label", "grp=c1");
	assert_int_equal(cli(&out, &err, "cancel", "-p", "low", "--state",
	    "queued", "--label", "grp=c1", NULL), 0);
	snprintf(want, sizeof want, "%s\n%s\n", a, b);
	tcli_assert_printed(out, err, want);
	assert_int_equal(cli_rc("wait", a, b, NULL), 125);
	/* --json: the daemon's answer. */
	assert_int_equal(cli(&out, &err, "--json", "cancel", "--label",
	    "grp=c1", NULL), 0);
	snprintf(want, sizeof want, "{\"ids\":[%s]}\n", c);
	tcli_assert_printed(out, err, want);
	/* Nothing chosen: nothing printed, not an error. */
	assert_int_equal(cli(&out, &err, "cancel", "--label", "grp=none",
	    NULL), 0);
	tcli_assert_printed(out, err, "");
	assert_int_equal(cli_rc("resume", "low", NULL), 0);
}

/*
 * Several ids are one request; each id it did nothing for gets a line
 * saying why, and the exit status is 1 when one of them could not be acted
 * on. A job that had already ended is only said of for cancel.
 */
static void
test_several_ids_say_which_did_nothing(void **state)
{
	char *out, *err, a[32], b[32], q[32], done[32], want[100], said[600];
	int rc, i;

	(void)state;
	tcli_queue(a, "--hold");
	tcli_queue(b, "--hold");
	tcli_submitted(cli(&out, &err, "submit", "--wait", "--", "true",
	    NULL), &out, &err, done);
	rc = cli(&out, &err, "cancel", a, "999998", b, done, "999999", NULL);
	snprintf(want, sizeof want, "%s\n%s\n", a, b);
	snprintf(said, sizeof said, "triage: no job 999998\n"
	    "triage: job %s has already succeeded: nothing to cancel\n"
	    "triage: no job 999999\n", done);
	tcli_assert_said(rc, out, err, 1, want, said);
	/* Only ended: nothing refused. */
	rc = cli(&out, &err, "cancel", done, a, NULL);
	snprintf(said, sizeof said, "triage: job %s has already succeeded: "
	    "nothing to cancel\ntriage: job %s was already canceled: nothing "
	    "to cancel\n", done, a);
	tcli_assert_said(rc, out, err, 0, "", said);
	assert_int_equal(cli_rc("wait", a, b, NULL), 125);

	rc = cli(&out, &err, "retry", a, done, NULL);
	snprintf(want, sizeof want, "%s\n", a);
	snprintf(said, sizeof said, "triage: job %s has succeeded: only a job "
	    "that failed, timed out, was canceled or was lost can be "
	    "retried\n", done);
	tcli_assert_said(rc, out, err, 1, want, said);
	assert_int_equal(cli_rc("wait", a, NULL), 0);
	tcli_queue(q, "--delay", "1h");
	for (i = 0; i < 2; i++) {
		rc = cli(&out, &err, i ? "release" : "hold", q, done, NULL);
		snprintf(want, sizeof want, "%s\n", q);
		snprintf(said, sizeof said, "triage: job %s has succeeded: "
		    "only a queued job can be %s\n", done,
		    i ? "released" : "held");
		tcli_assert_said(rc, out, err, 1, want, said);
	}
	rc = cli(&out, &err, "remove", q, done, "999999", NULL);
	snprintf(want, sizeof want, "%s\n", done);
	snprintf(said, sizeof said, "triage: job %s is queued: only a job that "
	    "has ended can be removed (cancel it first)\n"
	    "triage: no job 999999\n", q);
	tcli_assert_said(rc, out, err, 1, want, said);
	assert_int_equal(cli_rc("cancel", q, NULL), 0);
	assert_int_equal(cli(&out, &err, "remove", a, b, q, NULL), 0);
	snprintf(want, sizeof want, "%s\n%s\n%s\n", a, b, q);
	tcli_assert_printed(out, err, want);
	assert_int_equal(cli_rc("status", a, NULL), 1);
}

/*
 * hold of a job that is not queued, and release of one that has ended, do
 * nothing: with one id, an error naming the state. Holding a held job, or
 * releasing a queued one that is not held, is what was asked: no error.
 */
static void
test_hold_and_release_say_when_the_state_is_wrong(void **state)
{
	struct triage_client *c = tconnect(tcli_daemon);
	char *out, *err, run[32], done[32], queued[32], said[300];
	int64_t id;
	int rc;

	(void)state;
	id = tsubmit_gated(c, tcli_daemon, "hold-wrong", false);
	trunning_pid(c, id);
	snprintf(run, sizeof run, "%lld", (long long)id);
	rc = cli(&out, &err, "hold", run, NULL);
	snprintf(said, sizeof said, "triage: job %s is running: only a queued "
	    "job can be held\n", run);
	tcli_assert_said(rc, out, err, 1, "", said);
	rc = cli(&out, &err, "release", run, NULL);
	tcli_assert_said(rc, out, err, 0, "", "");

	tcli_submitted(cli(&out, &err, "submit", "--wait", "--", "true",
	    NULL), &out, &err, done);
	rc = cli(&out, &err, "hold", done, NULL);
	snprintf(said, sizeof said, "triage: job %s has succeeded: only a "
	    "queued job can be held\n", done);
	tcli_assert_said(rc, out, err, 1, "", said);
	rc = cli(&out, &err, "release", done, NULL);
	snprintf(said, sizeof said, "triage: job %s has succeeded: only a "
	    "queued job can be released\n", done);
	tcli_assert_said(rc, out, err, 1, "", said);

	tcli_queue(queued, "--delay", "1h");
	rc = cli(&out, &err, "release", queued, NULL);
	tcli_assert_said(rc, out, err, 0, "", "");
	assert_int_equal(cli_rc("hold", queued, NULL), 0);
	rc = cli(&out, &err, "hold", queued, NULL);
	tcli_assert_said(rc, out, err, 0, "", "");
	assert_true(theld(c, strtol(queued, NULL, 10)));
	assert_int_equal(cli_rc("cancel", queued, NULL), 0);
	topen_gate(tcli_daemon, "hold-wrong");
	tassert_ends(c, id, "succeeded");
	triage_client_free(c);
}

static void
test_list_by_label_name_and_held(void **state)
{
	char *out, *err, a[32], b[32];

	(void)state;
	tcli_queue(a, "--hold", "--label", "grp=l1", "-n", "l1-first");
	tcli_queue(b, "-p", "low", "--delay", "1h", "--label", "grp=l1", "-n",
	    "l1-second");
	assert_int_equal(cli(&out, &err, "list", "--label", "grp=l1", NULL),
	    0);
	assert_non_null(strstr(out, "l1-first"));
	assert_non_null(strstr(out, "l1-second"));
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "list", "--held", NULL), 0);
	assert_non_null(strstr(out, "l1-first"));
	assert_null(strstr(out, "l1-second"));
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "list", "--name", "l1-second", NULL),
	    0);
	assert_null(strstr(out, "l1-first"));
	assert_non_null(strstr(out, "l1-second"));
	free(out);
	free(err);
	assert_int_equal(cli_rc("cancel", a, b, NULL), 0);
}

/* hold and release by filter, as cancel does. */
static void
test_hold_and_release_choose_by_label(void **state)
{
	char *out, *err, a[32], b[32], want[100];

	(void)state;
	assert_int_equal(cli_rc("pause", "low", NULL), 0);
	tcli_queue(a, "-p", "low", "--label", "grp=h1", "-n", "h1-first");
	tcli_queue(b, "-p", "low", "--label", "grp=h1", "-n", "h1-second");
	assert_int_equal(cli(&out, &err, "hold", "--label", "grp=h1", NULL),
	    0);
	snprintf(want, sizeof want, "%s\n%s\n", a, b);
	tcli_assert_printed(out, err, want);
	assert_int_equal(cli(&out, &err, "release", "--name", "h1-first",
	    NULL), 0);
	snprintf(want, sizeof want, "%s\n", a);
	tcli_assert_printed(out, err, want);
	/* b alone is still held: a is skipped. */
	assert_int_equal(cli(&out, &err, "release", a, b, NULL), 0);
	snprintf(want, sizeof want, "%s\n", b);
	tcli_assert_printed(out, err, want);
	assert_int_equal(cli_rc("resume", "low", NULL), 0);
	assert_int_equal(cli_rc("wait", "--label", "grp=h1", "--state",
	    "queued,running,succeeded", NULL), 0);
}

static void
test_retry_remove_and_clean_by_label(void **state)
{
	char *out, *err, a[32], b[32], want[100];

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--label", "grp=r1", "--",
	    "sh", "-c", "exit 4", NULL), &out, &err, a);
	tcli_submitted(cli(&out, &err, "submit", "--label", "grp=r1", "--",
	    "true", NULL), &out, &err, b);
	assert_int_equal(cli_rc("wait", a, b, NULL), 4);
	assert_int_equal(cli(&out, &err, "retry", "--label", "grp=r1", NULL),
	    0);
	snprintf(want, sizeof want, "%s\n", a);
	tcli_assert_printed(out, err, want);
	assert_int_equal(cli_rc("wait", a, NULL), 4);
	assert_int_equal(cli(&out, &err, "remove", "--label", "grp=r1",
	    "--state", "succeeded", NULL), 0);
	snprintf(want, sizeof want, "%s\n", b);
	tcli_assert_printed(out, err, want);
	/* A count; the ids with -v. */
	assert_int_equal(cli(&out, &err, "clean", "--label", "grp=r1", NULL),
	    0);
	tcli_assert_printed(out, err, "removed 1 job\n");
	tcli_submitted(cli(&out, &err, "submit", "--wait", "--label",
	    "grp=r1", "--", "true", NULL), &out, &err, b);
	assert_int_equal(cli(&out, &err, "clean", "-v", "--label", "grp=r1",
	    NULL), 0);
	snprintf(want, sizeof want, "%s\nremoved 1 job\n", b);
	tcli_assert_printed(out, err, want);
	assert_int_equal(cli(&out, &err, "clean", "--label", "grp=r1", NULL),
	    0);
	tcli_assert_printed(out, err, "removed 0 jobs\n");
	assert_int_equal(cli_rc("status", a, NULL), 1);
	/* A single id of a job that has not ended is refused. */
	tcli_queue(a, "--hold");
	assert_int_equal(cli(&out, &err, "remove", a, NULL), 1);
	snprintf(want, sizeof want, "triage: job %s is queued: only a job", a);
	assert_int_equal(strncmp(err, want, strlen(want)), 0);
	free(out);
	free(err);
	assert_int_equal(cli_rc("cancel", a, NULL), 0);
}

/* A job that ends its work on SIGINT, which cancel --signal sends first;
 * it prints its pid once its trap is set. */
static void
test_cancel_sends_the_signal_asked_for(void **state)
{
	struct triage_client *c = tconnect(tcli_daemon);
	char script[1000], *out, *err, id[32];

	(void)state;
	snprintf(script, sizeof script, "trap 'echo got INT; exit 7' INT; "
	    "echo $$; %s", tgate_sh(tcli_daemon, "never-opened"));
	tcli_submitted(cli(&out, &err, "submit", "--", "sh", "-c", script,
	    NULL), &out, &err, id);
	toutput_pid(c, strtol(id, NULL, 10));
	assert_int_equal(cli_rc("cancel", "--signal", "INT", id, NULL), 0);
	assert_int_equal(cli_rc("wait", id, NULL), 125);
	assert_int_equal(cli(&out, &err, "output", id, NULL), 0);
	assert_non_null(strstr(out, "\ngot INT\n"));
	free(out);
	free(err);
	triage_client_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_chooses_by_priority_state_and_label),
		cmocka_unit_test(test_several_ids_say_which_did_nothing),
		cmocka_unit_test(test_hold_and_release_say_when_the_state_is_wrong),
		cmocka_unit_test(test_list_by_label_name_and_held),
		cmocka_unit_test(test_hold_and_release_choose_by_label),
		cmocka_unit_test(test_retry_remove_and_clean_by_label),
		cmocka_unit_test(test_cancel_sends_the_signal_asked_for),
	};

	return cmocka_run_group_tests_name("cli-select", tests, tcli_setup,
	    tdaemon_group_teardown);
}
