/* bench-stat.h - for the benchmarks: the medians and percentiles of a run's
 * samples, the figures every comparison reports. */
#ifndef TRIAGE_BENCH_STAT_H
#define TRIAGE_BENCH_STAT_H

#include <stddef.h>

/* The median of v[0..n), which is left as it was (the mean of the middle
 * two when n is even); 0 when n is 0. At most 64 values are looked at. */
double bench_stat_median(const double *v, size_t n);
/*
 * The q-quantile (0 to 1, 0.5 the median) of v[0..n), nearest rank, which
 * sorts v in place. 0 when n is 0.
 */
double bench_stat_quantile(double *v, size_t n, double q);

#endif
