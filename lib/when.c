/* when.c - the start times the CLI takes, read in the caller's time zone and
 * sent with its offset, so the daemon needs no idea of where the user is. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "timefmt.h"
#include "units.h"
#include "when.h"

/* A delay past this (about 1000 years) cannot be written as a date. */
#define WHEN_DELAY_MAX (UINT64_C(1000) * 366 * 86400000)

int
when_format(int64_t ms, char *out, size_t len)
{
	time_t secs = (time_t)(ms / 1000);
	int frac = (int)(ms % 1000), n;
	char frac_text[8] = "";
	long off;
	struct tm tm;

	if (frac < 0) {
		frac += 1000;
		secs--;
	}
	if (localtime_r(&secs, &tm) == NULL || tm.tm_year + 1900 > 9999 ||
	    tm.tm_year + 1900 < 0) {
		errno = ERANGE;
		return -1;
	}
	if (frac != 0)
		snprintf(frac_text, sizeof frac_text, ".%03d", frac);
	off = tm.tm_gmtoff / 60;
	n = snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02d%s%c%02ld:%02ld",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, frac_text, off < 0 ? '-' : '+',
	    (off < 0 ? -off : off) / 60, (off < 0 ? -off : off) % 60);
	if (n < 0 || (size_t)n >= len) {
		if (len > 0)
			out[0] = '\0';
		errno = ERANGE;
		return -1;
	}
	return 0;
}

/* Reads "HH:MM" or "H:MM"; -1 when s is not that. */
static int
when_clock(const char *s, int *hour, int *min)
{
	size_t digits = strspn(s, "0123456789");

	if ((digits != 1 && digits != 2) || s[digits] != ':' ||
	    strspn(s + digits + 1, "0123456789") != 2 ||
	    s[digits + 3] != '\0')
		return -1;
	*hour = digits == 1 ? s[0] - '0' : (s[0] - '0') * 10 + s[1] - '0';
	*min = (s[digits + 1] - '0') * 10 + s[digits + 2] - '0';
	return *hour <= 23 && *min <= 59 ? 0 : -1;
}

/* The local time hour:min on the day of now, or the next day's when that
 * is not later than now; -1 when the time zone cannot say. */
static int
when_today(int hour, int min, int64_t now_ms, int64_t *ms)
{
	time_t now = (time_t)(now_ms / 1000), t;
	struct tm tm;
	int day;

	if (localtime_r(&now, &tm) == NULL)
		return -1;
	for (day = 0; day < 2; day++) {
		tm.tm_hour = hour;
		tm.tm_min = min;
		tm.tm_sec = 0;
		tm.tm_mday += day;
		/* mktime decides daylight saving time for that day itself. */
		tm.tm_isdst = -1;
		if ((t = mktime(&tm)) == (time_t)-1)
			return -1;
		*ms = (int64_t)t * 1000;
		if (*ms > now_ms)
			return 0;
	}
	return 0;
}

int
when_at(const char *s, int64_t now_ms, char *out, size_t len)
{
	int hour, min;
	int64_t ms;

	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (when_clock(s, &hour, &min) == 0) {
		if (when_today(hour, min, now_ms, &ms) == -1) {
			errno = EINVAL;
			return -1;
		}
	} else if (timefmt_parse(s, &ms) == -1)
		return -1;
	return when_format(ms, out, len);
}

int
when_delay(const char *s, int64_t now_ms, char *out, size_t len)
{
	uint64_t ms;

	if (units_parse_duration(s, &ms) == -1)
		return -1;
	if (ms > WHEN_DELAY_MAX) {
		errno = ERANGE;
		return -1;
	}
	return when_format(now_ms + (int64_t)ms, out, len);
}
