/* cluster-lease.c - a node's duties to the others: renewing the lease on the
 * jobs it runs, taking over the jobs of a node whose lease ran out, and
 * cancelling its own jobs when another node asks. Timers run only while
 * there are such jobs: an idle cluster sends nothing. */
#include <stdlib.h>

#include <event2/event.h>

#include "cluster.h"
#include "config.h"
#include "jobs.h"
#include "log.h"
#include "psem.h"
#include "run.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"

struct cluster_lease {
	struct event *renew_ev;		/* while jobs run here */
	struct event *takeover_ev;	/* while jobs run elsewhere */
};

static struct cluster_lease lease;

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

/* Arms what the jobs now need: a renewal while this node runs any, a look
 * for dead nodes while others do. */
static void
cluster_lease_check(struct triaged *td)
{
	uint64_t ms = td->cfg->cluster.lease_ms;
	struct psem_prio_stats st;
	unsigned i, busy = 0;

	for (i = 0; i < psem_priorities(td->sem); i++)
		if (psem_prio_stats(td->sem, i, &st) == 0)
			busy += st.held;
	store_set_busy(td->store, busy);
	if (run_count(td->run) > 0)
		cluster_arm(lease.renew_ev, ms / 3);
	if (cluster_elsewhere(td) > 0)
		cluster_arm(lease.takeover_ev, ms / 2);
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
	if (cluster_elsewhere(td) == 0)
		return;
	store_take_over(td->store);
	cluster_lease_check(td);
}

static void
cluster_event_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	(void)ev;
	(void)arg;
	cluster_lease_check(td);
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
	if (!td->cfg->cluster.enabled)
		return 0;
	if ((lease.renew_ev = evtimer_new(td->base, cluster_renew_cb, td))
	    == NULL ||
	    (lease.takeover_ev = evtimer_new(td->base, cluster_takeover_cb,
	    td)) == NULL || jobs_listen(td, cluster_event_cb, NULL) != 0)
		return -1;
	store_set_cancel_cb(td->store, cluster_cancel_cb, td);
	/* Jobs may run elsewhere already, or have run here before a crash
	 * (recovery decided those). */
	cluster_lease_check(td);
	return 0;
}

void
cluster_lease_stop(void)
{
	if (lease.renew_ev != NULL)
		event_free(lease.renew_ev);
	if (lease.takeover_ev != NULL)
		event_free(lease.takeover_ev);
	lease.renew_ev = lease.takeover_ev = NULL;
}
