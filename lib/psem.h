/* psem.h - asynchronous counting semaphore with priorities, for the event loop:
 * N permits, one FIFO of waiters per priority, grants delivered by the loop. */
#ifndef TRIAGE_PSEM_H
#define TRIAGE_PSEM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

struct event_base;
struct psem;
struct psem_waiter;
struct psem_policy;

/* Called from the event loop once the waiter holds its permits. */
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
	psem_grant_cb cb;
	void *arg;
	int64_t order;		/* its place in its FIFO: psem_waiter_order */
	/* Narrow: a waiter lives in every queued job. */
	uint32_t generation;	/* the delivery round that may call it */
	uint16_t permits;	/* at most 65535 */
	uint8_t prio;		/* < 64 */
	uint8_t state;		/* enum psem_state */
};

/* The policies by name ("strict", "weighted"); NULL for an unknown name. */
const struct psem_policy *psem_policy_find(const char *name);
const char *psem_policy_name(const struct psem_policy *policy);

/*
 * Returns a semaphore with permits permits and nprio priorities (0 is the
 * most urgent, at most 64), each unpaused, uncapped and of weight 1; or NULL
 * with errno set (EINVAL for a bad count). Grants are delivered on base.
 */
struct psem *psem_new(struct event_base *base, unsigned permits,
    unsigned nprio, const struct psem_policy *policy);
/* Assumes: no waiter is queued or granted, and no grant callback is running. */
void psem_free(struct psem *sem);

/*
 * Changes the number of permits (>= 1). More are granted at once; fewer
 * take nothing back from holders: while they hold more than permits,
 * nothing is granted until enough come back. Returns -1 with errno EINVAL,
 * changing nothing, for 0 or when a queued waiter needs more than permits
 * (it could never be granted, and nobody behind it either).
 */
int psem_set_permits(struct psem *sem, unsigned permits);

/* Serves the queues by policy from now on; every priority starts even
 * under it. -1 with EINVAL for NULL. */
int psem_set_policy(struct psem *sem, const struct psem_policy *policy);
const struct psem_policy *psem_get_policy(const struct psem *sem);

/*
 * Gives the semaphore nprio priorities (1 to 64): map has one entry per
 * priority it has now, the new index of that priority or -1 to drop it.
 * A priority keeps its FIFO in order, its holders, pause, cap, weight and
 * counters under its new index; a new index nobody maps to starts empty,
 * unpaused, uncapped and of weight 1. Rewrites the prio of every queued
 * or granted waiter. Assumes: the caller sets the prio of the waiters that
 * hold permits (PSEM_HELD) to their new index itself, before releasing
 * them. Returns 0, or -1 changing nothing: EBUSY when a dropped priority
 * has waiters or holders, EINVAL for a bad map (out of range, or two
 * priorities onto one), ENOMEM.
 */
int psem_reshape(struct psem *sem, unsigned nprio, const int *map);

/* weight >= 1 shares grants under the weighted policy. */
int psem_set_weight(struct psem *sem, unsigned prio, unsigned weight);
/* At most cap permits held at once by prio; 0 lifts the cap. Waiters queued
 * already that could never fit stay queued until the cap is raised. */
int psem_set_cap(struct psem *sem, unsigned prio, unsigned cap);
/* n permits of prio are held elsewhere (by the other daemons of a
 * cluster): they count toward its cap, not against the semaphore's own
 * permits. 0, or -1 for no such priority. */
int psem_set_elsewhere(struct psem *sem, unsigned prio, unsigned n);
/* A paused priority keeps its waiters but is granted nothing. */
int psem_pause(struct psem *sem, unsigned prio);
int psem_resume(struct psem *sem, unsigned prio);

/* permits above 65535 are refused by psem_acquire, as 0 is. */
void psem_waiter_init(struct psem_waiter *w, unsigned prio, unsigned permits,
    psem_grant_cb cb, void *arg);
enum psem_state psem_waiter_state(const struct psem_waiter *w);
/*
 * Where w goes in its FIFO when it next acquires: after every waiter of an
 * order up to its own, before the rest (0 for all by default: plain FIFO).
 * A waiter taken out and put back with the same order gets its place back;
 * placing one that is not the last walks from the tail to it.
 */
void psem_waiter_order(struct psem_waiter *w, int64_t order);

/*
 * Asks for w's permits. Returns 1 when they were free and nobody the policy
 * serves first is waiting: w holds them now and its callback is never called.
 * Returns 0 when w is queued: the callback runs from the loop once it holds
 * them. On error returns -1 with errno EINVAL (w not idle, a bad priority, or
 * more permits than the semaphore or the priority's cap could ever give) and
 * changes nothing.
 */
int psem_acquire(struct psem *sem, struct psem_waiter *w);

/*
 * Gives back the permits w holds and grants them to whoever the policy picks.
 * Never calls a waiter's callback itself. Releasing a waiter that holds
 * nothing (twice, before it was granted, or never acquired) returns -1 with
 * errno EINVAL and changes nothing: a release can never add permits.
 */
int psem_release(struct psem *sem, struct psem_waiter *w);

/*
 * Withdraws a queued waiter, or one granted whose callback has not run yet
 * (its permits go back); O(1). The callback will not run. Returns -1 with
 * errno EINVAL when w is neither queued nor granted.
 */
int psem_cancel(struct psem *sem, struct psem_waiter *w);

/*
 * How many queued waiters the policy would grant before w if permits came
 * one at a time and nothing else changed; 0 = next. Pauses are ignored: it
 * is the order once every priority dispatches. Returns -1 when w is not
 * queued. Walks w's own FIFO: O(waiters ahead of it).
 */
int64_t psem_position(const struct psem *sem, const struct psem_waiter *w);
/* The same for the waiter at index (0 = head) of prio's FIFO: O(priorities). */
int64_t psem_position_at(const struct psem *sem, unsigned prio, uint64_t index);

struct psem_prio_stats {
	unsigned queued;	/* waiters in the FIFO */
	unsigned held;		/* permits held by granted waiters */
	unsigned elsewhere;	/* psem_set_elsewhere's */
	unsigned cap;
	unsigned weight;
	bool paused;
	uint64_t dispatched;	/* grants since the semaphore was made */
};

/* prio's FIFO from its head, for whoever shows what comes next: the
 * first queued waiter (NULL: none, or no such priority), and the one after
 * w. O(1) each. */
const struct psem_waiter *psem_first(const struct psem *sem, unsigned prio);
const struct psem_waiter *psem_next(const struct psem_waiter *w);

unsigned psem_permits(const struct psem *sem);
unsigned psem_available(const struct psem *sem);
unsigned psem_priorities(const struct psem *sem);
int psem_prio_stats(const struct psem *sem, unsigned prio,
    struct psem_prio_stats *st);

#endif
