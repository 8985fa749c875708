/* test-units.c - units_*: every duration and size unit, every malformed form
 * we promise to refuse, overflow, and the formatters reading back. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "units.h"

#define SENTINEL UINT64_C(0xdeadbeef)

static void
assert_duration(const char *s, uint64_t want)
{
	uint64_t ms = SENTINEL;

	if (units_parse_duration(s, &ms) != 0)
		fail_msg("\"%s\" was refused", s);
	assert_int_equal(ms, want);
}

static void
assert_duration_fails(const char *s, int want_errno)
{
	uint64_t ms = SENTINEL;

	errno = 0;
	if (units_parse_duration(s, &ms) != -1)
		fail_msg("\"%s\" was accepted", s);
	assert_int_equal(errno, want_errno);
	assert_int_equal(ms, SENTINEL);
}

static void
assert_size(const char *s, uint64_t want)
{
	uint64_t bytes = SENTINEL;

	if (units_parse_size(s, &bytes) != 0)
		fail_msg("\"%s\" was refused", s);
	assert_int_equal(bytes, want);
}

static void
assert_size_fails(const char *s, int want_errno)
{
	uint64_t bytes = SENTINEL;

	errno = 0;
	if (units_parse_size(s, &bytes) != -1)
		fail_msg("\"%s\" was accepted", s);
	assert_int_equal(errno, want_errno);
	assert_int_equal(bytes, SENTINEL);
}

static void
duration_units_convert_to_milliseconds(void **state)
{
	(void)state;
	assert_duration("500ms", 500);
	assert_duration("30s", 30000);
	assert_duration("5m", 300000);
	assert_duration("2h", 7200000);
	assert_duration("7d", UINT64_C(604800000));
	assert_duration("0ms", 0);
	assert_duration("0d", 0);
	assert_duration("007s", 7000);
}

static void
duration_bare_number_is_seconds(void **state)
{
	(void)state;
	assert_duration("10", 10000);
	assert_duration("0", 0);
}

static void
duration_malformed_forms_are_einval(void **state)
{
	static const char *const bad[] = {
		"", "s", "ms", "-1", "+1", "-1s", " 1s", "1s ", "10 s", "1.5h",
		"1,5h", "1S", "1H", "1sec", "1min", "1ms2", "1s1", "0x10",
		"1e3", "1 ", "1\n", "1y", "1w", "1us", "1hh", "auto",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_duration_fails(bad[i], EINVAL);
	assert_duration_fails(NULL, EINVAL);
}

static void
duration_overflow_is_erange(void **state)
{
	(void)state;
	assert_duration("18446744073709551615ms", UINT64_MAX);
	assert_duration_fails("18446744073709551616ms", ERANGE);
	assert_duration_fails("99999999999999999999999", ERANGE);
	assert_duration("18446744073709551s", UINT64_C(18446744073709551000));
	assert_duration_fails("18446744073709552s", ERANGE);
	assert_duration("213503982334d", UINT64_C(213503982334) * 86400000);
	assert_duration_fails("213503982335d", ERANGE);
	/* A malformed number stays EINVAL however large it is. */
	assert_duration_fails("99999999999999999999999x", EINVAL);
}

static void
size_units_convert_to_bytes(void **state)
{
	(void)state;
	assert_size("512B", 512);
	assert_size("64KiB", 65536);
	assert_size("16MiB", UINT64_C(16) << 20);
	assert_size("1GiB", UINT64_C(1) << 30);
	assert_size("2TiB", UINT64_C(2) << 40);
	assert_size("0KiB", 0);
}

static void
size_bare_number_is_bytes(void **state)
{
	(void)state;
	assert_size("512", 512);
	assert_size("0", 0);
}

static void
size_malformed_forms_are_einval(void **state)
{
	static const char *const bad[] = {
		"", "B", "KiB", "64K", "64k", "64KB", "64kib", "64kiB", "64 KiB",
		"-1", "+1", "1.5MiB", " 1", "1 ", "1B ", "1iB", "1PiB", "1Ki",
		"1MB", "0x10", "1e3", "1KiBB",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_size_fails(bad[i], EINVAL);
	assert_size_fails(NULL, EINVAL);
}

static void
size_overflow_is_erange(void **state)
{
	(void)state;
	assert_size("18446744073709551615", UINT64_MAX);
	assert_size_fails("18446744073709551616", ERANGE);
	assert_size("16777215TiB", UINT64_C(16777215) << 40);
	assert_size_fails("16777216TiB", ERANGE);
	assert_size_fails("17179869184GiB", ERANGE);
}

static void
format_duration_uses_largest_exact_unit(void **state)
{
	char buf[UNITS_FORMAT_MAX];

	(void)state;
	assert_string_equal(units_format_duration(0, buf, sizeof buf), "0");
	assert_string_equal(units_format_duration(500, buf, sizeof buf),
	    "500ms");
	assert_string_equal(units_format_duration(1500, buf, sizeof buf),
	    "1500ms");
	assert_string_equal(units_format_duration(90000, buf, sizeof buf),
	    "90s");
	assert_string_equal(units_format_duration(300000, buf, sizeof buf),
	    "5m");
	assert_string_equal(units_format_duration(7200000, buf, sizeof buf),
	    "2h");
	assert_string_equal(units_format_duration(604800000, buf, sizeof buf),
	    "7d");
	assert_string_equal(units_format_duration(UINT64_MAX, buf, sizeof buf),
	    "18446744073709551615ms");
}

static void
format_size_uses_largest_exact_unit(void **state)
{
	char buf[UNITS_FORMAT_MAX];

	(void)state;
	assert_string_equal(units_format_size(0, buf, sizeof buf), "0");
	assert_string_equal(units_format_size(512, buf, sizeof buf), "512B");
	assert_string_equal(units_format_size(1024, buf, sizeof buf), "1KiB");
	assert_string_equal(units_format_size(1536 * 1024, buf, sizeof buf),
	    "1536KiB");
	assert_string_equal(units_format_size(UINT64_C(16) << 20, buf,
	    sizeof buf), "16MiB");
	assert_string_equal(units_format_size(UINT64_C(1) << 30, buf,
	    sizeof buf), "1GiB");
	assert_string_equal(units_format_size(UINT64_C(1) << 40, buf,
	    sizeof buf), "1TiB");
	assert_string_equal(units_format_size(UINT64_MAX, buf, sizeof buf),
	    "18446744073709551615B");
}

static void
formatted_values_parse_back_to_the_same(void **state)
{
	static const uint64_t values[] = {
		0, 1, 999, 1000, 1001, 60000, 3600000, 86400000, 90061001,
		UINT64_C(1) << 40, UINT64_MAX,
	};
	char buf[UNITS_FORMAT_MAX];
	uint64_t back;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof values / sizeof values[0]; i++) {
		units_format_duration(values[i], buf, sizeof buf);
		assert_int_equal(units_parse_duration(buf, &back), 0);
		assert_int_equal(back, values[i]);
		units_format_size(values[i], buf, sizeof buf);
		assert_int_equal(units_parse_size(buf, &back), 0);
		assert_int_equal(back, values[i]);
	}
}

static void
format_truncates_to_the_buffer(void **state)
{
	char buf[4] = "xxx";

	(void)state;
	assert_string_equal(units_format_duration(500, buf, sizeof buf), "500");
	assert_string_equal(units_format_duration(7200000, buf, 2), "2");
	/* A zero-sized buffer is left alone. */
	assert_ptr_equal(units_format_size(512, buf, 0), buf);
	assert_string_equal(buf, "2");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(duration_units_convert_to_milliseconds),
		cmocka_unit_test(duration_bare_number_is_seconds),
		cmocka_unit_test(duration_malformed_forms_are_einval),
		cmocka_unit_test(duration_overflow_is_erange),
		cmocka_unit_test(size_units_convert_to_bytes),
		cmocka_unit_test(size_bare_number_is_bytes),
		cmocka_unit_test(size_malformed_forms_are_einval),
		cmocka_unit_test(size_overflow_is_erange),
		cmocka_unit_test(format_duration_uses_largest_exact_unit),
		cmocka_unit_test(format_size_uses_largest_exact_unit),
		cmocka_unit_test(formatted_values_parse_back_to_the_same),
		cmocka_unit_test(format_truncates_to_the_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
