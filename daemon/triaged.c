/* triaged.c - what belongs to the daemon as a whole rather than to one of
 * its parts: the monotonic clock that uptime and timeouts are measured on. */
#include <time.h>

#include "triaged.h"

uint64_t
triaged_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
