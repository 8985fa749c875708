/* test-psem.c - unit tests of the asynchronous priority semaphore, driven by
 * a bare event_base: order, no barging, exclusivity, policies, caps, cancel. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "psem.h"

/* A test waiter: records the order grants arrive in and, optionally, gives
 * its permits straight back. */
struct tw {
	struct psem_waiter w;
	struct fixture *fx;
	int id;
	int granted;		/* callbacks seen */
	int turn;		/* loop turn of the last callback */
	bool auto_release;
	bool reacquire;
};

struct fixture {
	struct event_base *base;
	struct psem *sem;
	int order[64];
	int norder;
	int turn;
	uint64_t per_prio[4];
	uint64_t total;
	uint64_t stop_after;
};

static void
tw_cb(struct psem_waiter *w, void *arg)
{
	struct tw *t = (struct tw *)((char *)w - offsetof(struct tw, w));
	struct fixture *fx = t->fx;

	/* The semaphore's argument, whichever waiter it tells. */
	assert_ptr_equal(arg, fx);
	assert_int_equal(psem_waiter_state(w), PSEM_HELD);
	t->granted++;
	t->turn = fx->turn;
	if (fx->norder < (int)(sizeof fx->order / sizeof fx->order[0]))
		fx->order[fx->norder++] = t->id;
	fx->per_prio[w->prio]++;
	fx->total++;
	if (t->auto_release)
		assert_int_equal(psem_release(fx->sem, w), 0);
	if (fx->stop_after != 0 && fx->total >= fx->stop_after) {
		event_base_loopbreak(fx->base);
		return;
	}
	if (t->reacquire)
		assert_true(psem_acquire(fx->sem, w) >= 0);
}

static struct fixture *
fixture_new(unsigned permits, unsigned nprio, const char *policy)
{
	struct fixture *fx = calloc(1, sizeof *fx);

	assert_non_null(fx);
	fx->base = event_base_new();
	assert_non_null(fx->base);
	fx->sem = psem_new(fx->base, permits, nprio, psem_policy_find(policy));
	assert_non_null(fx->sem);
	psem_set_grant_cb(fx->sem, tw_cb, fx);
	return fx;
}

static void
fixture_free(struct fixture *fx)
{
	psem_free(fx->sem);
	event_base_free(fx->base);
	free(fx);
}

static void
tw_init(struct fixture *fx, struct tw *t, int id, unsigned prio,
    unsigned permits)
{
	memset(t, 0, sizeof *t);
	t->fx = fx;
	t->id = id;
	psem_waiter_init(&t->w, prio, permits);
}

/* One turn of the loop that does not block. */
static void
turn(struct fixture *fx)
{
	fx->turn++;
	assert_int_equal(event_base_loop(fx->base, EVLOOP_ONCE | EVLOOP_NONBLOCK), 0);
}

/* Turns the loop until nothing more is pending. */
static void
settle(struct fixture *fx)
{
	int i;

	for (i = 0; i < 10000; i++) {
		fx->turn++;
		if (event_base_loop(fx->base, EVLOOP_NONBLOCK) == 1)
			return;
	}
	fail_msg("the loop never settled");
}

static unsigned
held(struct fixture *fx, unsigned prio)
{
	struct psem_prio_stats st;

	assert_int_equal(psem_prio_stats(fx->sem, prio, &st), 0);
	return st.held;
}

static unsigned
queued(struct fixture *fx, unsigned prio)
{
	struct psem_prio_stats st;

	assert_int_equal(psem_prio_stats(fx->sem, prio, &st), 0);
	return st.queued;
}

/* 1 */
static void
test_uncontended_acquire_is_synchronous(void **state)
{
	struct fixture *fx = fixture_new(4, 3, "strict");
	struct tw a, b, c;
	struct mallinfo2 before, after;
	int i;

	(void)state;
	tw_init(fx, &a, 1, 0, 1);
	tw_init(fx, &b, 2, 2, 2);
	tw_init(fx, &c, 3, 1, 1);

	assert_int_equal(psem_acquire(fx->sem, &a.w), 1);
	assert_int_equal(psem_waiter_state(&a.w), PSEM_HELD);
	assert_int_equal(psem_available(fx->sem), 3);
	assert_int_equal(psem_acquire(fx->sem, &b.w), 1);
	assert_int_equal(psem_available(fx->sem), 1);
	assert_int_equal(held(fx, 0), 1);
	assert_int_equal(held(fx, 2), 2);
	assert_int_equal(psem_held(fx->sem), 3);
	assert_int_equal(psem_acquire(fx->sem, &c.w), 1);
	assert_int_equal(psem_available(fx->sem), 0);

	assert_int_equal(psem_release(fx->sem, &b.w), 0);
	assert_int_equal(psem_available(fx->sem), 2);
	assert_int_equal(held(fx, 2), 0);
	assert_int_equal(psem_release(fx->sem, &a.w), 0);
	assert_int_equal(psem_release(fx->sem, &c.w), 0);
	assert_int_equal(psem_available(fx->sem), 4);
	assert_int_equal(psem_held(fx->sem), 0);

	/* Synchronous grants run no callback and allocate nothing. */
	before = mallinfo2();
	for (i = 0; i < 1000; i++) {
		assert_int_equal(psem_acquire(fx->sem, &a.w), 1);
		assert_int_equal(psem_acquire(fx->sem, &b.w), 1);
		assert_int_equal(psem_release(fx->sem, &a.w), 0);
		assert_int_equal(psem_release(fx->sem, &b.w), 0);
	}
	after = mallinfo2();
	assert_int_equal(before.uordblks, after.uordblks);
	settle(fx);
	assert_int_equal(a.granted + b.granted + c.granted, 0);
	assert_int_equal(psem_available(fx->sem), 4);
	fixture_free(fx);
}

/* 2 */
static void
test_strict_order_is_priority_then_fifo(void **state)
{
	struct fixture *fx = fixture_new(1, 3, "strict");
	static const unsigned prios[] = { 2, 1, 0, 1, 0 };
	static const int expect[] = { 3, 5, 2, 4, 1 };
	struct tw holder, t[5];
	int i;

	(void)state;
	tw_init(fx, &holder, 0, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &holder.w), 1);
	for (i = 0; i < 5; i++) {
		tw_init(fx, &t[i], i + 1, prios[i], 1);
		t[i].auto_release = true;
		assert_int_equal(psem_acquire(fx->sem, &t[i].w), 0);
	}
	assert_int_equal(psem_release(fx->sem, &holder.w), 0);
	assert_int_equal(fx->norder, 0);	/* never from inside release */
	settle(fx);
	assert_int_equal(fx->norder, 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(fx->order[i], expect[i]);
	fixture_free(fx);
}

/* 3 */
static void
test_weighted_acquire_does_not_barge(void **state)
{
	struct fixture *fx = fixture_new(4, 3, "strict");
	struct tw h1, h2, big, same, lower, urgent;

	(void)state;
	tw_init(fx, &h1, 1, 1, 1);
	tw_init(fx, &h2, 2, 1, 1);
	assert_int_equal(psem_acquire(fx->sem, &h1.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &h2.w), 1);

	tw_init(fx, &big, 3, 1, 3);
	tw_init(fx, &same, 4, 1, 1);
	tw_init(fx, &lower, 5, 2, 1);
	assert_int_equal(psem_acquire(fx->sem, &big.w), 0);
	/* Two permits are free, but both are behind the head needing three. */
	assert_int_equal(psem_acquire(fx->sem, &same.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &lower.w), 0);
	settle(fx);
	assert_int_equal(psem_available(fx->sem), 2);
	assert_int_equal(same.granted + lower.granted + big.granted, 0);

	/* A more urgent waiter is ahead of the head, not behind it. */
	tw_init(fx, &urgent, 6, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &urgent.w), 1);
	assert_int_equal(psem_release(fx->sem, &urgent.w), 0);

	assert_int_equal(psem_release(fx->sem, &h1.w), 0);
	settle(fx);
	assert_int_equal(big.granted, 1);
	assert_int_equal(same.granted + lower.granted, 0);
	assert_int_equal(psem_available(fx->sem), 0);

	assert_int_equal(psem_release(fx->sem, &h2.w), 0);
	settle(fx);
	assert_int_equal(same.granted, 1);
	assert_int_equal(lower.granted, 0);
	assert_int_equal(psem_release(fx->sem, &big.w), 0);
	settle(fx);
	assert_int_equal(lower.granted, 1);
	fixture_free(fx);
}

/* 4 */
static void
test_exclusive_waits_runs_alone_then_all_that_fit_go_at_once(void **state)
{
	struct fixture *fx = fixture_new(4, 3, "strict");
	struct tw h1, h2, excl, t[5];
	int i;

	(void)state;
	tw_init(fx, &h1, 1, 1, 1);
	tw_init(fx, &h2, 2, 1, 1);
	assert_int_equal(psem_acquire(fx->sem, &h1.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &h2.w), 1);
	tw_init(fx, &excl, 3, 1, 4);
	assert_int_equal(psem_acquire(fx->sem, &excl.w), 0);
	for (i = 0; i < 5; i++) {
		tw_init(fx, &t[i], 10 + i, i < 2 ? 1 : 2, 1);
		assert_int_equal(psem_acquire(fx->sem, &t[i].w), 0);
	}

	assert_int_equal(psem_release(fx->sem, &h1.w), 0);
	settle(fx);
	assert_int_equal(excl.granted, 0);
	assert_int_equal(psem_release(fx->sem, &h2.w), 0);
	settle(fx);
	assert_int_equal(excl.granted, 1);
	assert_int_equal(psem_available(fx->sem), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(t[i].granted, 0);

	/* One release, one turn of the loop: the four that fit all start. */
	assert_int_equal(psem_release(fx->sem, &excl.w), 0);
	turn(fx);
	for (i = 0; i < 4; i++) {
		assert_int_equal(t[i].granted, 1);
		assert_int_equal(t[i].turn, fx->turn);
	}
	assert_int_equal(t[4].granted, 0);
	assert_int_equal(queued(fx, 2), 1);
	fixture_free(fx);
}

/* 5: the chain runs on a thread whose stack is too small for recursion. */
#define CHAIN_CYCLES 1000000

struct chain {
	struct fixture *fx;
	struct psem_waiter a, b;
	long cycles;
};

static void
chain_cb(struct psem_waiter *w, void *arg)
{
	struct chain *ch = arg;
	struct psem_waiter *other = w == &ch->a ? &ch->b : &ch->a;

	if (++ch->cycles < CHAIN_CYCLES)
		assert_int_equal(psem_acquire(ch->fx->sem, other), 0);
	assert_int_equal(psem_release(ch->fx->sem, w), 0);
}

static void *
chain_thread(void *arg)
{
	struct chain *ch = arg;

	psem_set_grant_cb(ch->fx->sem, chain_cb, ch);
	psem_waiter_init(&ch->a, 0, 1);
	psem_waiter_init(&ch->b, 1, 1);
	if (psem_acquire(ch->fx->sem, &ch->a) != 1)
		return NULL;
	if (psem_acquire(ch->fx->sem, &ch->b) != 0)
		return NULL;
	if (psem_release(ch->fx->sem, &ch->a) != 0)
		return NULL;
	event_base_dispatch(ch->fx->base);
	return ch;
}

static void
test_release_grant_chain_does_not_recurse(void **state)
{
	struct fixture *fx = fixture_new(1, 2, "strict");
	struct chain ch = { .fx = fx };
	pthread_attr_t attr;
	pthread_t thread;
	void *result = NULL;

	(void)state;
	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstacksize(&attr, 64 * 1024), 0);
	assert_int_equal(pthread_create(&thread, &attr, chain_thread, &ch), 0);
	assert_int_equal(pthread_join(thread, &result), 0);
	pthread_attr_destroy(&attr);
	assert_ptr_equal(result, &ch);
	assert_int_equal(ch.cycles, CHAIN_CYCLES);
	assert_int_equal(psem_available(fx->sem), 1);
	fixture_free(fx);
}

/* 6 */
static void
test_weighted_policy_shares_by_weight(void **state)
{
	static const unsigned weights[] = { 8, 3, 1 };
	struct fixture *fx = fixture_new(1, 3, "weighted");
	struct tw t[3][4];
	double share;
	unsigned p;
	int i;

	(void)state;
	fx->stop_after = 12000;
	for (p = 0; p < 3; p++) {
		assert_int_equal(psem_set_weight(fx->sem, p, weights[p]), 0);
		for (i = 0; i < 4; i++) {
			tw_init(fx, &t[p][i], (int)p, p, 1);
			t[p][i].auto_release = true;
			t[p][i].reacquire = true;
		}
	}
	/* Hold the permit until every priority is backlogged. */
	for (i = 0; i < 4; i++)
		for (p = 0; p < 3; p++)
			assert_true(psem_acquire(fx->sem, &t[p][i].w) >= 0);
	assert_int_equal(psem_release(fx->sem, &t[0][0].w), 0);
	fx->per_prio[0]++;	/* the synchronous grant counts too */
	fx->total++;
	assert_int_equal(psem_acquire(fx->sem, &t[0][0].w), 0);
	event_base_dispatch(fx->base);

	assert_int_equal(fx->total, 12000);
	for (p = 0; p < 3; p++) {
		share = (double)fx->per_prio[p] / (double)fx->total;
		assert_true(share > weights[p] / 12.0 - 0.01);
		assert_true(share < weights[p] / 12.0 + 0.01);
	}
	for (p = 0; p < 3; p++)
		for (i = 0; i < 4; i++)
			if (psem_cancel(fx->sem, &t[p][i].w) != 0)
				(void)psem_release(fx->sem, &t[p][i].w);
	fixture_free(fx);
}

/* 7: random arrivals and departures; after every step, a more urgent waiter
 * still queued means nothing less urgent was granted in that step. */
static void
test_strict_never_grants_lower_while_higher_waits(void **state)
{
	enum { NW = 60, STEPS = 20000 };
	struct fixture *fx = fixture_new(3, 4, "strict");
	struct tw t[NW];
	struct psem_prio_stats before[4], after[4];
	unsigned p, q;
	int i, step;

	(void)state;
	srand(7);
	for (i = 0; i < NW; i++)
		tw_init(fx, &t[i], i, (unsigned)i % 4, 1);
	for (step = 0; step < STEPS; step++) {
		for (p = 0; p < 4; p++)
			psem_prio_stats(fx->sem, p, &before[p]);
		i = rand() % NW;
		switch (psem_waiter_state(&t[i].w)) {
		case PSEM_IDLE:
			assert_true(psem_acquire(fx->sem, &t[i].w) >= 0);
			break;
		case PSEM_QUEUED:
			if (rand() % 4 == 0)
				assert_int_equal(psem_cancel(fx->sem, &t[i].w), 0);
			break;
		case PSEM_HELD:
			assert_int_equal(psem_release(fx->sem, &t[i].w), 0);
			break;
		case PSEM_GRANTED:
			turn(fx);
			break;
		}
		for (p = 0; p < 4; p++)
			psem_prio_stats(fx->sem, p, &after[p]);
		for (p = 0; p < 4; p++) {
			if (after[p].queued == 0)
				continue;
			assert_int_equal(psem_available(fx->sem), 0);
			for (q = p + 1; q < 4; q++)
				assert_int_equal(after[q].dispatched,
				    before[q].dispatched);
		}
	}
	for (i = 0; i < NW; i++)
		if (psem_cancel(fx->sem, &t[i].w) != 0)
			(void)psem_release(fx->sem, &t[i].w);
	assert_int_equal(psem_available(fx->sem), 3);
	fixture_free(fx);
}

/* 8 */
static void
test_cap_limits_one_priority_while_others_proceed(void **state)
{
	struct fixture *fx = fixture_new(4, 3, "strict");
	struct tw c[3], o[2], p[2];
	int i;

	(void)state;
	assert_int_equal(psem_set_cap(fx->sem, 0, 1), 0);
	for (i = 0; i < 3; i++)
		tw_init(fx, &c[i], i, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &c[0].w), 1);
	assert_int_equal(psem_acquire(fx->sem, &c[1].w), 0);
	assert_int_equal(psem_acquire(fx->sem, &c[2].w), 0);
	/* The capped priority blocks nobody else. */
	for (i = 0; i < 2; i++) {
		tw_init(fx, &o[i], 10 + i, 1, 1);
		assert_int_equal(psem_acquire(fx->sem, &o[i].w), 1);
	}
	assert_int_equal(psem_available(fx->sem), 1);
	assert_int_equal(held(fx, 0), 1);
	/* More than the cap could ever give is refused outright. */
	tw_init(fx, &p[0], 20, 0, 2);
	assert_int_equal(psem_acquire(fx->sem, &p[0].w), -1);
	assert_int_equal(errno, EINVAL);

	assert_int_equal(psem_release(fx->sem, &c[0].w), 0);
	settle(fx);
	assert_int_equal(c[1].granted, 1);
	assert_int_equal(c[2].granted, 0);
	assert_int_equal(held(fx, 0), 1);

	/* Raising the cap lets the next one go at once. */
	assert_int_equal(psem_set_cap(fx->sem, 0, 2), 0);
	settle(fx);
	assert_int_equal(c[2].granted, 1);
	assert_int_equal(psem_available(fx->sem), 0);

	/* Pause: free permits, yet the paused priority gets none; resume
	 * grants at once; pausing the head others wait behind frees them. */
	assert_int_equal(psem_release(fx->sem, &o[0].w), 0);
	assert_int_equal(psem_release(fx->sem, &o[1].w), 0);
	assert_int_equal(psem_pause(fx->sem, 1), 0);
	tw_init(fx, &o[0], 10, 1, 1);
	assert_int_equal(psem_acquire(fx->sem, &o[0].w), 0);
	tw_init(fx, &p[0], 20, 2, 1);
	assert_int_equal(psem_acquire(fx->sem, &p[0].w), 1);
	settle(fx);
	assert_int_equal(o[0].granted, 0);
	assert_int_equal(psem_resume(fx->sem, 1), 0);
	settle(fx);
	assert_int_equal(o[0].granted, 1);
	assert_int_equal(psem_available(fx->sem), 0);

	assert_int_equal(psem_release(fx->sem, &o[0].w), 0);
	tw_init(fx, &o[1], 11, 1, 3);	/* needs 3, only 1 free */
	assert_int_equal(psem_acquire(fx->sem, &o[1].w), 0);
	tw_init(fx, &p[1], 21, 2, 1);
	assert_int_equal(psem_acquire(fx->sem, &p[1].w), 0);
	assert_int_equal(psem_pause(fx->sem, 1), 0);
	settle(fx);
	assert_int_equal(p[1].granted, 1);
	assert_int_equal(o[1].granted, 0);

	assert_int_equal(psem_cancel(fx->sem, &o[1].w), 0);
	assert_int_equal(psem_release(fx->sem, &p[1].w), 0);
	assert_int_equal(psem_release(fx->sem, &p[0].w), 0);
	assert_int_equal(psem_release(fx->sem, &c[1].w), 0);
	assert_int_equal(psem_release(fx->sem, &c[2].w), 0);
	assert_int_equal(psem_available(fx->sem), 4);
	fixture_free(fx);
}

/* 9 */
static void
test_cancel_anywhere_and_positions(void **state)
{
	struct fixture *fx = fixture_new(1, 2, "strict");
	struct tw holder, a[3], b[3];
	int i;

	(void)state;
	tw_init(fx, &holder, 0, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &holder.w), 1);
	assert_int_equal(psem_position(fx->sem, &holder.w), -1);
	for (i = 0; i < 3; i++) {
		tw_init(fx, &b[i], 10 + i, 1, 1);
		assert_int_equal(psem_acquire(fx->sem, &b[i].w), 0);
	}
	for (i = 0; i < 3; i++) {
		tw_init(fx, &a[i], i + 1, 0, 1);
		assert_int_equal(psem_acquire(fx->sem, &a[i].w), 0);
	}
	/* a0 a1 a2 b0 b1 b2 */
	for (i = 0; i < 3; i++) {
		assert_int_equal(psem_position(fx->sem, &a[i].w), i);
		assert_int_equal(psem_position(fx->sem, &b[i].w), 3 + i);
	}
	assert_int_equal(psem_cancel(fx->sem, &a[1].w), 0);	/* middle */
	assert_int_equal(psem_waiter_state(&a[1].w), PSEM_IDLE);
	assert_int_equal(psem_position(fx->sem, &a[1].w), -1);
	assert_int_equal(psem_position(fx->sem, &a[2].w), 1);
	assert_int_equal(psem_position(fx->sem, &b[0].w), 2);
	assert_int_equal(psem_cancel(fx->sem, &a[0].w), 0);	/* head */
	assert_int_equal(psem_position(fx->sem, &a[2].w), 0);
	assert_int_equal(psem_cancel(fx->sem, &b[2].w), 0);	/* tail */
	assert_int_equal(psem_position(fx->sem, &b[1].w), 2);
	assert_int_equal(queued(fx, 0), 1);
	assert_int_equal(queued(fx, 1), 2);
	/* Cancel twice, or cancel a holder: refused, nothing changes. */
	assert_int_equal(psem_cancel(fx->sem, &b[2].w), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(psem_cancel(fx->sem, &holder.w), -1);
	assert_int_equal(queued(fx, 1), 2);

	/* Positions ignore pauses: the order once all dispatch again. */
	assert_int_equal(psem_pause(fx->sem, 0), 0);
	assert_int_equal(psem_position(fx->sem, &b[0].w), 1);
	assert_int_equal(psem_position(fx->sem, &a[2].w), 0);
	assert_int_equal(psem_resume(fx->sem, 0), 0);

	/* Granted but not yet told: cancel gives the permit to the next. */
	assert_int_equal(psem_release(fx->sem, &holder.w), 0);
	assert_int_equal(psem_waiter_state(&a[2].w), PSEM_GRANTED);
	assert_int_equal(psem_cancel(fx->sem, &a[2].w), 0);
	assert_int_equal(psem_waiter_state(&b[0].w), PSEM_GRANTED);
	settle(fx);
	assert_int_equal(a[2].granted, 0);
	assert_int_equal(b[0].granted, 1);
	assert_int_equal(psem_position(fx->sem, &b[1].w), 0);
	assert_int_equal(psem_release(fx->sem, &b[0].w), 0);
	settle(fx);
	assert_int_equal(b[1].granted, 1);
	assert_int_equal(psem_release(fx->sem, &b[1].w), 0);
	assert_int_equal(psem_available(fx->sem), 1);
	fixture_free(fx);
}

/*
 * Positions stay right through any mix of grants at the head, cancels and
 * returns anywhere, asked in any order: the memo of the last one found is
 * kept across them (a list of a long queue pages from where it was), and
 * checked here against the FIFO as the test keeps it.
 */
static void
test_positions_through_changes(void **state)
{
	enum { N = 200 };
	struct fixture *fx = fixture_new(1, 1, "strict");
	struct tw holder, w[N];
	int fifo[N], n = 0, i, j, k, op;
	unsigned seed = 11;

	(void)state;
	tw_init(fx, &holder, 0, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &holder.w), 1);
	for (i = 0; i < N; i++) {
		tw_init(fx, &w[i], i + 1, 0, 1);
		/* Pairs of equal orders: ties too. */
		psem_waiter_order(&w[i].w, i / 2);
		assert_int_equal(psem_acquire(fx->sem, &w[i].w), 0);
		fifo[n++] = i;
	}
	for (k = 0; k < 3000; k++) {
		seed = seed * 1103515245 + 12345;
		op = (int)(seed >> 16) % 8;
		j = (int)((seed >> 8) % N);
		if (op == 0 && n > 0) {
			/* The head is granted, and given back at once. */
			i = fifo[0];
			memmove(fifo, fifo + 1, (size_t)--n * sizeof *fifo);
			assert_int_equal(psem_release(fx->sem, &holder.w), 0);
			settle(fx);
			assert_int_equal(psem_waiter_state(&w[i].w), PSEM_HELD);
			holder = w[i];
			tw_init(fx, &w[i], i + 1, 0, 1);
			psem_waiter_order(&w[i].w, i / 2);
			/* The copy holds the permit from now on. */
			continue;
		}
		for (i = 0; i < n && fifo[i] != j; i++)
			;
		if (op <= 2 && i < n) {
			assert_int_equal(psem_cancel(fx->sem, &w[j].w), 0);
			memmove(fifo + i, fifo + i + 1,
			    (size_t)(n - i - 1) * sizeof *fifo);
			n--;
		} else if (op <= 4 && i == n &&
		    psem_waiter_state(&w[j].w) == PSEM_IDLE) {
			assert_int_equal(psem_acquire(fx->sem, &w[j].w), 0);
			for (i = n; i > 0 && fifo[i - 1] / 2 > j / 2; i--)
				fifo[i] = fifo[i - 1];
			fifo[i] = j;
			n++;
		} else if (i < n)
			assert_int_equal(psem_position(fx->sem, &w[j].w), i);
	}
	for (i = 0; i < n; i++)
		assert_int_equal(psem_position(fx->sem, &w[fifo[i]].w), i);
	for (i = n - 1; i >= 0; i--)
		assert_int_equal(psem_position(fx->sem, &w[fifo[i]].w), i);
	for (i = 0; i < n; i++)
		assert_int_equal(psem_cancel(fx->sem, &w[fifo[i]].w), 0);
	assert_int_equal(psem_release(fx->sem, &holder.w), 0);
	settle(fx);
	fixture_free(fx);
}

/*
 * A waiter with an order goes back to its place among the others, as a
 * held job released does: before every waiter of a greater order, after
 * those of an equal or smaller one; positions follow at once.
 */
static void
test_acquire_by_order_takes_its_place_back(void **state)
{
	struct fixture *fx = fixture_new(1, 1, "strict");
	struct tw holder, w[5];
	int i;

	(void)state;
	tw_init(fx, &holder, 0, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &holder.w), 1);
	for (i = 0; i < 5; i++) {
		tw_init(fx, &w[i], i + 1, 0, 1);
		psem_waiter_order(&w[i].w, 10 * (i + 1));
		assert_int_equal(psem_acquire(fx->sem, &w[i].w), 0);
	}
	/* Out and back in: the middle, the head, the tail. */
	assert_int_equal(psem_position(fx->sem, &w[4].w), 4);
	assert_int_equal(psem_cancel(fx->sem, &w[2].w), 0);
	assert_int_equal(psem_position(fx->sem, &w[4].w), 3);
	assert_int_equal(psem_acquire(fx->sem, &w[2].w), 0);
	assert_int_equal(psem_position(fx->sem, &w[2].w), 2);
	assert_int_equal(psem_position(fx->sem, &w[4].w), 4);
	assert_int_equal(psem_cancel(fx->sem, &w[0].w), 0);
	assert_int_equal(psem_cancel(fx->sem, &w[4].w), 0);
	assert_int_equal(psem_acquire(fx->sem, &w[4].w), 0);
	assert_int_equal(psem_acquire(fx->sem, &w[0].w), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(psem_position(fx->sem, &w[i].w), i);
	/* An equal order goes after its equals. */
	assert_int_equal(psem_cancel(fx->sem, &w[1].w), 0);
	psem_waiter_order(&w[1].w, 30);
	assert_int_equal(psem_acquire(fx->sem, &w[1].w), 0);
	assert_int_equal(psem_position(fx->sem, &w[2].w), 1);
	assert_int_equal(psem_position(fx->sem, &w[1].w), 2);

	/* Grants follow that order. */
	holder.auto_release = true;
	for (i = 0; i < 5; i++)
		w[i].auto_release = true;
	assert_int_equal(psem_release(fx->sem, &holder.w), 0);
	settle(fx);
	assert_int_equal(fx->norder, 5);
	assert_int_equal(fx->order[0], 1);
	assert_int_equal(fx->order[1], 3);
	assert_int_equal(fx->order[2], 2);
	assert_int_equal(fx->order[3], 4);
	assert_int_equal(fx->order[4], 5);
	fixture_free(fx);
}

/* Canceling the head that blocked everyone lets the rest through. */
static void
test_cancel_of_blocking_head_unblocks(void **state)
{
	struct fixture *fx = fixture_new(2, 2, "strict");
	struct tw h, big, small;

	(void)state;
	tw_init(fx, &h, 1, 0, 1);
	tw_init(fx, &big, 2, 0, 2);
	tw_init(fx, &small, 3, 1, 1);
	assert_int_equal(psem_acquire(fx->sem, &h.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &big.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &small.w), 0);
	assert_int_equal(psem_cancel(fx->sem, &big.w), 0);
	settle(fx);
	assert_int_equal(small.granted, 1);
	assert_int_equal(psem_release(fx->sem, &small.w), 0);
	assert_int_equal(psem_release(fx->sem, &h.w), 0);
	fixture_free(fx);
}

/* Positions stay exact however they are asked for: in order (which walks
 * the queue once), backwards, and after a waiter leaves the middle. */
static void
test_positions_in_any_order_of_asking(void **state)
{
	enum { N = 500 };
	struct fixture *fx = fixture_new(1, 1, "strict");
	struct tw holder, *t = calloc(N, sizeof *t);
	int i;

	(void)state;
	tw_init(fx, &holder, -1, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &holder.w), 1);
	for (i = 0; i < N; i++) {
		tw_init(fx, &t[i], i, 0, 1);
		assert_int_equal(psem_acquire(fx->sem, &t[i].w), 0);
	}
	for (i = 0; i < N; i++)
		assert_int_equal(psem_position(fx->sem, &t[i].w), i);
	for (i = N - 1; i >= 0; i--)
		assert_int_equal(psem_position(fx->sem, &t[i].w), i);
	assert_int_equal(psem_position(fx->sem, &t[300].w), 300);
	assert_int_equal(psem_cancel(fx->sem, &t[100].w), 0);
	assert_int_equal(psem_position(fx->sem, &t[300].w), 299);
	assert_int_equal(psem_position(fx->sem, &t[50].w), 50);
	assert_int_equal(psem_position(fx->sem, &t[101].w), 100);
	for (i = 0; i < N; i++)
		if (i != 100)
			assert_int_equal(psem_cancel(fx->sem, &t[i].w), 0);
	assert_int_equal(psem_release(fx->sem, &holder.w), 0);
	free(t);
	fixture_free(fx);
}

/* Under the weighted policy the positions are the order grants come in. */
static void
test_weighted_positions_match_grant_order(void **state)
{
	static const unsigned weights[] = { 5, 2, 1 };
	static const unsigned counts[] = { 7, 9, 6 };
	struct fixture *fx = fixture_new(1, 3, "weighted");
	struct tw holder, t[3][9];
	int64_t pos[3][9];
	unsigned p, i, n = 0;

	(void)state;
	tw_init(fx, &holder, 100, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &holder.w), 1);
	for (p = 0; p < 3; p++) {
		assert_int_equal(psem_set_weight(fx->sem, p, weights[p]), 0);
		for (i = 0; i < counts[p]; i++) {
			tw_init(fx, &t[p][i], (int)(p * 10 + i), p, 1);
			t[p][i].auto_release = true;
			assert_int_equal(psem_acquire(fx->sem, &t[p][i].w), 0);
		}
	}
	for (p = 0; p < 3; p++)
		for (i = 0; i < counts[p]; i++) {
			pos[p][i] = psem_position(fx->sem, &t[p][i].w);
			assert_int_equal(pos[p][i],
			    psem_position_at(fx->sem, p, i));
			n++;
		}
	assert_int_equal(psem_release(fx->sem, &holder.w), 0);
	settle(fx);
	assert_int_equal(fx->norder, n);
	for (p = 0; p < 3; p++)
		for (i = 0; i < counts[p]; i++)
			assert_int_equal(fx->order[pos[p][i]],
			    (int)(p * 10 + i));
	fixture_free(fx);
}

/* 10 */
static void
test_release_beyond_acquired_is_refused(void **state)
{
	struct fixture *fx = fixture_new(2, 1, "strict");
	struct tw a, b, never;

	(void)state;
	tw_init(fx, &a, 1, 0, 1);
	tw_init(fx, &b, 2, 0, 2);
	tw_init(fx, &never, 3, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &a.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &b.w), 0);
	assert_int_equal(psem_release(fx->sem, &a.w), 0);
	assert_int_equal(psem_release(fx->sem, &a.w), -1);	/* twice */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(psem_release(fx->sem, &never.w), -1);	/* never */
	assert_int_equal(errno, EINVAL);
	/* Granted, but the owner has not been told yet. */
	assert_int_equal(psem_waiter_state(&b.w), PSEM_GRANTED);
	assert_int_equal(psem_release(fx->sem, &b.w), -1);
	assert_int_equal(psem_available(fx->sem), 0);
	settle(fx);
	assert_int_equal(psem_release(fx->sem, &b.w), 0);
	assert_int_equal(psem_release(fx->sem, &b.w), -1);
	assert_int_equal(psem_available(fx->sem), 2);
	fixture_free(fx);
}

static void
test_bad_arguments_are_refused(void **state)
{
	struct event_base *base = event_base_new();
	struct fixture *fx = fixture_new(2, 2, "strict");
	struct tw t;

	(void)state;
	assert_null(psem_policy_find("fifo"));
	assert_string_equal(psem_policy_name(psem_policy_find("weighted")),
	    "weighted");
	assert_null(psem_new(base, 0, 1, psem_policy_find("strict")));
	assert_null(psem_new(base, 1, 65, psem_policy_find("strict")));
	tw_init(fx, &t, 1, 2, 1);			/* no such priority */
	assert_int_equal(psem_acquire(fx->sem, &t.w), -1);
	tw_init(fx, &t, 1, 0, 3);			/* more than exist */
	assert_int_equal(psem_acquire(fx->sem, &t.w), -1);
	tw_init(fx, &t, 1, 0, 0);
	assert_int_equal(psem_acquire(fx->sem, &t.w), -1);
	tw_init(fx, &t, 1, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &t.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &t.w), -1);	/* held */
	assert_int_equal(psem_set_weight(fx->sem, 0, 0), -1);
	assert_int_equal(psem_pause(fx->sem, 5), -1);
	assert_int_equal(psem_release(fx->sem, &t.w), 0);
	fixture_free(fx);
	event_base_free(base);
}

/* Reshaping re-ranks: each FIFO keeps its order under its new index, a
 * dropped priority must be empty, a new one starts empty. */
static void
test_reshape_moves_queues_in_order(void **state)
{
	struct fixture *fx = fixture_new(1, 3, "strict");
	static const unsigned prios[] = { 0, 2, 0, 2, 1 };
	static const int expect[] = { 2, 4, 1, 3 };
	int map[3] = { 1, -1, 0 }, bad[3] = { 0, 0, 1 };
	struct tw holder, t[5];
	struct psem_prio_stats st;
	int i;

	(void)state;
	tw_init(fx, &holder, 0, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &holder.w), 1);
	assert_int_equal(psem_pause(fx->sem, 2), 0);
	for (i = 0; i < 5; i++) {
		tw_init(fx, &t[i], i + 1, prios[i], 1);
		t[i].auto_release = true;
		assert_int_equal(psem_acquire(fx->sem, &t[i].w), 0);
	}
	/* Priority 1 is not empty: nothing changes. */
	errno = 0;
	assert_int_equal(psem_reshape(fx->sem, 3, map), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(psem_cancel(fx->sem, &t[4].w), 0);
	/* Two onto one. */
	assert_int_equal(psem_reshape(fx->sem, 3, bad), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(psem_priorities(fx->sem), 3);

	/* 0 -> 1, 1 dropped, 2 -> 0, and a new priority 2. */
	assert_int_equal(psem_reshape(fx->sem, 3, map), 0);
	assert_int_equal(psem_priorities(fx->sem), 3);
	assert_int_equal(t[0].w.prio, 1);
	assert_int_equal(t[1].w.prio, 0);
	assert_int_equal(queued(fx, 0), 2);
	assert_int_equal(queued(fx, 1), 2);
	assert_int_equal(queued(fx, 2), 0);
	assert_int_equal(psem_prio_stats(fx->sem, 0, &st), 0);
	assert_true(st.paused);		/* the pause moved with it */
	assert_int_equal(psem_prio_stats(fx->sem, 2, &st), 0);
	assert_false(st.paused);
	assert_int_equal(st.weight, 1);
	/* The holder's prio is its owner's to rewrite. */
	holder.w.prio = 1;
	assert_int_equal(held(fx, 1), 1);
	assert_int_equal(psem_resume(fx->sem, 0), 0);
	assert_int_equal(psem_release(fx->sem, &holder.w), 0);
	settle(fx);
	assert_int_equal(fx->norder, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(fx->order[i], expect[i]);
	assert_int_equal(psem_available(fx->sem), 1);

	/* Fewer priorities. */
	map[0] = 0;
	map[1] = -1;
	map[2] = -1;
	assert_int_equal(psem_reshape(fx->sem, 1, map), 0);
	assert_int_equal(psem_priorities(fx->sem), 1);
	fixture_free(fx);
}

/* More permits grant more at once; fewer take nothing from holders and
 * grant nothing until the holders are back under the new count. */
static void
test_set_permits_grows_and_shrinks(void **state)
{
	struct fixture *fx = fixture_new(2, 1, "strict");
	struct tw h[2], t[3], big;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		tw_init(fx, &h[i], 10 + i, 0, 1);
		assert_int_equal(psem_acquire(fx->sem, &h[i].w), 1);
	}
	for (i = 0; i < 3; i++) {
		tw_init(fx, &t[i], i + 1, 0, 1);
		assert_int_equal(psem_acquire(fx->sem, &t[i].w), 0);
	}
	assert_int_equal(psem_set_permits(fx->sem, 0), -1);
	assert_int_equal(psem_set_permits(fx->sem, 3), 0);
	settle(fx);
	assert_int_equal(t[0].granted, 1);
	assert_int_equal(t[1].granted, 0);
	assert_int_equal(psem_available(fx->sem), 0);

	/* Three held, one permit: the holders keep theirs. */
	assert_int_equal(psem_set_permits(fx->sem, 1), 0);
	assert_int_equal(psem_permits(fx->sem), 1);
	assert_int_equal(psem_available(fx->sem), 0);
	assert_int_equal(held(fx, 0), 3);
	assert_int_equal(psem_release(fx->sem, &h[0].w), 0);
	assert_int_equal(psem_release(fx->sem, &h[1].w), 0);
	settle(fx);
	assert_int_equal(t[1].granted, 0);	/* one still held */
	assert_int_equal(psem_release(fx->sem, &t[0].w), 0);
	settle(fx);
	assert_int_equal(t[1].granted, 1);
	assert_int_equal(t[2].granted, 0);

	/* A queued waiter needing more than the new count: refused. */
	assert_int_equal(psem_set_permits(fx->sem, 2), 0);
	settle(fx);
	assert_int_equal(t[2].granted, 1);
	tw_init(fx, &big, 20, 0, 2);
	assert_int_equal(psem_acquire(fx->sem, &big.w), 0);
	assert_int_equal(psem_set_permits(fx->sem, 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(psem_permits(fx->sem), 2);
	assert_int_equal(psem_cancel(fx->sem, &big.w), 0);
	assert_int_equal(psem_release(fx->sem, &t[1].w), 0);
	assert_int_equal(psem_release(fx->sem, &t[2].w), 0);
	assert_int_equal(psem_available(fx->sem), 2);
	fixture_free(fx);
}

/* Switching strict -> weighted lets the less urgent priority share. */
static void
test_set_policy_switches_order(void **state)
{
	struct fixture *fx = fixture_new(1, 2, "strict");
	struct tw holder, t[4];
	static const unsigned prios[] = { 0, 0, 1, 1 };
	int i;

	(void)state;
	assert_ptr_equal(psem_get_policy(fx->sem), psem_policy_find("strict"));
	assert_int_equal(psem_set_policy(fx->sem, NULL), -1);
	tw_init(fx, &holder, 0, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &holder.w), 1);
	for (i = 0; i < 4; i++) {
		tw_init(fx, &t[i], i + 1, prios[i], 1);
		t[i].auto_release = true;
		assert_int_equal(psem_acquire(fx->sem, &t[i].w), 0);
	}
	assert_int_equal(psem_set_policy(fx->sem,
	    psem_policy_find("weighted")), 0);
	assert_ptr_equal(psem_get_policy(fx->sem),
	    psem_policy_find("weighted"));
	assert_int_equal(psem_release(fx->sem, &holder.w), 0);
	settle(fx);
	assert_int_equal(fx->norder, 4);
	/* Strict would give 1, 2, 3, 4; weighted alternates. */
	assert_int_equal(fx->order[0], 1);
	assert_int_equal(fx->order[1], 3);
	assert_int_equal(fx->order[2], 2);
	assert_int_equal(fx->order[3], 4);
	fixture_free(fx);
}

static void
test_first_and_next_walk_a_fifo_from_its_head(void **state)
{
	struct fixture *fx = fixture_new(1, 2, "strict");
	struct tw holder, t[3];
	const struct psem_waiter *w;
	int i;

	(void)state;
	assert_null(psem_first(fx->sem, 0));
	assert_null(psem_first(fx->sem, 2));
	tw_init(fx, &holder, 0, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &holder.w), 1);
	for (i = 0; i < 3; i++) {
		tw_init(fx, &t[i], i + 1, 1, 1);
		assert_int_equal(psem_acquire(fx->sem, &t[i].w), 0);
	}
	assert_null(psem_first(fx->sem, 0));
	assert_int_equal(psem_cancel(fx->sem, &t[1].w), 0);
	w = psem_first(fx->sem, 1);
	assert_ptr_equal(w, &t[0].w);
	w = psem_next(w);
	assert_ptr_equal(w, &t[2].w);
	assert_null(psem_next(w));
	assert_int_equal(psem_cancel(fx->sem, &t[0].w), 0);
	assert_int_equal(psem_cancel(fx->sem, &t[2].w), 0);
	assert_int_equal(psem_release(fx->sem, &holder.w), 0);
	fixture_free(fx);
}

/* Permits held elsewhere (other daemons of a cluster) count toward a cap
 * and nothing else: the local permits stay free for other priorities, and
 * the capped one goes again as they are given back. */
static void
test_held_elsewhere_counts_toward_the_cap_only(void **state)
{
	struct fixture *fx = fixture_new(4, 2, "strict");
	struct tw c[2], o[3];
	struct psem_prio_stats st;
	int i;

	(void)state;
	assert_int_equal(psem_set_cap(fx->sem, 0, 2), 0);
	assert_int_equal(psem_set_elsewhere(fx->sem, 0, 2), 0);
	tw_init(fx, &c[0], 0, 0, 1);
	assert_int_equal(psem_acquire(fx->sem, &c[0].w), 0);
	for (i = 0; i < 3; i++) {
		tw_init(fx, &o[i], 10 + i, 1, 1);
		assert_int_equal(psem_acquire(fx->sem, &o[i].w), 1);
	}
	settle(fx);
	assert_int_equal(c[0].granted, 0);
	assert_int_equal(psem_available(fx->sem), 1);
	assert_int_equal(psem_prio_stats(fx->sem, 0, &st), 0);
	assert_int_equal(st.held, 0);
	assert_int_equal(st.elsewhere, 2);
	/* One given back elsewhere: the cap has room for one here. */
	assert_int_equal(psem_set_elsewhere(fx->sem, 0, 1), 0);
	settle(fx);
	assert_int_equal(c[0].granted, 1);
	tw_init(fx, &c[1], 1, 0, 1);
	assert_int_equal(psem_release(fx->sem, &o[0].w), 0);
	assert_int_equal(psem_acquire(fx->sem, &c[1].w), 0);
	settle(fx);
	assert_int_equal(c[1].granted, 0);
	/* None elsewhere: the second goes too. */
	assert_int_equal(psem_set_elsewhere(fx->sem, 0, 0), 0);
	settle(fx);
	assert_int_equal(c[1].granted, 1);
	assert_int_equal(psem_set_elsewhere(fx->sem, 2, 1), -1);
	for (i = 0; i < 2; i++)
		assert_int_equal(psem_release(fx->sem, &c[i].w), 0);
	for (i = 1; i < 3; i++)
		assert_int_equal(psem_release(fx->sem, &o[i].w), 0);
	fixture_free(fx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uncontended_acquire_is_synchronous),
		cmocka_unit_test(test_strict_order_is_priority_then_fifo),
		cmocka_unit_test(test_weighted_acquire_does_not_barge),
		cmocka_unit_test(test_exclusive_waits_runs_alone_then_all_that_fit_go_at_once),
		cmocka_unit_test(test_release_grant_chain_does_not_recurse),
		cmocka_unit_test(test_weighted_policy_shares_by_weight),
		cmocka_unit_test(test_strict_never_grants_lower_while_higher_waits),
		cmocka_unit_test(test_cap_limits_one_priority_while_others_proceed),
		cmocka_unit_test(test_cancel_anywhere_and_positions),
		cmocka_unit_test(test_cancel_of_blocking_head_unblocks),
		cmocka_unit_test(test_acquire_by_order_takes_its_place_back),
		cmocka_unit_test(test_positions_in_any_order_of_asking),
		cmocka_unit_test(test_weighted_positions_match_grant_order),
		cmocka_unit_test(test_release_beyond_acquired_is_refused),
		cmocka_unit_test(test_bad_arguments_are_refused),
		cmocka_unit_test(test_reshape_moves_queues_in_order),
		cmocka_unit_test(test_set_permits_grows_and_shrinks),
		cmocka_unit_test(test_set_policy_switches_order),
		cmocka_unit_test(test_positions_through_changes),
		cmocka_unit_test(test_first_and_next_walk_a_fifo_from_its_head),
		cmocka_unit_test(test_held_elsewhere_counts_toward_the_cap_only),
	};

	return cmocka_run_group_tests_name("psem", tests, NULL, NULL);
}
