/* psem.c - asynchronous vector semaphore with priorities, for the event loop.
 * Release hands what it frees straight to the chosen waiters; the loop tells
 * them. Admission itself is psem-pump.c's. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "psem.h"
#include "psem-policy.h"
#include "psem-private.h"

static const struct psem_policy *const psem_policies[] = {
	&psem_strict_policy,
	&psem_weighted_policy,
};

const struct psem_policy *
psem_policy_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof psem_policies / sizeof psem_policies[0]; i++)
		if (strcmp(psem_policies[i]->name, name) == 0)
			return psem_policies[i];
	return NULL;
}

const char *
psem_policy_name(const struct psem_policy *policy)
{
	return policy->name;
}

static void psem_deliver_cb(evutil_socket_t, short, void *);

struct psem *
psem_new(struct event_base *base, unsigned permits, unsigned nprio,
    const struct psem_policy *policy)
{
	struct psem *sem;
	unsigned i;

	if (permits == 0 || nprio == 0 || nprio > 64 || policy == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if ((sem = calloc(1, sizeof *sem)) == NULL)
		return NULL;
	sem->sched.classes = calloc(nprio, sizeof *sem->sched.classes);
	sem->deliver = evtimer_new(base, psem_deliver_cb, sem);
	if (sem->sched.classes == NULL || sem->deliver == NULL) {
		if (sem->deliver != NULL)
			event_free(sem->deliver);
		free(sem->sched.classes);
		free(sem);
		errno = ENOMEM;
		return NULL;
	}
	sem->base = base;
	sem->policy = policy;
	sem->sched.nclasses = nprio;
	sem->dims[0].capacity = permits;
	sem->ndims = 1;
	TAILQ_INIT(&sem->granted);
	TAILQ_INIT(&sem->holders);
	for (i = 0; i < nprio; i++) {
		TAILQ_INIT(&sem->sched.classes[i].waiters);
		sem->sched.classes[i].weight = 1;
	}
	return sem;
}

void
psem_free(struct psem *sem)
{
	unsigned i;

	if (sem == NULL)
		return;
	event_free(sem->deliver);
	for (i = 0; i < sem->sched.nclasses; i++)
		psem_lanes_free(&sem->sched.classes[i]);
	for (i = 0; i < PSEM_DIMS_MAX; i++)
		free(sem->dims[i].load);
	free(sem->sched.classes);
	free(sem);
}

/*
 * Delivers the round of grants made before this callback started; grants
 * that its callbacks cause wait for the next turn of the loop, so a long
 * chain cannot starve other events either.
 */
static void
psem_deliver_cb(evutil_socket_t fd, short what, void *arg)
{
	struct psem *sem = arg;
	struct psem_waiter *w;
	uint32_t round = sem->generation++;

	(void)fd;
	(void)what;
	while ((w = TAILQ_FIRST(&sem->granted)) != NULL &&
	    (int32_t)(w->generation - round) <= 0) {
		TAILQ_REMOVE(&sem->granted, w, entry);
		w->state = PSEM_HELD;
		TAILQ_INSERT_TAIL(&sem->holders, w, entry);
		sem->grant_cb(w, sem->grant_arg);
	}
	psem_schedule(sem);
}

static struct psem_class *
psem_class(const struct psem *sem, unsigned prio)
{
	if (prio >= sem->sched.nclasses) {
		errno = EINVAL;
		return NULL;
	}
	return &sem->sched.classes[prio];
}

int
psem_set_weight(struct psem *sem, unsigned prio, unsigned weight)
{
	struct psem_class *c = psem_class(sem, prio);

	if (c == NULL || weight == 0) {
		errno = EINVAL;
		return -1;
	}
	c->weight = weight;
	return 0;
}

int
psem_set_cap(struct psem *sem, unsigned prio, unsigned cap)
{
	struct psem_class *c = psem_class(sem, prio);

	if (c == NULL)
		return -1;
	c->cap = cap;
	psem_pump(sem);
	return 0;
}

int
psem_set_elsewhere(struct psem *sem, unsigned prio, unsigned n)
{
	struct psem_class *c = psem_class(sem, prio);

	if (c == NULL)
		return -1;
	c->elsewhere = n;
	psem_pump(sem);
	return 0;
}

/* Pausing can unblock others too: the paused head may have been the one
 * everybody was waiting behind. */
static int
psem_set_paused(struct psem *sem, unsigned prio, bool paused)
{
	struct psem_class *c = psem_class(sem, prio);

	if (c == NULL)
		return -1;
	if (c->paused && !paused && c->queued != 0)
		sem->policy->wake(&sem->sched, prio);
	c->paused = paused;
	psem_pump(sem);
	return 0;
}

int
psem_pause(struct psem *sem, unsigned prio)
{
	return psem_set_paused(sem, prio, true);
}

int
psem_resume(struct psem *sem, unsigned prio)
{
	return psem_set_paused(sem, prio, false);
}

void
psem_set_grant_cb(struct psem *sem, psem_grant_cb cb, void *arg)
{
	sem->grant_cb = cb;
	sem->grant_arg = arg;
}

void
psem_waiter_init(struct psem_waiter *w, unsigned prio, unsigned permits)
{
	memset(w, 0, sizeof *w);
	/* Out of range stays out of range, for psem_acquire to refuse. */
	w->prio = prio > UINT8_MAX ? UINT8_MAX : (uint8_t)prio;
	w->permits = permits > UINT16_MAX ? 0 : (uint16_t)permits;
	w->state = PSEM_IDLE;
}

void
psem_waiter_need(struct psem_waiter *w, struct psem_need *need)
{
	if (w->state == PSEM_IDLE)
		w->need = need;
}

enum psem_state
psem_waiter_state(const struct psem_waiter *w)
{
	return (enum psem_state)w->state;
}

void
psem_waiter_order(struct psem_waiter *w, int64_t order)
{
	w->order = order;
}

/* Into c's FIFO by order: at the tail in the usual case, at once. The FIFO
 * stays sorted by order, ties in their order of arrival. */
static void
psem_enqueue(struct psem *sem, struct psem_class *c, struct psem_waiter *w)
{
	struct psem_waiter *before = NULL, *it;

	w->generation = sem->ticket++;
	for (it = TAILQ_LAST(&c->waiters, psem_waitq);
	    it != NULL && it->order > w->order;
	    it = TAILQ_PREV(it, psem_waitq, entry))
		before = it;
	if (before == NULL) {
		TAILQ_INSERT_TAIL(&c->waiters, w, entry);
		return;
	}
	TAILQ_INSERT_BEFORE(before, w, entry);
	/* The indexes from there on moved: the memo's too when w went
	 * ahead of it (after every waiter of an order up to its own). */
	if (c->memo != NULL && w->order < c->memo->order)
		c->memo_index++;
}

int
psem_acquire(struct psem *sem, struct psem_waiter *w)
{
	struct psem_class *c = psem_class(sem, w->prio);

	if (c == NULL || w->state != PSEM_IDLE || sem->grant_cb == NULL ||
	    w->permits == 0 || w->permits > sem->dims[0].capacity ||
	    (c->cap != 0 && w->permits > c->cap) ||
	    !psem_need_possible(sem, w)) {
		errno = EINVAL;
		return -1;
	}
	if (w->need != NULL) {
		w->need->mask = psem_waiter_mask(w);
		w->need->waited = 0;
	}
	psem_enqueue(sem, c, w);
	if (psem_lane_add(c, w) != 0) {
		psem_memo_leave(c, w);
		TAILQ_REMOVE(&c->waiters, w, entry);
		errno = ENOMEM;
		return -1;
	}
	psem_dims_waiting(sem, w, 1);
	w->state = PSEM_QUEUED;
	if (c->queued++ == 0)
		sem->policy->wake(&sem->sched, w->prio);

	/* The system was settled before w came, so the pump grants w or
	 * nothing: if it was w, the caller learns it now, not from the loop. */
	psem_pump(sem);
	if (w->state == PSEM_GRANTED) {
		TAILQ_REMOVE(&sem->granted, w, entry);
		w->state = PSEM_HELD;
		TAILQ_INSERT_TAIL(&sem->holders, w, entry);
		return 1;
	}
	return 0;
}

static void
psem_give_back(struct psem *sem, struct psem_waiter *w)
{
	struct psem_class *c = &sem->sched.classes[w->prio];

	assert(c->held >= w->permits);
	assert(sem->dims[0].used >= w->permits);
	c->held -= w->permits;
	psem_dims_give(sem, w);
	w->state = PSEM_IDLE;
	psem_pump(sem);
}

int
psem_hold(struct psem *sem, struct psem_waiter *w)
{
	struct psem_class *c = psem_class(sem, w->prio);

	if (c == NULL || w->state != PSEM_IDLE || w->permits == 0 ||
	    !psem_dims_units_ok(sem, w)) {
		errno = EINVAL;
		return -1;
	}
	if (w->need != NULL)
		w->need->mask = psem_waiter_mask(w);
	psem_dims_retake(sem, w);
	c->held += w->permits;
	w->state = PSEM_HELD;
	TAILQ_INSERT_TAIL(&sem->holders, w, entry);
	/* Less is free: nothing to grant, but what is kept is figured
	 * again. */
	psem_pump(sem);
	return 0;
}

int
psem_release(struct psem *sem, struct psem_waiter *w)
{
	if (w->state != PSEM_HELD || w->prio >= sem->sched.nclasses) {
		errno = EINVAL;
		return -1;
	}
	TAILQ_REMOVE(&sem->holders, w, entry);
	psem_give_back(sem, w);
	return 0;
}

/* Queued w leaves its FIFO and its lane, idle; nothing is pumped. */
static void
psem_dequeue(struct psem *sem, struct psem_waiter *w)
{
	struct psem_class *c = &sem->sched.classes[w->prio];

	psem_memo_leave(c, w);
	TAILQ_REMOVE(&c->waiters, w, entry);
	psem_lane_remove(c, w);
	psem_dims_waiting(sem, w, -1);
	c->queued--;
	w->state = PSEM_IDLE;
}

int
psem_cancel(struct psem *sem, struct psem_waiter *w)
{
	switch (w->state) {
	case PSEM_QUEUED:
		psem_dequeue(sem, w);
		/* It may have been the head everyone else waited behind. */
		psem_pump(sem);
		return 0;
	case PSEM_GRANTED:
		TAILQ_REMOVE(&sem->granted, w, entry);
		psem_give_back(sem, w);
		return 0;
	default:
		errno = EINVAL;
		return -1;
	}
}

bool
psem_alike(const struct psem *sem, const struct psem_waiter *a,
    const struct psem_waiter *b)
{
	uint64_t mask = psem_waiter_mask(a);
	unsigned d;

	if (a->prio != b->prio || a->permits != b->permits ||
	    mask != psem_waiter_mask(b))
		return false;
	for (d = 1; d < PSEM_DIMS_MAX; d++) {
		if (!(mask & (UINT64_C(1) << d)))
			continue;
		/* Units are the holder's own: they do not change hands. */
		if (d >= sem->ndims || sem->dims[d].nunits != 0 ||
		    psem_waiter_wants(a, d) != psem_waiter_wants(b, d))
			return false;
	}
	return true;
}

int
psem_swap(struct psem *sem, struct psem_waiter *held,
    struct psem_waiter *queued)
{
	if (held->state != PSEM_HELD || queued->state != PSEM_QUEUED ||
	    held->prio >= sem->sched.nclasses ||
	    !psem_alike(sem, held, queued)) {
		errno = EINVAL;
		return -1;
	}
	psem_dequeue(sem, queued);
	if (queued->need != NULL)
		queued->need->mask = psem_waiter_mask(queued);
	TAILQ_REMOVE(&sem->holders, held, entry);
	held->state = PSEM_IDLE;
	queued->state = PSEM_HELD;
	TAILQ_INSERT_TAIL(&sem->holders, queued, entry);
	/* What is held is the same; the queue lost a waiter, which may have
	 * been the head the others waited behind. */
	psem_pump(sem);
	return 0;
}

/* Positions ignore pauses: they tell the order jobs go in once every
 * priority dispatches, which is what a paused queue is waiting for. */
static uint64_t
psem_backlog_mask(const struct psem *sem, unsigned prio)
{
	uint64_t mask = UINT64_C(1) << prio;
	unsigned i;

	for (i = 0; i < sem->sched.nclasses; i++)
		if (sem->sched.classes[i].queued != 0)
			mask |= UINT64_C(1) << i;
	return mask;
}

int64_t
psem_position_at(const struct psem *sem, unsigned prio, uint64_t index)
{
	if (prio >= sem->sched.nclasses ||
	    index >= sem->sched.classes[prio].queued)
		return -1;
	return (int64_t)sem->policy->position(&sem->sched,
	    psem_backlog_mask(sem, prio), prio, index);
}

int64_t
psem_position(const struct psem *sem, const struct psem_waiter *w)
{
	struct psem_class *c;
	const struct psem_waiter *it;
	uint64_t index = 0;

	if (w->state != PSEM_QUEUED)
		return -1;
	c = &sem->sched.classes[w->prio];
	/* From the last one found, towards w by their orders, else from the
	 * head: a caller going through a queue in order walks it once, and
	 * the next page starts where the last one ended. */
	it = TAILQ_FIRST(&c->waiters);
	if (c->memo != NULL && w->order < c->memo->order) {
		for (it = c->memo, index = c->memo_index; it != NULL && it != w;
		    it = TAILQ_PREV(it, psem_waitq, entry))
			index--;
	} else if (c->memo != NULL) {
		for (it = c->memo, index = c->memo_index; it != NULL && it != w;
		    it = TAILQ_NEXT(it, entry))
			index++;
	}
	/* Not where its order said (orders changed while queued): from the
	 * head. */
	if (it == NULL) {
		it = TAILQ_FIRST(&c->waiters);
		index = 0;
	}
	for (; it != w; it = TAILQ_NEXT(it, entry))
		index++;
	c->memo = w;
	c->memo_index = index;
	return psem_position_at(sem, w->prio, index);
}

int
psem_set_permits(struct psem *sem, unsigned permits)
{
	struct psem_waiter *w;
	unsigned i;

	if (permits == 0) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < sem->sched.nclasses; i++)
		TAILQ_FOREACH(w, &sem->sched.classes[i].waiters, entry)
			if (w->permits > permits) {
				errno = EINVAL;
				return -1;
			}
	sem->dims[0].capacity = permits;
	psem_pump(sem);
	return 0;
}

int
psem_set_count(struct psem *sem, unsigned dim, uint64_t count)
{
	if (psem_dims_set_count(sem, dim, count) != 0)
		return -1;
	psem_pump(sem);
	return 0;
}

int
psem_set_dim_elsewhere(struct psem *sem, unsigned dim, uint64_t n)
{
	if (dim == 0 || dim >= PSEM_DIMS_MAX || sem->dims[dim].nunits != 0) {
		errno = EINVAL;
		return -1;
	}
	sem->dims[dim].elsewhere = n;
	psem_pump(sem);
	return 0;
}

int
psem_set_units(struct psem *sem, unsigned dim, unsigned nunits,
    unsigned share)
{
	if (psem_dims_set_units(sem, dim, nunits, share) != 0)
		return -1;
	psem_pump(sem);
	return 0;
}

void
psem_set_backfill(struct psem *sem, const struct psem_clock *clock)
{
	sem->backfill = clock != NULL;
	if (clock != NULL)
		sem->clock = *clock;
	psem_pump(sem);
}

int
psem_set_policy(struct psem *sem, const struct psem_policy *policy)
{
	unsigned i;

	if (policy == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (policy == sem->policy)
		return 0;
	/* Every class starts even under the new policy: the old one's
	 * virtual times mean nothing to it. */
	sem->policy = policy;
	for (i = 0; i < sem->sched.nclasses; i++)
		sem->sched.classes[i].pass = sem->sched.clock;
	psem_pump(sem);
	return 0;
}

const struct psem_policy *
psem_get_policy(const struct psem *sem)
{
	return sem->policy;
}

int
psem_reshape(struct psem *sem, unsigned nprio, const int *map)
{
	struct psem_class *classes, *c, *n;
	struct psem_waiter *w;
	bool taken[64] = { false };
	unsigned i;

	if (nprio == 0 || nprio > 64) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < sem->sched.nclasses; i++) {
		c = &sem->sched.classes[i];
		if (map[i] < 0) {
			if (c->queued != 0 || c->held != 0) {
				errno = EBUSY;
				return -1;
			}
			continue;
		}
		if ((unsigned)map[i] >= nprio || taken[map[i]]) {
			errno = EINVAL;
			return -1;
		}
		taken[map[i]] = true;
	}
	if ((classes = calloc(nprio, sizeof *classes)) == NULL)
		return -1;
	for (i = 0; i < nprio; i++) {
		TAILQ_INIT(&classes[i].waiters);
		classes[i].weight = 1;
		classes[i].pass = sem->sched.clock;
	}
	for (i = 0; i < sem->sched.nclasses; i++) {
		c = &sem->sched.classes[i];
		if (map[i] < 0) {
			/* Empty: the lane of permits alone at most. */
			psem_lanes_free(c);
			continue;
		}
		n = &classes[map[i]];
		/* The FIFO moves whole: TAILQ_CONCAT fixes the head's back
		 * pointer, which a struct copy would leave dangling. */
		TAILQ_CONCAT(&n->waiters, &c->waiters, entry);
		TAILQ_FOREACH(w, &n->waiters, entry)
			w->prio = (unsigned)map[i];
		n->queued = c->queued;
		n->held = c->held;
		n->elsewhere = c->elsewhere;
		n->cap = c->cap;
		n->weight = c->weight;
		n->paused = c->paused;
		n->dispatched = c->dispatched;
		n->pass = c->pass;
		n->lanes = c->lanes;
	}
	TAILQ_FOREACH(w, &sem->granted, entry)
		w->prio = (unsigned)map[w->prio];
	free(sem->sched.classes);
	sem->sched.classes = classes;
	sem->sched.nclasses = nprio;
	psem_pump(sem);
	return 0;
}

const struct psem_waiter *
psem_first(const struct psem *sem, unsigned prio)
{
	if (prio >= sem->sched.nclasses)
		return NULL;
	return TAILQ_FIRST(&sem->sched.classes[prio].waiters);
}

const struct psem_waiter *
psem_next(const struct psem_waiter *w)
{
	return TAILQ_NEXT(w, entry);
}

unsigned
psem_permits(const struct psem *sem)
{
	return (unsigned)sem->dims[0].capacity;
}

unsigned
psem_available(const struct psem *sem)
{
	return (unsigned)psem_dim_free(sem, 0);
}

int
psem_why(const struct psem *sem, const struct psem_waiter *w)
{
	uint64_t mask;
	unsigned d;

	if (w->state != PSEM_QUEUED)
		return -2;
	for (mask = psem_waiter_mask(w) & ~UINT64_C(1); mask != 0;
	    mask &= mask - 1) {
		d = (unsigned)__builtin_ctzll(mask);
		if (psem_waiter_wants(w, d) > psem_dim_free(sem, d))
			return (int)d;
	}
	return w->permits > psem_dim_free(sem, 0) ? 0 : -1;
}

unsigned
psem_priorities(const struct psem *sem)
{
	return sem->sched.nclasses;
}

unsigned
psem_held(const struct psem *sem)
{
	unsigned i, n = 0;

	for (i = 0; i < sem->sched.nclasses; i++)
		n += sem->sched.classes[i].held;
	return n;
}

int
psem_prio_stats(const struct psem *sem, unsigned prio,
    struct psem_prio_stats *st)
{
	const struct psem_class *c = psem_class(sem, prio);

	if (c == NULL)
		return -1;
	st->queued = c->queued;
	st->held = c->held;
	st->elsewhere = c->elsewhere;
	st->cap = c->cap;
	st->weight = c->weight;
	st->paused = c->paused;
	st->dispatched = c->dispatched;
	return 0;
}

struct psem_need *
psem_need_new(unsigned n)
{
	return calloc(1, sizeof(struct psem_need) + n *
	    sizeof(struct psem_want));
}

int
psem_dim_stats(const struct psem *sem, unsigned dim,
    struct psem_dim_stats *st)
{
	const struct psem_dim *d;

	if (dim >= sem->ndims || (dim != 0 && sem->dims[dim].capacity == 0)) {
		errno = EINVAL;
		return -1;
	}
	d = &sem->dims[dim];
	st->capacity = d->nunits != 0 ? (uint64_t)d->nunits * d->share :
	    d->capacity;
	st->used = d->used;
	st->elsewhere = d->elsewhere;
	st->kept = d->kept;
	st->waiting = d->waiting;
	st->units = d->nunits;
	st->share = d->share;
	return 0;
}

unsigned
psem_unit_load(const struct psem *sem, unsigned dim, unsigned unit)
{
	if (dim >= sem->ndims || unit >= sem->dims[dim].nunits)
		return 0;
	return sem->dims[dim].load[unit];
}

bool
psem_dim_wanted_over(const struct psem *sem, unsigned dim, uint64_t n)
{
	return dim < PSEM_DIMS_MAX && psem_queued_want_more(sem, dim, n);
}
