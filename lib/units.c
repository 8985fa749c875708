/* units.c - durations and sizes as triage.conf writes them: strict parsing
 * (a typo must be an error, never a silently different value) and printing. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

struct units_unit {
	const char *suffix;
	uint64_t factor;
};

/* Largest first: the formatters pick the first unit that divides exactly. */
static const struct units_unit units_durations[] = {
	{ "d", 86400000 },
	{ "h", 3600000 },
	{ "m", 60000 },
	{ "s", 1000 },
	{ "ms", 1 },
	{ "", 1000 },		/* a bare number is seconds */
	{ NULL, 0 },
};

static const struct units_unit units_sizes[] = {
	{ "TiB", UINT64_C(1) << 40 },
	{ "GiB", UINT64_C(1) << 30 },
	{ "MiB", UINT64_C(1) << 20 },
	{ "KiB", UINT64_C(1) << 10 },
	{ "B", 1 },
	{ "", 1 },		/* a bare number is bytes */
	{ NULL, 0 },
};

/*
 * Reads digits then an exact suffix from units. Syntax is checked before
 * range so that "99999999999999999999x" is EINVAL, not ERANGE.
 */
static int
units_parse(const char *s, const struct units_unit *units, uint64_t *out)
{
	const struct units_unit *u;
	const char *p;
	uint64_t n = 0;

	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	for (p = s; *p >= '0' && *p <= '9'; p++)
		continue;
	if (p == s) {
		errno = EINVAL;
		return -1;
	}
	for (u = units; u->suffix != NULL; u++) {
		if (strcmp(p, u->suffix) == 0)
			break;
	}
	if (u->suffix == NULL) {
		errno = EINVAL;
		return -1;
	}
	for (; s < p; s++) {
		unsigned digit = (unsigned)(*s - '0');

		if (n > (UINT64_MAX - digit) / 10) {
			errno = ERANGE;
			return -1;
		}
		n = n * 10 + digit;
	}
	if (n > UINT64_MAX / u->factor) {
		errno = ERANGE;
		return -1;
	}
	*out = n * u->factor;
	return 0;
}

static char *
units_format(uint64_t n, const struct units_unit *units, char *buf,
    size_t len)
{
	const struct units_unit *u;

	if (len == 0)
		return buf;
	if (n == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	for (u = units; u->suffix[0] != '\0'; u++) {
		if (n % u->factor == 0)
			break;
	}
	snprintf(buf, len, "%" PRIu64 "%s", n / u->factor, u->suffix);
	return buf;
}

int
units_parse_duration(const char *s, uint64_t *ms)
{
	return units_parse(s, units_durations, ms);
}

int
units_parse_size(const char *s, uint64_t *bytes)
{
	return units_parse(s, units_sizes, bytes);
}

char *
units_format_duration(uint64_t ms, char *buf, size_t len)
{
	return units_format(ms, units_durations, buf, len);
}

char *
units_format_size(uint64_t bytes, char *buf, size_t len)
{
	return units_format(bytes, units_sizes, buf, len);
}
