/* jobs-prio.c - what the state machine does to its priorities: pause or
 * resume them, and renumber every job when a reload changes them. */
#include <errno.h>
#include <string.h>

#include "config.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "psem.h"
#include "store.h"
#include "triaged.h"

void
jobs_set_paused(struct triaged *td, int prio, bool paused, uid_t by)
{
	unsigned i;

	for (i = 0; i < psem_priorities(td->sem); i++) {
		if (prio >= 0 && i != (unsigned)prio)
			continue;
		if (paused)
			psem_pause(td->sem, i);
		else
			psem_resume(td->sem, i);
		/* Kept for the next start; out of memory, for this run only. */
		if (store_set_paused(td->store, td->cfg->priorities[i].name,
		    paused) != 0)
			log_warnx("out of memory: priority %s is %s until the "
			    "daemon restarts only", td->cfg->priorities[i].name,
			    paused ? "paused" : "resumed");
	}
	log_notice("%s %s by uid %u", paused ? "paused" : "resumed",
	    prio >= 0 ? td->cfg->priorities[prio].name : "every priority",
	    (unsigned)by);
}

int
jobs_reprioritize(struct triaged *td, unsigned nprio, const int *map)
{
	struct jobs *js = td->jobs;
	unsigned counts[CONFIG_PRIORITIES_MAX][JOB_NSTATES] = { { 0 } };
	unsigned staged[CONFIG_PRIORITIES_MAX] = { 0 };
	unsigned held[CONFIG_PRIORITIES_MAX] = { 0 };
	unsigned i, old = psem_priorities(td->sem), to;
	struct job *job;
	enum psem_state ws;
	int s;

	for (i = 0; i < old; i++)
		if (map[i] < 0 && (js->staged[i] != 0 ||
		    js->counts[i][JOB_QUEUED] != 0 ||
		    js->counts[i][JOB_RUNNING] != 0)) {
			errno = EBUSY;
			return -1;
		}
	if (psem_reshape(td->sem, nprio, map) != 0)
		return -1;
	/* Terminal jobs of a priority that is gone count under the first,
	 * as recovery places them. */
	for (i = 0; i < old; i++) {
		to = map[i] < 0 ? 0 : (unsigned)map[i];
		staged[to] += js->staged[i];
		held[to] += js->held[i];
		for (s = 0; s < JOB_NSTATES; s++)
			counts[to][s] += js->counts[i][s];
	}
	memcpy(js->counts, counts, sizeof counts);
	memcpy(js->staged, staged, sizeof staged);
	memcpy(js->held, held, sizeof held);
	/* psem_reshape renumbered the queued and granted waiters. */
	for (job = store_next(td->store, 0); job != NULL;
	    job = store_next(td->store, job->id)) {
		ws = psem_waiter_state(&job->waiter);
		if (ws == PSEM_QUEUED || ws == PSEM_GRANTED)
			continue;
		job->waiter.prio = map[job->waiter.prio] < 0 ? 0 :
		    (unsigned)map[job->waiter.prio];
	}
	jobs_renumber_admissions(td, map);
	jobs_renumber_retrials(td, map);
	return 0;
}
