/* psem-weighted.c - the weighted policy: stride scheduling over the backlogged
 * priorities, so each gets grants in proportion to its weight and none starves. */
#include "psem-policy.h"

/*
 * Each grant advances a class's pass by PSEM_STRIDE / weight; the backlogged
 * class with the smallest pass goes next, ties to the more urgent. With weights
 * up to 10,000 the rounding costs under 0.01%, and a weight-1 class needs 2^40
 * grants before its pass could overflow.
 */
#define PSEM_STRIDE (UINT64_C(1) << 24)

static uint64_t
psem_weighted_stride(const struct psem_class *c)
{
	return PSEM_STRIDE / (c->weight ? c->weight : 1);
}

static unsigned
psem_weighted_pick(const struct psem_sched *s, uint64_t mask)
{
	unsigned best = (unsigned)__builtin_ctzll(mask);
	unsigned i;

	for (mask &= mask - 1; mask != 0; mask &= mask - 1) {
		i = (unsigned)__builtin_ctzll(mask);
		if (s->classes[i].pass < s->classes[best].pass)
			best = i;
	}
	return best;
}

static void
psem_weighted_charge(struct psem_sched *s, unsigned i)
{
	struct psem_class *c = &s->classes[i];

	s->clock = c->pass;
	c->pass += psem_weighted_stride(c);
}

/* A class that was idle joins at the current virtual time: it gets its share
 * from now on, not a burst for the time it had nothing to run. */
static void
psem_weighted_wake(struct psem_sched *s, unsigned i)
{
	if (s->classes[i].pass < s->clock)
		s->classes[i].pass = s->clock;
}

/*
 * The waiter at index of class i is granted when that class's pass reaches
 * T = pass + index * stride. Before it, class j gets every grant whose pass
 * is below T (or equal, when j is more urgent and so wins the tie), as far as
 * it has waiters.
 */
static uint64_t
psem_weighted_position(const struct psem_sched *s, uint64_t mask, unsigned i,
    uint64_t index)
{
	const struct psem_class *c = &s->classes[i];
	uint64_t target = c->pass + index * psem_weighted_stride(c);
	uint64_t before = index, limit, n;
	unsigned j;

	for (; mask != 0; mask &= mask - 1) {
		j = (unsigned)__builtin_ctzll(mask);
		if (j == i)
			continue;
		c = &s->classes[j];
		limit = j < i ? target : target - 1;
		if (target == 0 && j > i)
			continue;
		if (c->pass > limit)
			continue;
		n = (limit - c->pass) / psem_weighted_stride(c) + 1;
		before += n < c->queued ? n : c->queued;
	}
	return before;
}

const struct psem_policy psem_weighted_policy = {
	.name = "weighted",
	.pick = psem_weighted_pick,
	.charge = psem_weighted_charge,
	.wake = psem_weighted_wake,
	.position = psem_weighted_position,
};
