/* hist.c - a histogram of durations or sizes over fixed, doubling bucket
 * bounds: what Prometheus exposes of one, and a quantile estimated from its
 * buckets. */
#include <math.h>
#include <string.h>

#include "hist.h"

const struct hist_layout hist_job_seconds = { 0.001, 28 };
const struct hist_layout hist_commit_seconds = { 0.00005, 19 };
const struct hist_layout hist_memory_bytes = { 1048576, 17 };

double
hist_bound(const struct hist_layout *layout, unsigned i)
{
	/* Exact: a power of two only moves the exponent. */
	return ldexp(layout->first, (int)i);
}

unsigned
hist_bucket(const struct hist_layout *layout, double v)
{
	double x;
	int e;
	unsigned i;

	if (!(v > layout->first))	/* NaN too */
		return 0;
	x = v / layout->first;
	if (!isfinite(x) || x >= ldexp(1, (int)layout->nbounds))
		return layout->nbounds;
	/* x = m * 2^e, 0.5 <= m < 1: x <= 2^e, and x <= 2^(e-1) only when
	 * m is 0.5 exactly. */
	(void)frexp(x, &e);
	i = e < 0 ? 0 : (unsigned)e;
	/* The division may have rounded x across a power of two: the bounds
	 * themselves decide. */
	if (i > 0 && v <= hist_bound(layout, i - 1))
		i--;
	else if (i < layout->nbounds && v > hist_bound(layout, i))
		i++;
	return i;
}

void
hist_observe(struct hist *h, const struct hist_layout *layout, double v)
{
	h->counts[hist_bucket(layout, v)]++;
	h->count++;
	if (v > 0)
		h->sum += v;
}

void
hist_clear(struct hist *h)
{
	memset(h, 0, sizeof *h);
}

void
hist_add(struct hist *to, const struct hist *from)
{
	unsigned i;

	for (i = 0; i <= HIST_BOUNDS_MAX; i++)
		to->counts[i] += from->counts[i];
	to->count += from->count;
	to->sum += from->sum;
}

double
hist_quantile(const struct hist *h, const struct hist_layout *layout,
    double q)
{
	double rank, below = 0, start;
	unsigned b;

	if (h->count == 0)
		return -1;
	q = q < 0 ? 0 : q > 1 ? 1 : q;
	rank = q * (double)h->count;
	/* The first bucket whose cumulative count reaches the rank; a rank
	 * of 0 takes the first bucket that holds anything. */
	for (b = 0; b < layout->nbounds; b++) {
		if (h->counts[b] > 0 && below + (double)h->counts[b] >= rank)
			break;
		below += (double)h->counts[b];
	}
	if (b == layout->nbounds)
		return hist_bound(layout, layout->nbounds - 1);
	start = b == 0 ? 0 : hist_bound(layout, b - 1);
	return start + (hist_bound(layout, b) - start) *
	    ((rank - below) / (double)h->counts[b]);
}
