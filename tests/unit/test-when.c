/* test-when.c - when_*: --at and --delay read in the caller's time zone and
 * written with its offset, today or tomorrow, and every form refused. */
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
#include "when.h"

/* POSIX TZ rules, so that no tzdata is needed: Central Europe, and a zone
 * half an hour off. */
#define TZ_CET "CET-1CEST,M3.5.0,M10.5.0/3"
#define TZ_IST "IST-5:30"

static void
tz(const char *zone)
{
	setenv("TZ", zone, 1);
	tzset();
}

/* ms since the epoch of an RFC 3339 time. */
static int64_t
at(const char *rfc3339)
{
	int64_t ms;

	if (timefmt_parse(rfc3339, &ms) != 0)
		fail_msg("bad test time %s", rfc3339);
	return ms;
}

static void
assert_at(const char *s, const char *now, const char *want)
{
	char out[WHEN_MAX];

	if (when_at(s, at(now), out, sizeof out) != 0)
		fail_msg("--at \"%s\" was refused", s);
	assert_string_equal(out, want);
}

static void
assert_at_fails(const char *s)
{
	char out[WHEN_MAX] = "untouched";

	errno = 0;
	if (when_at(s, at("2026-11-22T10:00:00Z"), out, sizeof out) != -1)
		fail_msg("--at \"%s\" was accepted as %s", s, out);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(out, "untouched");
}

static void
clock_times_are_today_or_tomorrow(void **state)
{
	(void)state;
	tz(TZ_CET);
	/* 10:00Z is 11:00 in Paris in November. */
	assert_at("14:30", "2026-11-22T10:00:00Z", "2026-11-22T14:30:00+01:00");
	assert_at("9:05", "2026-11-22T10:00:00Z", "2026-11-23T09:05:00+01:00");
	/* The very minute that is now has passed. */
	assert_at("11:00", "2026-11-22T10:00:00Z", "2026-11-23T11:00:00+01:00");
	assert_at("11:01", "2026-11-22T10:00:00Z", "2026-11-22T11:01:00+01:00");
	assert_at("00:00", "2026-12-31T22:30:00Z", "2027-01-01T00:00:00+01:00");
	/* Summer time has its own offset, decided for the day itself. */
	assert_at("23:59", "2026-07-01T10:00:00Z", "2026-07-01T23:59:00+02:00");
	assert_at("08:00", "2026-03-28T12:00:00Z", "2026-03-29T08:00:00+02:00");
	tz(TZ_IST);
	assert_at("18:00", "2026-11-22T10:00:00Z", "2026-11-22T18:00:00+05:30");
	assert_at("15:00", "2026-11-22T10:00:00Z", "2026-11-23T15:00:00+05:30");
	tz("UTC0");
	assert_at("23:00", "2026-11-22T10:00:00Z", "2026-11-22T23:00:00+00:00");
}

static void
rfc3339_times_keep_their_instant(void **state)
{
	(void)state;
	tz(TZ_CET);
	assert_at("2026-12-01T08:00:00Z", "2026-11-22T10:00:00Z",
	    "2026-12-01T09:00:00+01:00");
	assert_at("2026-12-01T08:00:00.250-05:00", "2026-11-22T10:00:00Z",
	    "2026-12-01T14:00:00.250+01:00");
	/* In the past: the daemon starts it at once, no need to refuse. */
	assert_at("2020-01-01T00:00:00Z", "2026-11-22T10:00:00Z",
	    "2020-01-01T01:00:00+01:00");
}

static void
what_is_not_a_time_is_refused(void **state)
{
	(void)state;
	tz(TZ_CET);
	assert_at_fails("25:00");
	assert_at_fails("24:00");
	assert_at_fails("12:60");
	assert_at_fails("123:00");
	assert_at_fails("12:0");
	assert_at_fails("12:00:00");
	assert_at_fails("12:00 ");
	assert_at_fails(" 12:00");
	assert_at_fails("noon");
	assert_at_fails("");
	assert_at_fails("-1:00");
	/* A date and time without an offset would be a guess. */
	assert_at_fails("2026-12-01T08:00:00");
	assert_at_fails("2026-13-01T08:00:00Z");
	assert_at_fails("2026-12-01");
	assert_at_fails(NULL);
}

static void
delays_count_from_now(void **state)
{
	char out[WHEN_MAX];

	(void)state;
	tz(TZ_CET);
	assert_int_equal(when_delay("10m", at("2026-11-22T10:00:00Z"), out,
	    sizeof out), 0);
	assert_string_equal(out, "2026-11-22T11:10:00+01:00");
	assert_int_equal(when_delay("1500ms", at("2026-11-22T10:00:00.250Z"),
	    out, sizeof out), 0);
	assert_string_equal(out, "2026-11-22T11:00:01.750+01:00");
	assert_int_equal(when_delay("0", at("2026-11-22T10:00:00Z"), out,
	    sizeof out), 0);
	assert_string_equal(out, "2026-11-22T11:00:00+01:00");
	assert_int_equal(when_delay("2d", at("2026-10-24T10:00:00Z"), out,
	    sizeof out), 0);
	assert_string_equal(out, "2026-10-26T11:00:00+01:00");

	strcpy(out, "untouched");
	assert_int_equal(when_delay("10 m", 0, out, sizeof out), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(when_delay("-5m", 0, out, sizeof out), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(when_delay("99999999d", 0, out, sizeof out), -1);
	assert_int_equal(errno, ERANGE);
	assert_string_equal(out, "untouched");
}

static void
format_needs_room_and_a_four_digit_year(void **state)
{
	char out[WHEN_MAX], small[10] = "untouched";

	(void)state;
	tz("UTC0");
	assert_int_equal(when_format(0, out, sizeof out), 0);
	assert_string_equal(out, "1970-01-01T00:00:00+00:00");
	assert_int_equal(when_format(at("2026-11-22T10:00:00Z"), small,
	    sizeof small), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(when_format(INT64_C(253402300800000), out,
	    sizeof out), -1);
	assert_int_equal(errno, ERANGE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clock_times_are_today_or_tomorrow),
		cmocka_unit_test(rfc3339_times_keep_their_instant),
		cmocka_unit_test(what_is_not_a_time_is_refused),
		cmocka_unit_test(delays_count_from_now),
		cmocka_unit_test(format_needs_room_and_a_four_digit_year),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
