/* psem-types.h - the semaphore's waiters and what they want: the types that
 * its owners embed and its own files share (psem.h has the functions). */
#ifndef TRIAGE_PSEM_TYPES_H
#define TRIAGE_PSEM_TYPES_H

#include <stdint.h>
#include <sys/queue.h>

struct psem_waiter;

/*
 * Dimension 0 is the permits (a job's slots); dimensions 1 and up are what
 * psem_set_count and psem_set_units make them (memory, named resources). A
 * waiter wants its permits and, through a psem_need, an amount of others.
 */
#define PSEM_DIMS_MAX 64
#define PSEM_UNITS_MAX 64

/* One dimension beyond the permits that a waiter wants. */
struct psem_want {
	uint64_t amount;	/* > 0; of a unit dimension, distinct units */
	/* Of a unit dimension, the units granted, bit i for unit i: set at
	 * the grant, kept after the release (what the job was given). */
	uint64_t units;
	uint8_t dim;		/* 1 .. PSEM_DIMS_MAX - 1, each once */
};

/*
 * What a waiter wants beyond its permits, in one allocation with its wants
 * (psem_need_new), freed by its owner with free() once the waiter is idle.
 * The owner sets n and want[]; mask and waited are psem's.
 */
struct psem_need {
	uint64_t mask;		/* bit d for each dimension wanted, 0 too */
	uint64_t waited;	/* those it has been short of while queued */
	unsigned n;
	struct psem_want want[];
};

/* Called from the event loop once a waiter holds its permits; arg is the
 * semaphore's (psem_set_grant_cb). */
typedef void (*psem_grant_cb)(struct psem_waiter *w, void *arg);

enum psem_state {
	PSEM_IDLE,	/* neither waiting nor holding */
	PSEM_QUEUED,	/* in its priority's FIFO */
	PSEM_GRANTED,	/* holds its permits; the callback has not run yet */
	PSEM_HELD,	/* holds its permits; the owner knows */
};

/*
 * A waiter lives inside its owner (a job), so queueing allocates nothing and
 * cancel is O(1). Set it up with psem_waiter_init(); the fields belong to
 * psem and are only read through psem_waiter_state().
 */
struct psem_waiter {
	TAILQ_ENTRY(psem_waiter) entry;
	/* Its place among the waiters of its priority that want the same
	 * dimensions (its lane), which admission walks. */
	TAILQ_ENTRY(psem_waiter) lane_entry;
	/* No callback of its own: every waiter of a semaphore is told the
	 * same way (psem_set_grant_cb), and a waiter is in every queued
	 * job. */
	struct psem_need *need;	/* NULL: permits only */
	int64_t order;		/* its place in its FIFO: psem_waiter_order */
	/* Narrow: a waiter lives in every queued job. Granted, the delivery
	 * round that may call it; queued, its ticket, which orders waiters
	 * of one order by their arrival. */
	uint32_t generation;
	uint16_t permits;	/* at most 65535 */
	uint8_t prio;		/* < 64 */
	uint8_t state;		/* enum psem_state */
};

/* What backfill asks of the waiters' owner (psem_set_backfill). */
struct psem_clock {
	/* The longest w may hold what it is granted, in ms; 0 = unbounded. */
	uint64_t (*limit)(const struct psem_waiter *w, void *arg);
	/* How much longer holder w may hold, in ms; UINT64_MAX = unknown. */
	uint64_t (*left)(const struct psem_waiter *w, void *arg);
	void *arg;
};

#endif
