/* jobs-listen.c - who hears the state machine: listeners of job events and
 * of runs, each told in the order they were added. */
#include <stdlib.h>

#include "jobs.h"
#include "jobs-private.h"
#include "triaged.h"

/* A listener of events, or of runs. */
struct jobs_listener {
	jobs_listener_cb cb;		/* NULL: of runs */
	jobs_run_listener_cb run_cb;	/* NULL: of events */
	void *arg;
};

static int
jobs_listener_add(struct triaged *td, struct jobs_listener l)
{
	struct jobs *js = td->jobs;
	struct jobs_listener *v;

	v = reallocarray(js->listeners, js->nlisteners + 1, sizeof *v);
	if (v == NULL)
		return -1;
	v[js->nlisteners++] = l;
	js->listeners = v;
	return 0;
}

int
jobs_listen(struct triaged *td, jobs_listener_cb cb, void *arg)
{
	return jobs_listener_add(td, (struct jobs_listener){ cb, NULL, arg });
}

int
jobs_listen_runs(struct triaged *td, jobs_run_listener_cb cb, void *arg)
{
	return jobs_listener_add(td, (struct jobs_listener){ NULL, cb, arg });
}

void
jobs_tell_runs(struct triaged *td, struct job *job,
    const struct run_outcome *out)
{
	struct jobs *js = td->jobs;
	struct jobs_run_event ev = { job, out };
	size_t i;

	for (i = 0; i < js->nlisteners; i++)
		if (js->listeners[i].run_cb != NULL)
			js->listeners[i].run_cb(td, &ev, js->listeners[i].arg);
}

void
jobs_tell_event(struct triaged *td, const struct jobs_event *ev)
{
	struct jobs *js = td->jobs;
	size_t i;

	for (i = 0; i < js->nlisteners; i++)
		if (js->listeners[i].cb != NULL)
			js->listeners[i].cb(td, ev, js->listeners[i].arg);
}
