/* test-run.c - the executor alone on a bare event_base with a real pool of
 * workers: outcomes, stops, kill_grace, timeouts, a stuck worker, reentry. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "config.h"
#include "job.h"
#include "loop.h"
#include "pool.h"
#include "proc.h"
#include "run.h"
#include "tsupport-clock.h"

#define NJOBS		16	/* job ids the fixture records: 1 .. NJOBS-1 */
/* Small, so that the SIGKILL that follows SIGTERM comes quickly. */
#define KILL_GRACE_MS	200
/* run.c's RUN_STUCK_MARGIN_MS: how long after SIGKILL a worker that has
 * not acted is given up on. */
#define STUCK_MARGIN_MS	2000

#define ARGV(...)	((const char *const []){ __VA_ARGS__, NULL })
#define WAIT_FOR(fx, cond)	LOOP_WAIT_FOR(&(fx)->loop, cond)

/* What the callbacks saw of one job. */
struct rjob {
	struct job *job;
	int started;		/* calls of each callback */
	int ended;
	int started_seq;	/* when, in the order of all callbacks */
	int ended_seq;
	pid_t pid;
	uint64_t start_ticks;
	struct run_outcome out;
};

struct fx {
	struct loop loop;	/* first (loop_new); dir: cwd, output, fifo */
	struct pool *pool;
	struct run *run;
	bool in_call;		/* inside run_start or run_stop */
	struct rjob jobs[NJOBS];
	int seq;
};

static struct rjob *
fx_rjob(struct fx *fx, const struct job *job)
{
	if (job->id == 0 || job->id >= NJOBS || fx->jobs[job->id].job != job) {
		loop_bad(&fx->loop, "a callback for job %llu, which the test "
		    "did not start", (unsigned long long)job->id);
		return NULL;
	}
	return &fx->jobs[job->id];
}

static void
started_cb(struct job *job, pid_t pid, uint64_t start_ticks, void *arg)
{
	struct fx *fx = arg;
	struct rjob *r = fx_rjob(fx, job);

	if (r == NULL)
		return;
	/* run.h: callbacks run from the loop, never inside the calls. */
	if (fx->in_call)
		loop_bad(&fx->loop, "job %llu: started_cb inside run_start or "
		    "run_stop", (unsigned long long)job->id);
	if (r->started || r->ended)
		loop_bad(&fx->loop, "job %llu: started out of turn",
		    (unsigned long long)job->id);
	if (pid <= 0)
		loop_bad(&fx->loop, "job %llu: started with pid %ld",
		    (unsigned long long)job->id, (long)pid);
	r->started++;
	r->started_seq = ++fx->seq;
	r->pid = pid;
	r->start_ticks = start_ticks;
}

static void
ended_cb(struct job *job, const struct run_outcome *out, void *arg)
{
	struct fx *fx = arg;
	struct rjob *r = fx_rjob(fx, job);

	if (r == NULL)
		return;
	if (fx->in_call)
		loop_bad(&fx->loop, "job %llu: ended_cb inside run_start or "
		    "run_stop", (unsigned long long)job->id);
	if (r->ended)
		loop_bad(&fx->loop, "job %llu: ended twice",
		    (unsigned long long)job->id);
	/* The run has let go of the job before telling. */
	if (run_has(fx->run, job))
		loop_bad(&fx->loop, "job %llu: ended while it still has a run",
		    (unsigned long long)job->id);
	if (out->started != (r->started == 1))
		loop_bad(&fx->loop, "job %llu: the outcome says started %d, "
		    "the callbacks %d", (unsigned long long)job->id,
		    out->started, r->started);
	r->ended++;
	r->ended_seq = ++fx->seq;
	r->out = *out;
}

static const struct run_callbacks callbacks = {
	.started_cb = started_cb,
	.ended_cb = ended_cb,
};

/* The daemon's config as the run sees it: a GPU resource whose units go
 * in CUDA_VISIBLE_DEVICES too. */
static char fx_cuda[] = "CUDA_VISIBLE_DEVICES";
static struct config_resource fx_resources[] = {
	{ .name = "gpu", .env = fx_cuda },
};
static struct config fx_config = {
	.resources = fx_resources,
	.nresources = 1,
};
static struct config *fx_cfg = &fx_config;

static int
setup(void **state)
{
	static const struct pool_callbacks none;
	struct run_params params;
	struct fx *fx;
	char *cause = NULL;

	if ((fx = loop_new(sizeof *fx, "test-run")) == NULL)
		return -1;
	/* As the daemon does: the pool first, run_new then takes its
	 * callbacks. */
	if ((fx->pool = pool_new(fx->loop.base, 2, NULL, &none, NULL, &cause)) ==
	    NULL) {
		print_error("pool_new: %s\n", cause ? cause : "?");
		free(cause);
		return -1;
	}
	params = (struct run_params){
		.output_dir = fx->loop.dir,
		.kill_grace_ms = KILL_GRACE_MS,
		.max_output = 1 << 20,
		.set_creds = false,
		.cfg = &fx_cfg,
	};
	if ((fx->run = run_new(fx->loop.base, fx->pool, &params, &callbacks,
	    fx)) == NULL)
		return -1;
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;
	size_t i;

	run_free(fx->run);
	pool_free(fx->pool);
	for (i = 0; i < NJOBS; i++)
		job_free(fx->jobs[i].job);
	loop_free(fx);
	return 0;
}

/* A job as a submission makes it, with the given id: the environment has
 * PATH, cwd is the temp dir. */
static struct job *
fx_job(struct fx *fx, uint64_t id, const char *const *argv)
{
	struct job *job;

	assert_true(id > 0 && id < NJOBS);
	assert_null(fx->jobs[id].job);
	job = loop_job(&fx->loop, argv, "normal");
	job->id = id;
	job->slots = 1;
	fx->jobs[id].job = job;
	return job;
}

/* run_start, checking that no callback runs inside it. */
static void
fx_start_job(struct fx *fx, struct job *job)
{
	static const struct run_job_opts opts = { .io_idle = false };

	fx->in_call = true;
	assert_int_equal(run_start(fx->run, job, &opts), 0);
	fx->in_call = false;
	assert_true(run_has(fx->run, job));
}

static struct job *
fx_start(struct fx *fx, uint64_t id, const char *const *argv)
{
	struct job *job = fx_job(fx, id, argv);

	fx_start_job(fx, job);
	return job;
}

static bool
fx_stop(struct fx *fx, struct job *job, enum job_state as, int sig,
    const char *reason)
{
	bool had;

	fx->in_call = true;
	had = run_stop(fx->run, job, as, sig, reason);
	fx->in_call = false;
	return had;
}

static struct rjob *
fx_wait_end(struct fx *fx, uint64_t id)
{
	struct rjob *r = &fx->jobs[id];

	WAIT_FOR(fx, r->ended);
	return r;
}

static void
assert_exit_outcome(const struct rjob *r, int code)
{
	assert_int_equal(r->ended, 1);
	assert_true(r->out.started);
	assert_true(r->out.reaped);
	assert_true(WIFEXITED(r->out.status));
	assert_int_equal(WEXITSTATUS(r->out.status), code);
}

/* ---- how a run ends on its own ---- */

static void
test_success(void **state)
{
	struct fx *fx = *state;
	struct rjob *r;

	fx_start(fx, 1, ARGV("sh", "-c", "echo hello"));
	r = fx_wait_end(fx, 1);
	assert_int_equal(r->started, 1);
	assert_true(r->started_seq < r->ended_seq);
	assert_true(r->pid > 0);
	assert_exit_outcome(r, 0);
	assert_int_equal(r->out.state, JOB_SUCCEEDED);
	assert_string_equal(r->out.reason, "");
	assert_true(r->out.user_time >= 0);
	assert_true(r->out.max_rss_kb > 0);
	assert_false(r->out.stdout_truncated);
	assert_false(run_has(fx->run, r->job));
	assert_int_equal(run_count(fx->run), 0);
	/* nothing left to stop */
	assert_false(fx_stop(fx, r->job, JOB_CANCELED, SIGTERM, "late"));
}

static void
test_exit_status(void **state)
{
	struct fx *fx = *state;
	struct rjob *r;

	fx_start(fx, 1, ARGV("sh", "-c", "exit 3"));
	r = fx_wait_end(fx, 1);
	assert_exit_outcome(r, 3);
	assert_int_equal(r->started, 1);
	assert_int_equal(r->out.state, JOB_FAILED);
	assert_string_equal(r->out.reason, "exited with status 3");
}

static void
test_killed_by_signal(void **state)
{
	struct fx *fx = *state;
	struct rjob *r;

	fx_start(fx, 1, ARGV("sh", "-c", "kill -KILL $$"));
	r = fx_wait_end(fx, 1);
	assert_true(r->out.started);
	assert_true(r->out.reaped);
	assert_true(WIFSIGNALED(r->out.status));
	assert_int_equal(WTERMSIG(r->out.status), SIGKILL);
	assert_int_equal(r->out.state, JOB_FAILED);
	assert_string_equal(r->out.reason, "killed by SIGKILL");
}

static void
test_cannot_exec(void **state)
{
	struct fx *fx = *state;
	struct rjob *r;

	fx_start(fx, 1, ARGV("triage-no-such-command", "x"));
	r = fx_wait_end(fx, 1);
	assert_int_equal(r->started, 0);
	assert_false(r->out.started);
	assert_false(r->out.reaped);
	assert_int_equal(r->out.state, JOB_FAILED);
	assert_non_null(strstr(r->out.reason,
	    "exec triage-no-such-command"));
	/* the worker is idle again and takes the next one */
	fx_start(fx, 2, ARGV("true"));
	assert_int_equal(fx_wait_end(fx, 2)->out.state, JOB_SUCCEEDED);
}

/* What the job of id wrote to its stdout, NUL-terminated, into buf. */
static void
fx_stdout(struct fx *fx, uint64_t id, char *buf, size_t size)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "%s/%llu.stdout", fx->loop.dir,
	    (unsigned long long)id);
	assert_int_not_equal(fd = open(path, O_RDONLY | O_CLOEXEC), -1);
	assert_true((n = read(fd, buf, size - 1)) > 0);
	close(fd);
	buf[n] = '\0';
}

/* TRIAGE_* are given by the run, and win over the job's own. */
static void
test_environment(void **state)
{
	struct fx *fx = *state;
	struct job *job;
	char buf[256];

	job = fx_job(fx, 7, ARGV("sh", "-c",
	    "echo $TRIAGE_JOB_ID $TRIAGE_PRIORITY $TRIAGE_ATTEMPT $A"));
	assert_int_equal(job_set_env(job, loop_strv(ARGV("PATH=/usr/bin:/bin",
	    "A=mine", "TRIAGE_JOB_ID=99"))), 0);
	job->attempt = 2;
	fx_start_job(fx, job);
	assert_exit_outcome(fx_wait_end(fx, 7), 0);
	fx_stdout(fx, 7, buf, sizeof buf);
	assert_string_equal(buf, "7 normal 2 mine\n");
}

/* The units a job was given (protocol v1.2): TRIAGE_<NAME> and the
 * resource's env, which win over the job's own; devices that make no
 * variables fail the run before it starts. */
static void
test_environment_of_devices(void **state)
{
	struct fx *fx = *state;
	struct job *job;
	char buf[256];

	job = fx_job(fx, 8, ARGV("sh", "-c", "echo \"$TRIAGE_GPU|"
	    "$CUDA_VISIBLE_DEVICES|$TRIAGE_FPGA_X|$A|$TRIAGE_JOB_ID\"; "
	    "env | grep -c '^CUDA_VISIBLE_DEVICES='"));
	assert_int_equal(job_set_env(job, loop_strv(ARGV("PATH=/usr/bin:/bin",
	    "A=mine", "CUDA_VISIBLE_DEVICES=0,1,2,3", "TRIAGE_GPU=7"))), 0);
	assert_non_null(job_extra_edit(job)->devices = json_pack(
	    "{s[ss] s[s]}", "gpu", "1", "3", "fpga-x", "f:0"));
	fx_start_job(fx, job);
	assert_exit_outcome(fx_wait_end(fx, 8), 0);
	fx_stdout(fx, 8, buf, sizeof buf);
	assert_string_equal(buf, "1,3|1,3|f:0|mine|8\n1\n");

	job = fx_job(fx, 9, ARGV("true"));
	assert_non_null(job_extra_edit(job)->devices = json_pack("{s[]}",
	    "gpu"));
	fx_start_job(fx, job);
	assert_int_equal(fx_wait_end(fx, 9)->out.state, JOB_FAILED);
	assert_false(fx->jobs[9].out.started);
	assert_non_null(strstr(fx->jobs[9].out.reason,
	    "cannot hand it to a worker: Invalid argument"));
}

/* ---- stops ---- */

static void
test_stop_running(void **state)
{
	struct fx *fx = *state;
	struct rjob *r = &fx->jobs[1];
	struct job *job;

	job = fx_start(fx, 1, ARGV("sleep", "100"));
	WAIT_FOR(fx, r->started);
	assert_true(fx_stop(fx, job, JOB_CANCELED, SIGTERM, "canceled by "
	    "the test"));
	/* A second stop keeps the first outcome. */
	assert_true(fx_stop(fx, job, JOB_TIMED_OUT, SIGKILL, "second"));
	fx_wait_end(fx, 1);
	assert_int_equal(r->out.state, JOB_CANCELED);
	assert_string_equal(r->out.reason, "canceled by the test");
	assert_true(r->out.reaped);
	assert_true(WIFSIGNALED(r->out.status));
	assert_int_equal(WTERMSIG(r->out.status), SIGTERM);
	assert_int_equal(run_count(fx->run), 0);
}

/* A job deaf to SIGTERM gets SIGKILL once kill_grace is over. */
static void
test_stop_deaf_gets_sigkill(void **state)
{
	struct fx *fx = *state;
	struct rjob *r = &fx->jobs[1];
	const char *fifo = loop_fifo(&fx->loop);
	struct job *job;
	double t0, t;

	/* it says it is ready once its trap is set: a SIGTERM before that
	 * would end it at once */
	job = fx_start(fx, 1, ARGV("sh", "-c",
	    "trap '' TERM; echo ready >\"$0\"; sleep 100", fifo));
	WAIT_FOR(fx, r->started && strchr(fx->loop.fifo_buf, '\n') != NULL);
	t0 = tsupport_clock_ms_f();
	assert_true(fx_stop(fx, job, JOB_CANCELED, SIGTERM, "stop it"));
	fx_wait_end(fx, 1);
	t = tsupport_clock_ms_f() - t0;
	assert_int_equal(r->out.state, JOB_CANCELED);
	assert_string_equal(r->out.reason, "stop it");
	assert_true(r->out.reaped);
	assert_true(WIFSIGNALED(r->out.status));
	assert_int_equal(WTERMSIG(r->out.status), SIGKILL);
	/* not before kill_grace, and well before the stuck margin */
	assert_true(t >= KILL_GRACE_MS - 5);
	assert_true(t < KILL_GRACE_MS + STUCK_MARGIN_MS);
}

static void
test_timeout(void **state)
{
	struct fx *fx = *state;
	struct rjob *r;
	struct job *job;
	double t0, t;

	job = fx_job(fx, 1, ARGV("sleep", "100"));
	job->timeout_ms = 300;
	t0 = tsupport_clock_ms_f();
	fx_start_job(fx, job);
	r = fx_wait_end(fx, 1);
	t = tsupport_clock_ms_f() - t0;
	assert_int_equal(r->started, 1);
	assert_int_equal(r->out.state, JOB_TIMED_OUT);
	assert_string_equal(r->out.reason, "timed out after 300ms");
	assert_true(r->out.reaped);
	assert_true(WIFSIGNALED(r->out.status));
	assert_int_equal(WTERMSIG(r->out.status), SIGTERM);
	assert_true(t >= 300 - 5);
}

/* Three runs on two workers: the third waits for one, and a stop ends it
 * without a process; the others go on, and a new one takes its turn. */
static void
test_stop_before_handed(void **state)
{
	struct fx *fx = *state;
	struct job *a, *b, *c;
	struct rjob *rc = &fx->jobs[3];

	a = fx_start(fx, 1, ARGV("sleep", "100"));
	b = fx_start(fx, 2, ARGV("sleep", "100"));
	c = fx_start(fx, 3, ARGV("true"));
	assert_int_equal(run_count(fx->run), 3);
	WAIT_FOR(fx, fx->jobs[1].started && fx->jobs[2].started);
	assert_int_equal(pool_busy(fx->pool), 2);
	assert_int_equal(rc->started, 0);
	assert_int_equal(rc->ended, 0);

	assert_true(fx_stop(fx, c, JOB_CANCELED, SIGTERM, "never mind"));
	fx_wait_end(fx, 3);
	assert_int_equal(rc->started, 0);
	assert_false(rc->out.started);
	assert_false(rc->out.reaped);
	assert_int_equal(rc->out.state, JOB_CANCELED);
	assert_string_equal(rc->out.reason, "never mind");
	assert_int_equal(run_count(fx->run), 2);
	/* the two running ones are untouched */
	assert_int_equal(fx->jobs[1].ended + fx->jobs[2].ended, 0);

	assert_true(fx_stop(fx, a, JOB_CANCELED, SIGKILL, "a"));
	assert_true(fx_stop(fx, b, JOB_CANCELED, SIGKILL, "b"));
	fx_wait_end(fx, 1);
	fx_wait_end(fx, 2);
	fx_start(fx, 4, ARGV("true"));
	assert_int_equal(fx_wait_end(fx, 4)->out.state, JOB_SUCCEEDED);
}

/* Handed to a worker in the order of the calls. */
static void
test_fifo_order(void **state)
{
	struct fx *fx = *state;
	struct job *a, *b;
	uint64_t id;

	a = fx_start(fx, 1, ARGV("sleep", "100"));
	b = fx_start(fx, 2, ARGV("sleep", "100"));
	for (id = 3; id <= 6; id++)
		fx_start(fx, id, ARGV("true"));
	WAIT_FOR(fx, fx->jobs[1].started && fx->jobs[2].started);
	assert_true(fx_stop(fx, a, JOB_CANCELED, SIGKILL, "a"));
	WAIT_FOR(fx, fx->jobs[6].ended);
	for (id = 3; id <= 6; id++) {
		assert_int_equal(fx->jobs[id].out.state, JOB_SUCCEEDED);
		if (id > 3)
			assert_true(fx->jobs[id - 1].started_seq <
			    fx->jobs[id].started_seq);
	}
	assert_true(fx_stop(fx, b, JOB_CANCELED, SIGKILL, "b"));
	fx_wait_end(fx, 2);
}

/*
 * A worker stopped (SIGSTOP) while its job runs cannot pass SIGTERM on, nor
 * SIGKILL: after kill_grace and the stuck margin the daemon kills the job's
 * process group itself and replaces the worker.
 */
static void
test_stuck_worker(void **state)
{
	struct fx *fx = *state;
	struct rjob *r = &fx->jobs[1];
	const char *fifo = loop_fifo(&fx->loop);
	pid_t worker, members[8];
	int nmembers, fds[8], wfd, i;
	siginfo_t si;
	struct job *job;
	double t0, t;
	char st;

	/* a group of two: the shell and its sleep, once it says so */
	job = fx_start(fx, 1, ARGV("sh", "-c",
	    "sleep 100 & echo $! >\"$0\"; wait", fifo));
	WAIT_FOR(fx, r->started && strchr(fx->loop.fifo_buf, '\n') != NULL);
	assert_int_equal(proc_stat(r->pid, &st, &worker, NULL, NULL), 0);
	assert_int_not_equal(worker, getpid());
	nmembers = proc_find(0, r->pid, PROC_LIVE, members, 8);
	assert_int_equal(nmembers, 2);
	for (i = 0; i < nmembers; i++)
		assert_int_not_equal(fds[i] = proc_pidfd(members[i]), -1);
	assert_int_not_equal(wfd = proc_pidfd(worker), -1);

	/* The worker is our child: waitid sees it stop, leaving the state. */
	assert_int_equal(kill(worker, SIGSTOP), 0);
	memset(&si, 0, sizeof si);
	assert_int_equal(waitid(P_PID, (id_t)worker, &si,
	    WSTOPPED | WNOWAIT), 0);
	assert_int_equal(si.si_code, CLD_STOPPED);

	t0 = tsupport_clock_ms_f();
	assert_true(fx_stop(fx, job, JOB_CANCELED, SIGTERM, "canceled by "
	    "the test"));
	fx_wait_end(fx, 1);
	t = tsupport_clock_ms_f() - t0;
	print_message("# outcome: %s\n", r->out.reason);
	assert_int_equal(r->out.state, JOB_CANCELED);
	assert_true(r->out.started);
	assert_false(r->out.reaped);
	assert_string_equal(r->out.reason, "canceled by the test; its worker "
	    "did not stop it, so the daemon killed it and replaced the worker");
	assert_true(t >= KILL_GRACE_MS + STUCK_MARGIN_MS - 5);
	/* the job's whole group is gone */
	for (i = 0; i < nmembers; i++)
		proc_assert_exits(fds[i]);
	assert_int_equal(proc_find(0, r->pid, PROC_LIVE, members, 8), 0);
	/* the stopped worker was killed (SIGKILL ends a stopped process) */
	proc_assert_exits(wfd);
	/* and replaced: both workers take a job again */
	fx_start(fx, 2, ARGV("true"));
	fx_start(fx, 3, ARGV("true"));
	assert_int_equal(fx_wait_end(fx, 2)->out.state, JOB_SUCCEEDED);
	assert_int_equal(fx_wait_end(fx, 3)->out.state, JOB_SUCCEEDED);
	assert_int_equal(pool_size(fx->pool), 2);
}

/* Callbacks run from the loop, never inside run_start or run_stop (the
 * fixture's flag), whether the stop finds the run waiting for a worker,
 * handed to one but maybe not started yet, or running. */
static void
test_no_callback_inside_calls(void **state)
{
	struct fx *fx = *state;
	struct rjob *r;
	struct job *job;
	uint64_t id;

	fx_start(fx, 1, ARGV("sleep", "100"));
	fx_start(fx, 2, ARGV("sleep", "100"));
	/* no worker idle: these wait, and are stopped before any is */
	for (id = 3; id <= 5; id++) {
		job = fx_start(fx, id, ARGV("true"));
		assert_true(fx_stop(fx, job, JOB_CANCELED, SIGTERM, "x"));
		assert_int_equal(fx->jobs[id].ended, 0);
	}
	/* handed; their starts may not be reported yet (then the signal
	 * waits for them) */
	WAIT_FOR(fx, pool_busy(fx->pool) == 2);
	assert_true(fx_stop(fx, fx->jobs[1].job, JOB_CANCELED, SIGTERM, "x"));
	assert_true(fx_stop(fx, fx->jobs[2].job, JOB_CANCELED, SIGTERM, "x"));
	assert_int_equal(fx->jobs[1].ended + fx->jobs[2].ended, 0);
	for (id = 1; id <= 5; id++)
		fx_wait_end(fx, id);
	for (id = 1; id <= 5; id++) {
		r = &fx->jobs[id];
		assert_int_equal(r->out.state, JOB_CANCELED);
		assert_string_equal(r->out.reason, "x");
		if (id >= 3)
			assert_false(r->out.started);
		else if (r->out.started)
			assert_int_equal(WTERMSIG(r->out.status), SIGTERM);
	}
	assert_int_equal(run_count(fx->run), 0);
}

/* ---- freeze and thaw ---- */

/* Waits (polling /proc, with a deadline) until pid is stopped (stopped
 * true) or no longer. */
static void
wait_stopped(pid_t pid, bool stopped)
{
	double deadline = tsupport_clock_ms_f() + LOOP_SAFETY_SEC * 1000.0;
	char st = '?';

	for (;;) {
		assert_int_equal(proc_stat(pid, &st, NULL, NULL, NULL), 0);
		if ((st == 'T') == stopped)
			return;
		if (tsupport_clock_ms_f() > deadline)
			fail_msg("pid %ld is in state %c, not %s", (long)pid,
			    st, stopped ? "stopped" : "running");
		usleep(1000);
	}
}

static void
fx_time_up_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(bool *)arg = true;
}

/* Runs the loop for ms, or until job id ends. */
static void
fx_run_for(struct fx *fx, unsigned ms, uint64_t id)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	bool up = false;

	assert_int_equal(event_base_once(fx->loop.base, -1, EV_TIMEOUT,
	    fx_time_up_cb, &up, &tv), 0);
	WAIT_FOR(fx, up || fx->jobs[id].ended);
}

/* A frozen job's timeout clock stops, and runs on at the thaw from where
 * it stopped: frozen for longer than its whole timeout, it is not timed
 * out, and after the thaw it has what was left. */
static void
test_freeze_stops_the_timeout_clock(void **state)
{
	struct fx *fx = *state;
	struct rjob *r = &fx->jobs[1];
	double t0, frozen_at, thawed_at, ended_at, left;
	struct job *job;

	job = fx_job(fx, 1, ARGV("sleep", "100"));
	job->timeout_ms = 1000;
	t0 = tsupport_clock_ms_f();
	fx_start_job(fx, job);
	WAIT_FOR(fx, r->started);
	assert_int_equal(run_freeze(fx->run, job, true), 1);
	frozen_at = tsupport_clock_ms_f();
	if (frozen_at - t0 > 500)
		fail_msg("the job took %.0f ms to start: too slow to test",
		    frozen_at - t0);
	/* Frozen already: nothing to do. */
	assert_int_equal(run_freeze(fx->run, job, true), 0);
	wait_stopped(r->pid, true);
	fx_run_for(fx, 1500, 1);
	assert_int_equal(r->ended, 0);
	wait_stopped(r->pid, true);

	assert_int_equal(run_freeze(fx->run, job, false), 1);
	thawed_at = tsupport_clock_ms_f();
	assert_int_equal(run_freeze(fx->run, job, false), 0);
	wait_stopped(r->pid, false);
	fx_wait_end(fx, 1);
	ended_at = tsupport_clock_ms_f();
	assert_int_equal(r->out.state, JOB_TIMED_OUT);
	assert_string_equal(r->out.reason, "timed out after 1s");
	assert_int_equal(WTERMSIG(r->out.status), SIGTERM);
	/* What was left when it froze, counted from the thaw. */
	left = 1000 - (frozen_at - t0);
	if (ended_at - thawed_at < left - 5)
		fail_msg("timed out %.0f ms after the thaw, with %.0f ms left",
		    ended_at - thawed_at, left);
	assert_true(ended_at - t0 >= 1000 + (thawed_at - frozen_at) - 5);
}

/* A stop ends a frozen job as it would a running one: SIGTERM, which it
 * takes at once (thawed for it), not kill_grace's SIGKILL. */
static void
test_stop_ends_a_frozen_job(void **state)
{
	struct fx *fx = *state;
	struct rjob *r = &fx->jobs[1];
	struct job *job;

	job = fx_start(fx, 1, ARGV("sleep", "100"));
	WAIT_FOR(fx, r->started);
	assert_int_equal(run_freeze(fx->run, job, true), 1);
	wait_stopped(r->pid, true);
	assert_true(fx_stop(fx, job, JOB_CANCELED, SIGTERM, "canceled"));
	/* Being stopped: neither frozen again nor thawed by a caller. */
	assert_int_equal(run_freeze(fx->run, job, true), 0);
	assert_int_equal(run_freeze(fx->run, job, false), 0);
	fx_wait_end(fx, 1);
	assert_int_equal(r->out.state, JOB_CANCELED);
	assert_true(WIFSIGNALED(r->out.status));
	assert_int_equal(WTERMSIG(r->out.status), SIGTERM);

	/* Deaf to SIGTERM, frozen: kill_grace's SIGKILL ends it. One
	 * process (an ignored signal stays so across exec): a shell stopped
	 * while it waits for a vforked child is not in state T. */
	job = fx_start(fx, 2, ARGV("sh", "-c", "trap '' TERM; echo ready "
	    ">\"$0\"; exec sleep 100", loop_fifo(&fx->loop)));
	r = &fx->jobs[2];
	WAIT_FOR(fx, r->started && strchr(fx->loop.fifo_buf, '\n') != NULL);
	assert_int_equal(run_freeze(fx->run, job, true), 1);
	wait_stopped(r->pid, true);
	assert_true(fx_stop(fx, job, JOB_TIMED_OUT, SIGTERM, "timed out"));
	fx_wait_end(fx, 2);
	assert_int_equal(r->out.state, JOB_TIMED_OUT);
	assert_int_equal(WTERMSIG(r->out.status), SIGKILL);
	assert_int_equal(run_count(fx->run), 0);
}

/* Nothing to freeze: no run, or a run that has ended. */
static void
test_freeze_without_a_run(void **state)
{
	struct fx *fx = *state;
	struct job *job;

	job = fx_job(fx, 1, ARGV("true"));
	assert_int_equal(run_freeze(fx->run, job, true), 0);
	fx_start_job(fx, job);
	fx_wait_end(fx, 1);
	assert_int_equal(run_freeze(fx->run, job, true), 0);
	assert_int_equal(run_freeze(fx->run, job, false), 0);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_success),
		T(test_exit_status),
		T(test_killed_by_signal),
		T(test_cannot_exec),
		T(test_environment),
		T(test_environment_of_devices),
		T(test_stop_running),
		T(test_stop_deaf_gets_sigkill),
		T(test_timeout),
		T(test_stop_before_handed),
		T(test_fifo_order),
		T(test_stuck_worker),
		T(test_no_callback_inside_calls),
		T(test_freeze_stops_the_timeout_clock),
		T(test_stop_ends_a_frozen_job),
		T(test_freeze_without_a_run),
	};

	/* the pool's contract: a dead worker's socket is an error, not a
	 * signal */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
