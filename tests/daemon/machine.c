/* machine.c - for the daemon tests of the job state machine: jobs, store, pool,
 * executor and deps wired as main.c wires them, on a bare loop, recorded. */
#include <fcntl.h>
#include <setjmp.h>
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
#include "machine.h"
#include "pool.h"
#include "run.h"
#include "store.h"
#include "triaged.h"

/* How far along its life a job is: a later attempt, or a later state of
 * the same one. */
static unsigned
machine_progress(enum job_state state, unsigned attempt)
{
	unsigned rank = state == JOB_QUEUED ? 0 : state == JOB_RUNNING ? 1 : 2;

	return attempt * 3 + rank;
}

int
machine_disk_row(struct machine *m, uint64_t id, enum job_state *state,
    unsigned *attempt)
{
	int rc = -1, s;

	sqlite3_bind_int64(m->row, 1, (sqlite3_int64)id);
	if (sqlite3_step(m->row) == SQLITE_ROW &&
	    (s = job_state_parse((const char *)sqlite3_column_text(m->row,
	    0))) != -1) {
		*state = (enum job_state)s;
		*attempt = (unsigned)sqlite3_column_int(m->row, 1);
		rc = 0;
	}
	/* ends the read transaction: the writer may checkpoint */
	sqlite3_reset(m->row);
	return rc;
}

/* Records every change; checks it is on disk, in turn, and not nested. */
static void
machine_listener_cb(struct triaged *td, const struct jobs_event *ev,
    void *arg)
{
	struct machine *m = arg;
	struct loop *l = &m->loop;
	const struct job *view = ev->view;
	enum job_state disk_state;
	unsigned disk_attempt;
	struct machine_ev *e;
	uint64_t id = view->id;

	if (m->depth++ > 0)
		loop_bad(l, "job %llu: a listener ran inside another",
		    (unsigned long long)id);
	if (m->in_call)
		loop_bad(l, "job %llu: published inside a jobs_* call",
		    (unsigned long long)id);
	if (id == 0 || id >= MACHINE_NIDS || m->nev == MACHINE_NEVENTS) {
		loop_bad(l, "job %llu: more than the fixture records",
		    (unsigned long long)id);
		m->depth--;
		return;
	}
	if (ev->job != store_get(td->store, id) || ev->job->id != id)
		loop_bad(l, "job %llu: the event's job is not the store's",
		    (unsigned long long)id);
	/* Published once on disk: the file has this change, or a later
	 * one. */
	if (machine_disk_row(m, id, &disk_state, &disk_attempt) != 0)
		loop_bad(l, "job %llu: published, but not in the database",
		    (unsigned long long)id);
	else if (machine_progress(disk_state, disk_attempt) <
	    machine_progress(view->state, view->attempt))
		loop_bad(l, "job %llu: %s (attempt %u) published while the "
		    "database says %s (attempt %u)", (unsigned long long)id,
		    job_state_name(view->state), view->attempt,
		    job_state_name(disk_state), disk_attempt);
	/* Each change starts where the one before left the job. */
	if (m->seen[id] ? ev->from != m->last[id] ||
	    view->attempt < m->last_attempt[id] :
	    ev->from != JOB_QUEUED || view->state != JOB_QUEUED)
		loop_bad(l, "job %llu: %s -> %s follows %s",
		    (unsigned long long)id, job_state_name(ev->from),
		    job_state_name(view->state), m->seen[id] ?
		    job_state_name(m->last[id]) : "nothing");
	m->seen[id] = true;
	m->last[id] = view->state;
	m->last_attempt[id] = view->attempt;
	e = &m->ev[m->nev++];
	e->id = id;
	e->from = ev->from;
	e->to = view->state;
	e->attempt = view->attempt;
	e->pid = view->run->pid;
	snprintf(e->reason, sizeof e->reason, "%s",
	    view->run->reason != NULL ? view->run->reason : "");
	e->seq = ++m->seq;
	e->frame = (uintptr_t)__builtin_frame_address(0);
	e->next_state = store_get(td->store, id + 1) != NULL ?
	    (int)store_get(td->store, id + 1)->state : -1;
	m->depth--;
}

void
machine_done_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	struct machine_done *d = arg;
	struct machine *m = d->m;
	struct loop *l = &m->loop;
	enum job_state s;
	unsigned a;

	if (m->in_call)
		loop_bad(l, "job %llu: done_cb inside a jobs_* call",
		    (unsigned long long)d->id);
	if (d->submission && d->id == 0)
		loop_bad(l, "a submission done before its id was known");
	if (d->id != 0 && cause == NULL) {
		/* On disk by now, and the store's. */
		if (job == NULL || job->id != d->id ||
		    store_get(td->store, d->id) != job)
			loop_bad(l, "job %llu: done with another job",
			    (unsigned long long)d->id);
		else if (machine_disk_row(m, d->id, &s, &a) != 0 ||
		    machine_progress(s, a) <
		    machine_progress(JOB_QUEUED, job->attempt))
			loop_bad(l, "job %llu: done before it is on disk",
			    (unsigned long long)d->id);
	}
	if (d->id == 0 && (job != NULL || cause != NULL))
		loop_bad(l, "a barrier was given a job or a cause");
	d->called++;
	d->ok = cause == NULL;
	snprintf(d->cause, sizeof d->cause, "%s", cause ? cause : "");
	d->seq = ++m->seq;
	d->nev = m->nev;
}

/* The executor's reports pass through here to jobs, which alone decides
 * what they mean: the machine only records them. */
static void
machine_started_cb(struct job *job, pid_t pid, uint64_t start_ticks,
    void *arg)
{
	struct machine *m = arg;

	m->nstarted++;
	jobs_run_callbacks.started_cb(job, pid, start_ticks, &m->td);
}

static void
machine_ended_cb(struct job *job, const struct run_outcome *out, void *arg)
{
	struct machine *m = arg;
	struct machine_out *o;

	if (m->nout == MACHINE_NOUTCOMES)
		loop_bad(&m->loop, "more outcomes than the fixture records");
	else {
		o = &m->out[m->nout++];
		o->id = job->id;
		o->attempt = job->attempt;
		o->state = out->state;
		snprintf(o->reason, sizeof o->reason, "%s", out->reason);
		o->started = out->started;
		o->seq = ++m->seq;
	}
	jobs_run_callbacks.ended_cb(job, out, &m->td);
}

static const struct run_callbacks machine_run_callbacks = {
	.started_cb = machine_started_cb,
	.ended_cb = machine_ended_cb,
};

/* Its config file: two slots, two workers, a short kill_grace; the
 * built-in priorities. 0, or -1. */
static int
machine_config(struct machine *m)
{
	struct caller_env caller = { .euid = geteuid() };
	struct config_opts opts = { .env = &caller };
	char path[160], *cause = NULL;
	FILE *f;

	snprintf(path, sizeof path, "%s/triage.conf", m->loop.dir);
	if ((f = fopen(path, "we")) == NULL)
		return -1;
	fprintf(f, "[daemon]\nstate_dir = %s/state\nslots = 2\n"
	    "workers = 2\nkill_grace = 200ms\n", m->loop.dir);
	fclose(f);
	opts.path = path;
	if ((m->td.cfg = config_load(&opts, &cause)) == NULL) {
		print_error("config: %s\n", cause ? cause : "?");
		free(cause);
		return -1;
	}
	return 0;
}

/* Wired as main.c does: workers first, then the store, the state machine
 * and the executor, whose reports go to jobs; deps as the gate and a
 * listener. 0, or -1. */
static int
machine_wire(struct machine *m)
{
	static const struct pool_callbacks none;
	struct triaged *td = &m->td;
	struct run_params params;
	char *cause = NULL;

	td->base = m->loop.base;
	td->uid = geteuid();
	td->phase = TRIAGED_RUNNING;
	if ((td->pool = pool_new(td->base, td->cfg->workers, NULL, &none, NULL,
	    &cause)) == NULL) {
		print_error("pool_new: %s\n", cause ? cause : "?");
		free(cause);
		return -1;
	}
	snprintf(m->db, sizeof m->db, "%s/triage.db", td->cfg->state_dir);
	if ((td->store = store_open(td->base, m->db, &cause)) == NULL ||
	    jobs_init(td, &cause) != 0) {
		print_error("store, jobs: %s\n", cause ? cause : "?");
		free(cause);
		return -1;
	}
	params = (struct run_params){
		.output_dir = td->output_dir,
		.kill_grace_ms = td->cfg->kill_grace_ms,
		.max_output = td->cfg->max_output,
		.max_result = td->cfg->max_result,
		.set_creds = false,
	};
	if ((td->run = run_new(td->base, td->pool, &params,
	    &machine_run_callbacks, m)) == NULL ||
	    (m->deps = deps_new()) == NULL)
		return -1;
	jobs_set_gate(td, deps_gate_cb, m->deps);
	/* the machine's listener first, so that it records each change
	 * before deps acts on it */
	if (jobs_listen(td, machine_listener_cb, m) != 0 ||
	    jobs_listen(td, deps_job_cb, m->deps) != 0)
		return -1;
	return 0;
}

struct machine *
machine_new(const char *name)
{
	struct machine *m;
	struct triaged *td;
	int i;

	if ((m = loop_new(sizeof *m, name)) == NULL)
		return NULL;
	td = &m->td;
	for (i = 0; i < MACHINE_NGATES; i++)
		m->gate_fd[i] = -1;
	for (i = 0; i < MACHINE_NIDS; i++) {
		m->sub[i] = (struct machine_done){ .m = m, .submission = true };
		m->retry[i] = (struct machine_done){ .m = m,
		    .id = (uint64_t)i };
	}
	for (i = 0; i < MACHINE_NBARRIERS; i++)
		m->barrier[i] = (struct machine_done){ .m = m };
	if (machine_config(m) != 0 ||
	    asprintf(&td->output_dir, "%s/output", td->cfg->state_dir) < 0 ||
	    mkdir(td->cfg->state_dir, 0700) != 0 ||
	    mkdir(td->output_dir, 0700) != 0 || machine_wire(m) != 0)
		goto fail;
	if (sqlite3_open_v2(m->db, &m->reader, SQLITE_OPEN_READONLY, NULL)
	    != SQLITE_OK || sqlite3_prepare_v2(m->reader,
	    "SELECT state, attempt FROM jobs WHERE id = ?", -1, &m->row,
	    NULL) != SQLITE_OK) {
		print_error("%s: %s\n", m->db, sqlite3_errmsg(m->reader));
		goto fail;
	}
	return m;
fail:
	machine_free(m);
	return NULL;
}

void
machine_free(struct machine *m)
{
	struct triaged *td = &m->td;
	char *cause = NULL;
	int i;

	/* As main.c ends. */
	if (td->store != NULL && store_flush(td->store, &cause) != 0) {
		print_error("store_flush: %s\n", cause);
		free(cause);
	}
	sqlite3_finalize(m->row);
	sqlite3_close(m->reader);
	run_free(td->run);
	if (td->pool != NULL)
		pool_free(td->pool);
	if (td->jobs != NULL)
		jobs_free(td);
	deps_free(m->deps);
	if (td->store != NULL)
		store_close(td->store);
	for (i = 0; i < MACHINE_NGATES; i++)
		if (m->gate_fd[i] != -1)
			close(m->gate_fd[i]);
	free(td->output_dir);
	config_free(td->cfg);
	loop_free(m);
}

struct job *
machine_job(struct machine *m, const char *const *argv)
{
	return loop_job(&m->loop, argv,
	    m->td.cfg->priorities[MACHINE_PRIO_NORMAL].name);
}

static int
machine_gate_fd(struct machine *m, int gate)
{
	char path[128];

	assert_true(gate >= 0 && gate < MACHINE_NGATES);
	if (m->gate_fd[gate] == -1) {
		snprintf(path, sizeof path, "%s/gate%d", m->loop.dir, gate);
		assert_int_equal(mkfifo(path, 0600), 0);
		/* read-write: the job's open never waits for a writer, and
		 * its read waits for the test's line */
		assert_int_not_equal(m->gate_fd[gate] = open(path,
		    O_RDWR | O_CLOEXEC), -1);
	}
	return m->gate_fd[gate];
}

struct job *
machine_gated(struct machine *m, int gate)
{
	char path[128];

	(void)machine_gate_fd(m, gate);
	snprintf(path, sizeof path, "%s/gate%d", m->loop.dir, gate);
	return machine_job(m, (const char *const []){ "sh", "-c",
	    "read x <\"$0\"; exit \"$x\"", path, NULL });
}

void
machine_open_gate(struct machine *m, int gate, int status)
{
	char line[16];
	int n = snprintf(line, sizeof line, "%d\n", status);

	assert_int_equal(write(machine_gate_fd(m, gate), line, (size_t)n), n);
}

uint64_t
machine_submit(struct machine *m, struct job *job)
{
	unsigned staged = jobs_staged(&m->td, -1);
	struct machine_done *d;
	int rc;

	assert_true(m->nsub < MACHINE_NIDS);
	d = &m->sub[m->nsub++];
	m->in_call = true;
	rc = jobs_submit(&m->td, job, MACHINE_PRIO_NORMAL, machine_done_cb, d);
	m->in_call = false;
	assert_int_equal(rc, 0);
	/* the store gave the id in the call; done_cb runs later */
	assert_true(job->id > 0 && job->id < MACHINE_NIDS);
	d->id = job->id;
	assert_int_equal(jobs_staged(&m->td, -1), staged + 1);
	return job->id;
}

struct machine_done *
machine_sub(struct machine *m, uint64_t id)
{
	int i;

	for (i = 0; i < m->nsub; i++)
		if (m->sub[i].id == id)
			return &m->sub[i];
	fail_msg("job %llu was not submitted", (unsigned long long)id);
	return &m->sub[MACHINE_NIDS - 1];
}

struct machine_done *
machine_after_commit(struct machine *m)
{
	struct machine_done *b;
	int rc;

	assert_true(m->nbarrier < MACHINE_NBARRIERS);
	b = &m->barrier[m->nbarrier++];
	m->in_call = true;
	rc = jobs_after_commit(&m->td, machine_done_cb, b);
	m->in_call = false;
	assert_int_equal(rc, 0);
	return b;
}

/* The last event of job id, or NULL. */
static const struct machine_ev *
machine_find_last(const struct machine *m, uint64_t id)
{
	int i;

	for (i = m->nev - 1; i >= 0; i--)
		if (m->ev[i].id == id)
			return &m->ev[i];
	return NULL;
}

/* What the finders below return after failing the test (fail_msg does
 * not return, but is not declared so). */
static const struct machine_ev machine_no_event;

const struct machine_ev *
machine_last(const struct machine *m, uint64_t id)
{
	const struct machine_ev *e = machine_find_last(m, id);

	if (e == NULL)
		fail_msg("job %llu has no event", (unsigned long long)id);
	return e != NULL ? e : &machine_no_event;
}

const struct machine_ev *
machine_event(const struct machine *m, uint64_t id, int nth)
{
	int i;

	for (i = 0; i < m->nev; i++)
		if (m->ev[i].id == id && nth-- == 0)
			return &m->ev[i];
	fail_msg("job %llu has fewer events", (unsigned long long)id);
	return &machine_no_event;
}

int
machine_nevents(const struct machine *m, uint64_t id)
{
	int i, n = 0;

	for (i = 0; i < m->nev; i++)
		n += m->ev[i].id == id;
	return n;
}

bool
machine_is(const struct machine *m, uint64_t id, enum job_state state)
{
	const struct machine_ev *e = machine_find_last(m, id);

	return e != NULL && e->to == state;
}

void
machine_assert_event(const struct machine_ev *e, enum job_state from,
    enum job_state to, unsigned attempt)
{
	if (e->from != from || e->to != to || e->attempt != attempt)
		fail_msg("job %llu: %s -> %s (attempt %u), not %s -> %s "
		    "(attempt %u)", (unsigned long long)e->id,
		    job_state_name(e->from), job_state_name(e->to), e->attempt,
		    job_state_name(from), job_state_name(to), attempt);
}

void
machine_assert_counts(const struct machine *m, unsigned queued,
    unsigned running, unsigned succeeded, unsigned failed, unsigned canceled)
{
	const struct triaged *td = &m->td;

	assert_int_equal(jobs_count(td, -1, JOB_QUEUED), queued);
	assert_int_equal(jobs_count(td, -1, JOB_RUNNING), running);
	assert_int_equal(jobs_count(td, -1, JOB_SUCCEEDED), succeeded);
	assert_int_equal(jobs_count(td, -1, JOB_FAILED), failed);
	assert_int_equal(jobs_count(td, -1, JOB_CANCELED), canceled);
	assert_int_equal(jobs_count(td, -1, JOB_TIMED_OUT), 0);
	assert_int_equal(jobs_count(td, -1, JOB_LOST), 0);
	/* all of it in the priority the jobs were given */
	assert_int_equal(jobs_count(td, MACHINE_PRIO_NORMAL, JOB_QUEUED),
	    queued);
	assert_int_equal(jobs_count(td, MACHINE_PRIO_NORMAL, JOB_RUNNING),
	    running);
}
