/* attempts.c - what job events say of attempts: a submission, a return to
 * the queue, a start after its wait, an end after its run. */
#include <search.h>
#include <stdlib.h>

#include "attempts.h"
#include "job.h"
#include "jobs.h"

struct attempts_node {
	uint64_t id;
	int64_t ms;		/* queued (job queued) or started (running) */
};

static int
attempts_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct attempts_node *)a)->id;
	uint64_t y = ((const struct attempts_node *)b)->id;

	return x < y ? -1 : x > y;
}

void
attempts_init(struct attempts *a, int64_t now_ms)
{
	a->root = NULL;
	a->since_ms = now_ms;
}

void
attempts_clear(struct attempts *a)
{
	tdestroy(a->root, free);
	a->root = NULL;
}

/* Job id's time, or -1; forgotten when take. */
static int64_t
attempts_get(struct attempts *a, uint64_t id, int take)
{
	struct attempts_node key = { .id = id }, **found, *node;
	int64_t ms;

	if ((found = tfind(&key, &a->root, attempts_cmp)) == NULL)
		return -1;
	node = *found;
	ms = node->ms;
	if (take) {
		tdelete(node, &a->root, attempts_cmp);
		free(node);
	}
	return ms;
}

static void
attempts_set(struct attempts *a, uint64_t id, int64_t ms)
{
	struct attempts_node key = { .id = id }, **found, *node;

	if ((found = tfind(&key, &a->root, attempts_cmp)) != NULL) {
		(*found)->ms = ms;
		return;
	}
	if ((node = malloc(sizeof *node)) == NULL)
		return;
	node->id = id;
	node->ms = ms;
	if (tsearch(node, &a->root, attempts_cmp) == NULL)
		free(node);
}

static double
attempts_seconds(int64_t from_ms, int64_t to_ms)
{
	return to_ms > from_ms ? (double)(to_ms - from_ms) / 1000 : 0;
}

void
attempts_event(struct attempts *a, const struct jobs_event *ev,
    int64_t now_ms, struct attempts_times *t)
{
	const struct job *view = ev->view;
	int64_t since;

	t->kind = ATTEMPTS_OTHER;
	t->wait = t->run = -1;
	if (ev->change != NULL)
		return;
	switch (view->state) {
	case JOB_QUEUED:
		if (ev->from == JOB_QUEUED && view->attempt == 1) {
			t->kind = ATTEMPTS_SUBMITTED;
			return;
		}
		t->kind = ATTEMPTS_REQUEUED;
		/* Back from running: its run is cleared already. */
		since = attempts_get(a, view->id, 0);
		if (ev->from == JOB_RUNNING && since >= 0)
			t->run = attempts_seconds(since, now_ms);
		attempts_set(a, view->id, now_ms);
		return;
	case JOB_RUNNING:
		t->kind = ATTEMPTS_STARTED;
		since = attempts_get(a, view->id, 0);
		if (since < 0)
			since = view->attempt == 1 ? view->submitted_at :
			    a->since_ms;
		if (view->extra->begin_at > since)
			since = view->extra->begin_at;
		t->wait = attempts_seconds(since, view->run->started_at);
		attempts_set(a, view->id, view->run->started_at);
		return;
	default:
		t->kind = ATTEMPTS_ENDED;
		(void)attempts_get(a, view->id, 1);
		if (ev->from == JOB_RUNNING && view->run->started_at >= 0)
			t->run = attempts_seconds(view->run->started_at,
			    view->run->finished_at);
		return;
	}
}
