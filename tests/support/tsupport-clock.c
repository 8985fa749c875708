/* tsupport-clock.c - for tests and benchmarks: the monotonic clock, the one
 * every process of a run shares, in the units their waits and figures use. */
#include <errno.h>
#include <limits.h>
#include <time.h>

#include "tsupport-clock.h"

int64_t
tsupport_clock_ns(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC cannot fail with a valid clock id and pointer. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
tsupport_clock_ms(void)
{
	return tsupport_clock_ns() / 1000000;
}

double
tsupport_clock_ms_f(void)
{
	return (double)tsupport_clock_ns() / 1e6;
}

double
tsupport_clock_s(void)
{
	return (double)tsupport_clock_ns() / 1e9;
}

int
tsupport_clock_left_ms(int64_t deadline)
{
	int64_t left = deadline - tsupport_clock_ms();

	return left > 0 ? (int)(left < INT_MAX ? left : INT_MAX) : 0;
}

void
tsupport_clock_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		continue;
}
