/* jobs-view.c - what the state machine shows of itself: a job's place in
 * its queue and why it waits, the jobs starting, and the counts. */
#include <stdio.h>
#include <stdlib.h>

#include "cluster.h"
#include "config.h"
#include "jobs.h"
#include "jobs-private.h"
#include "nodename.h"
#include "psem.h"
#include "resources.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "uidcount.h"

/*
 * Whether the queued job now has its slots and is starting: granted here
 * (the grant not yet delivered, or its start being written, or its worker
 * being handed it), or begun by a node of the cluster, this one or
 * another. It waits for nothing any more.
 */
static bool
jobs_is_starting(const struct job *now)
{
	enum psem_state st = psem_waiter_state(&now->waiter);

	return now->run->begun || st == PSEM_GRANTED || st == PSEM_HELD;
}

/* Keeps the ids of jobs still starting, in the order they began. */
static void
jobs_starting_weed(struct triaged *td)
{
	struct jobs *js = td->jobs;
	const struct job *job;
	size_t i, n = 0;

	for (i = 0; i < js->nstarting; i++)
		if ((job = store_get(td->store, js->starting[i])) != NULL &&
		    job->state == JOB_QUEUED && jobs_is_starting(job))
			js->starting[n++] = js->starting[i];
	js->nstarting = n;
}

void
jobs_starting_add(struct triaged *td, uint64_t id)
{
	struct jobs *js = td->jobs;
	uint64_t *grown;
	size_t size;

	jobs_starting_weed(td);
	if (js->nstarting == js->starting_size) {
		size = js->starting_size == 0 ? 16 : js->starting_size * 2;
		if ((grown = reallocarray(js->starting, size,
		    sizeof *grown)) == NULL)
			return;
		js->starting = grown;
		js->starting_size = size;
	}
	js->starting[js->nstarting++] = id;
}

size_t
jobs_starting(struct triaged *td, const uint64_t **ids)
{
	jobs_starting_weed(td);
	*ids = td->jobs->starting;
	return td->jobs->nstarting;
}

/*
 * Why a queued job (now, the job itself) has not started, the first of
 * protocol.md's pending_reason that applies, from what is known of it
 * already: no walk of any queue but position's own.
 */
static const char *
jobs_pending_reason(struct triaged *td, const struct job *now,
    int64_t position)
{
	static char node[NODENAME_MAX + 8];	/* for the caller's
						 * moment only */
	struct psem_prio_stats st;
	int why;

	if (now->held)
		return "held";
	if (now->extra->begin_at >= 0 && now->extra->begin_at > timefmt_now())
		return "begin_at";
	if (now->admit.gated)
		return "after";
	if (now->extra->pinned_node != NULL && td->cfg->cluster.enabled &&
	    !cluster_node_up(td, now->extra->pinned_node)) {
		snprintf(node, sizeof node, "node:%s", now->extra->pinned_node);
		return node;
	}
	if (psem_prio_stats(td->sem, now->waiter.prio, &st) == 0) {
		if (st.paused)
			return "paused";
		if (st.cap != 0 && st.held + st.elsewhere +
		    now->waiter.permits > st.cap)
			return "max_running";
	}
	why = psem_why(td->sem, &now->waiter);
	if (why > 0 && resources_reason(td, why) != NULL)
		return resources_reason(td, why);
	if (why == -1)
		return "reserved";
	return position > 0 ? "queue" : "slots";
}

/*
 * Where job stands in its queue now, and why it waits (NULL: it does
 * not). Only the job itself knows its place: job may be a copy. A job
 * starting is at position 0 and waits for nothing; the others' positions
 * do not count it, as it has left the semaphore's queue. A copy that says
 * queued of an attempt begun since was starting then.
 */
static int64_t
jobs_place(struct triaged *td, const struct job *job, const char **pending)
{
	const struct job *now;
	int64_t position = -1;

	*pending = NULL;
	if (job->state != JOB_QUEUED ||
	    (now = store_get(td->store, job->id)) == NULL ||
	    now->attempt != job->attempt)
		return -1;
	if (jobs_is_starting(now))
		return 0;
	if (now->state == JOB_QUEUED) {
		if (psem_waiter_state(&now->waiter) == PSEM_QUEUED)
			position = psem_position(td->sem, &now->waiter);
		*pending = jobs_pending_reason(td, now, position);
	}
	return position;
}

json_t *
jobs_json(struct triaged *td, const struct job *job)
{
	const char *pending;
	int64_t position = jobs_place(td, job, &pending);

	return job_to_json(job, position, pending);
}

int
jobs_write_json(struct triaged *td, const struct job *job, struct jsonw *w)
{
	const char *pending;
	int64_t position = jobs_place(td, job, &pending);

	return job_write_json(job, position, pending, w);
}

unsigned
jobs_count(const struct triaged *td, int prio, enum job_state state)
{
	unsigned i, n = 0;

	if (prio >= 0)
		return td->jobs->counts[prio][state];
	for (i = 0; i < CONFIG_PRIORITIES_MAX; i++)
		n += td->jobs->counts[i][state];
	return n;
}

unsigned
jobs_held(const struct triaged *td, int prio)
{
	unsigned i, n = 0;

	if (prio >= 0)
		return td->jobs->held[prio];
	for (i = 0; i < CONFIG_PRIORITIES_MAX; i++)
		n += td->jobs->held[i];
	return n;
}

unsigned
jobs_queued_by(const struct triaged *td, uid_t uid)
{
	return uidcount_get(&td->jobs->queued_by_uid, uid);
}

unsigned
jobs_staged(const struct triaged *td, int prio)
{
	unsigned i, n = 0;

	if (prio >= 0)
		return td->jobs->staged[prio];
	for (i = 0; i < CONFIG_PRIORITIES_MAX; i++)
		n += td->jobs->staged[i];
	return n;
}
