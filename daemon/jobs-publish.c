/* jobs-publish.c - what waits for a commit goes out once it is on disk: job
 * events to the listeners in the order they happened, never nested. */
#include <stdlib.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"

/* How long one turn of the loop may spend publishing. */
#define JOBS_DRAIN_SLICE_US 2000

static void
jobs_publish(struct triaged *td, struct jobs_item *it)
{
	struct jobs_event ev;
	struct job view, *job;

	/* Gone (pruned, removed): nobody can ask about it any more. */
	if ((job = store_get(td->store, it->id)) == NULL)
		return;
	/* The job as it was: its run is the copy the item took. */
	view = *job;
	view.state = it->status.state;
	view.attempt = it->status.attempt;
	view.retries = it->status.retries;
	view.seq = it->status.seq;
	view.held = it->status.held;
	view.frozen = it->status.frozen;
	it->status.run.reason = it->reason;
	it->status.run.cgroup = it->cgroup;
	it->status.run.result = it->result;
	view.run = &it->status.run;
	ev.job = job;
	ev.view = &view;
	ev.from = it->from;
	ev.change = it->change;
	jobs_tell_event(td, &ev);
}

/*
 * Handles every item whose commit has succeeded, in order. Whatever the
 * handlers add goes to the tail and waits for its own commit: never a
 * nested drain. A long backlog (a commit of thousands of submissions) goes
 * a slice per turn of the loop, so that other clients are served between.
 */
static void
jobs_drain(struct triaged *td)
{
	static const struct timeval now = { 0, 0 };
	struct jobs *js = td->jobs;
	uint64_t start = timefmt_mono_us();
	struct jobs_item *it;
	unsigned n = 0;

	if (js->draining)
		return;
	js->draining = true;
	while ((it = TAILQ_FIRST(&js->items)) != NULL &&
	    it->gen <= js->durable) {
		if (++n % 64 == 0 &&
		    timefmt_mono_us() - start > JOBS_DRAIN_SLICE_US) {
			evtimer_add(js->publish_ev, &now);
			break;
		}
		TAILQ_REMOVE(&js->items, it, entry);
		switch (it->kind) {
		case JOBS_EVENT:
			jobs_publish(td, it);
			break;
		case JOBS_BARRIER:
			it->cb(td, NULL, NULL, it->arg);
			break;
		case JOBS_LAUNCH:
			/* Never queued here: launches wait in js->launches
			 * for their claim's write (jobs-launch.c). */
			break;
		}
		jobs_item_free(it);
	}
	js->draining = false;
}

void
jobs_publish_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	jobs_drain(arg);
}

void
jobs_committed_cb(uint64_t generation, const char *cause, void *arg)
{
	struct triaged *td = arg;
	struct jobs *js = td->jobs;

	if (cause != NULL) {
		if (!js->commits_failing)
			log_warnx("cannot write the job store: %s; no job "
			    "starts, and no outcome is reported, until a "
			    "commit succeeds", cause);
		js->commits_failing = true;
		return;
	}
	if (js->commits_failing)
		log_notice("the job store is writable again: dispatch "
		    "resumes");
	js->commits_failing = false;
	js->durable = generation;
	jobs_drain(td);
	jobs_launch_written(td);
}

int
jobs_after_commit(struct triaged *td, jobs_done_cb done_cb, void *arg)
{
	static const struct timeval now = { 0, 0 };
	struct jobs_item *it;

	if ((it = calloc(1, sizeof *it)) == NULL)
		return -1;
	it->kind = JOBS_BARRIER;
	it->cb = done_cb;
	it->arg = arg;
	jobs_item_add(td, it, jobs_gen(td));
	/* Never inside this call, even when nothing waits. */
	if (it->gen <= td->jobs->durable)
		evtimer_add(td->jobs->publish_ev, &now);
	return 0;
}

