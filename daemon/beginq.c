/* beginq.c - the queued jobs that wait for their begin_at, earliest first:
 * a binary heap indexed from the jobs, for O(log n) removal of any one. */
#include <stdbool.h>
#include <stdlib.h>

#include "beginq.h"
#include "job.h"

/* Whether a begins before b: by time, then by id, so that jobs due at the
 * same instant go in the order they were submitted. */
static bool
beginq_before(const struct job *a, const struct job *b)
{
	if (a->extra->begin_at != b->extra->begin_at)
		return a->extra->begin_at < b->extra->begin_at;
	return a->id < b->id;
}

static void
beginq_put(struct beginq *q, size_t i, struct job *job)
{
	q->v[i] = job;
	job->admit.begin_slot = i + 1;
}

static void
beginq_up(struct beginq *q, size_t i)
{
	struct job *job = q->v[i];
	size_t parent;

	for (; i > 0; i = parent) {
		parent = (i - 1) / 2;
		if (!beginq_before(job, q->v[parent]))
			break;
		beginq_put(q, i, q->v[parent]);
	}
	beginq_put(q, i, job);
}

static void
beginq_down(struct beginq *q, size_t i)
{
	struct job *job = q->v[i];
	size_t child;

	for (; (child = 2 * i + 1) < q->n; i = child) {
		if (child + 1 < q->n &&
		    beginq_before(q->v[child + 1], q->v[child]))
			child++;
		if (!beginq_before(q->v[child], job))
			break;
		beginq_put(q, i, q->v[child]);
	}
	beginq_put(q, i, job);
}

int
beginq_add(struct beginq *q, struct job *job)
{
	struct job **v;
	size_t cap;

	if (q->n == q->cap) {
		cap = q->cap ? q->cap * 2 : 16;
		if ((v = reallocarray(q->v, cap, sizeof *v)) == NULL)
			return -1;
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n] = job;
	beginq_up(q, q->n++);
	return 0;
}

void
beginq_remove(struct beginq *q, struct job *job)
{
	struct job *last;
	size_t i;

	if (job->admit.begin_slot == 0)
		return;
	i = job->admit.begin_slot - 1;
	job->admit.begin_slot = 0;
	if (--q->n == i)
		return;
	/* The last one fills the hole, and moves whichever way it must. */
	last = q->v[q->n];
	beginq_put(q, i, last);
	beginq_up(q, i);
	beginq_down(q, last->admit.begin_slot - 1);
}

struct job *
beginq_first(const struct beginq *q)
{
	return q->n > 0 ? q->v[0] : NULL;
}

void
beginq_clear(struct beginq *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		q->v[i]->admit.begin_slot = 0;
	free(q->v);
	*q = (struct beginq){ 0 };
}
