/* timefmt.c - job times: strict RFC 3339 reading (the daemon writes them;
 * anything else is a bug to show, not to guess at) and compact spans. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "timefmt.h"

int64_t
timefmt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t
timefmt_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t
timefmt_mono_ms(void)
{
	return timefmt_mono_us() / 1000;
}

struct timeval
timefmt_tv(uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000),
	    (suseconds_t)(ms % 1000) * 1000 };

	return tv;
}

char *
timefmt_rfc3339(int64_t ms, char buf[TIMEFMT_RFC3339_LEN])
{
	/* The second last written, as "YYYY-MM-DDTHH:MM:SS.": the jobs of a
	 * busy second share it, and gmtime_r is the costly part. Per thread,
	 * for a client's threads. */
	static _Thread_local time_t last = -1;
	static _Thread_local char prefix[21];
	time_t secs = (time_t)(ms / 1000);
	int frac = (int)(ms % 1000);
	struct tm tm;

	if (frac < 0) {
		frac += 1000;
		secs--;
	}
	if (secs != last) {
		/* One snprintf, not strftime's locale machinery: it is on
		 * the path of every job object. */
		if (gmtime_r(&secs, &tm) == NULL ||
		    tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0) {
			buf[0] = '\0';
			return buf;
		}
		snprintf(prefix, sizeof prefix,
		    "%04u-%02u-%02uT%02u:%02u:%02u.",
		    (unsigned)(tm.tm_year + 1900) % 10000u,
		    (unsigned)(tm.tm_mon + 1) % 100u,
		    (unsigned)tm.tm_mday % 100u, (unsigned)tm.tm_hour % 100u,
		    (unsigned)tm.tm_min % 100u, (unsigned)tm.tm_sec % 100u);
		last = secs;
	}
	memcpy(buf, prefix, 20);
	buf[20] = (char)('0' + frac / 100);
	buf[21] = (char)('0' + frac / 10 % 10);
	buf[22] = (char)('0' + frac % 10);
	buf[23] = 'Z';
	buf[24] = '\0';
	return buf;
}

/* Reads exactly n digits at *p and moves past them; -1 if they are not. */
static int
timefmt_digits(const char **p, int n)
{
	int v = 0;

	while (n-- > 0) {
		if (**p < '0' || **p > '9')
			return -1;
		v = v * 10 + (*(*p)++ - '0');
	}
	return v;
}

/* Reads the literal ch at *p and moves past it; -1 if it is not there. */
static int
timefmt_expect(const char **p, char ch)
{
	if (**p != ch)
		return -1;
	(*p)++;
	return 0;
}

int
timefmt_parse(const char *s, int64_t *ms)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	const char *p = s;
	struct tm tm;
	int year, mon, day, hour, min, sec, frac = 0, scale = 100, off = 0;
	int offh, offm;
	time_t t;

	if (s == NULL)
		goto bad;
	year = timefmt_digits(&p, 4);
	if (year == -1 || timefmt_expect(&p, '-') == -1 ||
	    (mon = timefmt_digits(&p, 2)) == -1 ||
	    timefmt_expect(&p, '-') == -1 ||
	    (day = timefmt_digits(&p, 2)) == -1)
		goto bad;
	if (*p != 'T' && *p != 't' && *p != ' ')
		goto bad;
	p++;
	if ((hour = timefmt_digits(&p, 2)) == -1 ||
	    timefmt_expect(&p, ':') == -1 ||
	    (min = timefmt_digits(&p, 2)) == -1 ||
	    timefmt_expect(&p, ':') == -1 ||
	    (sec = timefmt_digits(&p, 2)) == -1)
		goto bad;
	if (mon < 1 || mon > 12 || day < 1 || day > mdays[mon - 1] ||
	    hour > 23 || min > 59 || sec > 60)
		goto bad;
	/* February 29 only in a leap year. */
	if (mon == 2 && day == 29 &&
	    !(year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)))
		goto bad;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			goto bad;
		for (; *p >= '0' && *p <= '9'; p++) {
			frac += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1;

		if ((offh = timefmt_digits(&p, 2)) == -1 ||
		    timefmt_expect(&p, ':') == -1 ||
		    (offm = timefmt_digits(&p, 2)) == -1 ||
		    offh > 23 || offm > 59)
			goto bad;
		off = sign * (offh * 3600 + offm * 60);
	} else
		goto bad;
	if (*p != '\0')
		goto bad;

	memset(&tm, 0, sizeof tm);
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	if ((t = timegm(&tm)) == (time_t)-1 && year != 1969)
		goto bad;
	*ms = ((int64_t)t - off) * 1000 + frac;
	return 0;

bad:
	errno = EINVAL;
	return -1;
}

char *
timefmt_elapsed(int64_t ms, char *buf, size_t len)
{
	int64_t s;

	if (ms < 0)
		ms = 0;
	s = ms / 1000;
	if (s < 60)
		snprintf(buf, len, "%" PRId64 ".%" PRId64 "s", s,
		    ms % 1000 / 100);
	else if (s < 3600)
		snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s", s / 60,
		    s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m", s / 3600,
		    s % 3600 / 60);
	else
		snprintf(buf, len, "%" PRId64 "d%02" PRId64 "h", s / 86400,
		    s % 86400 / 3600);
	return buf;
}

char *
timefmt_local(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	struct tm tm;

	if (len == 0)
		return buf;
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, len, "%" PRId64, ms);
	return buf;
}

/* The time in the job's field key, or -1 when it is null or unreadable. */
static int64_t
timefmt_field(const json_t *job, const char *key)
{
	int64_t ms;

	if (timefmt_parse(json_string_value(json_object_get(job, key)),
	    &ms) == -1)
		return -1;
	return ms;
}

int64_t
timefmt_waited(const json_t *job, int64_t now)
{
	int64_t from, to;

	if ((from = timefmt_field(job, "submitted_at")) == -1)
		return -1;
	if ((to = timefmt_field(job, "started_at")) == -1 &&
	    (to = timefmt_field(job, "finished_at")) == -1)
		to = now;
	return to > from ? to - from : 0;
}

int64_t
timefmt_ran(const json_t *job, int64_t now)
{
	int64_t from, to;

	if ((from = timefmt_field(job, "started_at")) == -1)
		return -1;
	if ((to = timefmt_field(job, "finished_at")) == -1)
		to = now;
	return to > from ? to - from : 0;
}
