/* bench-stat.c - for the benchmarks: a monotonic clock in seconds, and the
 * median of a sample, the figure every comparison reports. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-stat.h"

#define BENCH_STAT_MAX	64

double
bench_stat_now(void)
{
	struct timespec ts;

	/* Cannot fail with a valid clock id and pointer. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
bench_stat_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
bench_stat_median(const double *v, size_t n)
{
	double s[BENCH_STAT_MAX];

	if (n == 0)
		return 0;
	if (n > BENCH_STAT_MAX)
		n = BENCH_STAT_MAX;
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, bench_stat_cmp);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
