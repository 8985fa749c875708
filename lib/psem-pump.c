/* psem-pump.c - admission: which waiters are granted, in the policy's order;
 * what those that cannot start keep; backfill onto what they keep. */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "psem-types.h"
#include "psem-private.h"

/* Backfill looks at this many waiters in one round at most: it is Slurm's
 * bf_max_job_test, which keeps a release cheap however long the queue. */
#define PSEM_BACKFILL_SCAN 256
/* Waiters that keep units in one round, remembered for backfill; more turn
 * backfill off for the round, which is safe. */
#define PSEM_KEEPERS_MAX 64

/* One round of admission: what is free, and what is kept of it. */
struct psem_round {
	uint64_t avail[PSEM_DIMS_MAX];
	uint64_t kept[PSEM_DIMS_MAX];
	uint64_t dead;		/* dimensions with nothing free and unkept */
	uint64_t done;		/* classes done with this round */
	struct psem_waiter *keepers[PSEM_KEEPERS_MAX];
	uint64_t keeps[PSEM_KEEPERS_MAX];	/* the dimensions each keeps */
	unsigned nkeepers;
	bool keepers_lost;
};

bool
psem_before(const struct psem_waiter *a, const struct psem_waiter *b)
{
	return a->order < b->order || (a->order == b->order &&
	    (int32_t)(a->generation - b->generation) < 0);
}

static struct psem_lane *
psem_lane_find(const struct psem_class *c, uint64_t mask)
{
	struct psem_lane *l;

	for (l = c->lanes; l != NULL && l->mask != mask; l = l->next)
		continue;
	return l;
}

int
psem_lane_add(struct psem_class *c, struct psem_waiter *w)
{
	uint64_t mask = psem_waiter_mask(w);
	struct psem_lane *l = psem_lane_find(c, mask);
	struct psem_waiter *before = NULL, *it;

	if (l == NULL) {
		if ((l = calloc(1, sizeof *l)) == NULL)
			return -1;
		l->mask = mask;
		TAILQ_INIT(&l->waiters);
		l->next = c->lanes;
		c->lanes = l;
	}
	for (it = TAILQ_LAST(&l->waiters, psem_waitq);
	    it != NULL && psem_before(w, it);
	    it = TAILQ_PREV(it, psem_waitq, lane_entry))
		before = it;
	if (before == NULL)
		TAILQ_INSERT_TAIL(&l->waiters, w, lane_entry);
	else
		TAILQ_INSERT_BEFORE(before, w, lane_entry);
	l->queued++;
	return 0;
}

void
psem_lane_remove(struct psem_class *c, struct psem_waiter *w)
{
	struct psem_lane *l = psem_lane_find(c, psem_waiter_mask(w)), **p;

	TAILQ_REMOVE(&l->waiters, w, lane_entry);
	/* The lane of permits alone stays, empty: most waiters are in it,
	 * and an uncontended acquire then allocates nothing. */
	if (--l->queued != 0 || l->mask == 1)
		return;
	for (p = &c->lanes; *p != l; p = &(*p)->next)
		continue;
	*p = l->next;
	free(l);
}

void
psem_lanes_free(struct psem_class *c)
{
	struct psem_lane *l;

	while ((l = c->lanes) != NULL) {
		c->lanes = l->next;
		free(l);
	}
}

/*
 * w is about to leave c's FIFO. The FIFO is sorted by order, so w's order
 * tells on which side of the memo it is, and the memo's index stays right:
 * a list of a long queue finds each page where the last one ended, however
 * many jobs started or were canceled between. Only a tie loses it.
 */
void
psem_memo_leave(struct psem_class *c, const struct psem_waiter *w)
{
	const struct psem_waiter *m = c->memo;

	if (m == NULL)
		return;
	if (m == w) {
		/* The one before takes its place, one index lower. */
		c->memo = TAILQ_PREV(w, psem_waitq, entry);
		c->memo_index--;
	} else if (w->order < m->order)
		c->memo_index--;
	else if (w->order == m->order)
		c->memo = NULL;
}

static void
psem_grant(struct psem *sem, struct psem_waiter *w)
{
	struct psem_class *c = &sem->sched.classes[w->prio];

	psem_memo_leave(c, w);
	TAILQ_REMOVE(&c->waiters, w, entry);
	psem_lane_remove(c, w);
	psem_dims_waiting(sem, w, -1);
	psem_dims_take(sem, w);
	c->queued--;
	c->held += w->permits;
	c->dispatched++;
	sem->policy->charge(&sem->sched, w->prio);
	w->state = PSEM_GRANTED;
	w->generation = sem->generation;
	TAILQ_INSERT_TAIL(&sem->granted, w, entry);
}

/*
 * Makes the loop run the granted waiters' callbacks; never runs them here, so
 * a release -> grant -> release chain cannot grow the stack. A zero timeout,
 * not event_active(): libevent runs events activated while it processes the
 * active queue in that same pass, so an active-chain would never let the loop
 * poll its sockets; a timer waits for the next turn.
 */
void
psem_schedule(struct psem *sem)
{
	static const struct timeval now = { 0, 0 };

	if (!TAILQ_EMPTY(&sem->granted) && !evtimer_pending(sem->deliver, NULL))
		evtimer_add(sem->deliver, &now);
}

static uint64_t
psem_unkept(const struct psem_round *r, unsigned d)
{
	return r->avail[d] > r->kept[d] ? r->avail[d] - r->kept[d] : 0;
}

static void
psem_round_dead(const struct psem *sem, struct psem_round *r)
{
	unsigned d;

	r->dead = 0;
	for (d = 0; d < sem->ndims; d++)
		if (psem_unkept(r, d) == 0)
			r->dead |= UINT64_C(1) << d;
}

/* The dimensions w wants more of than is free and not kept. */
static uint64_t
psem_short(const struct psem_round *r, const struct psem_waiter *w)
{
	uint64_t mask = psem_waiter_mask(w), lacks = 0;
	unsigned d;

	for (; mask != 0; mask &= mask - 1) {
		d = (unsigned)__builtin_ctzll(mask);
		if (psem_waiter_wants(w, d) > psem_unkept(r, d))
			lacks |= UINT64_C(1) << d;
	}
	return lacks;
}

/* What w has waited for: a waiter of permits alone, its permits. */
static uint64_t
psem_waited(const struct psem_waiter *w)
{
	return w->need != NULL ? w->need->waited : 1;
}

/* w keeps, of what is free and not kept, what it wants of dims. */
static void
psem_keep(const struct psem *sem, struct psem_round *r, struct psem_waiter *w,
    uint64_t dims)
{
	uint64_t keeps = 0, k;
	unsigned d;

	for (; dims != 0; dims &= dims - 1) {
		d = (unsigned)__builtin_ctzll(dims);
		k = psem_waiter_wants(w, d);
		if (k > psem_unkept(r, d))
			k = psem_unkept(r, d);
		if (k == 0)
			continue;
		r->kept[d] += k;
		keeps |= UINT64_C(1) << d;
	}
	psem_round_dead(sem, r);
	if (keeps == 0)
		return;
	if (r->nkeepers == PSEM_KEEPERS_MAX) {
		r->keepers_lost = true;
		return;
	}
	r->keepers[r->nkeepers] = w;
	r->keeps[r->nkeepers++] = keeps;
}

static void
psem_round_take(struct psem *sem, struct psem_round *r, struct psem_waiter *w)
{
	uint64_t mask = psem_waiter_mask(w);
	unsigned d;

	psem_grant(sem, w);
	for (; mask != 0; mask &= mask - 1) {
		d = (unsigned)__builtin_ctzll(mask);
		r->avail[d] = psem_dim_free(sem, d);
	}
	psem_round_dead(sem, r);
}

/* Whether w would take its class over its cap. */
static bool
psem_over_cap(const struct psem_class *c, const struct psem_waiter *w)
{
	return c->cap != 0 && c->held + c->elsewhere + w->permits > c->cap;
}

/* The first waiter of c by order among its lanes not done this round. */
static struct psem_waiter *
psem_candidate(const struct psem *sem, const struct psem_class *c,
    struct psem_lane **lane)
{
	struct psem_waiter *best = NULL, *w;
	struct psem_lane *l;

	for (l = c->lanes; l != NULL; l = l->next) {
		if (l->done_at == sem->round || l->queued == 0)
			continue;
		w = TAILQ_FIRST(&l->waiters);
		if (best == NULL || psem_before(w, best)) {
			best = w;
			*lane = l;
		}
	}
	return best;
}

/* The classes with a waiter to look at this round. */
static uint64_t
psem_round_classes(const struct psem *sem, struct psem_round *r)
{
	const struct psem_class *c;
	struct psem_lane *lane;
	uint64_t mask = 0, bit;
	unsigned i;

	for (i = 0; i < sem->sched.nclasses; i++) {
		c = &sem->sched.classes[i];
		bit = UINT64_C(1) << i;
		if ((r->done & bit) || c->queued == 0 || c->paused ||
		    psem_candidate(sem, c, &lane) == NULL) {
			r->done |= bit;
			continue;
		}
		mask |= bit;
	}
	return mask;
}

/* A new round: lanes' marks of the last ones mean nothing now. */
static void
psem_round_start(struct psem *sem, struct psem_round *r)
{
	struct psem_lane *l;
	unsigned i, d;

	if (++sem->round == 0) {
		for (i = 0; i < sem->sched.nclasses; i++)
			for (l = sem->sched.classes[i].lanes; l != NULL;
			    l = l->next)
				l->done_at = 0;
		sem->round = 1;
	}
	r->nkeepers = 0;
	r->keepers_lost = false;
	r->done = 0;
	for (d = 0; d < sem->ndims; d++) {
		r->avail[d] = psem_dim_free(sem, d);
		r->kept[d] = 0;
	}
	psem_round_dead(sem, r);
}

/* One holder and how long it may hold still. */
struct psem_holder {
	const struct psem_waiter *w;
	uint64_t left;
};

static int
psem_holder_cmp(const void *a, const void *b)
{
	const struct psem_holder *x = a, *y = b;

	return x->left < y->left ? -1 : x->left > y->left;
}

/* What holder h gives back of d that makes room: of a unit dimension, the
 * units it holds that are full. */
static uint64_t
psem_gives(const struct psem *sem, const struct psem_waiter *h, unsigned d)
{
	const struct psem_dim *dim = &sem->dims[d];
	uint64_t units = 0, n = 0;
	unsigned i;

	if (d == 0 || dim->nunits == 0)
		return psem_waiter_wants(h, d);
	for (i = 0; i < h->need->n; i++)
		if (h->need->want[i].dim == d)
			units = h->need->want[i].units;
	for (; units != 0; units &= units - 1)
		if (dim->load[__builtin_ctzll(units)] >= dim->share)
			n++;
	return n;
}

/* The earliest w could start, in ms from now, were nothing granted before
 * it: when the holders, in the order their time runs out, have given back
 * enough. UINT64_MAX: unknown. */
static uint64_t
psem_shadow(const struct psem *sem, const struct psem_round *r,
    const struct psem_waiter *w, const struct psem_holder *hs, size_t n)
{
	uint64_t mask = psem_waiter_mask(w), at = 0, want, have;
	unsigned d;
	size_t i;

	for (; mask != 0; mask &= mask - 1) {
		d = (unsigned)__builtin_ctzll(mask);
		want = psem_waiter_wants(w, d);
		have = r->avail[d];
		for (i = 0; i < n && have < want; i++) {
			if (hs[i].left == UINT64_MAX)
				return UINT64_MAX;
			have += psem_gives(sem, hs[i].w, d);
			if (have >= want && hs[i].left > at)
				at = hs[i].left;
		}
		if (have < want)
			return UINT64_MAX;
	}
	return at;
}

/* Every holder, granted or told, by its time left; NULL when none or out
 * of memory. */
static struct psem_holder *
psem_holders(const struct psem *sem, size_t *n)
{
	const struct psem_waiter *w;
	struct psem_holder *hs;
	size_t i = 0;

	*n = 0;
	TAILQ_FOREACH(w, &sem->holders, entry)
		(*n)++;
	TAILQ_FOREACH(w, &sem->granted, entry)
		(*n)++;
	if (*n == 0 || (hs = calloc(*n, sizeof *hs)) == NULL)
		return NULL;
	TAILQ_FOREACH(w, &sem->holders, entry)
		hs[i++].w = w;
	TAILQ_FOREACH(w, &sem->granted, entry)
		hs[i++].w = w;
	for (i = 0; i < *n; i++)
		hs[i].left = sem->clock.left(hs[i].w, sem->clock.arg);
	qsort(hs, *n, sizeof *hs, psem_holder_cmp);
	return hs;
}

/* Whether w, bound to end within limit ms, fits what is free, taking kept
 * units only where those who keep them could not start before it ends. */
static bool
psem_backfills(const struct psem_round *r, const struct psem_waiter *w,
    uint64_t limit, const uint64_t *shadow)
{
	uint64_t mask = psem_waiter_mask(w), want;
	unsigned d;

	for (; mask != 0; mask &= mask - 1) {
		d = (unsigned)__builtin_ctzll(mask);
		want = psem_waiter_wants(w, d);
		if (want > r->avail[d])
			return false;
		if (want > psem_unkept(r, d) &&
		    (shadow[d] == UINT64_MAX || limit >= shadow[d]))
			return false;
	}
	return true;
}

/*
 * EASY backfill: each kept dimension's shadow is the earliest a waiter
 * keeping it could start; a waiter bound to end before it may use it. The
 * classes in the order of their urgency, each from its head, so far as the
 * scan's bound.
 */
static void
psem_backfill(struct psem *sem, struct psem_round *r)
{
	uint64_t shadow[PSEM_DIMS_MAX], at, keeps, limit;
	struct psem_waiter *w, *next;
	struct psem_holder *hs;
	struct psem_class *c;
	unsigned i, k, d, budget = PSEM_BACKFILL_SCAN;
	size_t n;

	if (r->keepers_lost || r->nkeepers == 0 || r->avail[0] == 0)
		return;
	hs = psem_holders(sem, &n);
	for (d = 0; d < sem->ndims; d++)
		shadow[d] = UINT64_MAX;
	for (k = 0; k < r->nkeepers; k++) {
		at = psem_shadow(sem, r, r->keepers[k], hs, n);
		for (keeps = r->keeps[k]; keeps != 0; keeps &= keeps - 1) {
			d = (unsigned)__builtin_ctzll(keeps);
			if (at < shadow[d])
				shadow[d] = at;
		}
	}
	free(hs);
	for (i = 0; i < sem->sched.nclasses && budget != 0; i++) {
		c = &sem->sched.classes[i];
		if (c->paused)
			continue;
		for (w = TAILQ_FIRST(&c->waiters); w != NULL && budget != 0;
		    w = next, budget--) {
			next = TAILQ_NEXT(w, entry);
			if (psem_over_cap(c, w) || (limit = sem->clock.limit(w,
			    sem->clock.arg)) == 0 ||
			    !psem_backfills(r, w, limit, shadow))
				continue;
			psem_round_take(sem, r, w);
			if (r->avail[0] == 0)
				return;
		}
	}
}

/*
 * Ensures: nothing more can be granted until something comes back, a waiter
 * arrives, or a pause or cap is lifted. Each turn looks at the policy's next
 * class's first waiter among its lanes not done: it is granted, or it keeps
 * what it has waited for and its lane is done for the round (nobody behind
 * it in the lane wants less of what it lacks, which is now all kept). So a
 * round costs the grants it makes and the lanes it meets, not the queue.
 */
void
psem_pump(struct psem *sem)
{
	struct psem_round r;
	struct psem_waiter *w;
	struct psem_class *c;
	struct psem_lane *lane = NULL;
	uint64_t mask, lacks;
	unsigned i, d;

	psem_round_start(sem, &r);
	while ((mask = psem_round_classes(sem, &r)) != 0) {
		i = sem->policy->pick(&sem->sched, mask);
		c = &sem->sched.classes[i];
		w = psem_candidate(sem, c, &lane);
		if (psem_waiter_mask(w) & r.dead) {
			/* It cannot start this round: what it lacks is
			 * all taken. It keeps what it has waited for. */
			psem_keep(sem, &r, w, psem_waited(w));
			lane->done_at = sem->round;
			continue;
		}
		if (psem_over_cap(c, w)) {
			r.done |= UINT64_C(1) << i;
			continue;
		}
		if ((lacks = psem_short(&r, w)) == 0) {
			psem_round_take(sem, &r, w);
			continue;
		}
		/* Its permits are waited for only when they were all it
		 * lacked: a job waiting for a GPU keeps no slot from the
		 * jobs that need a slot alone. */
		if (w->need != NULL)
			w->need->waited |= lacks == 1 ? 1 : lacks & ~UINT64_C(1);
		psem_keep(sem, &r, w, psem_waited(w) | (lacks == 1));
		lane->done_at = sem->round;
	}
	for (d = 0; d < sem->ndims; d++)
		sem->dims[d].kept = r.kept[d];
	if (sem->backfill)
		psem_backfill(sem, &r);
	psem_schedule(sem);
}
