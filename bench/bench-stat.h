/* bench-stat.h - for the benchmarks: a monotonic clock in seconds, and the
 * median of a sample, the figure every comparison reports. */
#ifndef TRIAGE_BENCH_STAT_H
#define TRIAGE_BENCH_STAT_H

#include <stddef.h>

/* CLOCK_MONOTONIC, in seconds. */
double bench_stat_now(void);

/* The median of v[0..n), which is left as it was (the mean of the middle
 * two when n is even); 0 when n is 0. At most 64 values are looked at. */
double bench_stat_median(const double *v, size_t n);

#endif
