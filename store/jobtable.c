/* jobtable.c - jobs sorted by id in one array, and their (submitted_at, id)
 * in another, with tombstones where jobs were removed, swept away a quarter
 * at a time. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "job.h"
#include "jobtable.h"

static uintptr_t *
jobtable_entries(const struct jobtable *t)
{
	return t->entries.v;
}

/* The job of an entry, NULL for a tombstone. */
static struct job *
jobtable_entry_job(uintptr_t e)
{
	return (e & 1) ? NULL : (struct job *)e;
}

static uint64_t
jobtable_entry_id(uintptr_t e)
{
	return (e & 1) ? (uint64_t)(e >> 1) : ((struct job *)e)->id;
}

/* Where in [lo, hi) id would stand were the ids from first to last
 * spread evenly there. */
static size_t
jobtable_guess(size_t lo, size_t hi, uint64_t first, uint64_t last,
    uint64_t id)
{
	size_t at = lo + (size_t)((double)(id - first) /
	    (double)(last - first) * (double)(hi - 1 - lo));

	return at < lo ? lo : at >= hi ? hi - 1 : at;
}

/*
 * The index of the first entry whose id is >= id. Every probe of a live
 * entry reads its job, a cache miss in a long queue: ids mostly follow
 * one another, so a probe where id would stand among the ids at the
 * range's ends finds it in one or two, and a halving after each keeps the
 * worst case to twice a binary search's.
 */
static size_t
jobtable_lower_bound(const struct jobtable *t, uint64_t id)
{
	uintptr_t *e = jobtable_entries(t);
	size_t lo = 0, hi = t->entries.n, mid;
	uint64_t first, last;

	while (hi - lo > 8) {
		first = jobtable_entry_id(e[lo]);
		last = jobtable_entry_id(e[hi - 1]);
		if (id <= first)
			return lo;
		if (id > last)
			return hi;
		mid = jobtable_guess(lo, hi, first, last, id);
		if (jobtable_entry_id(e[mid]) < id)
			lo = mid + 1;
		else
			hi = mid + 1;
		if (hi - lo <= 8)
			break;
		mid = lo + (hi - lo) / 2;
		if (jobtable_entry_id(e[mid]) < id)
			lo = mid + 1;
		else
			hi = mid + 1;
	}
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (jobtable_entry_id(e[mid]) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first job at index i or after; NULL at the end. */
static struct job *
jobtable_live_from(const struct jobtable *t, size_t i)
{
	uintptr_t *e = jobtable_entries(t);

	for (; i < t->entries.n; i++)
		if (!(e[i] & 1))
			return (struct job *)e[i];
	return NULL;
}

/* Drops the tombstones, keeping the order. */
static void
jobtable_sweep(struct jobtable *t)
{
	uintptr_t *e = jobtable_entries(t);
	size_t i, k = 0;

	for (i = 0; i < t->entries.n; i++)
		if (!(e[i] & 1))
			e[k++] = e[i];
	t->entries.n = k;
	t->dead = 0;
}

static struct jobtable_at *
jobtable_order(const struct jobtable *t)
{
	return t->order.v;
}

/* Whether a comes before (at, id) in submission order. */
static bool
jobtable_before(const struct jobtable_at *a, int64_t at, uint64_t id)
{
	return a->at < at || (a->at == at && (a->id & ~JOBTABLE_GONE) < id);
}

/* The index of the first of the order at or after (at, id). */
static size_t
jobtable_order_bound(const struct jobtable *t, int64_t at, uint64_t id)
{
	const struct jobtable_at *o = jobtable_order(t);
	size_t lo = 0, hi = t->order.n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (jobtable_before(&o[mid], at, id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
jobtable_order_sweep(struct jobtable *t)
{
	struct jobtable_at *o = jobtable_order(t);
	size_t i, k = 0;

	for (i = 0; i < t->order.n; i++)
		if (!(o[i].id & JOBTABLE_GONE))
			o[k++] = o[i];
	t->order.n = k;
	t->order_dead = 0;
}

/* job's place in the order, its tombstone's when it has one. Assumes
 * room for one more (reserved). */
static void
jobtable_order_add(struct jobtable *t, const struct job *job)
{
	struct jobtable_at *o = jobtable_order(t);
	size_t i, n = t->order.n;

	if (n == 0 || jobtable_before(&o[n - 1], job->submitted_at, job->id))
		i = n;
	else {
		i = jobtable_order_bound(t, job->submitted_at, job->id);
		if (i < n && o[i].at == job->submitted_at &&
		    o[i].id == (job->id | JOBTABLE_GONE)) {
			o[i].id = job->id;
			t->order_dead--;
			return;
		}
		memmove(&o[i + 1], &o[i], (n - i) * sizeof *o);
	}
	o[i].at = job->submitted_at;
	o[i].id = job->id;
	t->order.n++;
}

static void
jobtable_order_remove(struct jobtable *t, const struct job *job)
{
	struct jobtable_at *o = jobtable_order(t);
	size_t i = jobtable_order_bound(t, job->submitted_at, job->id);

	if (i >= t->order.n || o[i].id != job->id)
		return;
	o[i].id |= JOBTABLE_GONE;
	if (++t->order_dead > t->order.n / 4)
		jobtable_order_sweep(t);
}

void
jobtable_free(struct jobtable *t)
{
	size_t i;

	for (i = 0; i < t->entries.n; i++)
		job_free(jobtable_entry_job(jobtable_entries(t)[i]));
	jobkeys_clear(&t->keys);
	vec_free(&t->entries);
	vec_free(&t->order);
	t->dead = 0;
	t->order_dead = 0;
}

int
jobtable_reserve(struct jobtable *t, size_t n)
{
	return vec_reserve(&t->entries, sizeof(uintptr_t), n) != 0 ||
	    (t->by_submission && vec_reserve(&t->order,
	    sizeof(struct jobtable_at), n) != 0) ? -1 : 0;
}

int
jobtable_add(struct jobtable *t, struct job *job)
{
	uintptr_t e = (uintptr_t)job, *v;
	size_t i, n = t->entries.n;

	if (vec_reserve(&t->entries, sizeof e, 1) != 0 ||
	    (t->by_submission && vec_reserve(&t->order,
	    sizeof(struct jobtable_at), 1) != 0))
		return -1;
	if (t->by_submission)
		jobtable_order_add(t, job);
	/* Out of memory, the job is only not found by its key (below). */
	(void)jobkeys_add(&t->keys, job);
	v = jobtable_entries(t);
	if (n == 0 || jobtable_entry_id(v[n - 1]) < job->id) {
		v[t->entries.n++] = e;
		return 0;
	}
	i = jobtable_lower_bound(t, job->id);
	/* The tombstone of the same id, from a removal: its place. */
	if (v[i] == (((uintptr_t)job->id << 1) | 1)) {
		v[i] = e;
		t->dead--;
		return 0;
	}
	memmove(&v[i + 1], &v[i], (n - i) * sizeof *v);
	v[i] = e;
	t->entries.n++;
	return 0;
}

struct job *
jobtable_remove(struct jobtable *t, uint64_t id)
{
	size_t i = jobtable_lower_bound(t, id);
	uintptr_t *e = jobtable_entries(t);
	struct job *job;

	if (i >= t->entries.n || (job = jobtable_entry_job(e[i])) == NULL ||
	    job->id != id)
		return NULL;
	if (t->by_submission)
		jobtable_order_remove(t, job);
	jobkeys_remove(&t->keys, job);
	/* Ids fit: the databases' are at most INT64_MAX. */
	e[i] = ((uintptr_t)id << 1) | 1;
	/* The sweep costs the whole array, once per so many removals. */
	if (++t->dead > t->entries.n / 4)
		jobtable_sweep(t);
	return job;
}

struct job *
jobtable_by_key(const struct jobtable *t, uid_t uid, const char *key)
{
	return jobkeys_find(&t->keys, uid, key);
}

struct job *
jobtable_get(const struct jobtable *t, uint64_t id)
{
	size_t i = jobtable_lower_bound(t, id);
	struct job *job;

	if (i < t->entries.n && (job = jobtable_entry_job(
	    jobtable_entries(t)[i])) != NULL && job->id == id)
		return job;
	return NULL;
}

struct job *
jobtable_next(const struct jobtable *t, uint64_t after_id)
{
	if (after_id == UINT64_MAX)
		return NULL;
	return jobtable_live_from(t, jobtable_lower_bound(t, after_id + 1));
}

struct job *
jobtable_next_submitted(const struct jobtable *t, uint64_t after_id)
{
	const struct jobtable_at *o = jobtable_order(t);
	const struct job *after = NULL;
	size_t i = 0;

	if (!t->by_submission)
		return jobtable_next(t, after_id);
	if (after_id != 0 && (after = jobtable_get(t, after_id)) == NULL &&
	    (after = jobtable_next(t, after_id)) == NULL)
		return NULL;
	if (after != NULL)
		i = after_id >= JOBTABLE_GONE - 1 ? t->order.n :
		    jobtable_order_bound(t, after->submitted_at, after_id + 1);
	for (; i < t->order.n; i++)
		if (!(o[i].id & JOBTABLE_GONE))
			return jobtable_get(t, o[i].id);
	return NULL;
}

struct job *
jobtable_iter(const struct jobtable *t, size_t *pos)
{
	uintptr_t *e = jobtable_entries(t);

	for (; *pos < t->entries.n; (*pos)++)
		if (!(e[*pos] & 1))
			return (struct job *)e[(*pos)++];
	return NULL;
}

struct job *
jobtable_last(const struct jobtable *t)
{
	uintptr_t *e = jobtable_entries(t);
	size_t i;

	for (i = t->entries.n; i > 0; i--)
		if (!(e[i - 1] & 1))
			return (struct job *)e[i - 1];
	return NULL;
}

size_t
jobtable_count(const struct jobtable *t)
{
	return t->entries.n - t->dead;
}
