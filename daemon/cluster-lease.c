/* cluster-lease.c - a node's duties to the others: renewing the lease on the
 * jobs it runs, stopping them itself when it could not, taking over the
 * jobs of a node whose lease ran out (saying so as it notices), and
 * cancelling its own jobs when another node asks. Timers run only while
 * there are such jobs: an idle cluster sends nothing. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "cluster.h"
#include "config.h"
#include "jobs.h"
#include "log.h"
#include "nodename.h"
#include "psem.h"
#include "run.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "vec.h"

/* td->lease: what the node's duties need between two events. */
struct cluster_lease {
	struct event *renew_ev;		/* while jobs run here */
	struct event *takeover_ev;	/* while jobs run elsewhere */
	struct event *fence_ev;		/* while jobs run here: the lease's
					 * end, unless renewed */
	uint64_t takeover_at_us;	/* when takeover_ev fires */
	uint64_t pushed_until_us;	/* the lease the workers have */
	bool expired;			/* cluster_lease_ran_out since the
					 * last renewal acknowledged */
	struct vec seen;		/* struct cluster_seen: the other
					 * nodes, up or down as last said */
};

/* Another node as this one last said it was. */
struct cluster_seen {
	char name[NODENAME_MAX + 1];
	bool up;
};

/*
 * Says in the log when another node goes down or comes back, as this node
 * notices: a node is down once its lease ran out unrenewed (stopped, cut
 * off from PostgreSQL, or too late), or once it no longer holds its name
 * (its daemon stopped, or lost the database). Nodes seen first are only
 * noted.
 */
static void
cluster_note_nodes(struct triaged *td)
{
	struct cluster_seen *seen = td->lease->seen.v, one;
	const struct store_node *nodes;
	size_t i, k, n;
	bool up;

	nodes = store_nodes(td->store, &n);
	for (i = 0; i < n; i++) {
		if (strcmp(nodes[i].name, td->cfg->cluster.node) == 0)
			continue;
		up = store_node_up(&nodes[i]);
		for (k = 0; k < td->lease->seen.n; k++)
			if (strcmp(seen[k].name, nodes[i].name) == 0)
				break;
		if (k == td->lease->seen.n) {
			memset(&one, 0, sizeof one);
			snprintf(one.name, sizeof one.name, "%s",
			    nodes[i].name);
			one.up = up;
			/* Out of memory, it is noted next time. */
			(void)vec_push(&td->lease->seen, sizeof one, &one);
			seen = td->lease->seen.v;
			continue;
		}
		if (seen[k].up == up)
			continue;
		seen[k].up = up;
		if (up)
			log_notice("cluster: node %s is up again", seen[k].name);
		else if (nodes[i].up)
			log_warnx("cluster: node %s is down: its lease ran "
			    "out unrenewed while it held %u slots (stopped, "
			    "cut off from PostgreSQL, or too slow); its jobs "
			    "are taken over %.1f s after", seen[k].name,
			    nodes[i].busy, (double)nodes[i].grace_ms / 1e3);
		else
			log_warnx("cluster: node %s is down: it holds its "
			    "name no more (its daemon stopped, or lost "
			    "PostgreSQL)", seen[k].name);
	}
}

/* Slots held by jobs that run on other nodes, in every priority. */
static unsigned
cluster_elsewhere(const struct triaged *td)
{
	struct psem_prio_stats st;
	unsigned i, n = 0;

	for (i = 0; i < psem_priorities(td->sem); i++)
		if (psem_prio_stats(td->sem, i, &st) == 0)
			n += st.elsewhere;
	return n;
}

static void
cluster_arm(struct event *ev, uint64_t ms)
{
	struct timeval tv = timefmt_tv(ms);

	if (!evtimer_pending(ev, NULL))
		evtimer_add(ev, &tv);
}

/* The fence at the end of the lease as the database last acknowledged
 * it (a whole lease ahead before any renewal: a job runs here only once
 * its claim's commit, a renewal, is in). */
static void
cluster_arm_fence(struct triaged *td)
{
	struct event *fence_ev = td->lease->fence_ev;
	uint64_t until = store_lease_until_us(td->store);
	uint64_t now = timefmt_mono_us();

	if (evtimer_pending(fence_ev, NULL))
		return;
	cluster_arm(fence_ev, until > now ? (until - now) / 1000 + 1 :
	    td->cfg->cluster.lease_ms);
}

/*
 * The lease ran out unrenewed (the database unreachable, silent, or this
 * daemon too late): another node may take this node's jobs once their
 * grace is over, so they die now, SIGTERM then SIGKILL after kill_grace
 * (their workers may have begun already), and each becomes another
 * attempt, never an outcome. The connections are taken for dead. Said and
 * done once until a renewal is acknowledged again.
 */
void
cluster_lease_ran_out(struct triaged *td)
{
	uint64_t until = store_lease_until_us(td->store);
	uint64_t now = timefmt_mono_us();
	struct job *job;
	size_t pos;
	unsigned n = 0;

	/* NULL: no cluster, no lease to run out (a test's bare daemon). */
	if (td->lease == NULL || td->lease->expired)
		return;
	td->lease->expired = true;
	for (pos = 0; (job = store_iter(td->store, &pos)) != NULL;) {
		if (!run_has(td->run, job) || job->shared.fenced ||
		    job->shared.taken)
			continue;
		job->shared.fenced = true;
		run_stop(td->run, job, JOB_LOST, SIGTERM,
		    "the node's lease ran out");
		n++;
	}
	log_warnx("cluster: node %s's lease ran out %.1f s after the last "
	    "renewal the database acknowledged was sent; killing the %u jobs "
	    "that still run here: other nodes may take them",
	    td->cfg->cluster.node, until == 0 ? 0.0 :
	    ((double)now - (double)until) / 1e6 +
	    (double)td->cfg->cluster.lease_ms / 1e3, n);
	store_lease_lost(td->store);
}

static void
cluster_fence_cb(evutil_socket_t fd, short what, void *arg)
{
	struct triaged *td = arg;
	uint64_t until = store_lease_until_us(td->store);

	(void)fd;
	(void)what;
	if (run_count(td->run) == 0)
		return;
	if (until == 0 || until > timefmt_mono_us()) {
		cluster_arm_fence(td);
		return;
	}
	cluster_lease_ran_out(td);
}

/*
 * The next look for nodes whose lease ran out: every half lease (a live
 * node renews every third, so its lease as last read never seems over),
 * or sooner, just past the moment another node's lease runs out (it is
 * down: said at once) or its jobs may be taken, as last read.
 */
static void
cluster_arm_takeover(struct triaged *td)
{
	struct cluster_lease *l = td->lease;
	const struct store_node *nodes;
	uint64_t now = timefmt_mono_us(), at, ms;
	size_t i, n;

	ms = td->cfg->cluster.lease_ms / 2;
	nodes = store_nodes(td->store, &n);
	for (i = 0; i < n; i++) {
		if (nodes[i].lease_end_us == 0 || !nodes[i].up ||
		    strcmp(nodes[i].name, td->cfg->cluster.node) == 0)
			continue;
		at = nodes[i].lease_end_us + nodes[i].grace_ms * 1000;
		if (at > now && (at - now) / 1000 + 50 < ms)
			ms = (at - now) / 1000 + 50;
		at = nodes[i].lease_end_us;
		if (at > now && (at - now) / 1000 + 50 < ms)
			ms = (at - now) / 1000 + 50;
	}
	if (evtimer_pending(l->takeover_ev, NULL) &&
	    l->takeover_at_us <= now + ms * 1000)
		return;
	l->takeover_at_us = now + ms * 1000;
	evtimer_del(l->takeover_ev);
	cluster_arm(l->takeover_ev, ms);
}

/* Arms what the jobs now need: a renewal while this node runs any, a look
 * for dead nodes while others do. */
static void
cluster_lease_check(struct triaged *td)
{
	uint64_t ms = td->cfg->cluster.lease_ms;

	cluster_note_nodes(td);
	if (run_count(td->run) > 0) {
		cluster_arm(td->lease->renew_ev, ms / 3);
		cluster_arm_fence(td);
	}
	if (cluster_elsewhere(td) > 0)
		cluster_arm_takeover(td);
}

/* The slots this node holds, for the others to see (store_set_busy_cb). */
static unsigned
cluster_busy_cb(void *arg)
{
	const struct triaged *td = arg;

	return psem_held(td->sem);
}

static void
cluster_renew_cb(evutil_socket_t fd, short what, void *arg)
{
	struct triaged *td = arg;

	(void)fd;
	(void)what;
	if (run_count(td->run) == 0)
		return;
	store_renew_lease(td->store);
	cluster_lease_check(td);
}

static void
cluster_takeover_cb(evutil_socket_t fd, short what, void *arg)
{
	struct triaged *td = arg;

	(void)fd;
	(void)what;
	cluster_note_nodes(td);
	if (cluster_elsewhere(td) == 0)
		return;
	store_take_over(td->store);
	cluster_lease_check(td);
}

static void
cluster_event_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	(void)arg;
	/* A job's process started here: its worker holds the lease too. */
	if (ev->change == NULL && ev->job->state == JOB_RUNNING &&
	    ev->from != JOB_RUNNING && run_has(td->run, ev->job) &&
	    store_lease_until_us(td->store) != 0)
		run_set_lease(td->run, ev->job,
		    store_lease_until_us(td->store));
	cluster_lease_check(td);
}

/* A renewal was acknowledged: the workers hear of it, though not of every
 * one (commits renew too): once a tenth of the lease has gone by. */
static void
cluster_renewed_cb(uint64_t until_us, void *arg)
{
	struct triaged *td = arg;
	struct cluster_lease *l = td->lease;

	if (until_us > timefmt_mono_us())
		l->expired = false;
	if (until_us < l->pushed_until_us + td->cfg->cluster.lease_ms * 100)
		return;
	l->pushed_until_us = until_us;
	run_set_lease(td->run, NULL, until_us);
}

/* This node took another's jobs: the loss and the takeover, said once. */
static void
cluster_took_cb(const char *node, int64_t until_ms, unsigned n,
    const char *ids, void *arg)
{
	char when[TIMEFMT_MAX];

	(void)arg;
	log_notice("cluster: node %s's lease ran out %s; taking over its %u "
	    "running jobs (%s): they run again as new attempts", node,
	    timefmt_local(until_ms, when, sizeof when), n, ids);
}

/* Another node asks: the job runs here. */
static void
cluster_cancel_cb(struct job *job, int sig, unsigned by, void *arg)
{
	struct triaged *td = arg;

	log_info("job %llu: canceled from another node by uid %u",
	    (unsigned long long)job->id, by);
	jobs_cancel(td, job, (uid_t)by, sig);
}

int
cluster_lease_start(struct triaged *td)
{
	struct cluster_lease *l;

	if (!td->cfg->cluster.enabled)
		return 0;
	if ((l = calloc(1, sizeof *l)) == NULL)
		return -1;
	td->lease = l;
	if ((l->renew_ev = evtimer_new(td->base, cluster_renew_cb, td))
	    == NULL ||
	    (l->takeover_ev = evtimer_new(td->base, cluster_takeover_cb,
	    td)) == NULL ||
	    (l->fence_ev = evtimer_new(td->base, cluster_fence_cb, td))
	    == NULL || jobs_listen(td, cluster_event_cb, NULL) != 0)
		return -1;
	store_set_busy_cb(td->store, cluster_busy_cb, td);
	store_set_cancel_cb(td->store, cluster_cancel_cb, td);
	store_set_takeover_cb(td->store, cluster_took_cb, td);
	store_set_lease_cb(td->store, cluster_renewed_cb, td);
	/* Jobs may run elsewhere already, or have run here before a crash
	 * (recovery decided those). */
	cluster_lease_check(td);
	return 0;
}

void
cluster_lease_stop(struct triaged *td)
{
	struct cluster_lease *l = td->lease;

	if (l == NULL)
		return;
	/* The semaphore it counts goes before the store. */
	store_set_busy_cb(td->store, NULL, NULL);
	if (l->renew_ev != NULL)
		event_free(l->renew_ev);
	if (l->takeover_ev != NULL)
		event_free(l->takeover_ev);
	if (l->fence_ev != NULL)
		event_free(l->fence_ev);
	vec_free(&l->seen);
	free(l);
	td->lease = NULL;
}
