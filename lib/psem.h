/* psem.h - asynchronous vector semaphore with priorities, for the event loop:
 * slots, memory and named resources, one FIFO of waiters per priority, grants
 * delivered by the loop. */
#ifndef TRIAGE_PSEM_H
#define TRIAGE_PSEM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "psem-types.h"

struct event_base;
struct psem;
struct psem_policy;

/* A need of n wants, every field zero; NULL out of memory. */
struct psem_need *psem_need_new(unsigned n);

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
 * Every waiter granted from now on is told through cb, called with the
 * waiter and arg; until it is set (cb not NULL), psem_acquire refuses.
 */
void psem_set_grant_cb(struct psem *sem, psem_grant_cb cb, void *arg);

/*
 * Makes dim (1 .. PSEM_DIMS_MAX - 1) a counted resource of count units; 0
 * removes it (a waiter wanting it is refused). Fewer take nothing back from
 * holders, as psem_set_permits. Returns -1 with errno EINVAL, changing
 * nothing, for a bad dim, a unit dimension with holders, or when a queued
 * waiter wants more than count.
 */
int psem_set_count(struct psem *sem, unsigned dim, uint64_t count);
/*
 * n of counted dim's count are held outside the semaphore (by the other
 * daemons of a cluster sharing it): not free here, though a waiter may
 * still want up to the whole count and waits for them, where a smaller
 * count would refuse it. A holder keeps what it holds when n leaves less.
 * Stays across psem_set_count but for a count of 0; a unit dimension has
 * none. 0, or -1 with errno EINVAL for a bad dim or a unit dimension.
 */
int psem_set_dim_elsewhere(struct psem *sem, unsigned dim, uint64_t n);
/*
 * Makes dim a resource of nunits (1 .. PSEM_UNITS_MAX) distinct units, each
 * held by up to share (>= 1) waiters at once; nunits 0 removes it. A grant
 * gives a waiter the least loaded units with room, the lowest first. -1
 * with errno EINVAL for a bad dim or share, or a queued waiter wanting more
 * units than nunits; EBUSY when a holder holds a unit at nunits or beyond,
 * or a counted dimension has holders.
 */
int psem_set_units(struct psem *sem, unsigned dim, unsigned nunits,
    unsigned share);

/*
 * Backfill (EASY): a waiter may take units kept for waiters ahead of it when
 * it is sure to give them back before the earliest time those could start,
 * reckoned from the holders' time left. The clock tells both; NULL turns
 * backfill off (the default). Copied.
 */
void psem_set_backfill(struct psem *sem, const struct psem_clock *clock);

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
void psem_waiter_init(struct psem_waiter *w, unsigned prio, unsigned permits);
/* What w wants beyond its permits from its next acquire on (NULL: none);
 * only while w is idle. w borrows need. */
void psem_waiter_need(struct psem_waiter *w, struct psem_need *need);
enum psem_state psem_waiter_state(const struct psem_waiter *w);
/*
 * Where w goes in its FIFO when it next acquires: after every waiter of an
 * order up to its own, before the rest (0 for all by default: plain FIFO).
 * A waiter taken out and put back with the same order gets its place back;
 * placing one that is not the last walks from the tail to it.
 */
void psem_waiter_order(struct psem_waiter *w, int64_t order);

/*
 * Asks for w's permits and its need. Returns 1 when they were free and not
 * kept for a waiter the policy serves first: w holds them now and the grant
 * callback is never called for it. Returns 0 when w is queued: the callback
 * runs from the loop once it holds them.
 *
 * Admission: waiters are taken in the policy's order (FIFO within a
 * priority). One that cannot start keeps, of what is free, what it needs in
 * the dimensions it has waited for (its permits only when they were all it
 * lacked), and those behind it may take what is free and not kept: no
 * barging, and a waiter that wants none of what another waits for is not
 * held up by it. With backfill, see psem_set_backfill.
 *
 * On error returns -1 and changes nothing: errno EINVAL (no grant callback
 * set, w not idle, a bad priority, a dimension not set up or wanted twice, or more than the
 * semaphore or the priority's cap could ever give) or ENOMEM.
 */
int psem_acquire(struct psem *sem, struct psem_waiter *w);

/*
 * w takes, outside any queue, what it holds already: a job adopted from a
 * daemon before this one keeps its permits, its memory and the very units
 * its need names (want.units), even beyond what is free now (as after
 * psem_set_permits shrank them); nothing is granted until enough comes
 * back. w is then held, as after a grant, the callback never called.
 * Returns 0, or -1 with errno EINVAL when w is not idle, its priority is
 * bad, its need names a dimension not set up, or units that are not
 * amount units of it.
 */
int psem_hold(struct psem *sem, struct psem_waiter *w);

/*
 * Gives back the permits w holds and grants them to whoever the policy picks.
 * Never calls the grant callback itself. Releasing a waiter that holds
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
 * Whether a and b want the same of everything (priority, permits and the
 * amount of each dimension) and none of it is units: one may hold what the
 * other was granted (psem_swap).
 */
bool psem_alike(const struct psem *sem, const struct psem_waiter *a,
    const struct psem_waiter *b);
/*
 * Hands what held holds to queued, which leaves its queue and is held as
 * after a grant (the callback never called for it); held is idle, as
 * after a release, but nothing came back to grant. For an owner whose
 * grant of one waiter went to another alike (a cluster's claim of the
 * job another node took first). Returns 0, or -1 with errno EINVAL when
 * held is not held, queued not queued, or they are not psem_alike.
 */
int psem_swap(struct psem *sem, struct psem_waiter *held,
    struct psem_waiter *queued);

/*
 * How many queued waiters the policy would grant before w if permits came
 * one at a time and nothing else changed; 0 = next. Pauses are ignored: it
 * is the order once every priority dispatches. Returns -1 when w is not
 * queued. Walks w's own FIFO: O(waiters ahead of it).
 */
int64_t psem_position(const struct psem *sem, const struct psem_waiter *w);
/* The same for the waiter at index (0 = head) of prio's FIFO: O(priorities). */
int64_t psem_position_at(const struct psem *sem, unsigned prio, uint64_t index);

/*
 * Why queued w has not been granted, as far as its wants go: the first
 * dimension >= 1 whose free amount (free units, of a unit dimension) is
 * short of its want; else 0 when its permits are; else -1: it fits what is
 * free, which is kept for waiters ahead of it. -2 when w is not queued.
 */
int psem_why(const struct psem *sem, const struct psem_waiter *w);

struct psem_dim_stats {
	uint64_t capacity;	/* the count, or units x share */
	uint64_t used;		/* held (a unit held twice counts twice) */
	uint64_t elsewhere;	/* psem_set_dim_elsewhere's */
	/* Kept, when admission last ran, for waiters that wait for more:
	 * counted units, or units of a unit dimension. */
	uint64_t kept;
	unsigned waiting;	/* queued waiters that want it */
	unsigned units;		/* of a unit dimension; 0 counted */
	unsigned share;
};
/* Dimension dim's figures (0 the permits); -1 for a dimension not set up. */
int psem_dim_stats(const struct psem *sem, unsigned dim,
    struct psem_dim_stats *st);
/* Whether a queued waiter wants more than n of dim (O(queued waiters)). */
bool psem_dim_wanted_over(const struct psem *sem, unsigned dim, uint64_t n);
/* How many holders hold unit of dim; 0 for anything not a unit. */
unsigned psem_unit_load(const struct psem *sem, unsigned dim, unsigned unit);

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
/* The permits this semaphore's own waiters hold, over every priority
 * (those held elsewhere aside). */
unsigned psem_held(const struct psem *sem);
unsigned psem_priorities(const struct psem *sem);
int psem_prio_stats(const struct psem *sem, unsigned prio,
    struct psem_prio_stats *st);

#endif
