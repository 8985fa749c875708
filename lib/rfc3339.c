/* rfc3339.c - timestamps as the protocol writes them: RFC 3339 UTC with
 * milliseconds; parsing also takes other offsets and precisions. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rfc3339.h"

int64_t
rfc3339_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *
rfc3339_format(int64_t ms, char buf[RFC3339_LEN])
{
	time_t secs = (time_t)(ms / 1000);
	int frac = (int)(ms % 1000);
	struct tm tm;

	if (frac < 0) {
		frac += 1000;
		secs--;
	}
	gmtime_r(&secs, &tm);
	if (strftime(buf, RFC3339_LEN, "%Y-%m-%dT%H:%M:%S", &tm) != 19) {
		buf[0] = '\0';	/* a year past 9999 */
		return buf;
	}
	snprintf(buf + 19, RFC3339_LEN - 19, ".%03dZ", frac % 1000);
	return buf;
}

int
rfc3339_parse(const char *s, int64_t *ms)
{
	struct tm tm;
	const char *p;
	int64_t frac = 0, scale = 1000, offset = 0;
	int oh, om, n;
	time_t secs;

	memset(&tm, 0, sizeof tm);
	if ((p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		goto bad;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			goto bad;
		for (; isdigit((unsigned char)*p); p++)
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
	}
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0')
		offset = 0;
	else if ((*p == '+' || *p == '-') &&
	    sscanf(p + 1, "%2d:%2d%n", &oh, &om, &n) == 2 && p[1 + n] == '\0' &&
	    oh < 24 && om < 60)
		offset = (*p == '-' ? -1 : 1) * (oh * 3600 + om * 60);
	else
		goto bad;
	if ((secs = timegm(&tm)) == (time_t)-1)
		goto bad;
	*ms = ((int64_t)secs - offset) * 1000 + frac;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}
