/* test-chaos-check.c - the chaos test's checker on crafted runs: a clean one
 * passes, and each kind of violation, planted alone, is found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "chaos-check.h"

#define SOCK_A "/tmp/triage-test-aaaa/sock"
#define SOCK_B "/tmp/triage-test-bbbb/sock"

/*
 * A clean run: job 1 succeeded at a; job 2 failed at b; job 3 ran on a
 * whose lease ran out (its last tick before attempt 2's start) and
 * succeeded at b as attempt 2; job 4 never acknowledged (its reply lost)
 * but ran and succeeded. Waits reported 1, 2 and 3 as they ended.
 */
static struct chaos_check *
clean(void)
{
	static const char *const ledger[] = {
		"1 1 " SOCK_A " start 1000",
		"1 1 " SOCK_A " tick 1020",
		"1 1 " SOCK_A " end 1040",
		"2 1 " SOCK_B " start 1100",
		"2 1 " SOCK_B " end 1130\n",
		"3 1 " SOCK_A " start 2000",
		"3 1 " SOCK_A " tick 2020",
		"3 2 " SOCK_B " start 5000",
		"3 2 " SOCK_B " tick 5020",
		"3 2 " SOCK_B " end 5040",
		"4 1 " SOCK_B " start 6000",
		"4 1 " SOCK_B " end 6100",
	};
	struct chaos_check *ck = chaos_check_new();
	size_t i;

	chaos_check_node(ck, SOCK_A, "a");
	chaos_check_node(ck, SOCK_B, "b");
	for (i = 0; i < sizeof ledger / sizeof ledger[0]; i++)
		assert_int_equal(chaos_check_ledger_line(ck, ledger[i]), 0);
	chaos_check_submitted(ck, 1, 900, "a");
	chaos_check_submitted(ck, 2, 950, "b");
	chaos_check_submitted(ck, 3, 1900, "a");
	chaos_check_outcome(ck, 1, "succeeded", 1, "b");
	chaos_check_outcome(ck, 2, "failed", 1, "a");
	chaos_check_outcome(ck, 3, "succeeded", 2, "a");
	chaos_check_final(ck, 1, "succeeded", 1);
	chaos_check_final(ck, 2, "failed", 1);
	chaos_check_final(ck, 3, "succeeded", 2);
	chaos_check_final(ck, 4, "succeeded", 1);
	return ck;
}

/* Runs the check: the one violation planted is found, alone. */
static void
assert_only(struct chaos_check *ck, enum chaos_violation kind, size_t n)
{
	int k;

	assert_int_equal(chaos_check_run(ck, stdout, 1, 1), n);
	for (k = 0; k < CHAOS_NKINDS; k++)
		if (chaos_check_found(ck, (enum chaos_violation)k) !=
		    ((enum chaos_violation)k == kind ? n : 0))
			fail_msg("%s: found %zu", chaos_check_kind(
			    (enum chaos_violation)k), chaos_check_found(ck,
			    (enum chaos_violation)k));
	chaos_check_free(ck);
}

static void
test_clean_run_passes(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	assert_int_equal(chaos_check_run(ck, stdout, 1, 1), 0);
	chaos_check_free(ck);
}

/* The same, a ledger file read whole; and a run with no ledger yet. */
static void
test_clean_ledger_file_passes(void **state)
{
	char path[] = "/tmp/chaos-check-XXXXXX";
	struct chaos_check *ck = chaos_check_new();
	FILE *f;
	int fd;

	(void)state;
	assert_int_not_equal(fd = mkstemp(path), -1);
	assert_non_null(f = fdopen(fd, "w"));
	fprintf(f, "7 1 %s start 10\n7 1 %s tick 30\n7 1 %s end 50\n",
	    SOCK_A, SOCK_A, SOCK_A);
	fclose(f);
	assert_int_equal(chaos_check_ledger_file(ck, path), 0);
	unlink(path);
	assert_int_equal(chaos_check_ledger_file(ck, path), 0);
	chaos_check_submitted(ck, 7, 5, "a");
	chaos_check_final(ck, 7, "succeeded", 1);
	assert_only(ck, CHAOS_LOST, 0);
}

static void
test_lost_submission_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	chaos_check_submitted(ck, 9, 7000, "b");
	assert_only(ck, CHAOS_LOST, 1);
}

static void
test_vanished_job_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	assert_int_equal(chaos_check_ledger_line(ck, "8 1 " SOCK_A
	    " start 7000"), 0);
	assert_only(ck, CHAOS_VANISHED, 1);
}

static void
test_unfinished_job_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	chaos_check_submitted(ck, 10, 7000, "a");
	chaos_check_final(ck, 10, "queued", 2);
	chaos_check_submitted(ck, 11, 7001, "b");
	chaos_check_final(ck, 11, "running", 1);
	assert_only(ck, CHAOS_UNFINISHED, 2);
}

/* A wait said failed; the job is succeeded now. */
static void
test_outcome_contradicted_by_final_state_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	chaos_check_outcome(ck, 1, "failed", 1, "a");
	assert_only(ck, CHAOS_CONTRADICTED, 1);
}

/* A wait said succeeded at attempt 1; the final job is attempt 2. */
static void
test_outcome_contradicted_by_final_attempt_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	chaos_check_outcome(ck, 3, "succeeded", 1, "b");
	/* Both the final job and attempt 2's start deny it. */
	assert_only(ck, CHAOS_CONTRADICTED, 2);
}

/* A wait said succeeded at attempt 1, and attempt 2 started later,
 * though the final list (a node's view) still agrees with the wait. */
static void
test_outcome_contradicted_by_later_start_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	assert_int_equal(chaos_check_ledger_line(ck, "1 2 " SOCK_B
	    " start 9000"), 0);
	assert_int_equal(chaos_check_ledger_line(ck, "1 2 " SOCK_B
	    " end 9100"), 0);
	assert_only(ck, CHAOS_CONTRADICTED, 1);
}

/* Attempt 1 ticked on after attempt 2 had started. */
static void
test_overlap_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	assert_int_equal(chaos_check_ledger_line(ck, "3 1 " SOCK_A
	    " tick 5010"), 0);
	assert_only(ck, CHAOS_OVERLAP, 1);
}

/* Attempt 1 went on past attempt 3's start, attempt 2 never ran on:
 * the earliest later start counts, not the next attempt's only. */
static void
test_overlap_with_a_later_attempt_than_the_next_is_found(void **state)
{
	struct chaos_check *ck = chaos_check_new();

	(void)state;
	assert_int_equal(chaos_check_ledger_line(ck, "5 1 " SOCK_A
	    " start 100"), 0);
	assert_int_equal(chaos_check_ledger_line(ck, "5 3 " SOCK_B
	    " start 300"), 0);
	assert_int_equal(chaos_check_ledger_line(ck, "5 1 " SOCK_A
	    " tick 350"), 0);
	assert_int_equal(chaos_check_ledger_line(ck, "5 3 " SOCK_B
	    " end 400"), 0);
	chaos_check_final(ck, 5, "succeeded", 3);
	assert_only(ck, CHAOS_OVERLAP, 1);
}

static void
test_attempt_run_twice_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	assert_int_equal(chaos_check_ledger_line(ck, "2 1 " SOCK_A
	    " start 1200"), 0);
	assert_only(ck, CHAOS_TWICE, 1);
}

static void
test_succeeded_without_a_start_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	chaos_check_submitted(ck, 12, 7000, "a");
	chaos_check_final(ck, 12, "succeeded", 1);
	assert_only(ck, CHAOS_UNRUN, 1);
}

static void
test_malformed_ledger_line_is_found(void **state)
{
	struct chaos_check *ck = clean();

	(void)state;
	assert_int_equal(chaos_check_ledger_line(ck, "3 2 " SOCK_B
	    " sta"), -1);
	assert_int_equal(chaos_check_ledger_line(ck, "3 2 " SOCK_B
	    " begin 5000"), -1);
	assert_int_equal(chaos_check_ledger_line(ck, "3 2 " SOCK_B
	    " end 5000 more"), -1);
	assert_only(ck, CHAOS_MALFORMED, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_run_passes),
		cmocka_unit_test(test_clean_ledger_file_passes),
		cmocka_unit_test(test_lost_submission_is_found),
		cmocka_unit_test(test_vanished_job_is_found),
		cmocka_unit_test(test_unfinished_job_is_found),
		cmocka_unit_test(
		    test_outcome_contradicted_by_final_state_is_found),
		cmocka_unit_test(
		    test_outcome_contradicted_by_final_attempt_is_found),
		cmocka_unit_test(
		    test_outcome_contradicted_by_later_start_is_found),
		cmocka_unit_test(test_overlap_is_found),
		cmocka_unit_test(
		    test_overlap_with_a_later_attempt_than_the_next_is_found),
		cmocka_unit_test(test_attempt_run_twice_is_found),
		cmocka_unit_test(test_succeeded_without_a_start_is_found),
		cmocka_unit_test(test_malformed_ledger_line_is_found),
	};

	return cmocka_run_group_tests_name("chaos checker", tests, NULL, NULL);
}
