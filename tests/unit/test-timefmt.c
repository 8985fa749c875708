/* test-timefmt.c - timefmt_*: RFC 3339 reading, the compact spans of
 * triage list, and how long a job object waited and ran. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "timefmt.h"

/* 2026-11-22T10:00:00.000Z */
#define T0 INT64_C(1795341600000)

static void
assert_parse(const char *s, int64_t want)
{
	int64_t ms = -42;

	if (timefmt_parse(s, &ms) != 0)
		fail_msg("\"%s\" was refused", s);
	assert_int_equal(ms, want);
}

static void
assert_parse_fails(const char *s)
{
	int64_t ms = -42;

	errno = 0;
	if (timefmt_parse(s, &ms) != -1)
		fail_msg("\"%s\" was accepted", s);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ms, -42);
}

static void
parse_reads_the_daemons_times(void **state)
{
	(void)state;
	assert_parse("2026-11-22T10:00:00.123Z", T0 + 123);
	assert_parse("2026-11-22T10:00:00.000Z", T0);
	assert_parse("2026-11-22T10:00:00Z", T0);
	assert_parse("1970-01-01T00:00:00.001Z", 1);
	assert_parse("2026-11-22t10:00:00z", T0);
}

static void
parse_takes_fractions_and_offsets(void **state)
{
	(void)state;
	assert_parse("2026-11-22T10:00:00.5Z", T0 + 500);
	assert_parse("2026-11-22T10:00:00.123456789Z", T0 + 123);
	assert_parse("2026-11-22T11:00:00+01:00", T0);
	assert_parse("2026-11-22T08:30:00-01:30", T0);
	assert_parse("2026-11-22 10:00:00Z", T0);
	assert_parse("2028-02-29T00:00:00Z", INT64_C(1835395200000));
	assert_parse("2000-02-29T00:00:00Z", INT64_C(951782400000));
}

static void
parse_refuses_what_is_not_rfc3339(void **state)
{
	(void)state;
	assert_parse_fails("");
	assert_parse_fails("2026-11-22");
	assert_parse_fails("2026-11-22T10:00:00");	/* no zone */
	assert_parse_fails("2026-11-22T10:00:00.Z");
	assert_parse_fails("2026-11-22T10:00Z");
	assert_parse_fails("2026-13-22T10:00:00Z");
	assert_parse_fails("2026-11-32T10:00:00Z");
	assert_parse_fails("2026-11-31T10:00:00Z");
	assert_parse_fails("2026-02-30T10:00:00Z");
	assert_parse_fails("2027-02-29T10:00:00Z");
	assert_parse_fails("2100-02-29T10:00:00Z");	/* not a leap year */
	assert_parse_fails("2026-11-22T24:00:00Z");
	assert_parse_fails("2026-11-22T10:00:00Zjunk");
	assert_parse_fails("2026-11-22T10:00:00+0100");
	assert_parse_fails("26-11-22T10:00:00Z");
	assert_parse_fails(NULL);
}

static void
assert_elapsed(int64_t ms, const char *want)
{
	char buf[TIMEFMT_MAX];

	assert_string_equal(timefmt_elapsed(ms, buf, sizeof buf), want);
}

static void
elapsed_is_compact(void **state)
{
	(void)state;
	assert_elapsed(0, "0.0s");
	assert_elapsed(99, "0.0s");
	assert_elapsed(1234, "1.2s");
	assert_elapsed(1299, "1.2s");		/* truncated, not rounded */
	assert_elapsed(59999, "59.9s");
	assert_elapsed(60000, "1m00s");
	assert_elapsed(184000, "3m04s");
	assert_elapsed(3599999, "59m59s");
	assert_elapsed(3600000, "1h00m");
	assert_elapsed(7500000, "2h05m");
	assert_elapsed(86399999, "23h59m");
	assert_elapsed(86400000, "1d00h");
	assert_elapsed(3 * 86400000 + 4 * 3600000, "3d04h");
	assert_elapsed(INT64_C(400) * 86400000, "400d00h");
	assert_elapsed(-5000, "0.0s");
}

static void
elapsed_truncates_to_the_buffer(void **state)
{
	char buf[4];

	(void)state;
	assert_string_equal(timefmt_elapsed(184000, buf, sizeof buf), "3m0");
}

static void
local_time_is_readable(void **state)
{
	char buf[TIMEFMT_MAX];

	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	assert_string_equal(timefmt_local(T0 + 999, buf, sizeof buf),
	    "2026-11-22 10:00:00");
	setenv("TZ", "Europe/Paris", 1);
	tzset();
	timefmt_local(T0, buf, sizeof buf);
	/* Paris is UTC+1 in November, if the zone is installed. */
	assert_true(strcmp(buf, "2026-11-22 11:00:00") == 0 ||
	    strcmp(buf, "2026-11-22 10:00:00") == 0);
	unsetenv("TZ");
	tzset();
}

static json_t *
job(const char *submitted, const char *started, const char *finished)
{
	json_t *j = json_pack("{s:i,s:o,s:o,s:o}", "id", 1,
	    "submitted_at", submitted ? json_string(submitted) : json_null(),
	    "started_at", started ? json_string(started) : json_null(),
	    "finished_at", finished ? json_string(finished) : json_null());

	assert_non_null(j);
	return j;
}

static void
waited_and_ran_of_a_finished_job(void **state)
{
	json_t *j;

	(void)state;
	j = job("2026-11-22T10:00:00.000Z", "2026-11-22T10:00:01.200Z",
	    "2026-11-22T10:03:05.200Z");
	assert_int_equal(timefmt_waited(j, T0 + 999999999), 1200);
	assert_int_equal(timefmt_ran(j, T0 + 999999999), 184000);
	json_decref(j);
}

static void
waited_and_ran_so_far(void **state)
{
	json_t *j;

	(void)state;
	/* Queued: waiting until now, not run. */
	j = job("2026-11-22T10:00:00.000Z", NULL, NULL);
	assert_int_equal(timefmt_waited(j, T0 + 5000), 5000);
	assert_int_equal(timefmt_ran(j, T0 + 5000), -1);
	json_decref(j);

	/* Running: waited is fixed, ran goes on until now. */
	j = job("2026-11-22T10:00:00.000Z", "2026-11-22T10:00:02.000Z", NULL);
	assert_int_equal(timefmt_waited(j, T0 + 60000), 2000);
	assert_int_equal(timefmt_ran(j, T0 + 60000), 58000);
	json_decref(j);

	/* Canceled while queued: it waited until it was canceled. */
	j = job("2026-11-22T10:00:00.000Z", NULL, "2026-11-22T10:00:07.000Z");
	assert_int_equal(timefmt_waited(j, T0 + 60000), 7000);
	assert_int_equal(timefmt_ran(j, T0 + 60000), -1);
	json_decref(j);

	/* A clock behind the daemon's never gives a negative span. */
	j = job("2026-11-22T10:00:00.000Z", NULL, NULL);
	assert_int_equal(timefmt_waited(j, T0 - 1000), 0);
	json_decref(j);

	j = job(NULL, NULL, NULL);
	assert_int_equal(timefmt_waited(j, T0), -1);
	json_decref(j);
}

static void
rfc3339_writes_utc_with_milliseconds(void **state)
{
	char buf[TIMEFMT_RFC3339_LEN];
	int64_t back;

	(void)state;
	assert_string_equal(timefmt_rfc3339(0, buf), "1970-01-01T00:00:00.000Z");
	assert_string_equal(timefmt_rfc3339(INT64_C(1795340400123), buf),
	    "2026-11-22T09:40:00.123Z");
	/* Before the epoch the milliseconds still count forwards. */
	assert_string_equal(timefmt_rfc3339(-1, buf), "1969-12-31T23:59:59.999Z");
	assert_int_equal(timefmt_parse(timefmt_rfc3339(INT64_C(1795340400123),
	    buf), &back), 0);
	assert_int_equal(back, INT64_C(1795340400123));
	/* A year of five digits cannot be written: empty, not garbage. */
	assert_string_equal(timefmt_rfc3339(INT64_C(253402300800000), buf), "");
}

/* The second is kept from one call to the next: times in it, and in the
 * seconds around it, in any order, are each their own. */
static void
rfc3339_within_and_across_seconds(void **state)
{
	char buf[TIMEFMT_RFC3339_LEN];

	(void)state;
	assert_string_equal(timefmt_rfc3339(T0 + 5, buf),
	    "2026-11-22T10:00:00.005Z");
	assert_string_equal(timefmt_rfc3339(T0 + 999, buf),
	    "2026-11-22T10:00:00.999Z");
	assert_string_equal(timefmt_rfc3339(T0 + 1000, buf),
	    "2026-11-22T10:00:01.000Z");
	assert_string_equal(timefmt_rfc3339(T0 - 1, buf),
	    "2026-11-22T09:59:59.999Z");
	assert_string_equal(timefmt_rfc3339(INT64_C(253402300800000), buf), "");
	assert_string_equal(timefmt_rfc3339(T0 + 42, buf),
	    "2026-11-22T10:00:00.042Z");
	assert_string_equal(timefmt_rfc3339(T0 + 86400000, buf),
	    "2026-11-23T10:00:00.000Z");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc3339_writes_utc_with_milliseconds),
		cmocka_unit_test(rfc3339_within_and_across_seconds),
		cmocka_unit_test(parse_reads_the_daemons_times),
		cmocka_unit_test(parse_takes_fractions_and_offsets),
		cmocka_unit_test(parse_refuses_what_is_not_rfc3339),
		cmocka_unit_test(elapsed_is_compact),
		cmocka_unit_test(elapsed_truncates_to_the_buffer),
		cmocka_unit_test(local_time_is_readable),
		cmocka_unit_test(waited_and_ran_of_a_finished_job),
		cmocka_unit_test(waited_and_ran_so_far),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
