/* psem-dims.c - the semaphore's dimensions beyond its permits: counted ones
 * (memory, licences) and ones of distinct units (GPUs), and a waiter's wants. */
#include <errno.h>
#include <stdlib.h>

#include "psem-types.h"
#include "psem-private.h"

uint64_t
psem_waiter_mask(const struct psem_waiter *w)
{
	uint64_t mask = 1;
	unsigned i;

	if (w->need != NULL)
		for (i = 0; i < w->need->n; i++)
			mask |= UINT64_C(1) << w->need->want[i].dim;
	return mask;
}

uint64_t
psem_waiter_wants(const struct psem_waiter *w, unsigned d)
{
	unsigned i;

	if (d == 0)
		return w->permits;
	if (w->need == NULL || !(w->need->mask & (UINT64_C(1) << d)))
		return 0;
	for (i = 0; i < w->need->n; i++)
		if (w->need->want[i].dim == d)
			return w->need->want[i].amount;
	return 0;
}

uint64_t
psem_dim_free(const struct psem *sem, unsigned d)
{
	const struct psem_dim *dim = &sem->dims[d];
	uint64_t n = 0;
	unsigned u;

	if (dim->nunits == 0)
		return dim->used < dim->capacity &&
		    dim->elsewhere < dim->capacity - dim->used ?
		    dim->capacity - dim->used - dim->elsewhere : 0;
	for (u = 0; u < dim->nunits; u++)
		if (dim->load[u] < dim->share)
			n++;
	return n;
}

bool
psem_need_possible(const struct psem *sem, const struct psem_waiter *w)
{
	const struct psem_want *want;
	uint64_t seen = 1;
	unsigned i;

	if (w->need == NULL)
		return true;
	for (i = 0; i < w->need->n; i++) {
		want = &w->need->want[i];
		if (want->dim == 0 || want->dim >= sem->ndims ||
		    (seen & (UINT64_C(1) << want->dim)) || want->amount == 0 ||
		    want->amount > sem->dims[want->dim].capacity)
			return false;
		seen |= UINT64_C(1) << want->dim;
	}
	return true;
}

/* The unit of dim with the fewest holders that has room and is not in
 * taken, the lowest on a tie: spread, so that waiters wanting several
 * distinct units find them. */
static unsigned
psem_unit_pick(const struct psem_dim *dim, uint64_t taken)
{
	unsigned u, best = dim->nunits;

	for (u = 0; u < dim->nunits; u++) {
		if ((taken & (UINT64_C(1) << u)) || dim->load[u] >= dim->share)
			continue;
		if (best == dim->nunits || dim->load[u] < dim->load[best])
			best = u;
	}
	return best;
}

void
psem_dims_take(struct psem *sem, struct psem_waiter *w)
{
	struct psem_want *want;
	struct psem_dim *dim;
	uint64_t k;
	unsigned i, u;

	sem->dims[0].used += w->permits;
	if (w->need == NULL)
		return;
	for (i = 0; i < w->need->n; i++) {
		want = &w->need->want[i];
		dim = &sem->dims[want->dim];
		dim->used += want->amount;
		if (dim->nunits == 0)
			continue;
		/* Admission saw enough units with room. */
		want->units = 0;
		for (k = 0; k < want->amount; k++) {
			u = psem_unit_pick(dim, want->units);
			if (u == dim->nunits)
				break;
			want->units |= UINT64_C(1) << u;
			dim->load[u]++;
		}
	}
}

bool
psem_dims_units_ok(const struct psem *sem, const struct psem_waiter *w)
{
	const struct psem_want *want;
	const struct psem_dim *dim;
	unsigned i;

	for (i = 0; w->need != NULL && i < w->need->n; i++) {
		want = &w->need->want[i];
		if (want->dim == 0 || want->dim >= sem->ndims ||
		    want->amount == 0)
			return false;
		dim = &sem->dims[want->dim];
		if (dim->capacity == 0 || (dim->nunits != 0 &&
		    ((dim->nunits < 64 && want->units >> dim->nunits) ||
		    (uint64_t)__builtin_popcountll(want->units) !=
		    want->amount)))
			return false;
	}
	return true;
}

void
psem_dims_retake(struct psem *sem, struct psem_waiter *w)
{
	const struct psem_want *want;
	struct psem_dim *dim;
	uint64_t units;
	unsigned i;

	sem->dims[0].used += w->permits;
	for (i = 0; w->need != NULL && i < w->need->n; i++) {
		want = &w->need->want[i];
		dim = &sem->dims[want->dim];
		dim->used += want->amount;
		for (units = want->units; dim->nunits != 0 && units != 0;
		    units &= units - 1)
			dim->load[__builtin_ctzll(units)]++;
	}
}

void
psem_dims_give(struct psem *sem, struct psem_waiter *w)
{
	struct psem_want *want;
	struct psem_dim *dim;
	uint64_t units;
	unsigned i, u;

	sem->dims[0].used -= w->permits;
	if (w->need == NULL)
		return;
	for (i = 0; i < w->need->n; i++) {
		want = &w->need->want[i];
		dim = &sem->dims[want->dim];
		dim->used -= dim->used < want->amount ? dim->used : want->amount;
		if (dim->nunits == 0)
			continue;
		for (units = want->units; units != 0; units &= units - 1) {
			u = (unsigned)__builtin_ctzll(units);
			if (u < dim->nunits && dim->load[u] > 0)
				dim->load[u]--;
		}
	}
}

void
psem_dims_waiting(struct psem *sem, const struct psem_waiter *w, int delta)
{
	unsigned i;

	sem->dims[0].waiting += (unsigned)delta;
	if (w->need != NULL)
		for (i = 0; i < w->need->n; i++)
			sem->dims[w->need->want[i].dim].waiting +=
			    (unsigned)delta;
}

bool
psem_queued_want_more(const struct psem *sem, unsigned d, uint64_t n)
{
	const struct psem_waiter *w;
	unsigned i;

	if (sem->dims[d].waiting == 0)
		return false;
	for (i = 0; i < sem->sched.nclasses; i++)
		TAILQ_FOREACH(w, &sem->sched.classes[i].waiters, entry)
			if (psem_waiter_wants(w, d) > n)
				return true;
	return false;
}

static void
psem_dims_count(struct psem *sem)
{
	while (sem->ndims > 1 && sem->dims[sem->ndims - 1].capacity == 0 &&
	    sem->dims[sem->ndims - 1].used == 0)
		sem->ndims--;
}

int
psem_dims_set_count(struct psem *sem, unsigned dim, uint64_t count)
{
	struct psem_dim *d;

	if (dim == 0 || dim >= PSEM_DIMS_MAX) {
		errno = EINVAL;
		return -1;
	}
	d = &sem->dims[dim];
	if ((d->nunits != 0 && d->used != 0) ||
	    psem_queued_want_more(sem, dim, count)) {
		errno = EINVAL;
		return -1;
	}
	free(d->load);
	d->load = NULL;
	d->nunits = 0;
	d->share = 0;
	d->capacity = count;
	/* Gone, what others hold of it means nothing either. */
	if (count == 0)
		d->elsewhere = 0;
	if (count != 0 && dim >= sem->ndims)
		sem->ndims = dim + 1;
	psem_dims_count(sem);
	return 0;
}

int
psem_dims_set_units(struct psem *sem, unsigned dim, unsigned nunits,
    unsigned share)
{
	struct psem_dim *d;
	unsigned *load, u;

	if (dim == 0 || dim >= PSEM_DIMS_MAX || nunits > PSEM_UNITS_MAX ||
	    (nunits != 0 && share == 0) ||
	    psem_queued_want_more(sem, dim, nunits)) {
		errno = EINVAL;
		return -1;
	}
	d = &sem->dims[dim];
	if (d->nunits == 0 && d->used != 0) {
		errno = EBUSY;
		return -1;
	}
	for (u = nunits; u < d->nunits; u++)
		if (d->load[u] != 0) {
			errno = EBUSY;
			return -1;
		}
	if (nunits == 0) {
		load = NULL;
	} else if ((load = calloc(nunits, sizeof *load)) == NULL) {
		return -1;
	}
	for (u = 0; u < nunits && u < d->nunits; u++)
		load[u] = d->load[u];
	free(d->load);
	d->load = load;
	d->nunits = nunits;
	d->share = share;
	d->capacity = nunits;
	d->elsewhere = 0;
	if (nunits != 0 && dim >= sem->ndims)
		sem->ndims = dim + 1;
	psem_dims_count(sem);
	return 0;
}
