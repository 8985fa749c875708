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

/* Several ids are one request: those it makes no sense for are skipped. */
static void
test_several_ids_are_one_filter(void **state)
{
	char *out, *err, a[32], b[32], done[32], want[100];

	(void)state;
	tcli_queue(a, "--hold");
	tcli_queue(b, "--hold");
	tcli_submitted(cli(&out, &err, "submit", "--wait", "--", "true",
	    NULL), &out, &err, done);
	assert_int_equal(cli(&out, &err, "cancel", a, b, done, "999999",
	    NULL), 0);
	snprintf(want, sizeof want, "%s\n%s\n", a, b);
	tcli_assert_printed(out, err, want);
	assert_int_equal(cli_rc("wait", a, b, NULL), 125);
	assert_int_equal(cli(&out, &err, "remove", a, b, done, NULL), 0);
	snprintf(want, sizeof want, "%s\n%s\n%s\n", a, b, done);
	tcli_assert_printed(out, err, want);
	assert_int_equal(cli_rc("status", a, NULL), 1);
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
	assert_int_equal(cli(&out, &err, "clean", "--label", "grp=r1", NULL),
	    0);
	snprintf(want, sizeof want, "%s\n", a);
	tcli_assert_printed(out, err, want);
	assert_int_equal(cli_rc("status", a, NULL), 1);
	/* A single id of a job that has not ended is refused. */
	tcli_queue(a, "--hold");
	assert_int_equal(cli(&out, &err, "remove", a, NULL), 1);
	assert_int_equal(strncmp(err, "triage: ", 8), 0);
	free(out);
	free(err);
	assert_int_equal(cli_rc("cancel", a, NULL), 0);
}

/* A job that ends its work on SIGINT, which cancel --signal sends first;
 * it prints its pid once its trap is set. */
static void
test_cancel_sends_the_signal_asked_for(void **state)
{
	struct client *c = tconnect(tcli_daemon);
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
	client_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_chooses_by_priority_state_and_label),
		cmocka_unit_test(test_several_ids_are_one_filter),
		cmocka_unit_test(test_list_by_label_name_and_held),
		cmocka_unit_test(test_hold_and_release_choose_by_label),
		cmocka_unit_test(test_retry_remove_and_clean_by_label),
		cmocka_unit_test(test_cancel_sends_the_signal_asked_for),
	};

	return cmocka_run_group_tests_name("cli-select", tests, tcli_setup,
	    tdaemon_group_teardown);
}
