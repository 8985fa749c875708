/* test-exitcode.c - exitcode_of_job(): the exit status triage wait gives
 * for each way a job can end, from job objects as the daemon sends them. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "exitcode.h"

/* A job object with state, exit_code (-1: null) and signal (NULL: null). */
static json_t *
job(const char *state, int exit_code, const char *sig)
{
	json_t *j = json_pack("{s:i,s:s,s:s,s:o,s:o,s:n}", "id", 1,
	    "name", "make", "state", state,
	    "exit_code", exit_code >= 0 ? json_integer(exit_code) : json_null(),
	    "signal", sig != NULL ? json_string(sig) : json_null(),
	    "reason");

	assert_non_null(j);
	return j;
}

static void
assert_code(const char *state, int exit_code, const char *sig, int want)
{
	json_t *j = job(state, exit_code, sig);

	assert_int_equal(exitcode_of_job(j), want);
	json_decref(j);
}

static void
succeeded_is_zero(void **state)
{
	(void)state;
	assert_code("succeeded", 0, NULL, 0);
}

static void
failed_gives_the_jobs_exit_code(void **state)
{
	(void)state;
	assert_code("failed", 1, NULL, 1);
	assert_code("failed", 2, NULL, 2);
	assert_code("failed", 255, NULL, 255);
	/* Contradictions still read as failures. */
	assert_code("failed", 0, NULL, 1);
	assert_code("failed", 256, NULL, 1);
}

static void
signals_give_128_plus_their_number(void **state)
{
	(void)state;
	assert_code("failed", -1, "SIGKILL", 128 + SIGKILL);
	assert_code("failed", -1, "SIGTERM", 128 + SIGTERM);
	assert_code("failed", -1, "SIGSEGV", 128 + SIGSEGV);
	assert_code("failed", -1, "SIGINT", 130);
	assert_code("failed", -1, "SIGNOTASIGNAL", 128);
}

static void
other_states_have_their_own_codes(void **state)
{
	(void)state;
	assert_code("timed_out", -1, "SIGTERM", 124);
	assert_code("timed_out", 3, NULL, 124);
	assert_code("canceled", -1, NULL, 125);
	assert_code("canceled", -1, "SIGKILL", 125);
	assert_code("lost", -1, NULL, 126);
	/* Never started: exec failed, say. */
	assert_code("failed", -1, NULL, 127);
}

static void
unfinished_or_unknown_is_an_error(void **state)
{
	json_t *j;

	(void)state;
	errno = 0;
	assert_code("queued", -1, NULL, -1);
	assert_int_equal(errno, EINVAL);
	assert_code("running", -1, NULL, -1);
	assert_code("exploded", -1, NULL, -1);
	j = json_pack("{s:i}", "id", 1);
	assert_int_equal(exitcode_of_job(j), -1);
	json_decref(j);
	assert_int_equal(exitcode_of_job(NULL), -1);
}

static void
signal_names(void **state)
{
	(void)state;
	assert_int_equal(exitcode_signal_number("SIGKILL"), SIGKILL);
	assert_int_equal(exitcode_signal_number("KILL"), SIGKILL);
	assert_int_equal(exitcode_signal_number("SIGHUP"), SIGHUP);
	assert_int_equal(exitcode_signal_number("SIGUSR2"), SIGUSR2);
	assert_int_equal(exitcode_signal_number("SIGRTMIN"), SIGRTMIN);
	assert_int_equal(exitcode_signal_number("SIGRTMIN+2"), SIGRTMIN + 2);
	assert_int_equal(exitcode_signal_number("SIGRTMAX-1"), SIGRTMAX - 1);
	assert_int_equal(exitcode_signal_number("SIGRTMAX"), SIGRTMAX);
	assert_int_equal(exitcode_signal_number("SIG9"), 9);
	assert_int_equal(exitcode_signal_number("SIG0"), -1);
	assert_int_equal(exitcode_signal_number("SIG999"), -1);
	assert_int_equal(exitcode_signal_number("SIGRTMIN+999"), -1);
	assert_int_equal(exitcode_signal_number("sigkill"), -1);
	assert_int_equal(exitcode_signal_number(""), -1);
	assert_int_equal(exitcode_signal_number(NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(succeeded_is_zero),
		cmocka_unit_test(failed_gives_the_jobs_exit_code),
		cmocka_unit_test(signals_give_128_plus_their_number),
		cmocka_unit_test(other_states_have_their_own_codes),
		cmocka_unit_test(unfinished_or_unknown_is_an_error),
		cmocka_unit_test(signal_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
