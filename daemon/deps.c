/* deps.c - `after`: a job waits in its queue, outside the semaphore, until
 * every job it names has ended, and is canceled if one did not succeed. */
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>

#include "deps.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "store.h"
#include "triaged.h"

/* The jobs waiting for one job, by id: ids, not pointers, since a waiting
 * job may be canceled and pruned long before the one it waits for ends. */
struct deps_node {
	uint64_t id;
	uint64_t *dependents;
	size_t n;
	size_t cap;
};

static void *deps_root;		/* tsearch tree of struct deps_node */
static uint64_t *deps_work;	/* ended jobs whose dependents are next */
static size_t deps_nwork, deps_capwork;
static bool deps_draining;

static int
deps_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct deps_node *)a)->id;
	uint64_t y = ((const struct deps_node *)b)->id;

	return x < y ? -1 : x > y;
}

/* Registers that dependent waits for id. 0, or -1 with ENOMEM. */
static int
deps_register(uint64_t id, uint64_t dependent)
{
	struct deps_node key = { .id = id }, *node, **found;
	uint64_t *v;
	size_t cap;

	if ((found = tfind(&key, &deps_root, deps_cmp)) != NULL)
		node = *found;
	else {
		if ((node = calloc(1, sizeof *node)) == NULL)
			return -1;
		node->id = id;
		if (tsearch(node, &deps_root, deps_cmp) == NULL) {
			free(node);
			return -1;
		}
	}
	if (node->n == node->cap) {
		cap = node->cap ? node->cap * 2 : 4;
		if ((v = reallocarray(node->dependents, cap, sizeof *v)) == NULL)
			return -1;
		node->dependents = v;
		node->cap = cap;
	}
	node->dependents[node->n++] = dependent;
	return 0;
}

int
deps_check(struct triaged *td, struct job *job)
{
	struct job *dep;
	size_t i;

	job->waiting_for = 0;
	for (i = 0; i < job->nafter; i++) {
		dep = store_get(td->store, job->after[i]);
		/* Gone: pruned, so it ended long ago; how is not known. */
		if (dep == NULL) {
			job_set_reason(job, "job %llu, which it runs after, is "
			    "no longer known", (unsigned long long)job->after[i]);
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
		if (deps_register(dep->id, job->id) != 0) {
			job_set_reason(job, "out of memory in the daemon");
			return -1;
		}
		job->waiting_for++;
	}
	return job->waiting_for == 0;
}

static void
deps_node_free(void *p)
{
	struct deps_node *node = p;

	free(node->dependents);
	free(node);
}

/* The dependents of the job with this id, which has ended. */
static void
deps_settle(struct triaged *td, uint64_t id)
{
	struct deps_node key = { .id = id }, *node, **found;
	struct job *job = store_get(td->store, id), *d;
	size_t i;

	if (job == NULL ||
	    (found = tfind(&key, &deps_root, deps_cmp)) == NULL)
		return;
	node = *found;
	tdelete(&key, &deps_root, deps_cmp);
	for (i = 0; i < node->n; i++) {
		d = store_get(td->store, node->dependents[i]);
		if (d == NULL || d->state != JOB_QUEUED || d->waiting_for == 0)
			continue;	/* canceled meanwhile, say */
		if (job->state == JOB_SUCCEEDED) {
			if (d->waiting_for > 1) {
				d->waiting_for--;
				continue;
			}
			/* Free to go: it joins the tail now, and keeps that
			 * place across a restart. */
			jobs_stop_waiting(td, d);
			d->seq = td->next_seq++;
			store_update(td->store, d);
			jobs_enqueue(td, d);
			continue;
		}
		jobs_stop_waiting(td, d);
		job_set_reason(d, "job %llu, which it runs after, ended %s",
		    (unsigned long long)id, job_state_name(job->state));
		jobs_set_state(td, d, JOB_CANCELED);
	}
	deps_node_free(node);
}

/*
 * Canceling a dependent ends it too, which settles its own dependents: a
 * work list instead of recursion, so a chain of any length keeps the stack
 * flat.
 */
void
deps_job_ended(struct triaged *td, struct job *job)
{
	uint64_t *v;
	size_t cap, i;

	if (deps_nwork == deps_capwork) {
		cap = deps_capwork ? deps_capwork * 2 : 64;
		if ((v = reallocarray(deps_work, cap, sizeof *v)) == NULL) {
			log_warnx("out of memory: the jobs after job %llu "
			    "stay waiting", (unsigned long long)job->id);
			return;
		}
		deps_work = v;
		deps_capwork = cap;
	}
	deps_work[deps_nwork++] = job->id;
	if (deps_draining)
		return;
	deps_draining = true;
	for (i = 0; i < deps_nwork; i++)
		deps_settle(td, deps_work[i]);
	deps_nwork = 0;
	deps_draining = false;
}

void
deps_free_all(void)
{
	tdestroy(deps_root, deps_node_free);
	deps_root = NULL;
	free(deps_work);
	deps_work = NULL;
	deps_nwork = deps_capwork = 0;
}
