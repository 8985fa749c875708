/* jobs-record.c - the queue of what waits for a commit: each change recorded
 * with the commit that makes it true, dropped when its write is refused. */
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "jobs-private.h"
#include "log.h"
#include "store.h"
#include "triaged.h"

void
jobs_item_free(struct jobs_item *it)
{
	free(it->reason);
	free(it->cgroup);
	json_decref(it->result);
	free(it);
}

void
jobs_item_add(struct triaged *td, struct jobs_item *it, uint64_t gen)
{
	static const struct timeval now = { 0, 0 };
	struct jobs *js = td->jobs;

	it->gen = gen;
	TAILQ_INSERT_TAIL(&js->items, it, entry);
	if (gen <= js->durable && !js->draining)
		evtimer_add(js->publish_ev, &now);
}

uint64_t
jobs_gen(const struct triaged *td)
{
	return store_pending(td->store) ? store_generation(td->store) :
	    td->jobs->durable;
}

void
jobs_record(struct triaged *td, struct job *job, enum job_state from,
    const char *change, uint64_t gen)
{
	struct jobs_item *it;

	if ((it = calloc(1, sizeof *it)) == NULL ||
	    (job->run->reason != NULL && (it->reason = strdup(job->run->reason))
	    == NULL) ||
	    (job->run->cgroup != NULL && (it->cgroup = strdup(job->run->cgroup))
	    == NULL)) {
		if (it != NULL)
			jobs_item_free(it);
		log_warnx("job %llu: out of memory: its change to %s is not "
		    "published", (unsigned long long)job->id,
		    job_state_name(job->state));
		return;
	}
	it->kind = JOBS_EVENT;
	it->id = job->id;
	it->from = from;
	it->change = change;
	job_status_get(job, &it->status);
	/* Never edited, only replaced: the event shares it. */
	it->result = json_incref(job->run->result);
	jobs_item_add(td, it, gen);
}

/* Drops what q holds of job id that is not durable yet (all: durable or
 * not). */
static void
jobs_drop_items(struct jobs_items *q, uint64_t id, uint64_t durable,
    bool all)
{
	struct jobs_item *it, *next;

	for (it = TAILQ_FIRST(q); it != NULL; it = next) {
		next = TAILQ_NEXT(it, entry);
		if (it->kind == JOBS_BARRIER || it->id != id ||
		    (!all && it->gen <= durable))
			continue;
		TAILQ_REMOVE(q, it, entry);
		jobs_item_free(it);
	}
}

void
jobs_drop_pending(struct triaged *td, uint64_t id)
{
	struct jobs *js = td->jobs;

	jobs_drop_items(&js->items, id, js->durable, false);
	jobs_drop_items(&js->launches, id, js->durable, true);
}

void
jobs_record_change(struct triaged *td, struct job *job, enum job_state from,
    const char *change)
{
	jobs_record(td, job, from, change, jobs_gen(td));
}
