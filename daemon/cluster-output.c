/* cluster-output.c - a node's jobs' output shipped to the cluster's
 * database while they run, for the other nodes' `output`. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "capture.h"
#include "cluster-output.h"
#include "compat.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "run.h"
#include "store.h"
#include "triaged.h"

/* How often a running job's new output goes out: the "visible
 * within a second" with room for the write itself. */
#define CLOUT_TICK_MS 500
/* What one stream ships per tick at most: a job writing fast catches up
 * over the next ticks instead of holding the loop. Its end ships all. */
#define CLOUT_TICK_MAX (4u << 20)
/* Read from a capture file at a time, one write each. */
#define CLOUT_READ (256u << 10)

static const char *const clout_streams[2] = { "stdout", "stderr" };

/* One stream of a run, as shipped: absolute offsets of the stream. */
struct clout_stream {
	uint64_t sent;		/* given to the store up to here */
	uint64_t acked;		/* written up to here */
	uint64_t told;		/* the drop the store was last given */
	unsigned flying;	/* writes on their way */
	bool failed;		/* one of them failed: resend from acked */
};

/* A run of this node, from its start until its output is all written. */
struct clout_ship {
	TAILQ_ENTRY(clout_ship) entry;
	struct cluster_output *co;	/* NULL once shipping stopped */
	uint64_t job;
	unsigned attempt;
	bool handed;		/* its capture files are this attempt's */
	bool ended;
	bool warned;		/* a failure was logged */
	struct clout_stream s[2];
};

struct cluster_output {
	struct triaged *td;
	struct event *tick;
	TAILQ_HEAD(, clout_ship) ships;
};

/* A write on its way. */
struct clout_write {
	struct clout_ship *ship;
	int stream;
	uint64_t from, to;
};

static bool
clout_flying(const struct clout_ship *sp)
{
	return sp->s[0].flying > 0 || sp->s[1].flying > 0;
}

/* Forgets the ship; one with writes on their way goes when they end. */
static void
clout_drop(struct clout_ship *sp)
{
	if (sp->co != NULL)
		TAILQ_REMOVE(&sp->co->ships, sp, entry);
	sp->co = NULL;
	if (!clout_flying(sp))
		free(sp);
}

/* An ended run whose every byte is written is done with. */
static bool
clout_done(const struct clout_ship *sp)
{
	return sp->ended && !clout_flying(sp) && !sp->s[0].failed &&
	    !sp->s[1].failed;
}

static void
clout_written_cb(const char *cause, void *arg)
{
	struct clout_write *w = arg;
	struct clout_ship *sp = w->ship;
	struct clout_stream *ss = &sp->s[w->stream];

	ss->flying--;
	if (cause != NULL) {
		if (sp->co != NULL && !sp->warned)
			log_warnx("job %llu: its %s cannot be stored in the "
			    "cluster's database (sent again until it is): %s",
			    (unsigned long long)sp->job,
			    clout_streams[w->stream], cause);
		sp->warned = true;
		ss->failed = true;
	} else if (w->from <= ss->acked && w->to > ss->acked)
		ss->acked = w->to;
	if (ss->failed && ss->flying == 0) {
		/* Writes go in order: from the first that failed on, again
		 * (the drop too: told nothing). */
		ss->sent = ss->acked;
		ss->told = 0;
		ss->failed = false;
	}
	free(w);
	if (sp->co == NULL || clout_done(sp))
		clout_drop(sp);
}

/* Gives the store len bytes at the stream's offset from (drop_before > 0:
 * and what lies before it). 0, or -1 (logged). */
static int
clout_send(struct cluster_output *co, struct clout_ship *sp, int i,
    uint64_t from, const void *buf, size_t len, uint64_t drop_before)
{
	struct store_output_key k = { sp->job, sp->attempt, i };
	struct clout_write *w;

	if ((w = malloc(sizeof *w)) == NULL)
		return -1;
	*w = (struct clout_write){ sp, i, from, from + len };
	if ((len > 0 ? store_output_append(co->td->store, &k, from, buf, len,
	    drop_before, clout_written_cb, w) : store_output_drop(
	    co->td->store, &k, drop_before, clout_written_cb, w)) != 0) {
		free(w);
		return -1;
	}
	sp->s[i].flying++;
	return 0;
}

/*
 * Ships what stream i's file holds beyond what was sent: at most
 * CLOUT_TICK_MAX bytes unless final. Under output_keep = tail the file
 * starts later as the worker compacts it: the store drops up to there
 * too, and bytes compacted away before they were shipped are lost to the
 * other nodes as they are to this one.
 */
static void
clout_pump_stream(struct cluster_output *co, struct clout_ship *sp, int i,
    bool final)
{
	struct clout_stream *ss = &sp->s[i];
	uint64_t budget = final ? UINT64_MAX : CLOUT_TICK_MAX, end, drop;
	unsigned char *buf = NULL;
	struct capture c;
	const char *what;
	size_t want;
	ssize_t got;

	if (ss->failed || (ss->flying > 0 && !final))
		return;
	if (capture_open(&c, co->td->output_dir, sp->job, clout_streams[i],
	    &what) != 0) {
		log_warn("job %llu: cannot %s its %s to ship it",
		    (unsigned long long)sp->job, what, clout_streams[i]);
		return;
	}
	end = c.dropped + (uint64_t)c.size;
	if (ss->sent < c.dropped)
		ss->sent = ss->acked = c.dropped;
	drop = c.dropped > ss->told ? c.dropped : 0;
	while (c.fd != -1 && (ss->sent < end || drop > 0) && budget > 0) {
		want = end - ss->sent < CLOUT_READ ? (size_t)(end - ss->sent) :
		    CLOUT_READ;
		if (want > budget)
			want = (size_t)budget;
		if (buf == NULL && (buf = malloc(CLOUT_READ)) == NULL)
			break;
		if ((got = capture_read(&c, buf, want,
		    (off_t)(ss->sent - c.dropped))) < 0) {
			log_warn("job %llu: cannot read its %s to ship it",
			    (unsigned long long)sp->job, clout_streams[i]);
			break;
		}
		if (got == 0 && drop == 0)
			break;
		if (clout_send(co, sp, i, ss->sent, buf, (size_t)got, drop)
		    != 0) {
			log_warnx("job %llu: out of memory shipping its %s",
			    (unsigned long long)sp->job, clout_streams[i]);
			break;
		}
		ss->sent += (uint64_t)got;
		if (drop > ss->told)
			ss->told = drop;
		drop = 0;
		budget -= (uint64_t)got;
		if (got == 0)
			break;
	}
	free(buf);
	capture_close(&c);
}

static void
clout_pump(struct cluster_output *co, struct clout_ship *sp, bool final)
{
	clout_pump_stream(co, sp, 0, final);
	clout_pump_stream(co, sp, 1, final);
}

static void
clout_arm(struct cluster_output *co)
{
	static const struct timeval tv = { CLOUT_TICK_MS / 1000,
	    (CLOUT_TICK_MS % 1000) * 1000 };

	if (!TAILQ_EMPTY(&co->ships) && !evtimer_pending(co->tick, NULL))
		evtimer_add(co->tick, &tv);
}

/* Every run of this node: what each wrote since the last tick goes out.
 * An ended one is here still when a write of its end failed. */
static void
clout_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cluster_output *co = arg;
	struct triaged *td = co->td;
	struct clout_ship *sp, *next;
	struct job *job;

	(void)fd;
	(void)what;
	TAILQ_FOREACH_SAFE(sp, &co->ships, entry, next) {
		job = store_get(td->store, sp->job);
		/* Removed, or its files are another attempt's now. */
		if (job == NULL || (job->attempt != sp->attempt &&
		    (!sp->ended || run_handed(td->run, job)))) {
			clout_drop(sp);
			continue;
		}
		if (!sp->ended) {
			/* Until the hand-over, the files are the last
			 * attempt's. */
			if (!run_handed(td->run, job))
				continue;
			sp->handed = true;
		}
		clout_pump(co, sp, sp->ended);
		if (clout_done(sp))
			clout_drop(sp);
	}
	clout_arm(co);
}

static struct clout_ship *
clout_find(struct cluster_output *co, const struct job *job)
{
	struct clout_ship *sp;

	TAILQ_FOREACH(sp, &co->ships, entry)
		if (sp->job == job->id && sp->attempt == job->attempt)
			return sp;
	return NULL;
}

/* job's run was given to run_start: its capture files are shipped from
 * the hand-over on, every 500 ms while it runs. */
static void
clout_begin(struct triaged *td, const struct job *job)
{
	struct cluster_output *co = td->shipper;
	struct clout_ship *sp;

	if (co == NULL || clout_find(co, job) != NULL)
		return;
	if ((sp = calloc(1, sizeof *sp)) == NULL) {
		log_warnx("job %llu: out of memory: its output is not shipped "
		    "to the cluster's database", (unsigned long long)job->id);
		return;
	}
	sp->co = co;
	sp->job = job->id;
	sp->attempt = job->attempt;
	TAILQ_INSERT_TAIL(&co->ships, sp, entry);
	clout_arm(co);
}

/*
 * job's run is over (before its end changes the job and is committed):
 * what its files hold beyond what was shipped goes now, ahead of that
 * commit. handed: a worker had the run, so the files are this attempt's.
 * taken: another node has the job now, and nothing more is shipped.
 */
static void
clout_end(struct triaged *td, const struct job *job, bool handed,
    bool taken)
{
	struct cluster_output *co = td->shipper;
	struct clout_ship *sp;

	if (co == NULL || (sp = clout_find(co, job)) == NULL)
		return;
	sp->handed = sp->handed || handed;
	if (taken || !sp->handed) {
		clout_drop(sp);
		return;
	}
	sp->ended = true;
	clout_pump(co, sp, true);
	if (clout_done(sp))
		clout_drop(sp);
}

/* A run of this node was given to the executor, or ended. */
static void
clout_run_cb(struct triaged *td, const struct jobs_run_event *ev, void *arg)
{
	const struct job *job = ev->job;

	(void)arg;
	if (ev->out == NULL) {
		clout_begin(td, job);
		return;
	}
	/* Its last output goes ahead of the commit of its end: whoever sees
	 * the end sees all of it. */
	clout_end(td, job, ev->out->handed, job->shared.taken ||
	    job->shared.fenced || ev->out->lease_ended);
}

int
cluster_output_start(struct triaged *td)
{
	struct cluster_output *co;

	td->shipper = NULL;
	if (!store_keeps_output(td->store))
		return 0;
	if ((co = calloc(1, sizeof *co)) == NULL)
		return -1;
	if ((co->tick = evtimer_new(td->base, clout_tick_cb, co)) == NULL) {
		free(co);
		return -1;
	}
	co->td = td;
	TAILQ_INIT(&co->ships);
	/* Stays after cluster_output_stop, which leaves it no shipper. */
	if (jobs_listen_runs(td, clout_run_cb, NULL) != 0) {
		event_free(co->tick);
		free(co);
		return -1;
	}
	td->shipper = co;
	return 0;
}

void
cluster_output_stop(struct triaged *td)
{
	struct cluster_output *co = td->shipper;
	struct clout_ship *sp;

	if (co == NULL)
		return;
	while ((sp = TAILQ_FIRST(&co->ships)) != NULL)
		clout_drop(sp);
	event_free(co->tick);
	free(co);
	td->shipper = NULL;
}

bool
cluster_output_elsewhere(const struct triaged *td, const struct job *job)
{
	return td->cfg->cluster.enabled && job->node != NULL &&
	    strcmp(job->node, td->cfg->cluster.node) != 0 &&
	    store_keeps_output(td->store);
}
