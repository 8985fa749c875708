/* jobs-init.c - the state machine set up and torn down: its state, the
 * semaphore from the config, and its hooks in the loop and the store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "beginq.h"
#include "config.h"
#include "jobs.h"
#include "jobs-private.h"
#include "psem.h"
#include "resources.h"
#include "store.h"
#include "triaged.h"
#include "uidcount.h"

int
jobs_init(struct triaged *td, char **cause)
{
	const struct config *cfg = td->cfg;
	struct jobs *js;
	unsigned i;

	if ((js = calloc(1, sizeof *js)) == NULL ||
	    (js->publish_ev = evtimer_new(td->base, jobs_publish_cb, td))
	    == NULL ||
	    (js->begin_ev = evtimer_new(td->base, jobs_begin_cb, td)) == NULL) {
		if (js != NULL && js->publish_ev != NULL)
			event_free(js->publish_ev);
		free(js);
		*cause = strdup("out of memory");
		return -1;
	}
	TAILQ_INIT(&js->items);
	TAILQ_INIT(&js->launches);
	TAILQ_INIT(&js->admissions);
	TAILQ_INIT(&js->retrials);
	js->durable = store_generation(td->store) - 1;
	td->jobs = js;
	td->sem = psem_new(td->base, cfg->slots, cfg->npriorities,
	    psem_policy_find(cfg->policy));
	if (td->sem == NULL) {
		if (asprintf(cause, "cannot make the semaphore: %m") < 0)
			*cause = NULL;
		jobs_free(td);
		return -1;
	}
	psem_set_grant_cb(td->sem, jobs_grant_cb, td);
	for (i = 0; i < cfg->npriorities; i++) {
		psem_set_weight(td->sem, i, cfg->priorities[i].weight);
		psem_set_cap(td->sem, i, cfg->priorities[i].max_running);
	}
	if (resources_init(td, cfg, td->memory_budget, cause) != 0) {
		jobs_free(td);
		return -1;
	}
	store_set_committed_cb(td->store, jobs_committed_cb, td);
	store_set_written_cb(td->store, jobs_written_cb, td);
	store_set_claim_alternates(td->store, jobs_alternates_cb,
	    jobs_moved_cb, td);
	return 0;
}

void
jobs_free(struct triaged *td)
{
	struct jobs *js = td->jobs;
	struct jobs_item *it;

	if (js == NULL)
		return;
	store_set_committed_cb(td->store, NULL, NULL);
	store_set_written_cb(td->store, NULL, NULL);
	store_set_claim_alternates(td->store, NULL, NULL, NULL);
	while ((it = TAILQ_FIRST(&js->items)) != NULL) {
		TAILQ_REMOVE(&js->items, it, entry);
		jobs_item_free(it);
	}
	while ((it = TAILQ_FIRST(&js->launches)) != NULL) {
		TAILQ_REMOVE(&js->launches, it, entry);
		jobs_item_free(it);
	}
	event_free(js->publish_ev);
	event_free(js->begin_ev);
	beginq_clear(&js->beginq);
	free(js->listeners);
	free(js->starting);
	uidcount_clear(&js->queued_by_uid);
	free(js);
	td->jobs = NULL;
	resources_free(td);
	psem_free(td->sem);
	td->sem = NULL;
}
