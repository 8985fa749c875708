/* test-cli-hold.c - triage hold and release choosing jobs as cancel does,
 * by the protocol's filter, against a real triaged. */
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold_and_release_choose_by_label),
	};

	return cmocka_run_group_tests_name("cli-hold", tests, tcli_setup,
	    tdaemon_group_teardown);
}
