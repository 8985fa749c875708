/* test-deps.c - `after` through the job state machine, on a bare event_base
 * with a real store, semaphore, executor and pool: wait, run, or cancel. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <sqlite3.h>

#include "caller-env.h"
#include "config.h"
#include "deps.h"
#include "job.h"
#include "jobs.h"
#include "pool.h"
#include "psem.h"
#include "run.h"
#include "store.h"
#include "triaged.h"

/* Every wait for a callback gives up, failing the test, after this. */
#define SAFETY_SEC	30
#define NIDS		256	/* job ids the fixture records: 1 .. NIDS-1 */
#define NEVENTS		1024
#define NOUTCOMES	64
#define NGATES		8
#define PRIO_NORMAL	1	/* the built-in priorities: high, normal, low */

#define ARGV(...)	((const char *const []){ __VA_ARGS__, NULL })

/* One published change, as a listener saw it. */
struct evrec {
	uint64_t id;
	enum job_state from;
	enum job_state to;
	unsigned attempt;
	pid_t pid;
	char reason[160];
	int seq;		/* in the order of every callback */
	uintptr_t frame;	/* the listener's stack frame */
	int next_state;		/* job id + 1's state in memory then, or -1 */
};

/* One outcome the executor reported to jobs (through the fixture). */
struct outrec {
	uint64_t id;
	unsigned attempt;
	enum job_state state;
	char reason[512];
	bool started;
	int seq;
};

struct fx;

/* A done_cb of jobs_submit, jobs_retry or jobs_after_commit. */
struct donerec {
	struct fx *fx;
	uint64_t id;		/* 0: a barrier */
	bool submission;
	int called;
	bool ok;
	char cause[160];
	int seq;
	int nev;		/* events recorded when it ran */
};

struct fx {
	struct event_base *base;
	struct triaged td;
	struct deps *deps;
	struct event *safety;
	bool timed_out;
	bool in_call;		/* inside a jobs_* call */
	int depth;		/* listeners running now */
	char dir[64];		/* mkdtemp: config, state, gates */
	char db[128];
	sqlite3 *reader;	/* a second connection: what is on disk */
	sqlite3_stmt *row;
	int seq;
	struct evrec ev[NEVENTS];
	int nev;
	struct outrec out[NOUTCOMES];
	int nout;
	int nstarted;		/* started_cb calls */
	struct donerec sub[NIDS];	/* in the order of the submissions */
	int nsub;
	struct donerec retry[NIDS];	/* by job id */
	struct donerec barrier[8];
	int nbarrier;
	bool seen[NIDS];	/* the last event of each job */
	enum job_state last[NIDS];
	unsigned last_attempt[NIDS];
	int gate_fd[NGATES];	/* fifos jobs read their exit status from */
	char bad[256];		/* a callback saw something impossible */
};

static void
fx_bad(struct fx *fx, const char *fmt, ...)
{
	va_list ap;

	if (fx->bad[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(fx->bad, sizeof fx->bad, fmt, ap);
	va_end(ap);
}

/* How far along its life a job is: a later attempt, or a later state of
 * the same one. */
static unsigned
progress(enum job_state state, unsigned attempt)
{
	unsigned rank = state == JOB_QUEUED ? 0 : state == JOB_RUNNING ? 1 : 2;

	return attempt * 3 + rank;
}

/* The job's row as the database file has it: -1 when it has none. */
static int
disk_row(struct fx *fx, uint64_t id, enum job_state *state,
    unsigned *attempt)
{
	int rc = -1, s;

	sqlite3_bind_int64(fx->row, 1, (sqlite3_int64)id);
	if (sqlite3_step(fx->row) == SQLITE_ROW &&
	    (s = job_state_parse((const char *)sqlite3_column_text(fx->row,
	    0))) != -1) {
		*state = (enum job_state)s;
		*attempt = (unsigned)sqlite3_column_int(fx->row, 1);
		rc = 0;
	}
	/* ends the read transaction: the writer may checkpoint */
	sqlite3_reset(fx->row);
	return rc;
}

/* Records every change; checks it is on disk, in turn, and not nested. */
static void
listener_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	struct fx *fx = arg;
	const struct job *view = ev->view;
	enum job_state disk_state;
	unsigned disk_attempt;
	struct evrec *e;
	uint64_t id = view->id;

	if (fx->depth++ > 0)
		fx_bad(fx, "job %llu: a listener ran inside another",
		    (unsigned long long)id);
	if (fx->in_call)
		fx_bad(fx, "job %llu: published inside a jobs_* call",
		    (unsigned long long)id);
	if (id == 0 || id >= NIDS || fx->nev == NEVENTS) {
		fx_bad(fx, "job %llu: more than the fixture records",
		    (unsigned long long)id);
		fx->depth--;
		return;
	}
	if (ev->job != store_get(td->store, id) || ev->job->id != id)
		fx_bad(fx, "job %llu: the event's job is not the store's",
		    (unsigned long long)id);
	/* Published once on disk: the file has this change, or a later
	 * one. */
	if (disk_row(fx, id, &disk_state, &disk_attempt) != 0)
		fx_bad(fx, "job %llu: published, but not in the database",
		    (unsigned long long)id);
	else if (progress(disk_state, disk_attempt) <
	    progress(view->state, view->attempt))
		fx_bad(fx, "job %llu: %s (attempt %u) published while the "
		    "database says %s (attempt %u)", (unsigned long long)id,
		    job_state_name(view->state), view->attempt,
		    job_state_name(disk_state), disk_attempt);
	/* Each change starts where the one before left the job. */
	if (fx->seen[id] ? ev->from != fx->last[id] ||
	    view->attempt < fx->last_attempt[id] :
	    ev->from != JOB_QUEUED || view->state != JOB_QUEUED)
		fx_bad(fx, "job %llu: %s -> %s follows %s",
		    (unsigned long long)id, job_state_name(ev->from),
		    job_state_name(view->state), fx->seen[id] ?
		    job_state_name(fx->last[id]) : "nothing");
	fx->seen[id] = true;
	fx->last[id] = view->state;
	fx->last_attempt[id] = view->attempt;
	e = &fx->ev[fx->nev++];
	e->id = id;
	e->from = ev->from;
	e->to = view->state;
	e->attempt = view->attempt;
	e->pid = view->pid;
	snprintf(e->reason, sizeof e->reason, "%s",
	    view->reason != NULL ? view->reason : "");
	e->seq = ++fx->seq;
	e->frame = (uintptr_t)__builtin_frame_address(0);
	e->next_state = store_get(td->store, id + 1) != NULL ?
	    (int)store_get(td->store, id + 1)->state : -1;
	fx->depth--;
}

static void
done_cb(struct triaged *td, struct job *job, const char *cause, void *arg)
{
	struct donerec *d = arg;
	struct fx *fx = d->fx;
	enum job_state s;
	unsigned a;

	if (fx->in_call)
		fx_bad(fx, "job %llu: done_cb inside a jobs_* call",
		    (unsigned long long)d->id);
	if (d->submission && d->id == 0)
		fx_bad(fx, "a submission done before its id was known");
	if (d->id != 0 && cause == NULL) {
		/* On disk by now, and the store's. */
		if (job == NULL || job->id != d->id ||
		    store_get(td->store, d->id) != job)
			fx_bad(fx, "job %llu: done with another job",
			    (unsigned long long)d->id);
		else if (disk_row(fx, d->id, &s, &a) != 0 ||
		    progress(s, a) < progress(JOB_QUEUED, job->attempt))
			fx_bad(fx, "job %llu: done before it is on disk",
			    (unsigned long long)d->id);
	}
	if (d->id == 0 && (job != NULL || cause != NULL))
		fx_bad(fx, "a barrier was given a job or a cause");
	d->called++;
	d->ok = cause == NULL;
	snprintf(d->cause, sizeof d->cause, "%s", cause ? cause : "");
	d->seq = ++fx->seq;
	d->nev = fx->nev;
}

/* The executor's reports pass through here to jobs, which alone decides
 * what they mean: the fixture only records them. */
static void
wrap_started_cb(struct job *job, pid_t pid, uint64_t start_ticks, void *arg)
{
	struct fx *fx = arg;

	fx->nstarted++;
	jobs_run_callbacks.started_cb(job, pid, start_ticks, &fx->td);
}

static void
wrap_ended_cb(struct job *job, const struct run_outcome *out, void *arg)
{
	struct fx *fx = arg;
	struct outrec *o;

	if (fx->nout == NOUTCOMES)
		fx_bad(fx, "more outcomes than the fixture records");
	else {
		o = &fx->out[fx->nout++];
		o->id = job->id;
		o->attempt = job->attempt;
		o->state = out->state;
		snprintf(o->reason, sizeof o->reason, "%s", out->reason);
		o->started = out->started;
		o->seq = ++fx->seq;
	}
	jobs_run_callbacks.ended_cb(job, out, &fx->td);
}

static const struct run_callbacks wrap_callbacks = {
	.started_cb = wrap_started_cb,
	.ended_cb = wrap_ended_cb,
};

static void
safety_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fx *fx = arg;

	(void)fd;
	(void)what;
	fx->timed_out = true;
	event_base_loopbreak(fx->base);
}

/* Runs the loop until cond holds; SAFETY_SEC without it fails the test. */
#define WAIT_FOR(fx, cond) do {						\
	struct timeval tv_ = { SAFETY_SEC, 0 };				\
	(fx)->timed_out = false;					\
	assert_int_equal(evtimer_add((fx)->safety, &tv_), 0);		\
	while (!(cond)) {						\
		assert_int_not_equal(event_base_loop((fx)->base,	\
		    EVLOOP_ONCE), -1);					\
		if ((fx)->bad[0] != '\0')				\
			fail_msg("%s", (fx)->bad);			\
		if ((fx)->timed_out)					\
			fail_msg("timed out waiting for %s", #cond);	\
	}								\
	evtimer_del((fx)->safety);					\
	if ((fx)->bad[0] != '\0')					\
		fail_msg("%s", (fx)->bad);				\
} while (0)

static int
setup(void **state)
{
	static const struct pool_callbacks none;
	struct caller_env caller = { .euid = geteuid() };
	struct config_opts opts = { .env = &caller };
	struct run_params params;
	struct triaged *td;
	struct fx *fx;
	char path[160], *cause = NULL;
	FILE *f;
	int i;

	if ((fx = calloc(1, sizeof *fx)) == NULL)
		return -1;
	*state = fx;
	td = &fx->td;
	for (i = 0; i < NGATES; i++)
		fx->gate_fd[i] = -1;
	for (i = 0; i < NIDS; i++) {
		fx->sub[i] = (struct donerec){ .fx = fx, .submission = true };
		fx->retry[i] = (struct donerec){ .fx = fx, .id = (uint64_t)i };
	}
	for (i = 0; i < 8; i++)
		fx->barrier[i] = (struct donerec){ .fx = fx };
	snprintf(fx->dir, sizeof fx->dir, "/tmp/test-deps.XXXXXX");
	if (mkdtemp(fx->dir) == NULL)
		return -1;
	/* Two slots, two workers, a short kill_grace; the built-in
	 * priorities. */
	snprintf(path, sizeof path, "%s/triage.conf", fx->dir);
	if ((f = fopen(path, "we")) == NULL)
		return -1;
	fprintf(f, "[daemon]\nstate_dir = %s/state\nslots = 2\n"
	    "workers = 2\nkill_grace = 200ms\n", fx->dir);
	fclose(f);
	opts.path = path;
	if ((td->cfg = config_load(&opts, &cause)) == NULL) {
		print_error("config: %s\n", cause ? cause : "?");
		free(cause);
		return -1;
	}
	if (asprintf(&td->output_dir, "%s/output", td->cfg->state_dir) < 0 ||
	    mkdir(td->cfg->state_dir, 0700) != 0 ||
	    mkdir(td->output_dir, 0700) != 0 ||
	    (fx->base = event_base_new()) == NULL ||
	    (fx->safety = evtimer_new(fx->base, safety_cb, fx)) == NULL)
		return -1;
	td->base = fx->base;
	td->uid = geteuid();
	td->phase = TRIAGED_RUNNING;
	/* Wired as main.c does: workers first, then the store, the state
	 * machine and the executor, whose reports go to jobs. */
	if ((td->pool = pool_new(fx->base, td->cfg->workers, &none, NULL,
	    &cause)) == NULL) {
		print_error("pool_new: %s\n", cause ? cause : "?");
		free(cause);
		return -1;
	}
	snprintf(fx->db, sizeof fx->db, "%s/triage.db", td->cfg->state_dir);
	if ((td->store = store_open(fx->base, fx->db, &cause)) == NULL ||
	    jobs_init(td, &cause) != 0) {
		print_error("store, jobs: %s\n", cause ? cause : "?");
		free(cause);
		return -1;
	}
	params = (struct run_params){
		.output_dir = td->output_dir,
		.kill_grace_ms = td->cfg->kill_grace_ms,
		.max_output = td->cfg->max_output,
		.set_creds = false,
	};
	/* deps as the gate and a listener, as main.c has it; the test's
	 * listener first, so that it records each change before deps acts
	 * on it. */
	if ((td->run = run_new(fx->base, td->pool, &params, &wrap_callbacks,
	    fx)) == NULL || (fx->deps = deps_new()) == NULL)
		return -1;
	jobs_set_gate(td, deps_gate_cb, fx->deps);
	if (jobs_listen(td, listener_cb, fx) != 0 ||
	    jobs_listen(td, deps_job_cb, fx->deps) != 0)
		return -1;
	if (sqlite3_open_v2(fx->db, &fx->reader, SQLITE_OPEN_READONLY, NULL)
	    != SQLITE_OK || sqlite3_prepare_v2(fx->reader,
	    "SELECT state, attempt FROM jobs WHERE id = ?", -1, &fx->row,
	    NULL) != SQLITE_OK) {
		print_error("%s: %s\n", fx->db, sqlite3_errmsg(fx->reader));
		return -1;
	}
	return 0;
}

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int
teardown(void **state)
{
	struct fx *fx = *state;
	struct triaged *td = &fx->td;
	char *cause = NULL;
	int i;

	/* As main.c ends. */
	if (td->store != NULL && store_flush(td->store, &cause) != 0) {
		print_error("store_flush: %s\n", cause);
		free(cause);
	}
	sqlite3_finalize(fx->row);
	sqlite3_close(fx->reader);
	run_free(td->run);
	if (td->pool != NULL)
		pool_free(td->pool);
	if (td->jobs != NULL)
		jobs_free(td);
	deps_free(fx->deps);
	if (td->store != NULL)
		store_close(td->store);
	for (i = 0; i < NGATES; i++)
		if (fx->gate_fd[i] != -1)
			close(fx->gate_fd[i]);
	if (fx->safety != NULL)
		event_free(fx->safety);
	if (fx->base != NULL)
		event_base_free(fx->base);
	free(td->output_dir);
	config_free(td->cfg);
	nftw(fx->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static char **
strv(const char *const *v)
{
	size_t n = 0, i;
	char **copy;

	while (v[n] != NULL)
		n++;
	assert_non_null(copy = calloc(n + 1, sizeof *copy));
	for (i = 0; i < n; i++)
		assert_non_null(copy[i] = strdup(v[i]));
	return copy;
}

/* A new job as submit makes one, in priority normal. */
static struct job *
fx_job(struct fx *fx, const char *const *argv)
{
	struct job *job;

	assert_non_null(job = job_new());
	job->argv = strv(argv);
	job->env = strv(ARGV("PATH=/usr/bin:/bin", "LC_ALL=C"));
	assert_non_null(job->cwd = strdup(fx->dir));
	assert_non_null(job->name = strdup("test"));
	assert_non_null(job->priority =
	    strdup(fx->td.cfg->priorities[PRIO_NORMAL].name));
	job->uid = getuid();
	job->gid = getgid();
	return job;
}

/* jobs_submit, inside which nothing may be told; the new id. */
static uint64_t
fx_submit(struct fx *fx, struct job *job)
{
	unsigned staged = jobs_staged(&fx->td, -1);
	struct donerec *d;
	int rc;

	assert_true(fx->nsub < NIDS);
	d = &fx->sub[fx->nsub++];
	fx->in_call = true;
	rc = jobs_submit(&fx->td, job, PRIO_NORMAL, done_cb, d);
	fx->in_call = false;
	assert_int_equal(rc, 0);
	/* the store gave the id in the call; done_cb runs later */
	assert_true(job->id > 0 && job->id < NIDS);
	d->id = job->id;
	assert_int_equal(jobs_staged(&fx->td, -1), staged + 1);
	return job->id;
}

static int
fx_gate_fd(struct fx *fx, int gate)
{
	char path[128];

	assert_true(gate >= 0 && gate < NGATES);
	if (fx->gate_fd[gate] == -1) {
		snprintf(path, sizeof path, "%s/gate%d", fx->dir, gate);
		assert_int_equal(mkfifo(path, 0600), 0);
		/* read-write: the job's open never waits for a writer, and
		 * its read waits for the test's line */
		assert_int_not_equal(fx->gate_fd[gate] = open(path,
		    O_RDWR | O_CLOEXEC), -1);
	}
	return fx->gate_fd[gate];
}

/* A job that runs until its gate is opened, and exits with the status the
 * gate gives. */
static struct job *
fx_gated(struct fx *fx, int gate)
{
	char path[128];

	(void)fx_gate_fd(fx, gate);
	snprintf(path, sizeof path, "%s/gate%d", fx->dir, gate);
	return fx_job(fx, ARGV("sh", "-c", "read x <\"$0\"; exit \"$x\"",
	    path));
}

static void
fx_open_gate(struct fx *fx, int gate, int status)
{
	char line[16];
	int n = snprintf(line, sizeof line, "%d\n", status);

	assert_int_equal(write(fx_gate_fd(fx, gate), line, (size_t)n), n);
}

/* The last event of job id, or NULL. */
static const struct evrec *
fx_find_last(const struct fx *fx, uint64_t id)
{
	int i;

	for (i = fx->nev - 1; i >= 0; i--)
		if (fx->ev[i].id == id)
			return &fx->ev[i];
	return NULL;
}

/* What the finders below return after failing the test (fail_msg does
 * not return, but is not declared so). */
static const struct evrec no_event;

/* The last event of job id; fails when there is none. */
static const struct evrec *
fx_last(const struct fx *fx, uint64_t id)
{
	const struct evrec *e = fx_find_last(fx, id);

	if (e == NULL)
		fail_msg("job %llu has no event", (unsigned long long)id);
	return e != NULL ? e : &no_event;
}

/* The nth (0 = first) event of job id; fails when there is none. */
static const struct evrec *
fx_event(const struct fx *fx, uint64_t id, int nth)
{
	int i;

	for (i = 0; i < fx->nev; i++)
		if (fx->ev[i].id == id && nth-- == 0)
			return &fx->ev[i];
	fail_msg("job %llu has fewer events", (unsigned long long)id);
	return &no_event;
}

static int
fx_nevents(const struct fx *fx, uint64_t id)
{
	int i, n = 0;

	for (i = 0; i < fx->nev; i++)
		n += fx->ev[i].id == id;
	return n;
}

/* Whether job id's last published state is state. */
static bool
fx_is(const struct fx *fx, uint64_t id, enum job_state state)
{
	const struct evrec *e = fx_find_last(fx, id);

	return e != NULL && e->to == state;
}

static void
assert_event(const struct evrec *e, enum job_state from, enum job_state to,
    unsigned attempt)
{
	if (e->from != from || e->to != to || e->attempt != attempt)
		fail_msg("job %llu: %s -> %s (attempt %u), not %s -> %s "
		    "(attempt %u)", (unsigned long long)e->id,
		    job_state_name(e->from), job_state_name(e->to), e->attempt,
		    job_state_name(from), job_state_name(to), attempt);
}

/* jobs_count over every priority, each state in turn. */
static void
assert_counts(const struct fx *fx, unsigned queued, unsigned running,
    unsigned succeeded, unsigned failed, unsigned canceled)
{
	const struct triaged *td = &fx->td;

	assert_int_equal(jobs_count(td, -1, JOB_QUEUED), queued);
	assert_int_equal(jobs_count(td, -1, JOB_RUNNING), running);
	assert_int_equal(jobs_count(td, -1, JOB_SUCCEEDED), succeeded);
	assert_int_equal(jobs_count(td, -1, JOB_FAILED), failed);
	assert_int_equal(jobs_count(td, -1, JOB_CANCELED), canceled);
	assert_int_equal(jobs_count(td, -1, JOB_TIMED_OUT), 0);
	assert_int_equal(jobs_count(td, -1, JOB_LOST), 0);
	/* all of it in the priority the jobs were given */
	assert_int_equal(jobs_count(td, PRIO_NORMAL, JOB_QUEUED), queued);
	assert_int_equal(jobs_count(td, PRIO_NORMAL, JOB_RUNNING), running);
}

static struct donerec *
fx_after_commit(struct fx *fx)
{
	struct donerec *b;
	int rc;

	assert_true(fx->nbarrier < 8);
	b = &fx->barrier[fx->nbarrier++];
	fx->in_call = true;
	rc = jobs_after_commit(&fx->td, done_cb, b);
	fx->in_call = false;
	assert_int_equal(rc, 0);
	return b;
}

/* Runs the loop until every change made so far has been published, and
 * what deps did about it too. */
static void
fx_settle(struct fx *fx)
{
	struct donerec *b = fx_after_commit(fx);

	WAIT_FOR(fx, b->called);
	fx->nbarrier--;
	*b = (struct donerec){ .fx = fx };
}

/* job runs after the n jobs of ids. */
static struct job *
fx_after(struct job *job, size_t n, const uint64_t *ids)
{
	assert_non_null(job->after = calloc(n, sizeof *job->after));
	memcpy(job->after, ids, n * sizeof *ids);
	job->nafter = n;
	return job;
}

static struct job *
fx_job_after(struct fx *fx, const char *const *argv, uint64_t after)
{
	return fx_after(fx_job(fx, argv), 1, &after);
}

static void
fx_cancel(struct fx *fx, struct job *job, uid_t by)
{
	fx->in_call = true;
	jobs_cancel(&fx->td, job, by, SIGTERM);
	fx->in_call = false;
}

/* jobs_retry by hand, into priority normal, once its environment is read
 * back; returns its done record. */
static struct donerec *
fx_retry(struct fx *fx, struct job *job)
{
	struct donerec *d = &fx->retry[job->id];
	char *cause = NULL;
	int rc;

	if (job->env == NULL && store_env(fx->td.store, job, &cause) != 0)
		fail_msg("store_env: %s", cause);
	*d = (struct donerec){ .fx = fx, .id = job->id };
	fx->in_call = true;
	rc = jobs_retry(&fx->td, job, PRIO_NORMAL, done_cb, d);
	fx->in_call = false;
	assert_int_equal(rc, 0);
	return d;
}

/* Waiting for its targets: queued, outside the semaphore, never started. */
static void
assert_waiting(const struct fx *fx, const struct job *job)
{
	assert_int_equal(job->state, JOB_QUEUED);
	assert_true(fx_is(fx, job->id, JOB_QUEUED));
	assert_int_equal(psem_waiter_state(&job->waiter), PSEM_IDLE);
	assert_false(job->begun);
	assert_int_equal(job->pid, 0);
	assert_false(run_has(fx->td.run, job));
}

/* ---- waiting, then running or canceled ---- */

/* A job after a running one waits (the gate says 0), outside the
 * semaphore, and runs once that one has succeeded, not before it is
 * told. */
static void
test_after_success_waits_then_runs(void **state)
{
	struct fx *fx = *state;
	struct job *jb;
	uint64_t a, b;

	a = fx_submit(fx, fx_gated(fx, 0));
	b = fx_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING));
	fx_settle(fx);
	assert_waiting(fx, jb);
	assert_int_equal(fx_nevents(fx, b), 1);
	/* a free slot is not taken: one slot busy of two */
	assert_int_equal(psem_available(fx->td.sem), 1);
	assert_counts(fx, 1, 1, 0, 0, 0);

	fx_open_gate(fx, 0, 0);
	WAIT_FOR(fx, fx_is(fx, b, JOB_SUCCEEDED));
	assert_event(fx_event(fx, b, 1), JOB_QUEUED, JOB_RUNNING, 1);
	assert_true(fx_last(fx, a)->seq < fx_event(fx, b, 1)->seq);
	assert_event(fx_last(fx, a), JOB_RUNNING, JOB_SUCCEEDED, 1);
	assert_int_equal(fx_nevents(fx, b), 3);
	assert_int_equal(fx->nstarted, 2);
	assert_counts(fx, 0, 0, 2, 0, 0);
}

/* After a failing job: canceled, with a reason naming it; never run. */
static void
test_after_failure_cancels(void **state)
{
	struct fx *fx = *state;
	char want[128];
	struct job *jb;
	uint64_t a, b;

	a = fx_submit(fx, fx_gated(fx, 0));
	b = fx_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING) && fx_is(fx, b, JOB_QUEUED));
	fx_open_gate(fx, 0, 3);
	WAIT_FOR(fx, fx_is(fx, b, JOB_CANCELED));
	assert_true(fx_is(fx, a, JOB_FAILED));
	assert_event(fx_last(fx, b), JOB_QUEUED, JOB_CANCELED, 1);
	snprintf(want, sizeof want, "job %llu, which it runs after, ended "
	    "failed", (unsigned long long)a);
	assert_string_equal(fx_last(fx, b)->reason, want);
	assert_string_equal(jb->reason, want);
	assert_true(fx_last(fx, a)->seq < fx_last(fx, b)->seq);
	assert_int_equal(fx->nstarted, 1);
	assert_counts(fx, 0, 0, 0, 1, 1);
}

/* A target that fails, then succeeds on its automatic retry: the job
 * after it waits for the final outcome, not the first. */
static void
test_after_target_retried(void **state)
{
	struct fx *fx = *state;
	struct job *ja, *jb;
	uint64_t a, b;

	ja = fx_gated(fx, 0);
	ja->retries = 1;
	a = fx_submit(fx, ja);
	b = fx_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING));
	fx_open_gate(fx, 0, 1);
	WAIT_FOR(fx, fx_nevents(fx, a) == 4 && fx_is(fx, a, JOB_RUNNING));
	fx_settle(fx);
	assert_waiting(fx, jb);
	fx_open_gate(fx, 0, 0);
	WAIT_FOR(fx, fx_is(fx, b, JOB_SUCCEEDED));
	assert_int_equal(fx_last(fx, a)->attempt, 2);
	assert_true(fx_is(fx, a, JOB_SUCCEEDED));
}

/* After two: one ending leaves it waiting for the other. */
static void
test_after_two(void **state)
{
	struct fx *fx = *state;
	struct job *jc;
	uint64_t a, b, c, ab[2];

	a = fx_submit(fx, fx_gated(fx, 0));
	b = fx_submit(fx, fx_gated(fx, 1));
	ab[0] = a;
	ab[1] = b;
	c = fx_submit(fx, jc = fx_after(fx_job(fx, ARGV("true")), 2, ab));
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING) && fx_is(fx, b, JOB_RUNNING));
	fx_open_gate(fx, 0, 0);
	WAIT_FOR(fx, fx_is(fx, a, JOB_SUCCEEDED));
	fx_settle(fx);
	assert_waiting(fx, jc);
	fx_open_gate(fx, 1, 0);
	WAIT_FOR(fx, fx_is(fx, c, JOB_SUCCEEDED));
	assert_int_equal(fx_nevents(fx, c), 3);
	assert_true(fx_last(fx, b)->seq < fx_event(fx, c, 1)->seq);
}

/*
 * A chain of 200 jobs, each after the one before, behind a first that
 * fails: all 200 are canceled, in the order of the chain, each told in
 * turn (the next one is still queued when a cancel is told: deps cancels
 * it only on hearing of this one, not by recursing down the chain), from a
 * flat stack (the listener never runs inside itself, and every cancel is
 * told from the same frame depth).
 */
static void
test_chain_of_200(void **state)
{
	struct fx *fx = *state;
	uint64_t first, id, prev;
	const struct evrec *e, *before = NULL;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	char want[128];
	int i;

	first = fx_submit(fx, fx_job(fx, ARGV("sh", "-c", "exit 1")));
	prev = first;
	for (i = 0; i < 200; i++)
		prev = fx_submit(fx, fx_job_after(fx, ARGV("true"), prev));
	assert_int_equal(prev, first + 200);
	WAIT_FOR(fx, fx_is(fx, prev, JOB_CANCELED));
	assert_true(fx_is(fx, first, JOB_FAILED));
	for (id = first + 1; id <= first + 200; id++) {
		assert_int_equal(fx_nevents(fx, id), 2);
		e = fx_last(fx, id);
		assert_event(e, JOB_QUEUED, JOB_CANCELED, 1);
		snprintf(want, sizeof want, "job %llu, which it runs after, "
		    "ended %s", (unsigned long long)(id - 1),
		    id == first + 1 ? "failed" : "canceled");
		assert_string_equal(e->reason, want);
		if (before != NULL)
			assert_true(before->seq < e->seq);
		if (id < first + 200)
			assert_int_equal(e->next_state, JOB_QUEUED);
		before = e;
		lo = e->frame < lo ? e->frame : lo;
		hi = e->frame > hi ? e->frame : hi;
	}
	print_message("# listener frames within %lu bytes\n",
	    (unsigned long)(hi - lo));
	/* a recursion would add a few frames per link: 200 links, far more
	 * than this */
	assert_true(hi - lo < 1024);
	assert_int_equal(fx->nstarted, 1);
	assert_counts(fx, 0, 0, 0, 1, 200);
}

/* After a job nobody knows (pruned, say): canceled at once, saying so. */
static void
test_after_unknown(void **state)
{
	struct fx *fx = *state;
	uint64_t b;

	b = fx_submit(fx, fx_job_after(fx, ARGV("true"), 200));
	WAIT_FOR(fx, fx_is(fx, b, JOB_CANCELED));
	assert_event(fx_event(fx, b, 0), JOB_QUEUED, JOB_QUEUED, 1);
	assert_event(fx_event(fx, b, 1), JOB_QUEUED, JOB_CANCELED, 1);
	assert_string_equal(fx_last(fx, b)->reason, "job 200, which it runs "
	    "after, is no longer known");
	assert_int_equal(fx->nstarted, 0);
}

/* After a job that has ended already: succeeded, it runs at once;
 * otherwise it is canceled at once. */
static void
test_after_ended(void **state)
{
	struct fx *fx = *state;
	uint64_t a, f, b, c;
	char want[128];

	a = fx_submit(fx, fx_job(fx, ARGV("true")));
	f = fx_submit(fx, fx_job(fx, ARGV("false")));
	WAIT_FOR(fx, fx_is(fx, a, JOB_SUCCEEDED) && fx_is(fx, f, JOB_FAILED));
	b = fx_submit(fx, fx_job_after(fx, ARGV("true"), a));
	c = fx_submit(fx, fx_job_after(fx, ARGV("true"), f));
	WAIT_FOR(fx, fx_is(fx, b, JOB_SUCCEEDED) && fx_is(fx, c, JOB_CANCELED));
	assert_int_equal(fx_nevents(fx, b), 3);
	assert_int_equal(fx_nevents(fx, c), 2);
	snprintf(want, sizeof want, "job %llu, which it runs after, ended "
	    "failed", (unsigned long long)f);
	assert_string_equal(fx_last(fx, c)->reason, want);
	assert_int_equal(fx->nstarted, 3);
}

/* ---- canceled and retried while waiting ---- */

/*
 * A waiting job canceled: it ends canceled by whoever asked, and its
 * target's end later changes nothing for it.
 */
static void
test_waiting_canceled(void **state)
{
	struct fx *fx = *state;
	struct job *jb;
	uint64_t a, b;

	a = fx_submit(fx, fx_gated(fx, 0));
	b = fx_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING) && fx_is(fx, b, JOB_QUEUED));
	fx_cancel(fx, jb, 5);
	WAIT_FOR(fx, fx_is(fx, b, JOB_CANCELED));
	assert_string_equal(fx_last(fx, b)->reason, "canceled by uid 5");
	fx_open_gate(fx, 0, 3);
	WAIT_FOR(fx, fx_is(fx, a, JOB_FAILED));
	fx_settle(fx);
	assert_int_equal(fx_nevents(fx, b), 2);
	assert_string_equal(jb->reason, "canceled by uid 5");
	assert_int_equal(fx->nstarted, 1);
	assert_counts(fx, 0, 0, 0, 1, 1);
}

/*
 * Registrations know their attempt: c waits for a and b; canceled, then
 * retried, it registers again. When a ends, the first attempt's wait must
 * not count for the second: c still waits for b, and runs once, after it.
 */
static void
test_canceled_retried_counted_once(void **state)
{
	struct fx *fx = *state;
	struct donerec *d;
	uint64_t a, b, c, ab[2];
	struct job *jc;

	a = fx_submit(fx, fx_gated(fx, 0));
	b = fx_submit(fx, fx_gated(fx, 1));
	ab[0] = a;
	ab[1] = b;
	c = fx_submit(fx, jc = fx_after(fx_job(fx, ARGV("true")), 2, ab));
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING) && fx_is(fx, b, JOB_RUNNING) &&
	    fx_is(fx, c, JOB_QUEUED));
	fx_cancel(fx, jc, 5);
	WAIT_FOR(fx, fx_is(fx, c, JOB_CANCELED));
	d = fx_retry(fx, jc);
	WAIT_FOR(fx, d->called && fx_nevents(fx, c) == 3);
	assert_true(d->ok);
	assert_event(fx_last(fx, c), JOB_CANCELED, JOB_QUEUED, 2);
	fx_settle(fx);
	assert_waiting(fx, jc);

	fx_open_gate(fx, 0, 0);
	WAIT_FOR(fx, fx_is(fx, a, JOB_SUCCEEDED));
	fx_settle(fx);
	/* one of its two targets has ended: it still waits */
	assert_waiting(fx, jc);
	assert_int_equal(fx_nevents(fx, c), 3);

	fx_open_gate(fx, 1, 0);
	WAIT_FOR(fx, fx_is(fx, c, JOB_SUCCEEDED));
	assert_int_equal(fx_nevents(fx, c), 5);
	assert_event(fx_event(fx, c, 3), JOB_QUEUED, JOB_RUNNING, 2);
	assert_true(fx_last(fx, b)->seq < fx_event(fx, c, 3)->seq);
	assert_int_equal(fx->nstarted, 3);
	assert_counts(fx, 0, 0, 3, 0, 0);
}

/* The same with the cancel and the retry in one turn: the cancel of the
 * first attempt is told after the second has registered, and must not
 * take the second's registration with it. */
static void
test_cancel_and_retry_in_one_turn(void **state)
{
	struct fx *fx = *state;
	struct donerec *d;
	struct job *jb;
	uint64_t a, b;

	a = fx_submit(fx, fx_gated(fx, 0));
	b = fx_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING) && fx_is(fx, b, JOB_QUEUED));
	fx_cancel(fx, jb, 5);
	d = fx_retry(fx, jb);
	WAIT_FOR(fx, d->called);
	fx_settle(fx);
	assert_int_equal(fx_nevents(fx, b), 3);
	assert_event(fx_event(fx, b, 1), JOB_QUEUED, JOB_CANCELED, 1);
	assert_event(fx_event(fx, b, 2), JOB_CANCELED, JOB_QUEUED, 2);
	assert_waiting(fx, jb);

	fx_open_gate(fx, 0, 0);
	WAIT_FOR(fx, fx_is(fx, b, JOB_SUCCEEDED));
	assert_int_equal(fx_nevents(fx, b), 5);
	assert_int_equal(fx->nstarted, 2);
}

/* A job canceled because its target failed, retried: its target is still
 * failed, so it is canceled again at once. */
static void
test_retry_after_failed_target(void **state)
{
	struct fx *fx = *state;
	struct donerec *d;
	struct job *jb;
	uint64_t a, b;

	a = fx_submit(fx, fx_job(fx, ARGV("false")));
	b = fx_submit(fx, jb = fx_job_after(fx, ARGV("true"), a));
	WAIT_FOR(fx, fx_is(fx, b, JOB_CANCELED));
	d = fx_retry(fx, jb);
	WAIT_FOR(fx, d->called && fx_nevents(fx, b) == 4);
	assert_event(fx_event(fx, b, 2), JOB_CANCELED, JOB_QUEUED, 2);
	assert_event(fx_event(fx, b, 3), JOB_QUEUED, JOB_CANCELED, 2);
	assert_int_equal(fx->nstarted, 1);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_after_success_waits_then_runs),
		T(test_after_failure_cancels),
		T(test_after_target_retried),
		T(test_after_two),
		T(test_chain_of_200),
		T(test_after_unknown),
		T(test_after_ended),
		T(test_waiting_canceled),
		T(test_canceled_retried_counted_once),
		T(test_cancel_and_retry_in_one_turn),
		T(test_retry_after_failed_target),
	};

	/* the pool's contract: a dead worker's socket is an error, not a
	 * signal */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
