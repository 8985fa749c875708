/* prune.c - keep_finished: jobs that ended longer ago than that, and their
 * captured output, are deleted a small batch at a time, on a timer armed
 * for the oldest one's expiry only (an idle daemon never wakes). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "prune.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"

/* A batch small enough that the loop hardly notices it; a backlog goes
 * a batch a turn. */
#define PRUNE_BATCH 256
/* After a failed look at the store, or a batch of jobs all retried. */
#define PRUNE_RETRY_MS 60000

/* td->prune. */
struct prune {
	struct event *ev;	/* the next pass */
};

static void
prune_unlink(const struct triaged *td, uint64_t id, const char *stream)
{
	char path[4096];

	snprintf(path, sizeof path, "%s/%llu.%s", td->output_dir,
	    (unsigned long long)id, stream);
	if (unlink(path) != 0 && errno != ENOENT)
		log_warn("cannot remove %s", path);
}

int
prune_job(struct triaged *td, uint64_t id)
{
	if (jobs_forget(td, id) != 0)
		return -1;
	prune_unlink(td, id, "stdout");
	prune_unlink(td, id, "stderr");
	/* What a worker killed while compacting (output_keep = tail) left
	 * behind. */
	prune_unlink(td, id, "stdout.tmp");
	prune_unlink(td, id, "stderr.tmp");
	return 0;
}

static void
prune_schedule(const struct triaged *td, uint64_t ms)
{
	struct timeval tv = timefmt_tv(ms);

	evtimer_add(td->prune->ev, &tv);
}

/* Arms the timer for when the job that finished at finished_at expires. */
static void
prune_schedule_at(const struct triaged *td, int64_t finished_at)
{
	int64_t ms = finished_at + (int64_t)td->cfg->keep_finished_ms -
	    timefmt_now();

	prune_schedule(td, ms > 0 ? (uint64_t)ms : 0);
}

/* Up to PRUNE_BATCH terminal jobs that ended before before, oldest first,
 * into ids. 0, or -1 after logging why, the timer armed to try again. */
static int
prune_expired(struct triaged *td, int64_t before, uint64_t *ids, size_t *n)
{
	char *cause = NULL;

	if (store_expired(td->store, before, ids, PRUNE_BATCH, n, &cause) == 0)
		return 0;
	log_warnx("cannot look for jobs to prune: %s", cause);
	free(cause);
	prune_schedule(td, PRUNE_RETRY_MS);
	return -1;
}

/*
 * After a pass: the timer for the oldest terminal job left, or none when
 * there is none (prune_job_cb arms it when one ends). Oldest on disk first;
 * one retried since is not terminal in memory, and arms it when it ends.
 */
static void
prune_schedule_next(struct triaged *td)
{
	uint64_t ids[PRUNE_BATCH];
	struct job *job;
	size_t n = 0, i;

	if (prune_expired(td, INT64_MAX, ids, &n) != 0)
		return;
	for (i = 0; i < n; i++) {
		job = store_get(td->store, ids[i]);
		if (job != NULL && job_state_terminal(job->state)) {
			prune_schedule_at(td, job->run->finished_at);
			return;
		}
	}
	/* A whole batch retried since: the next pass looks further. */
	if (n == PRUNE_BATCH)
		prune_schedule(td, PRUNE_RETRY_MS);
}

static void
prune_cb(evutil_socket_t fd, short what, void *arg)
{
	struct triaged *td = arg;
	uint64_t keep = td->cfg->keep_finished_ms;
	int64_t before = timefmt_now() - (int64_t)keep;
	uint64_t ids[PRUNE_BATCH];
	struct job *job;
	size_t n = 0, i, gone = 0;

	(void)fd;
	(void)what;
	if (prune_expired(td, before, ids, &n) != 0)
		return;
	for (i = 0; i < n; i++) {
		/* Memory is ahead of the disk: a job retried since is not
		 * old any more. */
		job = store_get(td->store, ids[i]);
		if (job == NULL || !job_state_terminal(job->state) ||
		    job->run->finished_at >= before)
			continue;
		if (prune_job(td, ids[i]) == 0)
			gone++;
	}
	if (gone > 0)
		log_debug("pruned %zu jobs that ended before keep_finished",
		    gone);
	/* A full batch means more wait: the next one next turn. */
	if (n == PRUNE_BATCH && gone > 0)
		prune_schedule(td, 0);
	else
		prune_schedule_next(td);
}

/* A job that ends expires after every one that ended before it: the timer
 * needs arming only when none is pending. */
static void
prune_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	(void)arg;
	if (ev->change == NULL && job_state_terminal(ev->view->state) &&
	    !evtimer_pending(td->prune->ev, NULL))
		prune_schedule_at(td, ev->view->run->finished_at);
}

int
prune_start(struct triaged *td)
{
	struct prune *p;

	if ((p = calloc(1, sizeof *p)) == NULL)
		return -1;
	if ((p->ev = evtimer_new(td->base, prune_cb, td)) == NULL) {
		free(p);
		return -1;
	}
	td->prune = p;
	if (jobs_listen(td, prune_job_cb, NULL) != 0)
		return -1;
	prune_schedule(td, 0);
	return 0;
}

void
prune_reload(struct triaged *td)
{
	/* keep_finished may have changed: a pass now finds the new time. */
	if (td->prune != NULL)
		prune_schedule(td, 0);
}

void
prune_stop(struct triaged *td)
{
	if (td->prune == NULL)
		return;
	event_free(td->prune->ev);
	free(td->prune);
	td->prune = NULL;
}
