/* psem-policy.h - the interface between the semaphore and its dispatch
 * policies: which backlogged priority is served next, and in what order. */
#ifndef TRIAGE_PSEM_POLICY_H
#define TRIAGE_PSEM_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

/* Only pointers to waiters here: their struct is psem.h's. */
struct psem_waiter;
struct psem_lane;

TAILQ_HEAD(psem_waitq, psem_waiter);

/* One priority's state. */
struct psem_class {
	struct psem_waitq waiters;
	unsigned queued;
	unsigned held;
	unsigned elsewhere;	/* held by others, toward the cap only */
	unsigned cap;		/* 0 = none */
	unsigned weight;
	bool paused;
	uint64_t dispatched;
	uint64_t pass;		/* weighted: virtual time of its next grant */
	/* The last waiter psem_position() found and its index, valid while
	 * nobody left the FIFO: asking in FIFO order walks it once. */
	const struct psem_waiter *memo;
	uint64_t memo_index;
	/* Its waiters again, one FIFO for each set of dimensions wanted:
	 * admission's (psem-pump.c). */
	struct psem_lane *lanes;
};

/* What a policy sees and keeps: every class, and a clock of its own. */
struct psem_sched {
	struct psem_class *classes;
	unsigned nclasses;
	uint64_t clock;
};

/*
 * A policy is a table of functions chosen by name. Masks have bit i set for
 * class i; pick and position are only called with a non-empty mask.
 */
struct psem_policy {
	const char *name;
	/* Returns the class served next among those in mask. */
	unsigned (*pick)(const struct psem_sched *s, uint64_t mask);
	/* Class i was just granted a waiter. */
	void (*charge)(struct psem_sched *s, unsigned i);
	/* Class i just went from empty to backlogged. */
	void (*wake)(struct psem_sched *s, unsigned i);
	/* How many waiters of the classes in mask go before the one at index
	 * of class i (i is in mask), granting one at a time. */
	uint64_t (*position)(const struct psem_sched *s, uint64_t mask,
	    unsigned i, uint64_t index);
};

extern const struct psem_policy psem_strict_policy;
extern const struct psem_policy psem_weighted_policy;

#endif
