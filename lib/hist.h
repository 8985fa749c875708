/* hist.h - a histogram of durations or sizes over fixed, doubling bucket
 * bounds: what Prometheus exposes of one, and a quantile estimated from its
 * buckets. */
#ifndef TRIAGE_HIST_H
#define TRIAGE_HIST_H

#include <stdint.h>

/* Bounds (not counting +Inf) a layout may have. */
#define HIST_BOUNDS_MAX 32

/*
 * Bucket i (0 <= i < nbounds) holds the values v with bound(i - 1) < v <=
 * bound(i), where bound(i) = first * 2^i; bucket nbounds holds the rest
 * (+Inf). Doubling bounds let observe find a bucket from the value's
 * binary exponent, whatever the value.
 */
struct hist_layout {
	double first;		/* the smallest bound, > 0 */
	unsigned nbounds;	/* 1 to HIST_BOUNDS_MAX */
};

/* Job waits and run times: 1 ms to 2^27 ms (37 hours). */
extern const struct hist_layout hist_job_seconds;
/* Store commits: 50 us to 2^18 * 50 us (13 seconds). */
extern const struct hist_layout hist_commit_seconds;
/* A job's peak memory, in bytes: 1 MiB to 2^16 MiB (64 GiB). */
extern const struct hist_layout hist_memory_bytes;

/* Counts per bucket (not cumulative), their total and the values' sum.
 * Zeroed (hist_clear, or calloc) it is empty. */
struct hist {
	uint64_t counts[HIST_BOUNDS_MAX + 1];
	uint64_t count;
	double sum;
};

/* The upper bound of bucket i of layout (i < nbounds). */
double hist_bound(const struct hist_layout *layout, unsigned i);
/* The bucket v falls in: 0 to nbounds (NaN and negatives: bucket 0). */
unsigned hist_bucket(const struct hist_layout *layout, double v);
/* Counts v (seconds, say) into h. */
void hist_observe(struct hist *h, const struct hist_layout *layout, double v);
void hist_clear(struct hist *h);
/* Adds every count of from into to. */
void hist_add(struct hist *to, const struct hist *from);

/*
 * The q-quantile (0 <= q <= 1) as Prometheus's histogram_quantile
 * estimates it from the buckets: linear within the bucket that holds the
 * rank, from 0 for the first bucket; the largest bound when the rank falls
 * in +Inf. Returns -1 when h is empty.
 */
double hist_quantile(const struct hist *h, const struct hist_layout *layout,
    double q);

#endif
