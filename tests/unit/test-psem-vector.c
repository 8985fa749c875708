/* test-psem-vector.c - the semaphore's dimensions beyond slots on a bare
 * event_base: memory, units, keeping, backfill, and a reference model. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "psem.h"

/* The dimensions of these tests. */
enum { MEM = 1, GPU = 2, LIC = 3, NDIMS = 4 };

struct vw {
	struct psem_waiter w;
	struct psem_need *need;
	struct vfix *fx;
	int id;
	int granted;
	uint64_t limit;		/* backfill: the most it holds, ms */
	uint64_t left;		/* held: how much longer, ms */
};

struct vfix {
	struct event_base *base;
	struct psem *sem;
	int order[64];
	int norder;
};

static void
vw_cb(struct psem_waiter *w, void *arg)
{
	struct vw *v = (struct vw *)((char *)w - offsetof(struct vw, w));

	/* The semaphore's argument, whichever waiter it tells. */
	assert_ptr_equal(arg, v->fx);
	v->granted++;
	if (v->fx->norder < 64)
		v->fx->order[v->fx->norder++] = v->id;
}

static struct vfix *
vfix_new(unsigned slots, unsigned nprio)
{
	struct vfix *fx = calloc(1, sizeof *fx);

	assert_non_null(fx);
	assert_non_null(fx->base = event_base_new());
	assert_non_null(fx->sem = psem_new(fx->base, slots, nprio,
	    psem_policy_find("strict")));
	psem_set_grant_cb(fx->sem, vw_cb, fx);
	return fx;
}

static void
vfix_free(struct vfix *fx)
{
	psem_free(fx->sem);
	event_base_free(fx->base);
	free(fx);
}

static void
settle(struct vfix *fx)
{
	int i;

	for (i = 0; i < 1000; i++)
		if (event_base_loop(fx->base, EVLOOP_NONBLOCK) == 1)
			return;
	fail_msg("the loop never settled");
}

/* A waiter of prio wanting slots, mem, gpu units and lic. */
static void
vw_init(struct vfix *fx, struct vw *v, int id, unsigned prio, unsigned slots,
    uint64_t mem, uint64_t gpu, uint64_t lic)
{
	uint64_t amounts[NDIMS] = { 0, mem, gpu, lic };
	unsigned d, n = 0;

	memset(v, 0, sizeof *v);
	v->fx = fx;
	v->id = id;
	psem_waiter_init(&v->w, prio, slots);
	for (d = 1; d < NDIMS; d++)
		n += amounts[d] != 0;
	if (n == 0)
		return;
	assert_non_null(v->need = psem_need_new(n));
	for (d = 1; d < NDIMS; d++) {
		if (amounts[d] == 0)
			continue;
		v->need->want[v->need->n].dim = (uint8_t)d;
		v->need->want[v->need->n++].amount = amounts[d];
	}
	psem_waiter_need(&v->w, v->need);
}

static void
vw_fini(struct vw *v)
{
	free(v->need);
	v->need = NULL;
}

static uint64_t
units_of(const struct vw *v, unsigned dim)
{
	unsigned i;

	for (i = 0; v->need != NULL && i < v->need->n; i++)
		if (v->need->want[i].dim == dim)
			return v->need->want[i].units;
	return 0;
}

/* A cluster's claim of one job that went to another alike: the grant
 * changes hands, nothing is granted or given back, and only alike waiters
 * (the same slots and amounts, no units) may take it. */
static void
test_swap_hands_a_grant_to_an_alike_waiter(void **state)
{
	struct vfix *fx = vfix_new(2, 1);
	struct vw a, b, c, d, g1, g2;
	struct psem_dim_stats mem;
	struct psem_prio_stats ps;

	(void)state;
	assert_int_equal(psem_set_count(fx->sem, MEM, 100), 0);
	assert_int_equal(psem_set_units(fx->sem, GPU, 2, 1), 0);
	vw_init(fx, &a, 1, 0, 1, 10, 0, 0);
	vw_init(fx, &b, 2, 0, 1, 10, 0, 0);
	vw_init(fx, &c, 3, 0, 1, 10, 0, 0);
	vw_init(fx, &d, 4, 0, 1, 20, 0, 0);
	assert_int_equal(psem_acquire(fx->sem, &a.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &b.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &d.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &c.w), 0);
	assert_true(psem_alike(fx->sem, &a.w, &c.w));
	assert_false(psem_alike(fx->sem, &a.w, &d.w));
	/* Not alike, not queued, not held: refused, nothing changed. */
	errno = 0;
	assert_int_equal(psem_swap(fx->sem, &a.w, &d.w), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(psem_swap(fx->sem, &c.w, &a.w), -1);
	assert_int_equal(psem_swap(fx->sem, &a.w, &b.w), -1);

	assert_int_equal(psem_swap(fx->sem, &a.w, &c.w), 0);
	settle(fx);
	assert_int_equal(psem_waiter_state(&a.w), PSEM_IDLE);
	assert_int_equal(psem_waiter_state(&c.w), PSEM_HELD);
	assert_int_equal(c.granted, 0);
	assert_int_equal(d.granted, 0);
	assert_int_equal(psem_dim_stats(fx->sem, MEM, &mem), 0);
	assert_int_equal(mem.used, 20);
	assert_int_equal(mem.waiting, 1);
	assert_int_equal(psem_prio_stats(fx->sem, 0, &ps), 0);
	assert_int_equal(ps.queued, 1);
	assert_int_equal(ps.held, 2);
	/* a holds nothing: its release is refused; c's frees a slot. */
	assert_int_equal(psem_release(fx->sem, &a.w), -1);
	assert_int_equal(psem_release(fx->sem, &c.w), 0);
	settle(fx);
	assert_int_equal(d.granted, 1);
	assert_int_equal(psem_release(fx->sem, &d.w), 0);
	assert_int_equal(psem_release(fx->sem, &b.w), 0);

	/* Units are their holder's own. */
	vw_init(fx, &g1, 5, 0, 1, 0, 1, 0);
	vw_init(fx, &g2, 6, 0, 1, 0, 1, 0);
	assert_false(psem_alike(fx->sem, &g1.w, &g2.w));
	vw_fini(&a);
	vw_fini(&b);
	vw_fini(&c);
	vw_fini(&d);
	vw_fini(&g1);
	vw_fini(&g2);
	vfix_free(fx);
}

static void
test_memory_is_admitted_against_its_budget(void **state)
{
	struct vfix *fx = vfix_new(8, 1);
	struct vw a, b, c;
	struct psem_dim_stats st;

	(void)state;
	assert_int_equal(psem_set_count(fx->sem, MEM, 100), 0);
	vw_init(fx, &a, 1, 0, 1, 60, 0, 0);
	vw_init(fx, &b, 2, 0, 1, 50, 0, 0);
	vw_init(fx, &c, 3, 0, 1, 101, 0, 0);
	assert_int_equal(psem_acquire(fx->sem, &a.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &b.w), 0);
	assert_int_equal(psem_why(fx->sem, &b.w), MEM);
	/* More than there is could never start. */
	assert_int_equal(psem_acquire(fx->sem, &c.w), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(psem_dim_stats(fx->sem, MEM, &st), 0);
	assert_int_equal(st.capacity, 100);
	assert_int_equal(st.used, 60);
	assert_int_equal(st.kept, 40);
	assert_int_equal(st.waiting, 1);
	assert_int_equal(psem_release(fx->sem, &a.w), 0);
	settle(fx);
	assert_int_equal(b.granted, 1);
	assert_int_equal(psem_release(fx->sem, &b.w), 0);
	vw_fini(&a);
	vw_fini(&b);
	vw_fini(&c);
	vfix_free(fx);
}

/* What other daemons hold of a counted resource is not free here, yet a
 * waiter wanting the whole count waits for it rather than being refused,
 * and a holder keeps what it holds when more is held elsewhere. */
static void
test_held_elsewhere_is_not_free_but_waited_for(void **state)
{
	struct vfix *fx = vfix_new(8, 1);
	struct vw a, b;
	struct psem_dim_stats st;

	(void)state;
	assert_int_equal(psem_set_count(fx->sem, LIC, 2), 0);
	assert_int_equal(psem_set_dim_elsewhere(fx->sem, LIC, 1), 0);
	vw_init(fx, &a, 1, 0, 1, 0, 0, 1);
	vw_init(fx, &b, 2, 0, 1, 0, 0, 2);
	assert_int_equal(psem_acquire(fx->sem, &a.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &b.w), 0);
	assert_int_equal(psem_why(fx->sem, &b.w), LIC);
	assert_int_equal(psem_dim_stats(fx->sem, LIC, &st), 0);
	assert_int_equal(st.capacity, 2);
	assert_int_equal(st.used, 1);
	assert_int_equal(st.elsewhere, 1);
	/* Above what is left: a still holds its own. */
	assert_int_equal(psem_set_dim_elsewhere(fx->sem, LIC, 2), 0);
	assert_int_equal(psem_waiter_state(&a.w), PSEM_HELD);
	assert_int_equal(psem_release(fx->sem, &a.w), 0);
	settle(fx);
	assert_int_equal(b.granted, 0);
	assert_int_equal(psem_set_dim_elsewhere(fx->sem, LIC, 1), 0);
	settle(fx);
	assert_int_equal(b.granted, 0);
	assert_int_equal(psem_set_dim_elsewhere(fx->sem, LIC, 0), 0);
	settle(fx);
	assert_int_equal(b.granted, 1);
	assert_int_equal(psem_release(fx->sem, &b.w), 0);
	/* Named units belong to the node they are on. */
	assert_int_equal(psem_set_units(fx->sem, GPU, 2, 1), 0);
	assert_int_equal(psem_set_dim_elsewhere(fx->sem, GPU, 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(psem_set_dim_elsewhere(fx->sem, 0, 1), -1);
	vw_fini(&a);
	vw_fini(&b);
	vfix_free(fx);
}

static void
test_units_are_distinct_least_loaded_and_shared(void **state)
{
	struct vfix *fx = vfix_new(8, 1);
	struct vw v[5];
	int i;

	(void)state;
	assert_int_equal(psem_set_units(fx->sem, GPU, 3, 2), 0);
	vw_init(fx, &v[0], 0, 0, 1, 0, 2, 0);
	vw_init(fx, &v[1], 1, 0, 1, 0, 1, 0);
	vw_init(fx, &v[2], 2, 0, 1, 0, 2, 0);
	vw_init(fx, &v[3], 3, 0, 1, 0, 1, 0);
	vw_init(fx, &v[4], 4, 0, 1, 0, 3, 0);
	assert_int_equal(psem_acquire(fx->sem, &v[0].w), 1);
	assert_int_equal(units_of(&v[0], GPU), 0x3);	/* 0 and 1 */
	assert_int_equal(psem_acquire(fx->sem, &v[1].w), 1);
	assert_int_equal(units_of(&v[1], GPU), 0x4);	/* 2, the idle one */
	assert_int_equal(psem_acquire(fx->sem, &v[2].w), 1);
	assert_int_equal(units_of(&v[2], GPU), 0x3);	/* all at 1: lowest */
	assert_int_equal(psem_acquire(fx->sem, &v[3].w), 1);
	assert_int_equal(units_of(&v[3], GPU), 0x4);
	/* Every unit is held twice, its share. */
	for (i = 0; i < 3; i++)
		assert_int_equal(psem_unit_load(fx->sem, GPU, (unsigned)i), 2);
	assert_int_equal(psem_acquire(fx->sem, &v[4].w), 0);
	assert_int_equal(psem_why(fx->sem, &v[4].w), GPU);
	/* Three distinct units: one with room is not enough. */
	assert_int_equal(psem_release(fx->sem, &v[1].w), 0);
	settle(fx);
	assert_int_equal(v[4].granted, 0);
	assert_int_equal(psem_release(fx->sem, &v[0].w), 0);
	settle(fx);
	assert_int_equal(v[4].granted, 1);
	assert_int_equal(units_of(&v[4], GPU), 0x7);
	/* Units that are held stay when the resource shrinks to them. */
	assert_int_equal(psem_set_units(fx->sem, GPU, 2, 2), -1);
	assert_int_equal(errno, EBUSY);
	for (i = 2; i < 5; i++)
		if (i != 1)
			assert_int_equal(psem_release(fx->sem, &v[i].w), 0);
	assert_int_equal(psem_set_units(fx->sem, GPU, 2, 2), 0);
	for (i = 0; i < 5; i++)
		vw_fini(&v[i]);
	vfix_free(fx);
}

/* A job waiting for a GPU keeps no slot from jobs that need a slot alone. */
static void
test_cpu_job_is_not_held_up_behind_a_gpu_job(void **state)
{
	struct vfix *fx = vfix_new(2, 1);
	struct vw g1, g2, cpu;

	(void)state;
	assert_int_equal(psem_set_units(fx->sem, GPU, 1, 1), 0);
	vw_init(fx, &g1, 1, 0, 1, 0, 1, 0);
	vw_init(fx, &g2, 2, 0, 1, 0, 1, 0);
	vw_init(fx, &cpu, 3, 0, 1, 0, 0, 0);
	assert_int_equal(psem_acquire(fx->sem, &g1.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &g2.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &cpu.w), 1);
	assert_int_equal(psem_why(fx->sem, &g2.w), GPU);
	/* When the GPU and a slot come back, the GPU job behind goes first. */
	assert_int_equal(psem_release(fx->sem, &cpu.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &cpu.w), 1);
	assert_int_equal(psem_release(fx->sem, &g1.w), 0);
	settle(fx);
	assert_int_equal(g2.granted, 1);
	assert_int_equal(psem_release(fx->sem, &g2.w), 0);
	assert_int_equal(psem_release(fx->sem, &cpu.w), 0);
	vw_fini(&g1);
	vw_fini(&g2);
	vw_fini(&cpu);
	vfix_free(fx);
}

/* What a waiter lacks is kept for it as it frees: no barging. */
static void
test_kept_memory_is_not_taken_by_those_behind(void **state)
{
	struct vfix *fx = vfix_new(4, 1);
	struct vw a, big, small, plain;

	(void)state;
	assert_int_equal(psem_set_count(fx->sem, MEM, 100), 0);
	vw_init(fx, &a, 1, 0, 1, 70, 0, 0);
	vw_init(fx, &big, 2, 0, 1, 60, 0, 0);
	vw_init(fx, &small, 3, 0, 1, 10, 0, 0);
	vw_init(fx, &plain, 4, 0, 1, 0, 0, 0);
	assert_int_equal(psem_acquire(fx->sem, &a.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &big.w), 0);
	/* 30 free, all kept for big: small waits, reserved. */
	assert_int_equal(psem_acquire(fx->sem, &small.w), 0);
	assert_int_equal(psem_why(fx->sem, &small.w), -1);
	/* A job wanting no memory is not held up. */
	assert_int_equal(psem_acquire(fx->sem, &plain.w), 1);
	assert_int_equal(psem_release(fx->sem, &a.w), 0);
	settle(fx);
	assert_int_equal(big.granted, 1);
	assert_int_equal(small.granted, 1);
	assert_int_equal(fx->order[0], 2);
	assert_int_equal(fx->order[1], 3);
	assert_int_equal(psem_release(fx->sem, &big.w), 0);
	assert_int_equal(psem_release(fx->sem, &small.w), 0);
	assert_int_equal(psem_release(fx->sem, &plain.w), 0);
	vw_fini(&a);
	vw_fini(&big);
	vw_fini(&small);
	vw_fini(&plain);
	vfix_free(fx);
}

/*
 * A waiting for a GPU and memory, while jobs wanting only one of them come
 * and go: what A has waited for stays kept, so it starts the first time
 * both are back instead of losing each to the stream in turn.
 */
static void
test_a_job_wanting_two_things_is_not_starved(void **state)
{
	struct vfix *fx = vfix_new(8, 1);
	struct vw a, gpu[3], mem[3];
	int i;

	(void)state;
	assert_int_equal(psem_set_count(fx->sem, MEM, 100), 0);
	assert_int_equal(psem_set_units(fx->sem, GPU, 1, 1), 0);
	vw_init(fx, &gpu[0], 10, 0, 1, 0, 1, 0);
	vw_init(fx, &mem[0], 20, 0, 1, 60, 0, 0);
	assert_int_equal(psem_acquire(fx->sem, &gpu[0].w), 1);
	assert_int_equal(psem_acquire(fx->sem, &mem[0].w), 1);
	vw_init(fx, &a, 1, 0, 1, 80, 1, 0);
	assert_int_equal(psem_acquire(fx->sem, &a.w), 0);
	for (i = 1; i < 3; i++) {
		vw_init(fx, &gpu[i], 10 + i, 0, 1, 0, 1, 0);
		vw_init(fx, &mem[i], 20 + i, 0, 1, 60, 0, 0);
		assert_int_equal(psem_acquire(fx->sem, &gpu[i].w), 0);
		assert_int_equal(psem_acquire(fx->sem, &mem[i].w), 0);
	}
	/* The GPU comes back first: A lacks memory, so a GPU job behind it
	 * takes the GPU; A now waits for both and keeps both. */
	assert_int_equal(psem_release(fx->sem, &gpu[0].w), 0);
	settle(fx);
	assert_int_equal(gpu[1].granted, 1);
	assert_int_equal(psem_release(fx->sem, &mem[0].w), 0);
	settle(fx);
	assert_int_equal(mem[1].granted, 0);	/* kept for A */
	assert_int_equal(psem_release(fx->sem, &gpu[1].w), 0);
	settle(fx);
	assert_int_equal(a.granted, 1);
	assert_int_equal(gpu[2].granted, 0);
	assert_int_equal(psem_release(fx->sem, &a.w), 0);
	settle(fx);
	assert_int_equal(gpu[2].granted, 1);
	assert_int_equal(mem[1].granted, 1);
	assert_int_equal(psem_release(fx->sem, &gpu[2].w), 0);
	assert_int_equal(psem_release(fx->sem, &mem[1].w), 0);
	settle(fx);
	assert_int_equal(mem[2].granted, 1);
	assert_int_equal(psem_release(fx->sem, &mem[2].w), 0);
	vw_fini(&a);
	for (i = 0; i < 3; i++) {
		vw_fini(&gpu[i]);
		vw_fini(&mem[i]);
	}
	vfix_free(fx);
}

static const struct vw *
vw_of(const struct psem_waiter *w)
{
	return (const struct vw *)((const char *)w - offsetof(struct vw, w));
}

static uint64_t
clock_limit(const struct psem_waiter *w, void *arg)
{
	(void)arg;
	return vw_of(w)->limit;
}

static uint64_t
clock_left(const struct psem_waiter *w, void *arg)
{
	(void)arg;
	return vw_of(w)->left;
}

static const struct psem_clock test_clock = {
	.limit = clock_limit,
	.left = clock_left,
};

/*
 * 4 slots: a 3-slot job holds them for 100 s more; a 4-slot job waits and
 * keeps the free one. Backfill: a job that ends within 50 s takes it, one
 * of 200 s or of no timeout does not; without backfill nobody does.
 */
static void
test_backfill_uses_kept_slots_only_before_the_shadow(void **state)
{
	struct vfix *fx = vfix_new(4, 1);
	struct vw run, wide, quick, slow, endless;

	(void)state;
	vw_init(fx, &run, 1, 0, 3, 0, 0, 0);
	vw_init(fx, &wide, 2, 0, 4, 0, 0, 0);
	vw_init(fx, &slow, 3, 0, 1, 0, 0, 0);
	vw_init(fx, &endless, 4, 0, 1, 0, 0, 0);
	vw_init(fx, &quick, 5, 0, 1, 0, 0, 0);
	run.left = 100000;
	slow.limit = 200000;
	quick.limit = 50000;
	assert_int_equal(psem_acquire(fx->sem, &run.w), 1);
	assert_int_equal(psem_acquire(fx->sem, &wide.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &slow.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &endless.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &quick.w), 0);
	psem_set_backfill(fx->sem, &test_clock);
	settle(fx);
	assert_int_equal(quick.granted, 1);
	assert_int_equal(slow.granted + endless.granted + wide.granted, 0);
	assert_int_equal(psem_release(fx->sem, &quick.w), 0);
	/* The holder's time unknown: nothing can be promised. */
	run.left = UINT64_MAX;
	quick.limit = 1;
	assert_int_equal(psem_acquire(fx->sem, &quick.w), 0);
	psem_set_backfill(fx->sem, NULL);
	quick.limit = 50000;
	run.left = 100000;
	assert_int_equal(psem_release(fx->sem, &quick.w), -1);
	assert_int_equal(psem_cancel(fx->sem, &quick.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &quick.w), 0);
	settle(fx);
	assert_int_equal(quick.granted, 1);	/* the kept slot stays kept */
	assert_int_equal(psem_release(fx->sem, &run.w), 0);
	settle(fx);
	assert_int_equal(wide.granted, 1);
	assert_int_equal(psem_release(fx->sem, &wide.w), 0);
	settle(fx);
	assert_int_equal(slow.granted + endless.granted, 2);
	assert_int_equal(quick.granted, 2);
	assert_int_equal(psem_release(fx->sem, &slow.w), 0);
	assert_int_equal(psem_release(fx->sem, &endless.w), 0);
	assert_int_equal(psem_release(fx->sem, &quick.w), 0);
	vw_fini(&run);
	vfix_free(fx);
}

static void
test_bad_needs_are_refused(void **state)
{
	struct vfix *fx = vfix_new(2, 1);
	struct vw v;

	(void)state;
	assert_int_equal(psem_set_count(fx->sem, MEM, 10), 0);
	vw_init(fx, &v, 1, 0, 1, 0, 1, 0);	/* GPU not set up */
	assert_int_equal(psem_acquire(fx->sem, &v.w), -1);
	vw_fini(&v);
	vw_init(fx, &v, 1, 0, 1, 5, 0, 0);
	v.need->want[0].dim = 0;		/* slots are not a want */
	assert_int_equal(psem_acquire(fx->sem, &v.w), -1);
	v.need->want[0].dim = MEM;
	v.need->want[0].amount = 0;
	assert_int_equal(psem_acquire(fx->sem, &v.w), -1);
	v.need->want[0].amount = 5;
	assert_int_equal(psem_acquire(fx->sem, &v.w), 1);
	/* Shrinking below a holder is allowed, below a waiter is not. */
	assert_int_equal(psem_set_count(fx->sem, MEM, 4), 0);
	assert_int_equal(psem_release(fx->sem, &v.w), 0);
	assert_int_equal(psem_acquire(fx->sem, &v.w), -1);
	assert_int_equal(psem_set_count(fx->sem, MEM, 5), 0);
	assert_int_equal(psem_acquire(fx->sem, &v.w), 1);
	assert_int_equal(psem_release(fx->sem, &v.w), 0);
	vw_fini(&v);
	vfix_free(fx);
}

/* An adopted job takes back its very units, even beyond what is free
 * now; nothing is granted until enough comes back. */
static void
test_hold_takes_back_the_units_it_names(void **state)
{
	struct vfix *fx = vfix_new(1, 1);
	struct vw adopted, next, bad;

	(void)state;
	assert_int_equal(psem_set_units(fx->sem, GPU, 2, 1), 0);
	assert_int_equal(psem_set_count(fx->sem, MEM, 10), 0);
	vw_init(fx, &adopted, 1, 0, 1, 12, 1, 0);
	adopted.need->want[1].units = 0x2;	/* GPU 1 */
	vw_init(fx, &next, 2, 0, 1, 0, 1, 0);
	assert_int_equal(psem_hold(fx->sem, &adopted.w), 0);
	assert_int_equal(psem_waiter_state(&adopted.w), PSEM_HELD);
	assert_int_equal(psem_unit_load(fx->sem, GPU, 1), 1);
	assert_int_equal(psem_unit_load(fx->sem, GPU, 0), 0);
	/* Its slot and 12 of 10 MiB are held: the next one waits. */
	assert_int_equal(psem_acquire(fx->sem, &next.w), 0);
	assert_int_equal(psem_release(fx->sem, &adopted.w), 0);
	settle(fx);
	assert_int_equal(next.granted, 1);
	assert_int_equal(units_of(&next, GPU), 0x1);
	assert_int_equal(psem_release(fx->sem, &next.w), 0);
	/* Units not of the resource, or not as many as it asks for. */
	vw_init(fx, &bad, 3, 0, 1, 0, 1, 0);
	bad.need->want[0].units = 0x4;
	assert_int_equal(psem_hold(fx->sem, &bad.w), -1);
	bad.need->want[0].units = 0x3;
	assert_int_equal(psem_hold(fx->sem, &bad.w), -1);
	assert_int_equal(errno, EINVAL);
	vw_fini(&adopted);
	vw_fini(&next);
	vw_fini(&bad);
	vfix_free(fx);
}

/* The 1M-long grant chain of test-psem.c, of waiters wanting memory and a
 * unit too, on a 64 KiB stack. */
#define CHAIN_CYCLES 1000000

struct chain {
	struct vfix *fx;
	struct vw a, b;
	long cycles;
};

static void
chain_cb(struct psem_waiter *w, void *arg)
{
	struct chain *ch = arg;
	struct psem_waiter *other = w == &ch->a.w ? &ch->b.w : &ch->a.w;

	if (++ch->cycles < CHAIN_CYCLES)
		assert_int_equal(psem_acquire(ch->fx->sem, other), 0);
	assert_int_equal(psem_release(ch->fx->sem, w), 0);
}

static void *
chain_thread(void *arg)
{
	struct chain *ch = arg;

	if (psem_acquire(ch->fx->sem, &ch->a.w) != 1 ||
	    psem_acquire(ch->fx->sem, &ch->b.w) != 0 ||
	    psem_release(ch->fx->sem, &ch->a.w) != 0)
		return NULL;
	event_base_dispatch(ch->fx->base);
	return ch;
}

static void
test_vector_grant_chain_does_not_recurse(void **state)
{
	struct vfix *fx = vfix_new(1, 2);
	struct chain ch = { .fx = fx };
	pthread_attr_t attr;
	pthread_t thread;
	void *result = NULL;

	(void)state;
	assert_int_equal(psem_set_count(fx->sem, MEM, 10), 0);
	assert_int_equal(psem_set_units(fx->sem, GPU, 1, 1), 0);
	vw_init(fx, &ch.a, 1, 0, 1, 10, 1, 0);
	vw_init(fx, &ch.b, 2, 1, 1, 10, 1, 0);
	psem_set_grant_cb(fx->sem, chain_cb, &ch);
	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstacksize(&attr, 64 * 1024), 0);
	assert_int_equal(pthread_create(&thread, &attr, chain_thread, &ch), 0);
	assert_int_equal(pthread_join(thread, &result), 0);
	pthread_attr_destroy(&attr);
	assert_ptr_equal(result, &ch);
	assert_int_equal(ch.cycles, CHAIN_CYCLES);
	assert_int_equal(psem_available(fx->sem), 1);
	vw_fini(&ch.a);
	vw_fini(&ch.b);
	vfix_free(fx);
}


/*
 * The reference model: the same admission written plainly, every queued
 * waiter in order each time (strict policy, no backfill), against which the
 * semaphore's lanes, orders and unit picks are held after each of 100,000
 * random steps; with the invariants of admission checked on the model.
 */
#define MODEL_STEPS 100000
#define MODEL_MAX 512
#define MODEL_PRIOS 3
#define MODEL_CAP 3		/* slots of priority 2 */

static const uint64_t model_capacity[NDIMS] = { 6, 100, 4, 3 };
#define MODEL_SHARE 2		/* of each of the 4 GPUs */

struct mw {
	struct vw v;
	int state;		/* 0 free, 1 queued, 2 held */
	unsigned prio;
	uint64_t want[NDIMS];
	uint64_t seq;
	uint64_t waited;
	uint64_t units;		/* GPUs, as the model gave them */
};

struct model {
	struct vfix *fx;
	struct mw w[MODEL_MAX];
	uint64_t used[NDIMS];
	unsigned load[4];
	unsigned held[MODEL_PRIOS];
	bool paused[MODEL_PRIOS];
	uint64_t seq;
	uint64_t rng;
	/* This step's grants, for the check of barging. */
	int granted[MODEL_MAX];
	int ngranted;
};

static uint64_t
model_rand(struct model *m, uint64_t n)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return m->rng % n;
}

static uint64_t
model_mask(const struct mw *w)
{
	uint64_t mask = 1;
	unsigned d;

	for (d = 1; d < NDIMS; d++)
		if (w->want[d] != 0)
			mask |= UINT64_C(1) << d;
	return mask;
}

/* What is free of d, given loads (units with room, for the GPUs). */
static uint64_t
model_free(const struct model *m, const uint64_t *used, const unsigned *load,
    unsigned d)
{
	uint64_t n = 0;
	unsigned u;

	(void)m;
	if (d != GPU)
		return used[d] < model_capacity[d] ? model_capacity[d] -
		    used[d] : 0;
	for (u = 0; u < 4; u++)
		n += load[u] < MODEL_SHARE;
	return n;
}

static int
model_cmp_order(const struct mw *a, const struct mw *b)
{
	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static struct model *model_sorting;

static int
model_qsort(const void *a, const void *b)
{
	return model_cmp_order(&model_sorting->w[*(const int *)a],
	    &model_sorting->w[*(const int *)b]);
}

/* The queued waiters in order, into idx; how many. */
static int
model_order(struct model *m, int *idx)
{
	int i, n = 0;

	for (i = 0; i < MODEL_MAX; i++)
		if (m->w[i].state == 1)
			idx[n++] = i;
	model_sorting = m;
	qsort(idx, (size_t)n, sizeof *idx, model_qsort);
	return n;
}

static void
model_take(struct model *m, int i)
{
	struct mw *w = &m->w[i];
	unsigned d, u, k, best;

	for (d = 0; d < NDIMS; d++)
		m->used[d] += w->want[d];
	w->units = 0;
	for (k = 0; k < w->want[GPU]; k++) {
		best = 4;
		for (u = 0; u < 4; u++)
			if (!(w->units & (1u << u)) && m->load[u] < MODEL_SHARE &&
			    (best == 4 || m->load[u] < m->load[best]))
				best = u;
		assert_true(best < 4);
		w->units |= UINT64_C(1) << best;
		m->load[best]++;
	}
	m->held[w->prio] += (unsigned)w->want[0];
	w->state = 2;
	m->granted[m->ngranted++] = i;
}

static void
model_give(struct model *m, int i)
{
	struct mw *w = &m->w[i];
	unsigned d, u;

	for (d = 0; d < NDIMS; d++)
		m->used[d] -= w->want[d];
	for (u = 0; u < 4; u++)
		if (w->units & (1u << u))
			m->load[u]--;
	m->held[w->prio] -= (unsigned)w->want[0];
	w->state = 0;
}

static uint64_t
model_unkept(const uint64_t *avail, const uint64_t *kept, unsigned d)
{
	return avail[d] > kept[d] ? avail[d] - kept[d] : 0;
}

static void
model_pump(struct model *m)
{
	static int idx[MODEL_MAX];
	uint64_t avail[NDIMS], kept[NDIMS], dead, lacks, keep, mask;
	uint64_t lane_done[MODEL_PRIOS][16] = { { 0 } };
	bool class_done[MODEL_PRIOS] = { false };
	struct mw *w;
	int n, k;
	unsigned d;

	n = model_order(m, idx);
	for (d = 0; d < NDIMS; d++) {
		avail[d] = model_free(m, m->used, m->load, d);
		kept[d] = 0;
	}
	for (k = 0; k < n; k++) {
		w = &m->w[idx[k]];
		mask = model_mask(w);
		if (m->paused[w->prio] || class_done[w->prio] ||
		    lane_done[w->prio][mask & 15])
			continue;
		dead = 0;
		for (d = 0; d < NDIMS; d++)
			if (model_unkept(avail, kept, d) == 0)
				dead |= UINT64_C(1) << d;
		lacks = 0;
		for (d = 0; d < NDIMS; d++)
			if (w->want[d] > model_unkept(avail, kept, d))
				lacks |= UINT64_C(1) << d;
		if (mask & dead) {
			keep = w->waited;
		} else if (w->prio == 2 && m->held[2] + w->want[0] >
		    MODEL_CAP) {
			class_done[w->prio] = true;
			continue;
		} else if (lacks == 0) {
			model_take(m, idx[k]);
			for (d = 0; d < NDIMS; d++)
				avail[d] = model_free(m, m->used, m->load, d);
			continue;
		} else {
			w->waited |= lacks == 1 ? 1 : lacks & ~UINT64_C(1);
			keep = w->waited | (lacks == 1);
		}
		for (d = 0; d < NDIMS; d++)
			if (keep & (UINT64_C(1) << d)) {
				uint64_t u = model_unkept(avail, kept, d);

				kept[d] += w->want[d] < u ? w->want[d] : u;
			}
		lane_done[w->prio][mask & 15] = 1;
	}
}

/* Whether w fits what is free, were x's holdings free too. */
static bool
model_fits_without(const struct model *m, const struct mw *w,
    const struct mw *x)
{
	uint64_t used[NDIMS];
	unsigned load[4], d, u;

	for (d = 0; d < NDIMS; d++)
		used[d] = m->used[d] - (x != NULL ? x->want[d] : 0);
	for (u = 0; u < 4; u++)
		load[u] = m->load[u] - (x != NULL && (x->units & (1u << u)));
	for (d = 0; d < NDIMS; d++)
		if (w->want[d] > model_free(m, used, load, d))
			return false;
	return true;
}

static void
model_check(struct model *m)
{
	static int idx[MODEL_MAX];
	const struct mw *w, *x, *head = NULL;
	int i, k, n;
	unsigned d, u;

	settle(m->fx);
	/* The semaphore agrees with the model. */
	for (i = 0; i < MODEL_MAX; i++) {
		w = &m->w[i];
		if (w->state == 0)
			continue;
		assert_int_equal(psem_waiter_state(&w->v.w),
		    w->state == 1 ? PSEM_QUEUED : PSEM_HELD);
		if (w->state == 2 && w->want[GPU] != 0)
			assert_int_equal(units_of(&w->v, GPU), w->units);
	}
	/* Never over any capacity. */
	for (d = 0; d < NDIMS; d++)
		if (d != GPU)
			assert_true(m->used[d] <= model_capacity[d]);
	for (u = 0; u < 4; u++)
		assert_true(m->load[u] <= MODEL_SHARE);
	assert_true(m->held[2] <= MODEL_CAP);
	/*
	 * The first in order (that may go: not paused, not at its cap)
	 * never waits while what it needs is free, and nobody behind it
	 * took what it needed to start: the most urgent first, no barging.
	 */
	n = model_order(m, idx);
	for (i = 0; i < n && head == NULL; i++) {
		w = &m->w[idx[i]];
		if (!m->paused[w->prio])
			head = w;
	}
	if (head != NULL && !(head->prio == 2 &&
	    m->held[2] + head->want[0] > MODEL_CAP)) {
		assert_false(model_fits_without(m, head, NULL));
		for (k = 0; k < m->ngranted; k++) {
			x = &m->w[m->granted[k]];
			if (model_cmp_order(head, x) < 0)
				assert_false(model_fits_without(m, head, x));
		}
	}
	m->ngranted = 0;
}

static void
model_submit(struct model *m)
{
	struct mw *w = NULL;
	int i, r;

	for (i = 0; i < MODEL_MAX && w == NULL; i++)
		if (m->w[i].state == 0)
			w = &m->w[i];
	if (w == NULL)
		return;
	vw_fini(&w->v);
	memset(w->want, 0, sizeof w->want);
	w->prio = (unsigned)model_rand(m, MODEL_PRIOS);
	w->want[0] = 1 + model_rand(m, 3);
	r = (int)model_rand(m, 8);
	if (r & 1)
		w->want[MEM] = 1 + model_rand(m, 60);
	if (r & 2)
		w->want[GPU] = 1 + model_rand(m, 3);
	if ((r & 4) && model_rand(m, 2))
		w->want[LIC] = 1 + model_rand(m, 2);
	w->seq = m->seq++;
	w->waited = 0;
	vw_init(m->fx, &w->v, (int)(w - m->w), w->prio, (unsigned)w->want[0],
	    w->want[MEM], w->want[GPU], w->want[LIC]);
	w->state = 1;
	assert_true(psem_acquire(m->fx->sem, &w->v.w) >= 0);
	model_pump(m);
}

/* A random waiter in state; NULL when none. */
static struct mw *
model_pick(struct model *m, int state)
{
	int i, start = (int)model_rand(m, MODEL_MAX);

	for (i = 0; i < MODEL_MAX; i++)
		if (m->w[(start + i) % MODEL_MAX].state == state)
			return &m->w[(start + i) % MODEL_MAX];
	return NULL;
}

static void
test_random_steps_agree_with_the_model(void **state)
{
	struct model *m = calloc(1, sizeof *m);
	struct mw *w;
	long step;
	int op, i, rounds;

	(void)state;
	assert_non_null(m);
	m->rng = 0x9e3779b97f4a7c15u;
	m->fx = vfix_new((unsigned)model_capacity[0], MODEL_PRIOS);
	assert_int_equal(psem_set_count(m->fx->sem, MEM, model_capacity[MEM]),
	    0);
	assert_int_equal(psem_set_units(m->fx->sem, GPU, 4, MODEL_SHARE), 0);
	assert_int_equal(psem_set_count(m->fx->sem, LIC, model_capacity[LIC]),
	    0);
	assert_int_equal(psem_set_cap(m->fx->sem, 2, MODEL_CAP), 0);
	for (step = 0; step < MODEL_STEPS; step++) {
		op = (int)model_rand(m, 100);
		if (op < 45) {
			model_submit(m);
		} else if (op < 80 && (w = model_pick(m, 2)) != NULL) {
			assert_int_equal(psem_release(m->fx->sem, &w->v.w), 0);
			model_give(m, (int)(w - m->w));
			model_pump(m);
		} else if (op < 95 && (w = model_pick(m, 1)) != NULL) {
			assert_int_equal(psem_cancel(m->fx->sem, &w->v.w), 0);
			w->state = 0;
			model_pump(m);
		} else if (op >= 95) {
			m->paused[1] = !m->paused[1];
			assert_int_equal(m->paused[1] ?
			    psem_pause(m->fx->sem, 1) :
			    psem_resume(m->fx->sem, 1), 0);
			model_pump(m);
		}
		model_check(m);
	}
	/* Nobody is left waiting for ever: release all, again and again. */
	if (m->paused[1]) {
		m->paused[1] = false;
		assert_int_equal(psem_resume(m->fx->sem, 1), 0);
		model_pump(m);
		model_check(m);
	}
	for (rounds = 0; model_pick(m, 1) != NULL; rounds++) {
		assert_true(rounds < MODEL_MAX);
		for (i = 0; i < MODEL_MAX; i++)
			if (m->w[i].state == 2) {
				assert_int_equal(psem_release(m->fx->sem,
				    &m->w[i].v.w), 0);
				model_give(m, i);
			}
		model_pump(m);
		model_check(m);
	}
	for (i = 0; i < MODEL_MAX; i++) {
		if (m->w[i].state == 2)
			assert_int_equal(psem_release(m->fx->sem,
			    &m->w[i].v.w), 0);
		vw_fini(&m->w[i].v);
	}
	vfix_free(m->fx);
	free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_is_admitted_against_its_budget),
		cmocka_unit_test(test_held_elsewhere_is_not_free_but_waited_for),
		cmocka_unit_test(test_units_are_distinct_least_loaded_and_shared),
		cmocka_unit_test(test_cpu_job_is_not_held_up_behind_a_gpu_job),
		cmocka_unit_test(test_kept_memory_is_not_taken_by_those_behind),
		cmocka_unit_test(test_a_job_wanting_two_things_is_not_starved),
		cmocka_unit_test(test_backfill_uses_kept_slots_only_before_the_shadow),
		cmocka_unit_test(test_bad_needs_are_refused),
		cmocka_unit_test(test_hold_takes_back_the_units_it_names),
		cmocka_unit_test(test_vector_grant_chain_does_not_recurse),
		cmocka_unit_test(test_random_steps_agree_with_the_model),
		cmocka_unit_test(test_swap_hands_a_grant_to_an_alike_waiter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
