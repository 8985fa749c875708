/* jobs-view.c - what the state machine shows of itself: a job's place in
 * its queue and why it waits, the jobs starting, the counts, and stats. */
#include <stdio.h>
#include <stdlib.h>

#include "cluster.h"
#include "config.h"
#include "jobs.h"
#include "jobs-private.h"
#include "nodename.h"
#include "passwd.h"
#include "pool.h"
#include "psem.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "uidcount.h"
#include "version.h"

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

	if (now->held)
		return "held";
	if (now->begin_at >= 0 && now->begin_at > timefmt_now())
		return "begin_at";
	if (now->gated)
		return "after";
	if (now->pinned_node != NULL && td->cfg->cluster.enabled &&
	    !cluster_node_up(td, now->pinned_node)) {
		snprintf(node, sizeof node, "node:%s", now->pinned_node);
		return node;
	}
	if (psem_prio_stats(td->sem, now->waiter.prio, &st) == 0) {
		if (st.paused)
			return "paused";
		if (st.cap != 0 && st.held + st.elsewhere +
		    now->waiter.permits > st.cap)
			return "max_running";
	}
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

/* Whom jobs run as: {"submitter": true}, or the one user every job runs
 * as, by uid and name (a daemon that is not root runs them as itself). */
static json_t *
jobs_run_as(const struct triaged *td)
{
	static char *name;	/* looked up once: our uid never changes */
	uid_t uid = td->uid;

	if (uid == 0 && td->cfg->run_as_submitter)
		return json_pack("{sb}", "submitter", 1);
	if (name == NULL && passwd_lookup(uid, &name, NULL, NULL) != 0)
		name = NULL;
	return json_pack("{sb sI ss?}", "submitter", 0, "uid",
	    (json_int_t)uid, "user", name);
}

json_t *
jobs_stats(struct triaged *td)
{
	const struct config *cfg = td->cfg;
	const struct config_priority *p;
	struct psem_prio_stats st;
	json_t *prios, *counts;
	unsigned i, busy = 0;

	if ((prios = json_array()) == NULL)
		return NULL;
	for (i = 0; i < cfg->npriorities; i++) {
		p = &cfg->priorities[i];
		psem_prio_stats(td->sem, i, &st);
		busy += st.held;
		json_array_append_new(prios, json_pack(
		    "{ss sI sI sI sI sI sI sI sb sI sI}",
		    "name", p->name,
		    "rank", (json_int_t)p->rank,
		    "queued", (json_int_t)jobs_count(td, (int)i, JOB_QUEUED),
		    "held", (json_int_t)jobs_held(td, (int)i),
		    "running", (json_int_t)jobs_count(td, (int)i, JOB_RUNNING),
		    "slots_busy", (json_int_t)st.held,
		    "max_queued", (json_int_t)p->max_queued,
		    "max_running", (json_int_t)p->max_running,
		    "paused", st.paused,
		    "dispatched", (json_int_t)st.dispatched,
		    "weight", (json_int_t)p->weight));
	}
	if ((counts = json_object()) == NULL) {
		json_decref(prios);
		return NULL;
	}
	for (i = 0; i < JOB_NSTATES; i++)
		json_object_set_new(counts, job_state_name(i),
		    json_integer((json_int_t)jobs_count(td, -1, i)));
	/* Counted as queued too: held is a kind of queued. */
	json_object_set_new(counts, "held",
	    json_integer((json_int_t)jobs_held(td, -1)));
	return json_pack("{sI sI sI sI so so sf ss ss so ss so*}",
	    "slots", (json_int_t)psem_permits(td->sem),
	    /* What is held: above slots for a while after a reload made
	     * them fewer. */
	    "slots_busy", (json_int_t)busy,
	    "workers", (json_int_t)pool_size(td->pool),
	    "workers_busy", (json_int_t)pool_busy(td->pool),
	    "priorities", prios,
	    "jobs", counts,
	    "uptime", (double)(timefmt_mono_ms() - td->started_mono_ms) / 1000,
	    "version", TRIAGE_VERSION,
	    "policy", cfg->policy,
	    "run_as", jobs_run_as(td),
	    "node", cfg->cluster.node,
	    "nodes", cluster_nodes_json(td));
}
