/* bench-stat.c - for the benchmarks: the medians and percentiles of a run's
 * samples, the figures every comparison reports. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench-stat.h"

#define BENCH_STAT_MAX	64

static int
bench_stat_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
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

double
bench_stat_quantile(double *v, size_t n, double q)
{
	size_t rank;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, bench_stat_cmp);
	/* Nearest rank: the smallest sample with at least q of them at or
	 * below it, so that a p99 of 200 samples is the second largest. */
	rank = (size_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}
