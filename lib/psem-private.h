/* psem-private.h - what the semaphore's files share and nothing else
 * includes: the semaphore itself, its dimensions and its lanes. */
#ifndef TRIAGE_PSEM_PRIVATE_H
#define TRIAGE_PSEM_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "psem-types.h"
#include "psem-policy.h"

/*
 * The waiters of one priority that want the same dimensions, in order: when
 * the first of them cannot start, none behind it can (the dimension it lacks
 * is then all taken or kept), so admission looks at one waiter of a lane and
 * goes on to the next lane, never down a long queue.
 */
struct psem_lane {
	struct psem_lane *next;
	uint64_t mask;			/* the dimensions, bit 0 always */
	struct psem_waitq waiters;
	unsigned queued;
	uint32_t done_at;		/* the admission round it is done in */
};

/* One dimension; the permits are dims[0]. */
struct psem_dim {
	uint64_t capacity;	/* counted: the count; units: nunits */
	uint64_t used;		/* counted: held; units: the loads' sum */
	uint64_t elsewhere;	/* counted: held outside, not free here */
	uint64_t kept;		/* at the last admission round */
	unsigned waiting;	/* queued waiters that want it */
	unsigned nunits;	/* 0: counted */
	unsigned share;
	unsigned *load;		/* units: holders of each */
};

struct psem {
	struct event_base *base;
	struct event *deliver;		/* runs granted waiters' callbacks */
	psem_grant_cb grant_cb;		/* every waiter's: NULL until set */
	void *grant_arg;
	const struct psem_policy *policy;
	struct psem_sched sched;
	struct psem_dim dims[PSEM_DIMS_MAX];
	unsigned ndims;			/* 1 + the highest set up */
	/* HELD waiters, for backfill's reckoning of when units come back. */
	struct psem_waitq holders;
	struct psem_waitq granted;	/* GRANTED waiters, oldest first */
	uint32_t generation;		/* the delivery round being filled;
					 * it wraps, and rounds are compared
					 * by their distance */
	uint32_t ticket;		/* the next queued waiter's */
	uint32_t round;			/* admission's, for lanes' done_at */
	bool backfill;
	struct psem_clock clock;
};

/* psem-dims.c */

/* How much of dim d is free: counted, its capacity less what is held
 * here and elsewhere (0 when over); units, how many units have room. */
uint64_t psem_dim_free(const struct psem *sem, unsigned d);
/* The dimensions w wants, bit 0 always. */
uint64_t psem_waiter_mask(const struct psem_waiter *w);
/* What w wants of d (0: nothing). */
uint64_t psem_waiter_wants(const struct psem_waiter *w, unsigned d);
/* Whether w could ever be granted: every dimension it wants set up and
 * big enough. */
bool psem_need_possible(const struct psem *sem, const struct psem_waiter *w);
/* Takes what w wants (its units picked) / gives it back. */
void psem_dims_take(struct psem *sem, struct psem_waiter *w);
void psem_dims_give(struct psem *sem, struct psem_waiter *w);
/* Whether what w wants is set up, and its units, of a unit dimension, are
 * amount units of it; then takes those very units (psem_hold). */
bool psem_dims_units_ok(const struct psem *sem, const struct psem_waiter *w);
void psem_dims_retake(struct psem *sem, struct psem_waiter *w);
/* psem_set_count and psem_set_units, but for the admission they call for
 * after. */
int psem_dims_set_count(struct psem *sem, unsigned dim, uint64_t count);
int psem_dims_set_units(struct psem *sem, unsigned dim, unsigned nunits,
    unsigned share);
/* Whether a queued waiter wants more of d than n. */
bool psem_queued_want_more(const struct psem *sem, unsigned d, uint64_t n);
/* Counts w as waiting (delta 1) or not (-1) in every dimension it wants. */
void psem_dims_waiting(struct psem *sem, const struct psem_waiter *w,
    int delta);

/* psem-pump.c */

/* w into its lane, ordered as in its class's FIFO; -1 out of memory. */
int psem_lane_add(struct psem_class *c, struct psem_waiter *w);
void psem_lane_remove(struct psem_class *c, struct psem_waiter *w);
/* Frees every lane of c (assumes: no waiter in them). */
void psem_lanes_free(struct psem_class *c);
/* Whether a goes before b in a FIFO: by order, then by arrival. */
bool psem_before(const struct psem_waiter *a, const struct psem_waiter *b);
/* w is about to leave c's FIFO: the memo of psem_position follows. */
void psem_memo_leave(struct psem_class *c, const struct psem_waiter *w);
/* Grants waiters while the policy's next fits, the keeping and backfill of
 * psem_acquire's comment, and has the loop deliver the grants. */
void psem_pump(struct psem *sem);
/* Has the loop run the granted waiters' callbacks, if any. */
void psem_schedule(struct psem *sem);

#endif
