/* test-jobs-machine.c - the job state machine on a bare event_base with a real
 * store, semaphore, executor and pool: what it publishes, when, in order. */
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <sqlite3.h>

#include "caller-env.h"
#include "config.h"
#include "job.h"
#include "jobs.h"
#include "pool.h"
#include "psem.h"
#include "run.h"
#include "store.h"
#include "triaged.h"

/* Every wait for a callback gives up, failing the test, after this. */
#define SAFETY_SEC	30
#define NIDS		64	/* job ids the fixture records: 1 .. NIDS-1 */
#define NEVENTS		512
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
	bool fsize_limited;	/* commits fail: see fx_limit_fsize */
	struct rlimit fsize;
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

/* Commits work again (and the test's own output reaches its file). */
static void
fx_unlimit_fsize(struct fx *fx)
{
	if (!fx->fsize_limited)
		return;
	setrlimit(RLIMIT_FSIZE, &fx->fsize);
	signal(SIGXFSZ, SIG_DFL);
	fx->fsize_limited = false;
}

/* Runs the loop until cond holds; SAFETY_SEC without it fails the test. */
#define WAIT_FOR(fx, cond) do {						\
	struct timeval tv_ = { SAFETY_SEC, 0 };				\
	(fx)->timed_out = false;					\
	assert_int_equal(evtimer_add((fx)->safety, &tv_), 0);		\
	while (!(cond)) {						\
		assert_int_not_equal(event_base_loop((fx)->base,	\
		    EVLOOP_ONCE), -1);					\
		if ((fx)->bad[0] != '\0' || (fx)->timed_out)		\
			fx_unlimit_fsize(fx);				\
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
	snprintf(fx->dir, sizeof fx->dir, "/tmp/test-jobs-machine.XXXXXX");
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
	if ((td->run = run_new(fx->base, td->pool, &params, &wrap_callbacks,
	    fx)) == NULL || jobs_listen(td, listener_cb, fx) != 0)
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

	fx_unlimit_fsize(fx);
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

/* The done record of the submission of job id. */
static struct donerec *
fx_sub(struct fx *fx, uint64_t id)
{
	int i;

	for (i = 0; i < fx->nsub; i++)
		if (fx->sub[i].id == id)
			return &fx->sub[i];
	fail_msg("job %llu was not submitted", (unsigned long long)id);
	return &fx->sub[NIDS - 1];
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

/* ---- submission ---- */

/*
 * A submission is staged, and nobody hears of it until its commit is over:
 * then done_cb, then its queued event; it runs, and its changes come in
 * order, each once on disk (the listener checks the file).
 */
static void
test_submit_then_run(void **state)
{
	struct fx *fx = *state;
	struct donerec *d;
	struct job *job;
	uint64_t id;

	job = fx_gated(fx, 0);
	id = fx_submit(fx, job);
	d = fx_sub(fx, id);
	assert_int_equal(jobs_staged(&fx->td, PRIO_NORMAL), 1);
	assert_counts(fx, 0, 0, 0, 0, 0);
	assert_null(store_get(fx->td.store, id));
	assert_int_equal(d->called, 0);
	assert_int_equal(fx->nev, 0);

	WAIT_FOR(fx, d->called);
	assert_true(d->ok);
	assert_int_equal(d->nev, 0);	/* nothing told before it */
	assert_int_equal(jobs_staged(&fx->td, -1), 0);
	assert_counts(fx, 1, 0, 0, 0, 0);
	WAIT_FOR(fx, fx_is(fx, id, JOB_QUEUED));
	assert_event(fx_event(fx, id, 0), JOB_QUEUED, JOB_QUEUED, 1);
	assert_true(fx_event(fx, id, 0)->seq > d->seq);

	WAIT_FOR(fx, fx_is(fx, id, JOB_RUNNING));
	assert_event(fx_event(fx, id, 1), JOB_QUEUED, JOB_RUNNING, 1);
	assert_true(fx_event(fx, id, 1)->pid > 0);
	assert_int_equal(fx_event(fx, id, 1)->pid, job->pid);
	assert_counts(fx, 0, 1, 0, 0, 0);
	assert_int_equal(pool_busy(fx->td.pool), 1);

	fx_open_gate(fx, 0, 0);
	WAIT_FOR(fx, fx_is(fx, id, JOB_SUCCEEDED));
	assert_event(fx_event(fx, id, 2), JOB_RUNNING, JOB_SUCCEEDED, 1);
	assert_int_equal(fx_nevents(fx, id), 3);
	assert_counts(fx, 0, 0, 1, 0, 0);
	assert_int_equal(job->exit_code, 0);
	assert_null(job->reason);
	assert_false(run_has(fx->td.run, job));
}

/* Three jobs on two slots: the third waits its turn in the semaphore;
 * every running event has its pid, and the counters follow each step. */
static void
test_counts_follow_states(void **state)
{
	struct fx *fx = *state;
	uint64_t a, b, c;
	struct job *jc;
	int i;

	a = fx_submit(fx, fx_gated(fx, 0));
	b = fx_submit(fx, fx_gated(fx, 1));
	c = fx_submit(fx, jc = fx_gated(fx, 2));
	assert_int_equal(jobs_staged(&fx->td, -1), 3);
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING) && fx_is(fx, b, JOB_RUNNING));
	assert_counts(fx, 1, 2, 0, 0, 0);
	assert_int_equal(psem_waiter_state(&jc->waiter), PSEM_QUEUED);
	assert_int_equal(fx_nevents(fx, c), 1);

	fx_open_gate(fx, 0, 0);
	WAIT_FOR(fx, fx_is(fx, c, JOB_RUNNING));
	assert_true(fx_is(fx, a, JOB_SUCCEEDED));
	/* a's end was told before c took its slot */
	assert_true(fx_last(fx, a)->seq < fx_last(fx, c)->seq);
	assert_counts(fx, 0, 2, 1, 0, 0);

	fx_open_gate(fx, 1, 4);
	fx_open_gate(fx, 2, 0);
	WAIT_FOR(fx, fx_is(fx, b, JOB_FAILED) && fx_is(fx, c, JOB_SUCCEEDED));
	assert_counts(fx, 0, 0, 2, 1, 0);
	assert_string_equal(fx_last(fx, b)->reason, "exited with status 4");
	for (i = 0; i < fx->nev; i++)
		if (fx->ev[i].to == JOB_RUNNING)
			assert_true(fx->ev[i].pid > 0);
	assert_int_equal(fx->nstarted, 3);
}

/* A job needing more slots than there are can never run: canceled, with a
 * reason, once it is on disk. */
static void
test_too_many_slots(void **state)
{
	struct fx *fx = *state;
	struct job *job = fx_job(fx, ARGV("true"));
	uint64_t id;

	job->slots = 3;
	id = fx_submit(fx, job);
	WAIT_FOR(fx, fx_is(fx, id, JOB_CANCELED));
	assert_event(fx_event(fx, id, 0), JOB_QUEUED, JOB_QUEUED, 1);
	assert_event(fx_event(fx, id, 1), JOB_QUEUED, JOB_CANCELED, 1);
	assert_non_null(strstr(fx_last(fx, id)->reason, "needs 3 slots"));
	assert_int_equal(fx->nstarted, 0);
	assert_counts(fx, 0, 0, 0, 0, 1);
}

/* ---- barriers ---- */

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
	assert_int_equal(b->called, 0);
	return b;
}

/*
 * jobs_after_commit's callback runs from the loop, never inside the call,
 * and after every change recorded before it has been published: here three
 * cancels waiting for their commit.
 */
static void
test_after_commit(void **state)
{
	struct fx *fx = *state;
	struct donerec *b;
	struct job *job[3];
	uint64_t id[3];
	int i, nev;

	/* nothing pending: still not inside the call */
	b = fx_after_commit(fx);
	WAIT_FOR(fx, b->called);
	assert_int_equal(b->nev, 0);

	jobs_set_paused(&fx->td, PRIO_NORMAL, true, 0);
	for (i = 0; i < 3; i++)
		id[i] = fx_submit(fx, job[i] = fx_job(fx, ARGV("true")));
	WAIT_FOR(fx, fx_is(fx, id[0], JOB_QUEUED) &&
	    fx_is(fx, id[1], JOB_QUEUED) && fx_is(fx, id[2], JOB_QUEUED));
	assert_counts(fx, 3, 0, 0, 0, 0);

	nev = fx->nev;
	fx->in_call = true;
	for (i = 0; i < 3; i++)
		jobs_cancel(&fx->td, job[i], 1000, SIGTERM);
	fx->in_call = false;
	/* counted at once, told after the commit */
	assert_counts(fx, 0, 0, 0, 0, 3);
	assert_int_equal(fx->nev, nev);
	b = fx_after_commit(fx);
	WAIT_FOR(fx, b->called);
	assert_int_equal(b->called, 1);
	assert_int_equal(b->nev, nev + 3);
	for (i = 0; i < 3; i++) {
		assert_true(fx_is(fx, id[i], JOB_CANCELED));
		assert_true(fx_last(fx, id[i])->seq < b->seq);
	}
	jobs_set_paused(&fx->td, PRIO_NORMAL, false, 0);
	assert_int_equal(fx->nstarted, 0);
}

/* Two barriers run in the order they were asked for, each after the
 * changes made before it, not those made between them. */
static void
test_after_commit_order(void **state)
{
	struct fx *fx = *state;
	struct donerec *b1, *b2;
	struct job *j1, *j2;
	uint64_t id1, id2;

	jobs_set_paused(&fx->td, PRIO_NORMAL, true, 0);
	id1 = fx_submit(fx, j1 = fx_job(fx, ARGV("true")));
	id2 = fx_submit(fx, j2 = fx_job(fx, ARGV("true")));
	WAIT_FOR(fx, fx_is(fx, id1, JOB_QUEUED) && fx_is(fx, id2, JOB_QUEUED));

	fx->in_call = true;
	jobs_cancel(&fx->td, j1, 0, SIGTERM);
	fx->in_call = false;
	b1 = fx_after_commit(fx);
	fx->in_call = true;
	jobs_cancel(&fx->td, j2, 0, SIGTERM);
	fx->in_call = false;
	b2 = fx_after_commit(fx);
	WAIT_FOR(fx, b2->called);
	assert_int_equal(b1->called, 1);
	assert_true(fx_last(fx, id1)->seq < b1->seq);
	assert_true(b1->seq < b2->seq);
	assert_true(fx_last(fx, id2)->seq < b2->seq);
	jobs_set_paused(&fx->td, PRIO_NORMAL, false, 0);
}

/*
 * A barrier asked for while a submission is staged: the submission's
 * done_cb runs first, both with that commit, and the submission's queued
 * event is published before the barrier's callback (the submission kept
 * its place among the changes).
 */
static void
test_after_commit_staged_submission(void **state)
{
	struct fx *fx = *state;
	struct donerec *b, *d;
	uint64_t id;

	jobs_set_paused(&fx->td, PRIO_NORMAL, true, 0);
	id = fx_submit(fx, fx_job(fx, ARGV("true")));
	d = fx_sub(fx, id);
	b = fx_after_commit(fx);
	WAIT_FOR(fx, b->called && fx_is(fx, id, JOB_QUEUED));
	assert_true(d->ok);
	assert_true(d->seq < b->seq);
	assert_true(fx_last(fx, id)->seq < b->seq);
	jobs_set_paused(&fx->td, PRIO_NORMAL, false, 0);
}

/* ---- retries and cancel ---- */

/*
 * A failing job with retries = 1: the executor says failed both times, and
 * jobs alone turns the first into another attempt, at the tail of its
 * queue, with a reason saying what happened to the first.
 */
static void
test_automatic_retry(void **state)
{
	struct fx *fx = *state;
	struct job *job = fx_job(fx, ARGV("sh", "-c", "exit 1"));
	uint64_t id;
	int i;

	job->retries = 1;
	id = fx_submit(fx, job);
	WAIT_FOR(fx, fx_is(fx, id, JOB_FAILED));
	assert_int_equal(fx_nevents(fx, id), 5);
	assert_event(fx_event(fx, id, 0), JOB_QUEUED, JOB_QUEUED, 1);
	assert_event(fx_event(fx, id, 1), JOB_QUEUED, JOB_RUNNING, 1);
	assert_event(fx_event(fx, id, 2), JOB_RUNNING, JOB_QUEUED, 2);
	assert_string_equal(fx_event(fx, id, 2)->reason,
	    "attempt 1 failed: exited with status 1");
	assert_event(fx_event(fx, id, 3), JOB_QUEUED, JOB_RUNNING, 2);
	assert_event(fx_event(fx, id, 4), JOB_RUNNING, JOB_FAILED, 2);
	assert_string_equal(fx_event(fx, id, 4)->reason,
	    "exited with status 1");
	assert_true(fx_event(fx, id, 1)->pid > 0);
	assert_true(fx_event(fx, id, 3)->pid > 0);
	/* what the executor said: failed, twice; never "queued" */
	assert_int_equal(fx->nout, 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(fx->out[i].id, id);
		assert_int_equal(fx->out[i].attempt, (unsigned)i + 1);
		assert_int_equal(fx->out[i].state, JOB_FAILED);
		assert_string_equal(fx->out[i].reason, "exited with status 1");
	}
	/* the requeue was told after the outcome that caused it */
	assert_true(fx->out[0].seq < fx_event(fx, id, 2)->seq);
	assert_int_equal(job->retries, 0);
	assert_int_equal(job->attempt, 2);
	assert_int_equal(job->exit_code, 1);
	assert_counts(fx, 0, 0, 0, 1, 0);
}

/* A timed-out job with a retry left gets another attempt too. */
static void
test_timeout_retried(void **state)
{
	struct fx *fx = *state;
	struct job *job = fx_job(fx, ARGV("sleep", "100"));
	uint64_t id;

	job->retries = 1;
	job->timeout_ms = 200;
	id = fx_submit(fx, job);
	WAIT_FOR(fx, fx_is(fx, id, JOB_TIMED_OUT));
	assert_int_equal(fx_nevents(fx, id), 5);
	assert_event(fx_event(fx, id, 2), JOB_RUNNING, JOB_QUEUED, 2);
	assert_string_equal(fx_event(fx, id, 2)->reason,
	    "attempt 1 timed_out: timed out after 200ms");
	assert_event(fx_event(fx, id, 4), JOB_RUNNING, JOB_TIMED_OUT, 2);
	assert_string_equal(fx_last(fx, id)->reason, "timed out after 200ms");
	assert_int_equal(fx->out[0].state, JOB_TIMED_OUT);
	assert_int_equal(jobs_count(&fx->td, -1, JOB_TIMED_OUT), 1);
}

/* A queued job, paused or waiting for slots, ends canceled at once, told
 * after its commit; it never runs. */
static void
test_cancel_queued(void **state)
{
	struct fx *fx = *state;
	struct job *holder, *waiting, *paused;
	struct donerec *barrier;
	uint64_t a, b, c, p;

	/* waiting for slots: a holds both, b and c wait in turn */
	holder = fx_gated(fx, 0);
	holder->slots = 2;
	a = fx_submit(fx, holder);
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING));
	b = fx_submit(fx, waiting = fx_job(fx, ARGV("true")));
	c = fx_submit(fx, fx_job(fx, ARGV("true")));
	WAIT_FOR(fx, fx_is(fx, b, JOB_QUEUED) && fx_is(fx, c, JOB_QUEUED));
	assert_int_equal(psem_waiter_state(&waiting->waiter), PSEM_QUEUED);

	fx->in_call = true;
	jobs_cancel(&fx->td, waiting, 1234, SIGTERM);
	fx->in_call = false;
	WAIT_FOR(fx, fx_is(fx, b, JOB_CANCELED));
	assert_event(fx_last(fx, b), JOB_QUEUED, JOB_CANCELED, 1);
	assert_string_equal(fx_last(fx, b)->reason, "canceled by uid 1234");
	assert_int_equal(psem_waiter_state(&waiting->waiter), PSEM_IDLE);
	/* the slots go to c, not to the canceled b */
	fx_open_gate(fx, 0, 0);
	WAIT_FOR(fx, fx_is(fx, c, JOB_SUCCEEDED));
	assert_int_equal(fx_nevents(fx, b), 2);
	assert_int_equal(waiting->pid, 0);

	/* paused */
	jobs_set_paused(&fx->td, PRIO_NORMAL, true, 0);
	p = fx_submit(fx, paused = fx_job(fx, ARGV("true")));
	WAIT_FOR(fx, fx_is(fx, p, JOB_QUEUED));
	assert_int_equal(psem_waiter_state(&paused->waiter), PSEM_QUEUED);
	fx->in_call = true;
	jobs_cancel(&fx->td, paused, 0, SIGTERM);
	/* terminal already: a second cancel changes nothing */
	jobs_cancel(&fx->td, paused, 0, SIGTERM);
	fx->in_call = false;
	WAIT_FOR(fx, fx_is(fx, p, JOB_CANCELED));
	jobs_set_paused(&fx->td, PRIO_NORMAL, false, 0);
	barrier = fx_after_commit(fx);
	WAIT_FOR(fx, barrier->called);
	assert_int_equal(fx_nevents(fx, p), 2);
	assert_counts(fx, 0, 0, 2, 0, 2);
	assert_int_equal(fx->nstarted, 2);	/* a and c */
}

/*
 * Granted its slots, its start on its way to the disk (held, not handed to
 * a worker yet): a cancel gives the slots back and it never runs.
 */
static void
test_cancel_while_start_is_written(void **state)
{
	struct fx *fx = *state;
	struct job *job = fx_job(fx, ARGV("true"));
	struct donerec *d, *barrier;
	uint64_t id;

	id = fx_submit(fx, job);
	d = fx_sub(fx, id);
	/* the turn that ran done_cb granted it; its start commits in the
	 * next one */
	WAIT_FOR(fx, d->called);
	assert_int_equal(psem_waiter_state(&job->waiter), PSEM_HELD);
	assert_true(job->begun);
	assert_false(run_has(fx->td.run, job));
	assert_int_equal(psem_available(fx->td.sem), 1);

	fx->in_call = true;
	jobs_cancel(&fx->td, job, 9, SIGTERM);
	fx->in_call = false;
	assert_int_equal(psem_available(fx->td.sem), 2);
	WAIT_FOR(fx, fx_is(fx, id, JOB_CANCELED));
	barrier = fx_after_commit(fx);
	WAIT_FOR(fx, barrier->called);
	assert_int_equal(fx_nevents(fx, id), 2);
	assert_string_equal(fx_last(fx, id)->reason, "canceled by uid 9");
	assert_false(run_has(fx->td.run, job));
	assert_int_equal(pool_busy(fx->td.pool), 0);
	assert_int_equal(fx->nstarted, 0);
	assert_int_equal(fx->nout, 0);
	assert_counts(fx, 0, 0, 0, 0, 1);
}

/* A running job is stopped (SIGTERM to its group) and ends canceled. */
static void
test_cancel_running(void **state)
{
	struct fx *fx = *state;
	struct job *job = fx_gated(fx, 0);
	uint64_t id = fx_submit(fx, job);

	WAIT_FOR(fx, fx_is(fx, id, JOB_RUNNING));
	fx->in_call = true;
	jobs_cancel(&fx->td, job, 77, SIGTERM);
	fx->in_call = false;
	/* it still runs until its process has ended */
	assert_int_equal(job->state, JOB_RUNNING);
	WAIT_FOR(fx, fx_is(fx, id, JOB_CANCELED));
	assert_event(fx_last(fx, id), JOB_RUNNING, JOB_CANCELED, 1);
	assert_string_equal(fx_last(fx, id)->reason, "canceled by uid 77");
	assert_int_equal(job->signal, SIGTERM);
	assert_counts(fx, 0, 0, 0, 0, 1);
}

/*
 * A failed job retried by hand: counted as queued at once, but told only
 * once its commit is over, after the retry's done_cb, as attempt 2; then
 * it runs again.
 */
static void
test_manual_retry(void **state)
{
	struct fx *fx = *state;
	struct job *job = fx_job(fx, ARGV("sh", "-c", "exit 2"));
	struct donerec *d;
	char *cause = NULL;
	uint64_t id;
	int rc, nev;

	id = fx_submit(fx, job);
	d = &fx->retry[id];
	WAIT_FOR(fx, fx_is(fx, id, JOB_FAILED));
	assert_null(job->env);		/* dropped with the end */
	assert_int_equal(store_env(fx->td.store, job, &cause), 0);
	assert_non_null(job->env);

	nev = fx->nev;
	fx->in_call = true;
	rc = jobs_retry(&fx->td, job, PRIO_NORMAL, done_cb, d);
	fx->in_call = false;
	assert_int_equal(rc, 0);
	assert_int_equal(job->attempt, 2);
	assert_counts(fx, 1, 0, 0, 0, 0);
	assert_int_equal(fx->nev, nev);

	WAIT_FOR(fx, d->called);
	assert_true(d->ok);
	assert_int_equal(d->nev, nev);	/* not told before its commit */
	WAIT_FOR(fx, fx_nevents(fx, id) > 3);
	assert_event(fx_event(fx, id, 3), JOB_FAILED, JOB_QUEUED, 2);
	assert_true(fx_event(fx, id, 3)->seq > d->seq);
	assert_string_equal(fx_event(fx, id, 3)->reason, "");
	WAIT_FOR(fx, fx_is(fx, id, JOB_FAILED));
	assert_event(fx_event(fx, id, 4), JOB_QUEUED, JOB_RUNNING, 2);
	assert_event(fx_event(fx, id, 5), JOB_RUNNING, JOB_FAILED, 2);
	assert_int_equal(fx->nout, 2);
	assert_counts(fx, 0, 0, 0, 1, 0);
}

/* ---- failing commits ---- */

/*
 * Commits fail for real from now on: a file size limit of 0 (SIGXFSZ
 * ignored, as the daemon does) makes every write to the database fail with
 * EFBIG, as a full disk would. Until fx_unlimit_fsize, the test's own
 * output to a file is lost too: observe, then assert after.
 */
static void
fx_limit_fsize(struct fx *fx)
{
	struct rlimit zero;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &fx->fsize), 0);
	zero = (struct rlimit){ 0, fx->fsize.rlim_max };
	signal(SIGXFSZ, SIG_IGN);
	fx->fsize_limited = true;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &zero), 0);
}

static void
sync_cb(const char *cause, void *arg)
{
	int *failed = arg;

	*failed = cause != NULL ? 1 : 2;
}

/* Waits for a commit of its own: 1 when it failed, 2 when it worked. */
static int
fx_commit(struct fx *fx)
{
	int result = 0;

	assert_int_equal(store_sync(fx->td.store, sync_cb, &result), 0);
	WAIT_FOR(fx, result != 0);
	return result;
}

/*
 * While commits fail, the job that ends meanwhile is not told of, and the
 * one its slots go to is not handed to a worker, until a commit succeeds;
 * then both happen, in order.
 */
static void
test_commit_failure_holds_everything(void **state)
{
	struct fx *fx = *state;
	struct job *ja, *jb;
	uint64_t a, b;
	int nev;

	/* a holds both slots; b waits for them */
	ja = fx_gated(fx, 0);
	ja->slots = 2;
	a = fx_submit(fx, ja);
	WAIT_FOR(fx, fx_is(fx, a, JOB_RUNNING));
	b = fx_submit(fx, jb = fx_job(fx, ARGV("true")));
	WAIT_FOR(fx, fx_is(fx, b, JOB_QUEUED));
	assert_int_equal(psem_waiter_state(&jb->waiter), PSEM_QUEUED);

	fx_limit_fsize(fx);
	nev = fx->nev;

	fx_open_gate(fx, 0, 0);
	/* a's end reported by the executor, b granted its slots */
	WAIT_FOR(fx, fx->nout == 1 && jb->begun);
	/* and commits failing since: two of our own, the store's retry
	 * between them */
	if (fx_commit(fx) != 1 || fx_commit(fx) != 1) {
		fx_unlimit_fsize(fx);
		fail_msg("a commit succeeded under RLIMIT_FSIZE 0");
	}
	{
		/* observed now, asserted once output works again */
		int told = fx->nev - nev, handed = run_has(fx->td.run, jb),
		    busy = (int)pool_busy(fx->td.pool),
		    started = fx->nstarted;
		enum job_state sb = jb->state;

		fx_unlimit_fsize(fx);
		assert_int_equal(told, 0);
		assert_int_equal(handed, 0);
		assert_int_equal(busy, 0);
		assert_int_equal(started, 1);	/* a only */
		assert_int_equal(sb, JOB_QUEUED);
	}
	/* counted already: the counters are memory's */
	assert_int_equal(jobs_count(&fx->td, -1, JOB_SUCCEEDED), 1);

	/* writable again: the next commit (the store retries on its own)
	 * lets everything through, in order */
	WAIT_FOR(fx, fx_is(fx, b, JOB_SUCCEEDED));
	assert_event(fx_event(fx, a, 2), JOB_RUNNING, JOB_SUCCEEDED, 1);
	assert_true(fx_event(fx, a, 2)->seq < fx_event(fx, b, 1)->seq);
	assert_event(fx_event(fx, b, 1), JOB_QUEUED, JOB_RUNNING, 1);
	assert_event(fx_event(fx, b, 2), JOB_RUNNING, JOB_SUCCEEDED, 1);
	assert_int_equal(fx->nstarted, 2);
	assert_counts(fx, 0, 0, 2, 0, 0);
}

/*
 * A retry whose commit fails: done_cb has the cause, the job is put back
 * as it was (failed, attempt 1, its reason), and nobody is told; once
 * commits work again, that is what the disk has.
 */
static void
test_commit_failure_undoes_retry(void **state)
{
	struct fx *fx = *state;
	struct job *job = fx_job(fx, ARGV("sh", "-c", "exit 2"));
	struct donerec *d = NULL, *barrier;
	enum job_state disk_state;
	unsigned disk_attempt;
	char *cause = NULL;
	uint64_t id;
	int rc, nev, called = 0, ok = 1;

	id = fx_submit(fx, job);
	WAIT_FOR(fx, fx_is(fx, id, JOB_FAILED));
	assert_int_equal(store_env(fx->td.store, job, &cause), 0);
	d = &fx->retry[id];
	nev = fx->nev;

	fx_limit_fsize(fx);
	fx->in_call = true;
	rc = jobs_retry(&fx->td, job, PRIO_NORMAL, done_cb, d);
	fx->in_call = false;
	if (rc == 0)
		WAIT_FOR(fx, d->called);
	called = d->called;
	ok = d->ok;
	fx_unlimit_fsize(fx);
	assert_int_equal(rc, 0);
	assert_int_equal(called, 1);
	assert_false(ok);
	assert_string_not_equal(d->cause, "");

	assert_int_equal(job->state, JOB_FAILED);
	assert_int_equal(job->attempt, 1);
	assert_string_equal(job->reason, "exited with status 2");
	assert_null(job->env);
	assert_int_equal(psem_waiter_state(&job->waiter), PSEM_IDLE);
	assert_counts(fx, 0, 0, 0, 1, 0);
	/* the put-back job is what the next commit writes */
	barrier = fx_after_commit(fx);
	WAIT_FOR(fx, barrier->called);
	assert_int_equal(fx_commit(fx), 2);
	assert_int_equal(fx->nev, nev);
	assert_int_equal(disk_row(fx, id, &disk_state, &disk_attempt), 0);
	assert_int_equal(disk_state, JOB_FAILED);
	assert_int_equal(disk_attempt, 1);
	assert_int_equal(fx->nstarted, 1);
}

/* A submission whose commit fails is dropped: done_cb has the cause and no
 * job, nothing is told, and nothing counted. */
static void
test_commit_failure_drops_submission(void **state)
{
	struct fx *fx = *state;
	struct donerec *d, *barrier;
	uint64_t id;
	int called, ok;

	fx_limit_fsize(fx);
	id = fx_submit(fx, fx_job(fx, ARGV("true")));
	d = fx_sub(fx, id);
	WAIT_FOR(fx, d->called);
	called = d->called;
	ok = d->ok;
	fx_unlimit_fsize(fx);
	assert_int_equal(called, 1);
	assert_false(ok);
	print_message("# cause: %s\n", d->cause);
	assert_string_not_equal(d->cause, "");
	assert_int_equal(jobs_staged(&fx->td, -1), 0);
	assert_counts(fx, 0, 0, 0, 0, 0);
	assert_null(store_get(fx->td.store, id));
	barrier = fx_after_commit(fx);
	WAIT_FOR(fx, barrier->called);
	assert_int_equal(fx->nev, 0);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_submit_then_run),
		T(test_counts_follow_states),
		T(test_too_many_slots),
		T(test_after_commit),
		T(test_after_commit_order),
		T(test_after_commit_staged_submission),
		T(test_automatic_retry),
		T(test_timeout_retried),
		T(test_cancel_queued),
		T(test_cancel_while_start_is_written),
		T(test_cancel_running),
		T(test_manual_retry),
		T(test_commit_failure_holds_everything),
		T(test_commit_failure_undoes_retry),
		T(test_commit_failure_drops_submission),
	};

	/* the pool's contract: a dead worker's socket is an error, not a
	 * signal */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
