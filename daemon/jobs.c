/* jobs.c - the job state machine: admit submissions to their queues, move
 * jobs through their states, and publish each change once it is on disk. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <event2/event.h>

#include "beginq.h"
#include "cluster.h"
#include "cluster-output.h"
#include "config.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "nodename.h"
#include "passwd.h"
#include "pool.h"
#include "psem.h"
#include "run.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "uidcount.h"
#include "version.h"

/*
 * What waits for a commit: a state change to publish, a barrier to call
 * back, or a granted job to hand to a worker once its start is recorded.
 * Items leave the queue in order, each once the commit of its generation
 * has succeeded; nothing a client hears can then be undone by a crash.
 */
/* How long one turn of the loop may spend publishing. */
#define JOBS_DRAIN_SLICE_US 2000

enum jobs_item_kind {
	JOBS_EVENT,
	JOBS_BARRIER,
	JOBS_LAUNCH,
};

struct jobs_item {
	TAILQ_ENTRY(jobs_item) entry;
	enum jobs_item_kind kind;
	uint64_t gen;			/* the commit that makes it true */
	uint64_t id;			/* EVENT, LAUNCH: the job */
	enum job_state from;		/* EVENT */
	const char *change;		/* EVENT: NULL, or an edit (a constant) */
	struct job_status status;	/* EVENT: the job after the change; */
	char *reason;			/* LAUNCH: status.attempt only */
	jobs_done_cb cb;		/* BARRIER */
	void *arg;
};
TAILQ_HEAD(jobs_items, jobs_item);
struct jobs_admission;
TAILQ_HEAD(jobs_admissions, jobs_admission);
struct jobs_retrial;
TAILQ_HEAD(jobs_retrials, jobs_retrial);

struct jobs_listener {
	jobs_listener_cb cb;
	void *arg;
};

struct jobs {
	struct jobs_items items;
	/* Granted jobs waiting for their start to be written (not for the
	 * disk: see jobs_begin), in grant order; gen is a write's number. */
	struct jobs_items launches;
	uint64_t written;		/* the last write that succeeded */
	bool launching;
	uint64_t durable;		/* the last commit that succeeded */
	struct event *publish_ev;	/* drains items already durable */
	bool draining;
	bool commits_failing;
	struct jobs_listener *listeners;
	size_t nlisteners;
	jobs_gate_cb gate;
	void *gate_arg;
	int64_t next_seq;		/* queue order of the next at a tail */
	unsigned counts[CONFIG_PRIORITIES_MAX][JOB_NSTATES];
	unsigned held[CONFIG_PRIORITIES_MAX];	/* of counts[][JOB_QUEUED] */
	unsigned staged[CONFIG_PRIORITIES_MAX];	/* not committed yet */
	/* Jobs free to go but for their begin_at, and the one timer for the
	 * earliest. */
	struct beginq beginq;
	struct event *begin_ev;
	/* Queued or staged jobs of each submitter: max_queued_per_user. */
	struct uidcount queued_by_uid;
	/* What holds a priority's index outside the store, for
	 * jobs_reprioritize. */
	struct jobs_admissions admissions;
	struct jobs_retrials retrials;
	/* Jobs begun here, not running yet, and some that have gone on
	 * since (jobs_starting weeds them out): for the dashboard. */
	uint64_t *starting;
	size_t nstarting, starting_size;
};

static void jobs_drain(struct triaged *);
static void jobs_begin_cb(evutil_socket_t, short, void *);
static void jobs_launch_written(struct triaged *);
static void jobs_begin(struct triaged *, struct job *);
static bool jobs_is_starting(const struct job *);

/* The job's own run record, to change. A few bytes: out of memory for
 * them, the daemon could not record the run's end either. */
static struct job_run *
jobs_run(struct job *job)
{
	struct job_run *run = job_run_edit(job);

	if (run == NULL)
		fatalx("job %llu: out of memory for its run",
		    (unsigned long long)job->id);
	return run;
}

/* Counts job in prio and state: delta jobs more (or fewer). */
static void
jobs_tally(struct jobs *js, const struct job *job, unsigned prio,
    enum job_state state, int delta)
{
	js->counts[prio][state] += (unsigned)delta;
	if (state == JOB_QUEUED && job->held)
		js->held[prio] += (unsigned)delta;
	/* Out of memory, a count stays short, and errs on the lenient side. */
	if (state == JOB_QUEUED)
		(void)uidcount_add(&js->queued_by_uid, job->uid, delta);
}

/* The same for a submission that is not committed yet. */
static void
jobs_tally_staged(struct jobs *js, const struct job *job, unsigned prio,
    int delta)
{
	js->staged[prio] += (unsigned)delta;
	(void)uidcount_add(&js->queued_by_uid, job->uid, delta);
}

static struct job *
jobs_of_waiter(struct psem_waiter *w)
{
	return (struct job *)((char *)w - offsetof(struct job, waiter));
}

/* The semaphore granted the job its slots. */
static void
jobs_grant_cb(struct psem_waiter *w, void *arg)
{
	jobs_begin(arg, jobs_of_waiter(w));
}

static void
jobs_publish_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	jobs_drain(arg);
}

static void
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

static void
jobs_written_cb(uint64_t write, void *arg)
{
	struct triaged *td = arg;

	td->jobs->written = write;
	jobs_launch_written(td);
}

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
	for (i = 0; i < cfg->npriorities; i++) {
		psem_set_weight(td->sem, i, cfg->priorities[i].weight);
		psem_set_cap(td->sem, i, cfg->priorities[i].max_running);
	}
	store_set_committed_cb(td->store, jobs_committed_cb, td);
	store_set_written_cb(td->store, jobs_written_cb, td);
	return 0;
}

static void
jobs_item_free(struct jobs_item *it)
{
	free(it->reason);
	free(it);
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
	psem_free(td->sem);
	td->sem = NULL;
}

int
jobs_listen(struct triaged *td, jobs_listener_cb cb, void *arg)
{
	struct jobs *js = td->jobs;
	struct jobs_listener *v;

	v = reallocarray(js->listeners, js->nlisteners + 1, sizeof *v);
	if (v == NULL)
		return -1;
	v[js->nlisteners++] = (struct jobs_listener){ cb, arg };
	js->listeners = v;
	return 0;
}

void
jobs_set_gate(struct triaged *td, jobs_gate_cb cb, void *arg)
{
	td->jobs->gate = cb;
	td->jobs->gate_arg = arg;
}

/* Queues it to be handled once commit gen has succeeded; durable now when
 * gen is already. */
static void
jobs_item_add(struct triaged *td, struct jobs_item *it, uint64_t gen)
{
	static const struct timeval now = { 0, 0 };
	struct jobs *js = td->jobs;

	it->gen = gen;
	TAILQ_INSERT_TAIL(&js->items, it, entry);
	if (gen <= js->durable && !js->draining)
		evtimer_add(js->publish_ev, &now);
}

/* The generation a change made now is durable with. */
static uint64_t
jobs_gen(const struct triaged *td)
{
	return store_pending(td->store) ? store_generation(td->store) :
	    td->jobs->durable;
}

/* Records the change job has just made from state from, to publish once
 * gen is on disk. Out of memory, the change goes unheard (and is logged). */
static void
jobs_record(struct triaged *td, struct job *job, enum job_state from,
    const char *change, uint64_t gen)
{
	struct jobs_item *it;

	if ((it = calloc(1, sizeof *it)) == NULL ||
	    (job->run->reason != NULL && (it->reason = strdup(job->run->reason))
	    == NULL)) {
		free(it);
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
	jobs_item_add(td, it, gen);
}

/*
 * Moves job to state to: counts, times, store, and an event. A change to
 * running need only survive a crash of the daemon (a power loss then
 * brings the job back as a new attempt); every other one waits for the
 * disk.
 */
static void
jobs_change(struct triaged *td, struct job *job, enum job_state to)
{
	struct jobs *js = td->jobs;
	enum job_state from = job->state;
	unsigned prio = job->waiter.prio;
	int64_t now = timefmt_now();

	jobs_tally(js, job, prio, from, -1);
	if (to != JOB_QUEUED) {
		/* Held and begin_at keep a queued job out: nothing else. */
		job->held = false;
		job->gated = false;
		beginq_remove(&js->beginq, job);
	}
	jobs_tally(js, job, prio, to, 1);
	if (to == JOB_RUNNING)
		jobs_run(job)->started_at = now;
	job->state = to;
	if (job_state_terminal(to)) {
		jobs_run(job)->finished_at = now;
		/* It was written at insert; memory is for the living. */
		store_forget_env(td->store, job);
	}
	if (to == JOB_RUNNING)
		store_update_nosync(td->store, job);
	else
		store_update(td->store, job);
	jobs_record(td, job, from, NULL, jobs_gen(td));
}

static void
jobs_publish(struct triaged *td, struct jobs_item *it)
{
	struct jobs *js = td->jobs;
	struct jobs_event ev;
	struct job view, *job;
	size_t i;

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
	it->status.run.reason = it->reason;
	view.run = &it->status.run;
	ev.job = job;
	ev.view = &view;
	ev.from = it->from;
	ev.change = it->change;
	for (i = 0; i < js->nlisteners; i++)
		js->listeners[i].cb(td, &ev, js->listeners[i].arg);
}

/*
 * What the job's priority says of its process, as the config is now, and
 * in a cluster whom it runs as: its user, by name, on this node (a root
 * daemon). 0, or -1 with the job's reason set when the user is not here.
 */
static int
jobs_run_opts(const struct triaged *td, struct job *job,
    struct run_job_opts *opts)
{
	const struct config_priority *p =
	    &td->cfg->priorities[job->waiter.prio];

	memset(opts, 0, sizeof *opts);
	opts->io_idle = p->io_class == CONFIG_IO_IDLE;
	opts->keep_tail = p->output_keep == CONFIG_OUTPUT_KEEP_TAIL;
	if (!td->cfg->cluster.enabled || job->user == NULL ||
	    td->uid != 0 || !td->cfg->run_as_submitter)
		return 0;
	if (passwd_by_name(job->user, &opts->uid, &opts->gid) != 0) {
		job_set_reason(job, "user %s %s on node %s", job->user,
		    errno == ENOENT ? "does not exist" : strerror(errno),
		    td->cfg->cluster.node);
		return -1;
	}
	opts->as_user = true;
	return 0;
}

static void
jobs_launch(struct triaged *td, struct jobs_item *it)
{
	struct job *job = store_get(td->store, it->id);
	struct run_job_opts opts;

	/* Canceled, or stopped with the daemon, meanwhile. */
	if (job == NULL || job->state != JOB_QUEUED || !job->run->begun ||
	    job->attempt != it->status.attempt ||
	    run_has(td->run, job))
		return;
	if (td->phase == TRIAGED_STOPPING &&
	    td->cfg->shutdown != CONFIG_SHUTDOWN_DRAIN) {
		/* Stopping runs nothing new: it never began after all. */
		psem_release(td->sem, &job->waiter);
		jobs_run(job)->begun = false;
		store_update(td->store, job);
		return;
	}
	if (jobs_run_opts(td, job, &opts) != 0) {
		log_warnx("job %llu: %s", (unsigned long long)job->id,
		    job->run->reason);
		psem_release(td->sem, &job->waiter);
		jobs_change(td, job, JOB_FAILED);
		return;
	}
	if (run_start(td->run, job, &opts) != 0) {
		log_warnx("job %llu: out of memory starting it",
		    (unsigned long long)job->id);
		psem_release(td->sem, &job->waiter);
		job_set_reason(job, "out of memory in the daemon");
		jobs_change(td, job, JOB_FAILED);
		return;
	}
	cluster_output_begin(td, job);
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
			jobs_launch(td, it);
			break;
		}
		jobs_item_free(it);
	}
	js->draining = false;
}

/* Hands to their workers the granted jobs whose start is written; none
 * while commits fail, as before the store wrote starts ahead. */
static void
jobs_launch_written(struct triaged *td)
{
	struct jobs *js = td->jobs;
	struct jobs_item *it;

	if (js->launching || js->commits_failing)
		return;
	js->launching = true;
	while ((it = TAILQ_FIRST(&js->launches)) != NULL &&
	    it->gen <= js->written) {
		TAILQ_REMOVE(&js->launches, it, entry);
		jobs_launch(td, it);
		jobs_item_free(it);
	}
	js->launching = false;
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

/* Out of memory, the dashboard misses it; nothing else does. */
static void
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
 * The job holds its slots: that its attempt begins is written first, and
 * once that is in the database it is handed to a worker. Written, not
 * synced: a crash of the daemon then finds the attempt begun (a power loss
 * may lose it, and the job runs again as that attempt, which it never
 * finished). So it does not wait behind a commit that waits for the disk
 * for other jobs' ends: with few slots, that wait was the slot's idle time
 * (store_update_soon).
 */
static void
jobs_begin(struct triaged *td, struct job *job)
{
	struct jobs_item *it;

	/* The attempt is this node's from the write of its start on. */
	if ((it = calloc(1, sizeof *it)) == NULL ||
	    job_set_node(job, td->cfg->cluster.node) != 0) {
		free(it);
		log_warnx("job %llu: out of memory starting it",
		    (unsigned long long)job->id);
		psem_release(td->sem, &job->waiter);
		job_set_reason(job, "out of memory in the daemon");
		jobs_change(td, job, JOB_FAILED);
		return;
	}
	jobs_run(job)->begun = true;
	jobs_starting_add(td, job->id);
	store_update_soon(td->store, job);
	it->kind = JOBS_LAUNCH;
	it->id = job->id;
	it->status.attempt = job->attempt;
	it->gen = store_write_generation(td->store);
	TAILQ_INSERT_TAIL(&td->jobs->launches, it, entry);
}

/* Into the semaphore, in the place its seq gives it. */
static void
jobs_acquire(struct triaged *td, struct job *job)
{
	psem_waiter_order(&job->waiter, job->seq);
	switch (psem_acquire(td->sem, &job->waiter)) {
	case 1:
		jobs_begin(td, job);
		break;
	case 0:
		break;
	default:
		/* Submissions are checked against the semaphore; a job loaded
		 * from disk may need more than a changed config gives. */
		job_set_reason(job, "it needs %u slots, and priority %s can "
		    "never give it that many", job->slots, job->priority);
		log_warnx("job %llu: %s", (unsigned long long)job->id,
		    job->run->reason);
		jobs_change(td, job, JOB_CANCELED);
		break;
	}
}

/* Arms the one timer for the earliest begin_at, or stops it. */
static void
jobs_begin_arm(struct triaged *td)
{
	struct jobs *js = td->jobs;
	struct job *first = beginq_first(&js->beginq);
	int64_t wait;
	struct timeval tv;

	if (first == NULL) {
		evtimer_del(js->begin_ev);
		return;
	}
	wait = first->begin_at - timefmt_now();
	tv = timefmt_tv(wait > 0 ? (uint64_t)wait : 0);
	evtimer_add(js->begin_ev, &tv);
}

/* Free to go but for its begin_at: it waits in the queue of begin times. */
static void
jobs_begin_later(struct triaged *td, struct job *job)
{
	struct jobs *js = td->jobs;

	if (job->begin_slot == 0 && beginq_add(&js->beginq, job) != 0) {
		/* Out of memory: early rather than never. */
		log_warnx("job %llu: out of memory: it starts before its "
		    "begin_at", (unsigned long long)job->id);
		jobs_acquire(td, job);
		return;
	}
	jobs_begin_arm(td);
}

/*
 * The jobs whose begin_at has come join the tails of their queues, in
 * begin order: from then on they wait like jobs just submitted. The wall
 * clock decides, as begin_at is wall-clock time: a timer that fires early
 * (the clock was set back) arms itself again.
 */
static void
jobs_begin_cb(evutil_socket_t fd, short what, void *arg)
{
	struct triaged *td = arg;
	struct jobs *js = td->jobs;
	int64_t now = timefmt_now();
	struct job *job;

	(void)fd;
	(void)what;
	while ((job = beginq_first(&js->beginq)) != NULL &&
	    job->begin_at <= now) {
		beginq_remove(&js->beginq, job);
		job->seq = js->next_seq++;
		store_update(td->store, job);
		jobs_try_acquire(td, job);
	}
	jobs_begin_arm(td);
}

void
jobs_try_acquire(struct triaged *td, struct job *job)
{
	/* A job pinned to another node waits for that node's slots. */
	if (job->state != JOB_QUEUED || job->held || job->gated ||
	    psem_waiter_state(&job->waiter) != PSEM_IDLE ||
	    !cluster_runs_here(td, job))
		return;
	if (job->begin_at >= 0 && job->begin_at > timefmt_now()) {
		jobs_begin_later(td, job);
		return;
	}
	jobs_acquire(td, job);
}

void
jobs_unqueue(struct triaged *td, struct job *job)
{
	if (psem_waiter_state(&job->waiter) == PSEM_QUEUED)
		psem_cancel(td->sem, &job->waiter);
	if (job->begin_slot != 0) {
		beginq_remove(&td->jobs->beginq, job);
		jobs_begin_arm(td);
	}
}

void
jobs_set_held(struct triaged *td, struct job *job, bool held)
{
	if (job->held == held)
		return;
	jobs_tally(td->jobs, job, job->waiter.prio, job->state, -1);
	job->held = held;
	jobs_tally(td->jobs, job, job->waiter.prio, job->state, 1);
}

void
jobs_move(struct triaged *td, struct job *job, unsigned prio)
{
	struct jobs *js = td->jobs;

	jobs_tally(js, job, job->waiter.prio, job->state, -1);
	job->waiter.prio = prio;
	jobs_tally(js, job, prio, job->state, 1);
	job->seq = js->next_seq++;
}

void
jobs_edited(struct triaged *td, struct job *job, const char *change)
{
	store_update(td->store, job);
	jobs_record(td, job, job->state, change, jobs_gen(td));
}

void
jobs_count_job(struct triaged *td, struct job *job, unsigned prio,
    enum job_state state, bool held, int delta)
{
	bool now = job->held;

	job->held = held;
	jobs_tally(td->jobs, job, prio, state, delta);
	job->held = now;
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

void
jobs_seen_seq(struct triaged *td, int64_t seq)
{
	if (seq >= td->jobs->next_seq)
		td->jobs->next_seq = seq + 1;
}

void
jobs_enqueue(struct triaged *td, struct job *job)
{
	/* Free to go now: it joins the tail, and keeps that place across a
	 * restart. */
	job->gated = false;
	job->seq = td->jobs->next_seq++;
	store_update(td->store, job);
	jobs_try_acquire(td, job);
}

void
jobs_admit(struct triaged *td, struct job *job)
{
	struct jobs *js = td->jobs;

	switch (js->gate != NULL ? js->gate(td, job, js->gate_arg) : 1) {
	case 1:
		jobs_try_acquire(td, job);
		break;
	case 0:
		job->gated = true;
		break;
	default:
		jobs_change(td, job, JOB_CANCELED);
		break;
	}
}

void
jobs_end(struct triaged *td, struct job *job, enum job_state state)
{
	jobs_change(td, job, state);
}

/* A submission on its way to the disk, and its place among the changes
 * to publish, taken when it was made: its event goes out in that order. */
struct jobs_admission {
	TAILQ_ENTRY(jobs_admission) entry;
	struct job *job;
	struct triaged *td;
	jobs_done_cb done_cb;
	void *arg;
	struct jobs_item *queued;
};

static void
jobs_added_cb(struct job *job, bool ok, const char *cause, void *arg)
{
	static const struct timeval now = { 0, 0 };
	struct jobs_admission *a = arg;
	struct triaged *td = a->td;
	struct jobs *js = td->jobs;
	unsigned prio = job->waiter.prio;

	TAILQ_REMOVE(&js->admissions, a, entry);
	jobs_tally_staged(js, job, prio, -1);
	if (!ok) {
		/* Its place is published as nothing (no job has its id), and
		 * keeps nothing behind it waiting. */
		log_warnx("a new job could not be stored: %s", cause);
		a->queued->gen = 0;
		evtimer_add(js->publish_ev, &now);
		job_free(job);
		a->done_cb(td, NULL, cause, a->arg);
	} else {
		/* Its id: a store shared with other daemons gives it only
		 * with the commit. */
		a->queued->id = job->id;
		jobs_tally(js, job, prio, JOB_QUEUED, 1);
		job_status_get(job, &a->queued->status);
		jobs_admit(td, job);
		a->done_cb(td, job, NULL, a->arg);
	}
	free(a);
}

int
jobs_submit(struct triaged *td, struct job *job, unsigned prio,
    jobs_done_cb done_cb, void *arg)
{
	struct jobs_admission *a;

	if ((a = calloc(1, sizeof *a)) == NULL ||
	    (a->queued = calloc(1, sizeof *a->queued)) == NULL) {
		free(a);
		return -1;
	}
	a->td = td;
	a->done_cb = done_cb;
	a->arg = arg;
	job->submitted_at = timefmt_now();
	job->state = JOB_QUEUED;
	job->seq = td->jobs->next_seq++;
	psem_waiter_init(&job->waiter, prio, job->slots, jobs_grant_cb, td);
	if (store_add(td->store, job, jobs_added_cb, a) != 0) {
		free(a->queued);
		free(a);
		return -1;
	}
	jobs_tally_staged(td->jobs, job, prio, 1);
	a->job = job;
	TAILQ_INSERT_TAIL(&td->jobs->admissions, a, entry);
	/* Its place among the changes to publish is taken now; its id and
	 * status once the commit is over. */
	a->queued->kind = JOBS_EVENT;
	a->queued->from = JOB_QUEUED;
	jobs_item_add(td, a->queued, store_generation(td->store));
	return 0;
}

/* A retry on its way to the disk, and the job as it was before. */
struct jobs_retrial {
	TAILQ_ENTRY(jobs_retrial) entry;
	struct triaged *td;
	uint64_t id;
	unsigned prio;			/* before */
	enum job_state state;
	struct job_status before;
	char *reason;
	jobs_done_cb done_cb;
	void *arg;
};

static void
jobs_retry_synced_cb(const char *cause, void *arg)
{
	struct jobs_retrial *r = arg;
	struct triaged *td = r->td;
	struct jobs *js = td->jobs;
	struct job *job = store_get(td->store, r->id);

	TAILQ_REMOVE(&js->retrials, r, entry);
	/* Canceled again meanwhile, say: nothing to queue or put back. */
	if (job != NULL && job->state == JOB_QUEUED &&
	    psem_waiter_state(&job->waiter) == PSEM_IDLE) {
		if (cause == NULL) {
			jobs_record(td, job, r->state, NULL,
			    store_generation(td->store) - 1);
			jobs_admit(td, job);
		} else {
			log_warnx("job %llu: its retry could not be stored: "
			    "%s", (unsigned long long)r->id, cause);
			jobs_tally(js, job, job->waiter.prio, JOB_QUEUED, -1);
			jobs_tally(js, job, r->prio, r->state, 1);
			job->waiter.prio = r->prio;
			/* It ran: the run it had is still its own. */
			if (job_status_set(job, &r->before) != 0)
				fatalx("job %llu: out of memory for its run",
				    (unsigned long long)r->id);
			free(jobs_run(job)->reason);
			jobs_run(job)->reason = r->reason;
			r->reason = NULL;
			store_forget_env(td->store, job);
		}
	}
	r->done_cb(td, job, cause, r->arg);
	free(r->reason);
	free(r);
}

int
jobs_retry(struct triaged *td, struct job *job, unsigned prio,
    jobs_done_cb done_cb, void *arg)
{
	struct jobs *js = td->jobs;
	struct jobs_retrial *r;

	if ((r = calloc(1, sizeof *r)) == NULL ||
	    (job->run->reason != NULL && (r->reason = strdup(job->run->reason))
	    == NULL) ||
	    store_sync(td->store, jobs_retry_synced_cb, r) != 0) {
		if (r != NULL)
			free(r->reason);
		free(r);
		return -1;
	}
	r->td = td;
	r->id = job->id;
	r->prio = job->waiter.prio;
	r->state = job->state;
	job_status_get(job, &r->before);
	r->done_cb = done_cb;
	r->arg = arg;
	TAILQ_INSERT_TAIL(&js->retrials, r, entry);
	jobs_tally(js, job, job->waiter.prio, job->state, -1);
	jobs_tally(js, job, prio, JOB_QUEUED, 1);
	psem_waiter_init(&job->waiter, prio, job->slots, jobs_grant_cb, td);
	job_new_attempt(job);
	job_set_reason(job, NULL);
	job->state = JOB_QUEUED;
	job->seq = js->next_seq++;
	store_update(td->store, job);
	return 0;
}

void
jobs_cancel(struct triaged *td, struct job *job, uid_t by, int sig)
{
	char reason[64];

	snprintf(reason, sizeof reason, "canceled by uid %u", (unsigned)by);
	/* Its attempt is another node's: that node cancels it. */
	if (td->cfg->cluster.enabled && !run_has(td->run, job) &&
	    (job->state == JOB_RUNNING ||
	    (job->state == JOB_QUEUED && job->run->begun)) &&
	    job->node != NULL && strcmp(job->node, td->cfg->cluster.node) != 0) {
		if (store_cancel_elsewhere(td->store, job, sig, (unsigned)by)
		    != 0)
			log_warnx("job %llu: out of memory asking node %s to "
			    "cancel it", (unsigned long long)job->id, job->node);
		return;
	}
	if (job->state == JOB_RUNNING || run_has(td->run, job)) {
		run_stop(td->run, job, JOB_CANCELED, sig, reason);
		return;
	}
	if (job->state != JOB_QUEUED)
		return;
	switch (psem_waiter_state(&job->waiter)) {
	case PSEM_QUEUED:
	case PSEM_GRANTED:
		psem_cancel(td->sem, &job->waiter);
		break;
	case PSEM_HELD:		/* its start is on its way to the disk */
		psem_release(td->sem, &job->waiter);
		break;
	case PSEM_IDLE:		/* waiting for the jobs it runs after */
		break;
	}
	job_set_reason(job, "%s", reason);
	job->cancel.by = by;
	job->cancel.sig = (int8_t)sig;
	jobs_change(td, job, JOB_CANCELED);
}

void
jobs_stop_running(struct triaged *td)
{
	struct job *job;
	uint64_t id = 0;

	while ((job = store_next(td->store, id)) != NULL) {
		id = job->id;
		if (run_has(td->run, job))
			run_stop(td->run, job, JOB_LOST, SIGTERM,
			    "the daemon stopped while it ran");
	}
}

/* The worker reports the job's process. */
static void
jobs_started_cb(struct job *job, pid_t pid, uint64_t start_ticks, void *arg)
{
	struct triaged *td = arg;
	struct job_run *run = jobs_run(job);

	run->pid = pid;
	run->start_ticks = start_ticks;
	jobs_change(td, job, JOB_RUNNING);
}

/* Another attempt at the tail of its queue, or (keep_place) where it was,
 * for the next start of the daemon. */
static void
jobs_requeue(struct triaged *td, struct job *job, bool keep_place)
{
	job_new_attempt(job);
	if (!keep_place)
		job->seq = td->jobs->next_seq++;
	jobs_change(td, job, JOB_QUEUED);
}

/*
 * The run is over: the job takes its final state, or another attempt when
 * it failed with retries left, or (stopping under shutdown = requeue) its
 * place at the head of its queue for the next start. This is the one place
 * that decides.
 */
static void
jobs_ended_cb(struct job *job, const struct run_outcome *out, void *arg)
{
	struct triaged *td = arg;
	enum job_state state = out->state;
	struct job_run *run;
	int prio;

	/* Its last output goes ahead of the commit of its end: whoever sees
	 * the end sees all of it. */
	cluster_output_end(td, job, out->handed, job->taken || job->fenced ||
	    out->lease_ended);
	if (psem_release(td->sem, &job->waiter) != 0)
		log_warnx("job %llu: ended holding no slots",
		    (unsigned long long)job->id);
	if (job->taken) {
		/* Another node has the job: this run's end is nobody's. */
		job->taken = false;
		prio = config_priority_find(td->cfg, job->priority);
		job->waiter.prio = prio < 0 ? 0 : (unsigned)prio;
		if (job->state == JOB_QUEUED && !job->run->begun)
			jobs_admit(td, job);
		return;
	}
	if (out->lease_ended) {
		log_warnx("job %llu: its worker stopped it: this node's lease "
		    "ran out unrenewed", (unsigned long long)job->id);
		job->fenced = true;
		cluster_lease_ran_out(td);
	}
	if (job->fenced) {
		/* As another node's takeover would: whichever write comes
		 * first stands, the other is refused and reads it back. */
		job->fenced = false;
		job_set_reason(job, "node %s's lease ran out while attempt %u "
		    "ran", job->node != NULL ? job->node : "?", job->attempt);
		jobs_requeue(td, job, true);
		jobs_acquire(td, job);
		return;
	}
	run = jobs_run(job);
	run->stdout_truncated = out->stdout_truncated;
	run->stderr_truncated = out->stderr_truncated;
	run->stdout_dropped = out->stdout_dropped;
	run->stderr_dropped = out->stderr_dropped;
	run->user_time = out->user_time;
	run->system_time = out->system_time;
	run->max_rss_kb = out->max_rss_kb;
	if (out->reaped && WIFEXITED(out->status))
		run->exit_code = WEXITSTATUS(out->status);
	else if (out->reaped && WIFSIGNALED(out->status))
		run->signal = WTERMSIG(out->status);
	job_set_reason(job, out->reason[0] != '\0' ? "%s" : NULL,
	    out->reason);

	if (state == JOB_LOST && td->phase == TRIAGED_STOPPING &&
	    td->cfg->shutdown == CONFIG_SHUTDOWN_REQUEUE) {
		log_info("job %llu: stopped with the daemon; attempt %u goes "
		    "first at the next start", (unsigned long long)job->id,
		    job->attempt + 1);
		job_set_reason(job, NULL);
		jobs_requeue(td, job, true);	/* it had its turn already */
		return;
	}
	if ((state == JOB_FAILED || state == JOB_TIMED_OUT) &&
	    job->retries > 0 && td->phase == TRIAGED_RUNNING) {
		job->retries--;
		job_set_reason(job, "attempt %u %s: %s", job->attempt,
		    job_state_name(state), out->reason);
		log_info("job %llu: %s; %u retries left",
		    (unsigned long long)job->id, job->run->reason,
		    job->retries);
		jobs_requeue(td, job, false);
		jobs_acquire(td, job);
		return;
	}
	jobs_change(td, job, state);
}

const struct run_callbacks jobs_run_callbacks = {
	.started_cb = jobs_started_cb,
	.ended_cb = jobs_ended_cb,
};

void
jobs_loaded(struct triaged *td, struct job *job, unsigned prio)
{
	psem_waiter_init(&job->waiter, prio, job->slots, jobs_grant_cb, td);
	jobs_tally(td->jobs, job, prio, job->state, 1);
	if (job_state_terminal(job->state))
		store_forget_env(td->store, job);
}

void
jobs_recover_begun(struct triaged *td, struct job *job, bool requeue,
    int64_t seq)
{
	if (requeue) {
		job_set_reason(job, NULL);
		job_new_attempt(job);
		job->seq = seq;
		jobs_change(td, job, JOB_QUEUED);
		return;
	}
	job_set_reason(job, "the daemon stopped while it ran");
	jobs_change(td, job, JOB_LOST);
}

void
jobs_set_next_seq(struct triaged *td, int64_t seq)
{
	td->jobs->next_seq = seq;
}

int
jobs_forget(struct triaged *td, uint64_t id)
{
	struct job *job = store_get(td->store, id);
	unsigned prio;
	enum job_state state;

	if (job == NULL) {
		errno = ENOENT;
		return -1;
	}
	prio = job->waiter.prio;
	state = job->state;
	jobs_tally(td->jobs, job, prio, state, -1);
	if (store_remove(td->store, id) != 0) {
		jobs_tally(td->jobs, job, prio, state, 1);
		return -1;
	}
	return 0;
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
	struct jobs_admission *a;
	struct jobs_retrial *r;
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
	TAILQ_FOREACH(a, &js->admissions, entry)
		a->job->waiter.prio = (unsigned)map[a->job->waiter.prio];
	TAILQ_FOREACH(r, &js->retrials, entry)
		r->prio = map[r->prio] < 0 ? 0 : (unsigned)map[r->prio];
	return 0;
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
