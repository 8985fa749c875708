/* deps.c - `after` and `after_any`: a job waits in its queue, outside the
 * semaphore, until every job it names has ended, and is canceled if one of
 * its `after` did not succeed. */
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>

#include "deps.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "store.h"
#include "triaged.h"

/*
 * By ids and attempts, not pointers: a waiting job may be canceled, retried
 * and even pruned long before the one it waits for ends, and a registration
 * of an earlier attempt must not count for a later one.
 */
struct deps_dependent {
	uint64_t id;
	unsigned attempt;
	bool any;		/* after_any: whatever the outcome */
};

/* The jobs waiting for one job. */
struct deps_target {
	uint64_t id;
	struct deps_dependent *v;
	size_t n;
	size_t cap;
};

/* How many jobs one waiting job still waits for. */
struct deps_waiting {
	uint64_t id;
	unsigned attempt;
	unsigned remaining;
};

struct deps {
	void *targets;		/* tsearch tree of struct deps_target */
	void *waiting;		/* tsearch tree of struct deps_waiting */
};

/* Both kinds of node start with their id. */
static int
deps_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct deps *
deps_new(void)
{
	return calloc(1, sizeof(struct deps));
}

static void
deps_target_free(void *p)
{
	struct deps_target *t = p;

	free(t->v);
	free(t);
}

void
deps_free(struct deps *deps)
{
	if (deps == NULL)
		return;
	tdestroy(deps->targets, deps_target_free);
	tdestroy(deps->waiting, free);
	free(deps);
}

/* Registers that job waits for target. 0, or -1 with ENOMEM. */
static int
deps_register(struct deps *deps, uint64_t target, const struct job *job,
    bool any)
{
	struct deps_target key = { .id = target }, *t, **found;
	struct deps_dependent *v;
	size_t cap;

	if ((found = tfind(&key, &deps->targets, deps_cmp)) != NULL)
		t = *found;
	else {
		if ((t = calloc(1, sizeof *t)) == NULL)
			return -1;
		t->id = target;
		if (tsearch(t, &deps->targets, deps_cmp) == NULL) {
			free(t);
			return -1;
		}
	}
	if (t->n == t->cap) {
		cap = t->cap ? t->cap * 2 : 4;
		if ((v = reallocarray(t->v, cap, sizeof *v)) == NULL)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct deps_dependent){ job->id, job->attempt, any };
	return 0;
}

static struct deps_waiting *
deps_waiting_find(struct deps *deps, uint64_t id)
{
	struct deps_waiting key = { .id = id }, **found;

	found = tfind(&key, &deps->waiting, deps_cmp);
	return found != NULL ? *found : NULL;
}

static void
deps_waiting_remove(struct deps *deps, struct deps_waiting *w)
{
	tdelete(w, &deps->waiting, deps_cmp);
	free(w);
}

int
deps_gate_cb(struct triaged *td, struct job *job, void *arg)
{
	struct deps *deps = arg;
	struct deps_waiting *w, *old;
	unsigned remaining = 0;
	struct job *dep;
	size_t i;

	for (i = 0; i < job->extra->nafter; i++) {
		dep = store_get(td->store, job->extra->after[i]);
		/* Gone: pruned, so it ended long ago; how is not known. */
		if (dep == NULL) {
			job_set_reason(job, "job %llu, which it runs after, is "
			    "no longer known",
			    (unsigned long long)job->extra->after[i]);
			return -1;
		}
		if (dep->state == JOB_SUCCEEDED)
			continue;
		if (job_state_terminal(dep->state)) {
			job_set_reason(job, "job %llu, which it runs after, "
			    "ended %s", (unsigned long long)dep->id,
			    job_state_name(dep->state));
			return -1;
		}
		if (deps_register(deps, dep->id, job, false) != 0)
			goto nomem;
		remaining++;
	}
	for (i = 0; i < job->extra->nafter_any; i++) {
		dep = store_get(td->store, job->extra->after_any[i]);
		/* Gone (pruned) or ended: how does not matter. */
		if (dep == NULL || job_state_terminal(dep->state))
			continue;
		if (deps_register(deps, dep->id, job, true) != 0)
			goto nomem;
		remaining++;
	}
	if (remaining == 0)
		return 1;
	if ((old = deps_waiting_find(deps, job->id)) != NULL)
		deps_waiting_remove(deps, old);	/* an earlier attempt's */
	if ((w = calloc(1, sizeof *w)) == NULL)
		goto nomem;
	*w = (struct deps_waiting){ job->id, job->attempt, remaining };
	if (tsearch(w, &deps->waiting, deps_cmp) == NULL) {
		free(w);
		goto nomem;
	}
	log_debug("job %llu waits for %u others", (unsigned long long)job->id,
	    remaining);
	return 0;
nomem:
	job_set_reason(job, "out of memory in the daemon");
	return -1;
}

/* One job that waited for ended, which ended as state. */
static void
deps_settle(struct triaged *td, struct deps *deps,
    const struct deps_dependent *d, uint64_t ended, enum job_state state)
{
	struct job *job = store_get(td->store, d->id);
	struct deps_waiting *w = deps_waiting_find(deps, d->id);

	/* Canceled or retried since it registered: not this wait's. */
	if (job == NULL || job->state != JOB_QUEUED || w == NULL ||
	    job->attempt != d->attempt || w->attempt != d->attempt)
		return;
	if ((state == JOB_SUCCEEDED || d->any) && --w->remaining > 0)
		return;
	deps_waiting_remove(deps, w);
	if (state == JOB_SUCCEEDED || d->any) {
		jobs_enqueue(td, job);
		return;
	}
	job_set_reason(job, "job %llu, which it runs after, ended %s",
	    (unsigned long long)ended, job_state_name(state));
	jobs_end(td, job, JOB_CANCELED);
}

/*
 * Canceling a dependent ends it too; its own dependents hear of that when
 * its change is published in turn, so a chain of any length keeps the
 * stack flat.
 */
void
deps_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	struct deps *deps = arg;
	const struct job *job = ev->view;
	struct deps_target key = { .id = job->id }, *t, **found;
	struct deps_waiting *w;
	size_t i;

	if (!job_state_terminal(job->state))
		return;
	/* It waited itself, and ended otherwise (canceled, say). */
	if ((w = deps_waiting_find(deps, job->id)) != NULL &&
	    w->attempt == job->attempt)
		deps_waiting_remove(deps, w);
	if ((found = tfind(&key, &deps->targets, deps_cmp)) == NULL)
		return;
	t = *found;
	tdelete(&key, &deps->targets, deps_cmp);
	for (i = 0; i < t->n; i++)
		deps_settle(td, deps, &t->v[i], job->id, job->state);
	deps_target_free(t);
}
