/* test-cli-output.c - triage and what a job's side gained in protocol 1.1
 * against a real triaged: nice values, merged output, --tail. */
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

/* The last lines, in windows read back from the end and grown as they
 * need: lines of 100 bytes, far more than the first window holds. */
static void
test_output_tail_gives_the_last_lines(void **state)
{
	char *out, *err, id[32];
	const char *want;

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--wait", "--", "sh", "-c",
	    "i=0; while [ $i -lt 500 ]; do i=$((i + 1)); "
	    "printf '%095d %03d\\n' 0 $i; done; printf 'no newline'", NULL),
	    &out, &err, id);
	assert_int_equal(cli(&out, &err, "output", "--tail", "2", id, NULL),
	    0);
	want = "00000000000000000000000000000000000000000000000000000000000000"
	    "000000000000000000000000000000000 500\nno newline";
	assert_string_equal(out, want);
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "output", "--tail", "100", id, NULL),
	    0);
	assert_int_equal(strlen(out), 99 * 100 + strlen("no newline"));
	assert_int_equal(strncmp(out + 96, "402\n", 4), 0);
	free(out);
	free(err);
	/* More lines than there are: all of them. */
	assert_int_equal(cli(&out, &err, "output", "--tail", "1000", id, NULL),
	    0);
	assert_int_equal(strlen(out), 500 * 100 + strlen("no newline"));
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "output", "--tail", "3", "--stderr",
	    id, NULL), 0);
	assert_string_equal(out, "");
	free(out);
	free(err);
}

static void
test_merged_output_is_one_stream(void **state)
{
	char *out, *err, id[32];

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--merge-output", "--wait",
	    "--", "sh", "-c", "echo one; echo two >&2; echo three", NULL),
	    &out, &err, id);
	assert_int_equal(cli(&out, &err, "output", id, NULL), 0);
	assert_string_equal(out, "one\ntwo\nthree\n");
	free(out);
	free(err);
	assert_int_equal(cli(&out, &err, "output", "--both", id, NULL), 0);
	assert_string_equal(out, "one\ntwo\nthree\n");
	free(out);
	free(err);
}

static void
test_nice_is_the_jobs(void **state)
{
	char *out, *err, id[32];

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--nice", "7", "--wait", "--",
	    "nice", NULL), &out, &err, id);
	assert_int_equal(cli(&out, &err, "output", id, NULL), 0);
	assert_string_equal(out, "7\n");
	free(out);
	free(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_tail_gives_the_last_lines),
		cmocka_unit_test(test_merged_output_is_one_stream),
		cmocka_unit_test(test_nice_is_the_jobs),
	};

	return cmocka_run_group_tests_name("cli-output", tests, tcli_setup,
	    tdaemon_group_teardown);
}
