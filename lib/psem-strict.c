/* psem-strict.c - the strict policy: the most urgent backlogged priority is
 * always served first; nothing of a lower one goes while a higher one waits. */
#include "psem-policy.h"

static unsigned
psem_strict_pick(const struct psem_sched *s, uint64_t mask)
{
	(void)s;
	return (unsigned)__builtin_ctzll(mask);
}

static void
psem_strict_charge(struct psem_sched *s, unsigned i)
{
	(void)s;
	(void)i;
}

static uint64_t
psem_strict_position(const struct psem_sched *s, uint64_t mask, unsigned i,
    uint64_t index)
{
	uint64_t before = index;
	unsigned j;

	for (j = 0; j < i; j++)
		if (mask & (UINT64_C(1) << j))
			before += s->classes[j].queued;
	return before;
}

const struct psem_policy psem_strict_policy = {
	.name = "strict",
	.pick = psem_strict_pick,
	.charge = psem_strict_charge,
	.wake = psem_strict_charge,
	.position = psem_strict_position,
};
