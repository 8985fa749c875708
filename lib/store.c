/* store.c - the in-memory job store: jobs in an array sorted by id, which is
 * the order they arrive in, so adding is O(1) and finding is a binary search. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "store.h"

struct store {
	struct job **jobs;
	size_t njobs;
	size_t cap;
	uint64_t next_id;
};

struct store *
store_open(void)
{
	struct store *st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return NULL;
	st->next_id = 1;
	return st;
}

void
store_close(struct store *st)
{
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < st->njobs; i++)
		job_free(st->jobs[i]);
	free(st->jobs);
	free(st);
}

uint64_t
store_next_id(const struct store *st)
{
	return st->next_id;
}

int
store_add(struct store *st, struct job *job)
{
	struct job **jobs;
	size_t cap;

	if (job->id != st->next_id) {
		errno = EINVAL;
		return -1;
	}
	if (st->njobs == st->cap) {
		cap = st->cap ? st->cap * 2 : 64;
		if ((jobs = reallocarray(st->jobs, cap, sizeof *jobs)) == NULL)
			return -1;
		st->jobs = jobs;
		st->cap = cap;
	}
	st->jobs[st->njobs++] = job;
	st->next_id++;
	return 0;
}

int
store_update(struct store *st, const struct job *job)
{
	(void)st;
	(void)job;
	return 0;
}

/* The index of the first job whose id is >= id. */
static size_t
store_lower_bound(const struct store *st, uint64_t id)
{
	size_t lo = 0, hi = st->njobs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->jobs[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct job *
store_get(const struct store *st, uint64_t id)
{
	size_t i = store_lower_bound(st, id);

	if (i < st->njobs && st->jobs[i]->id == id)
		return st->jobs[i];
	return NULL;
}

struct job *
store_next(const struct store *st, uint64_t after_id)
{
	size_t i;

	if (after_id == UINT64_MAX)
		return NULL;
	i = store_lower_bound(st, after_id + 1);
	return i < st->njobs ? st->jobs[i] : NULL;
}

int
store_remove(struct store *st, uint64_t id)
{
	size_t i = store_lower_bound(st, id);

	if (i >= st->njobs || st->jobs[i]->id != id) {
		errno = ENOENT;
		return -1;
	}
	job_free(st->jobs[i]);
	memmove(&st->jobs[i], &st->jobs[i + 1],
	    (st->njobs - i - 1) * sizeof st->jobs[0]);
	st->njobs--;
	return 0;
}

size_t
store_count(const struct store *st)
{
	return st->njobs;
}
