/* test-hist.c - hist_*: which bucket a value falls in at and around every
 * bound, counts and sums, and quantiles as Prometheus interpolates them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "hist.h"

/* Bounds 1, 2, 4, 8: figures a reader can check by hand. */
static const struct hist_layout small = { 1, 4 };

static void
assert_close(double got, double want)
{
	if (fabs(got - want) > 1e-9 * (fabs(want) + 1))
		fail_msg("got %.12g, want %.12g", got, want);
}

static void
check_every_bound(const struct hist_layout *l)
{
	unsigned i;
	double b;

	for (i = 0; i < l->nbounds; i++) {
		b = hist_bound(l, i);
		assert_close(b, l->first * pow(2, i));
		/* le: the bound itself is in its bucket, just above is not. */
		assert_int_equal(hist_bucket(l, b), i);
		assert_int_equal(hist_bucket(l, nextafter(b, INFINITY)), i + 1);
		assert_int_equal(hist_bucket(l, nextafter(b, 0)),
		    i == 0 ? 0 : i);
		if (i > 0)
			assert_int_equal(hist_bucket(l, b * 0.75), i);
	}
}

static void
bounds_are_inclusive_at_every_bucket(void **state)
{
	(void)state;
	check_every_bound(&small);
	check_every_bound(&hist_job_seconds);
	check_every_bound(&hist_commit_seconds);
	check_every_bound(&hist_memory_bytes);
}

static void
layouts_cover_their_ranges(void **state)
{
	const struct hist_layout *job = &hist_job_seconds,
	    *commit = &hist_commit_seconds;

	(void)state;
	/* A millisecond's wait to a day's run; 50 us to 10 s commits. */
	assert_true(job->first <= 0.001);
	assert_true(hist_bound(job, job->nbounds - 1) >= 86400);
	assert_true(commit->first <= 0.00005);
	assert_true(hist_bound(commit, commit->nbounds - 1) >= 10);
	assert_true(job->nbounds <= HIST_BOUNDS_MAX);
	assert_true(commit->nbounds <= HIST_BOUNDS_MAX);
	/* A job's peak memory: 1 MiB to 64 GiB, each bound a size. */
	assert_true(hist_memory_bytes.first == 1048576);
	assert_true(hist_bound(&hist_memory_bytes,
	    hist_memory_bytes.nbounds - 1) == 68719476736.0);
	assert_true(hist_memory_bytes.nbounds <= HIST_BOUNDS_MAX);
	assert_int_equal(hist_bucket(&hist_memory_bytes, 3 << 20), 2);
}

static void
odd_values_land_at_the_ends(void **state)
{
	(void)state;
	assert_int_equal(hist_bucket(&small, 0), 0);
	assert_int_equal(hist_bucket(&small, -3), 0);
	assert_int_equal(hist_bucket(&small, NAN), 0);
	assert_int_equal(hist_bucket(&small, 1e-300), 0);
	assert_int_equal(hist_bucket(&small, 8.5), 4);
	assert_int_equal(hist_bucket(&small, 1e300), 4);
	assert_int_equal(hist_bucket(&small, INFINITY), 4);
	assert_int_equal(hist_bucket(&hist_job_seconds, 3600),
	    hist_bucket(&hist_job_seconds, 3000));
}

static void
observe_counts_and_sums(void **state)
{
	struct hist h, other;

	(void)state;
	hist_clear(&h);
	hist_observe(&h, &small, 0.5);
	hist_observe(&h, &small, 3);
	hist_observe(&h, &small, 3.5);
	hist_observe(&h, &small, 100);
	assert_int_equal(h.count, 4);
	assert_close(h.sum, 107);
	assert_int_equal(h.counts[0], 1);
	assert_int_equal(h.counts[1], 0);
	assert_int_equal(h.counts[2], 2);
	assert_int_equal(h.counts[3], 0);
	assert_int_equal(h.counts[4], 1);

	hist_clear(&other);
	hist_observe(&other, &small, 1.5);
	hist_add(&other, &h);
	assert_int_equal(other.count, 5);
	assert_int_equal(other.counts[1], 1);
	assert_int_equal(other.counts[2], 2);
	assert_close(other.sum, 108.5);
}

static void
quantile_interpolates_within_the_bucket(void **state)
{
	struct hist h;
	int i;

	(void)state;
	hist_clear(&h);
	assert_close(hist_quantile(&h, &small, 0.5), -1);
	/* Ten in (2, 4]: the median is half way through it. */
	for (i = 0; i < 10; i++)
		hist_observe(&h, &small, 3.9);
	assert_close(hist_quantile(&h, &small, 0.5), 3);
	assert_close(hist_quantile(&h, &small, 0.9), 3.8);
	assert_close(hist_quantile(&h, &small, 1), 4);
	/* Nothing at 0: the quantile 0 is where the first values start. */
	assert_close(hist_quantile(&h, &small, 0), 2);

	/* Four in (0, 1], four in (1, 2]: the first bucket starts at 0. */
	hist_clear(&h);
	for (i = 0; i < 4; i++) {
		hist_observe(&h, &small, 0.2);
		hist_observe(&h, &small, 1.2);
	}
	assert_close(hist_quantile(&h, &small, 0.25), 0.5);
	assert_close(hist_quantile(&h, &small, 0.5), 1);
	assert_close(hist_quantile(&h, &small, 0.75), 1.5);
}

static void
quantile_in_inf_is_the_largest_bound(void **state)
{
	struct hist h;

	(void)state;
	hist_clear(&h);
	hist_observe(&h, &small, 0.5);
	hist_observe(&h, &small, 50);
	hist_observe(&h, &small, 500);
	assert_close(hist_quantile(&h, &small, 0.95), 8);
	assert_close(hist_quantile(&h, &small, 0.2), 0.6);
	/* Out of range asks the ends. */
	assert_close(hist_quantile(&h, &small, 7), 8);
	assert_close(hist_quantile(&h, &small, -1), 0);
}

/* Whatever the values, the estimate is in the bucket of the true
 * quantile: the interpolation never leaves it. */
static void
quantile_stays_in_the_true_quantiles_bucket(void **state)
{
	const struct hist_layout *l = &hist_job_seconds;
	static double v[1000];
	double q[] = { 0.5, 0.9, 0.95, 0.99 }, truth, est, lo, hi;
	struct hist h;
	unsigned i, k, b;

	(void)state;
	srand(12);
	hist_clear(&h);
	for (i = 0; i < 1000; i++) {
		/* 1 ms to about 3 hours, spread over the exponents. */
		v[i] = 0.001 * pow(2, 23.0 * rand() / RAND_MAX);
		hist_observe(&h, l, v[i]);
	}
	/* Sorted, for the true quantiles. */
	for (i = 1; i < 1000; i++)
		for (k = i; k > 0 && v[k - 1] > v[k]; k--) {
			double t = v[k];

			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	for (i = 0; i < sizeof q / sizeof q[0]; i++) {
		truth = v[(unsigned)ceil(q[i] * 1000) - 1];
		est = hist_quantile(&h, l, q[i]);
		b = hist_bucket(l, truth);
		lo = b == 0 ? 0 : hist_bound(l, b - 1);
		hi = hist_bound(l, b);
		if (est < lo || est > hi)
			fail_msg("q %.2f: %.6g is outside (%.6g, %.6g], where "
			    "the true %.6g is", q[i], est, lo, hi, truth);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bounds_are_inclusive_at_every_bucket),
		cmocka_unit_test(layouts_cover_their_ranges),
		cmocka_unit_test(odd_values_land_at_the_ends),
		cmocka_unit_test(observe_counts_and_sums),
		cmocka_unit_test(quantile_interpolates_within_the_bucket),
		cmocka_unit_test(quantile_in_inf_is_the_largest_bound),
		cmocka_unit_test(quantile_stays_in_the_true_quantiles_bucket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
