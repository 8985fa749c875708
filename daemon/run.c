/* run.c - a job between its grant and its end: handed to a worker, watched
 * for its timeout, signalled on cancel, and its outcome reported back. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "capture.h"
#include "cgroups.h"
#include "config.h"
#include "log.h"
#include "pool.h"
#include "resenv.h"
#include "run.h"
#include "timefmt.h"
#include "units.h"
#include "waitstatus.h"

/* A worker that has acted on nothing this long after SIGKILL was asked of
 * it is stuck (stopped, say): the daemon kills the job itself. */
#define RUN_STUCK_MARGIN_MS 2000
/* A worker that has not started its job this long after it got it. */
#define RUN_START_DEADLINE_MS 60000

struct jobrun {
	struct run *run;
	struct job *job;
	struct run_job_opts opts;
	TAILQ_ENTRY(jobrun) entry;	/* in run->list */
	bool handed;			/* a worker has it */
	bool started;			/* its process exists */
	bool killed;			/* SIGKILL was asked for */
	bool frozen;			/* its processes are (run_freeze) */
	int pending_signal;		/* to send once it has started */
	enum job_state stop_as;		/* JOB_QUEUED: not being stopped */
	char stop_reason[256];
	char abandoned[160];		/* why the daemon killed it itself */
	struct event *timeout_ev;
	/* The timeout's clock: while it runs, when it ends
	 * (CLOCK_MONOTONIC, us); while the run is frozen, what is left of
	 * it. */
	uint64_t timeout_due_us;
	uint64_t timeout_left_us;
	struct event *kill_ev;		/* SIGKILL, then giving up on the worker */
	struct event *start_ev;		/* the worker's deadline to start it */
};

struct run {
	struct event_base *base;
	struct pool *pool;
	struct run_params params;
	char *output_dir;
	struct run_callbacks cb;
	void *arg;
	uint32_t groups_epoch;		/* reloads: pool_spec's */
	struct event *service_ev;	/* hands out, and ends unhanded stops */
	TAILQ_HEAD(, jobrun) list;	/* in the order they were granted */
	unsigned n;
};

static void run_timeout_cb(evutil_socket_t, short, void *);
static void run_finished_cb(uint64_t, const struct pool_result *, void *);
static void run_timeout_hold(struct jobrun *, bool);
static void run_kill_cb(evutil_socket_t, short, void *);
static void run_start_deadline_cb(evutil_socket_t, short, void *);
static const struct pool_callbacks run_pool_callbacks;

static struct jobrun *
run_find_id(const struct run *run, uint64_t id)
{
	struct jobrun *jr;

	TAILQ_FOREACH(jr, &run->list, entry)
		if (jr->job->id == id)
			return jr;
	return NULL;
}

static void
run_jobrun_free(struct jobrun *jr)
{
	struct run *run = jr->run;

	TAILQ_REMOVE(&run->list, jr, entry);
	run->n--;
	if (jr->timeout_ev != NULL)
		event_free(jr->timeout_ev);
	if (jr->kill_ev != NULL)
		event_free(jr->kill_ev);
	if (jr->start_ev != NULL)
		event_free(jr->start_ev);
	free(jr);
}

/* The jobs' cgroups, NULL when jobs run without. */
static const struct cgroups *
run_cgroups(const struct run *run)
{
	const struct cgroups *cg = run->params.cgroups;

	return cg != NULL && cgroups_mode(cg) != CGROUPS_NONE ? cg : NULL;
}

/* The job's `cgroup` while its process runs (in), NULL otherwise. Out of
 * memory, the field stays empty: the run goes on. */
static void
run_name_cgroup(const struct jobrun *jr, bool in)
{
	const struct cgroups *cg = run_cgroups(jr->run);
	char path[PATH_MAX];

	if (cg == NULL)
		return;
	if (in)
		cgroups_job_path(cg, jr->job->id, jr->job->attempt, path,
		    sizeof path);
	if (job_set_cgroup(jr->job, in ? path : NULL) == -1)
		log_warnx("job %llu: out of memory for its cgroup's name",
		    (unsigned long long)jr->job->id);
}

/* The run is over: it lets go of the job, and the owner decides. */
static void
run_end(struct jobrun *jr, struct run_outcome *out)
{
	struct run *run = jr->run;
	struct job *job = jr->job;

	out->handed = jr->handed;
	run_name_cgroup(jr, false);
	run_jobrun_free(jr);
	run->cb.ended_cb(job, out, run->arg);
}

static void
run_outcome_init(struct run_outcome *out)
{
	memset(out, 0, sizeof *out);
	out->user_time = out->system_time = -1;
	out->max_rss_kb = -1;
	out->peak_memory = -1;
}

int64_t
run_outcome_peak(const struct run_outcome *out)
{
	if (out->peak_memory >= 0)
		return out->peak_memory;
	return out->max_rss_kb >= 0 ? out->max_rss_kb * 1024 : -1;
}

/* How a run that ended without a process of its own is told: as it was
 * stopped, else failed for why. */
static void
run_end_unstarted(struct jobrun *jr, const char *why)
{
	struct run_outcome out;

	run_outcome_init(&out);
	out.state = jr->stop_as != JOB_QUEUED ? jr->stop_as : JOB_FAILED;
	snprintf(out.reason, sizeof out.reason, "%s",
	    jr->stop_as != JOB_QUEUED ? jr->stop_reason : why);
	run_end(jr, &out);
}

/* The TRIAGE_* variables every job gets, in buffers of their own, and
 * those of the units it was given (resenv.h), allocated. */
struct run_vars {
	char id[48];
	char priority[24 + CONFIG_PRIORITY_NAME_MAX];
	char attempt[32];
	char **devices;
};

/* The result file's name, as the job's process finds it (pool-spec.h). */
static char run_result_var[] = "TRIAGE_RESULT=" POOL_RESULT_PATH;

/* TRIAGE_RESULT among them, whether or not the job gets one: a job
 * submitted from within another (the CLI sends the caller's environment)
 * must never write into the other's result. */
static bool
run_is_ours(const char *var)
{
	return strncmp(var, "TRIAGE_JOB_ID=", 14) == 0 ||
	    strncmp(var, "TRIAGE_PRIORITY=", 16) == 0 ||
	    strncmp(var, "TRIAGE_ATTEMPT=", 15) == 0 ||
	    strncmp(var, "TRIAGE_RESULT=", 14) == 0;
}

/* The config whose resources name the variables of a job's units: the
 * daemon's as it is now, a reload having replaced the one at the start;
 * NULL without one. */
static const struct config *
run_config(const struct run *run)
{
	return run->params.cfg != NULL ? *run->params.cfg : NULL;
}

/* The whole environment: the job's own, then TRIAGE_* and the variables
 * of its units, which win over any of the job's of the same name. The
 * array is allocated; its strings are borrowed from job and vars, whose
 * devices the caller frees with resenv_free. NULL with errno (ENOMEM, or
 * EINVAL for devices that make no variables). */
static char **
run_envp(const struct run *run, const struct job *job, struct run_vars *vars)
{
	size_t n = 0, ndev = 0, i, k = 0;
	char **envp;

	if (resenv_vars(job->extra->devices, run_config(run),
	    &vars->devices) == -1)
		return NULL;
	while (vars->devices[ndev] != NULL)
		ndev++;
	while (job->env != NULL && job->env[n] != NULL)
		n++;
	if ((envp = calloc(n + 5 + ndev, sizeof *envp)) == NULL) {
		resenv_free(vars->devices);
		vars->devices = NULL;
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!run_is_ours(job->env[i]) &&
		    !resenv_sets(vars->devices, job->env[i]))
			envp[k++] = job->env[i];
	snprintf(vars->id, sizeof vars->id, "TRIAGE_JOB_ID=%llu",
	    (unsigned long long)job->id);
	snprintf(vars->priority, sizeof vars->priority, "TRIAGE_PRIORITY=%s",
	    job->priority);
	snprintf(vars->attempt, sizeof vars->attempt, "TRIAGE_ATTEMPT=%u",
	    job->attempt);
	envp[k++] = vars->id;
	envp[k++] = vars->priority;
	envp[k++] = vars->attempt;
	if (run->params.max_result > 0)
		envp[k++] = run_result_var;
	for (i = 0; i < ndev; i++)
		envp[k++] = vars->devices[i];
	return envp;
}

static void
run_unlink(const char *path)
{
	if (unlink(path) == -1 && errno != ENOENT)
		log_warn("cannot remove %s", path);
}

/* Hands the run to an idle worker. Returns 0, or -1 with errno EAGAIN when
 * none is idle (it stays waiting) or another errno (it cannot run). */
static int
run_hand(struct jobrun *jr)
{
	struct run *run = jr->run;
	struct job *job = jr->job;
	struct timeval tv = timefmt_tv(RUN_START_DEADLINE_MS);
	struct pool_spec spec;
	char out[4096], err[4096];
	struct run_vars vars;
	char **envp;
	int rc;

	if ((envp = run_envp(run, job, &vars)) == NULL)
		return -1;
	snprintf(out, sizeof out, "%s/%llu.stdout", run->output_dir,
	    (unsigned long long)job->id);
	snprintf(err, sizeof err, "%s/%llu.stderr", run->output_dir,
	    (unsigned long long)job->id);
	memset(&spec, 0, sizeof spec);
	spec.job_id = job->id;
	spec.argv = (const char *const *)job->argv;
	spec.envp = (const char *const *)envp;
	spec.cwd = job->cwd;
	spec.set_creds = run->params.set_creds;
	spec.no_new_privs = run->params.no_new_privs;
	spec.uid = jr->opts.as_user ? jr->opts.uid : job->uid;
	spec.gid = jr->opts.as_user ? jr->opts.gid : job->gid;
	spec.groups_epoch = run->groups_epoch;
	spec.stdout_path = out;
	spec.stderr_path = err;
	spec.max_output = run->params.max_output;
	spec.max_result = run->params.max_result;
	spec.keep_tail = jr->opts.keep_tail;
	spec.merge_output = job->merge_output;
	spec.nice = job->nice;
	spec.io_idle = jr->opts.io_idle;
	spec.cgroup = run_cgroups(run) != NULL;
	spec.attempt = job->attempt;
	spec.memory_max = jr->opts.memory_max;
	spec.pids_max = jr->opts.pids_max;
	spec.cpu_weight = jr->opts.cpu_weight;
	/* From now on the files are the new attempt's (run_handed): the
	 * last attempt's output must not pass for it. Its worker makes a
	 * stream's file only at the stream's first byte, and one that writes
	 * nothing makes none: the last attempt's go now, before the new one
	 * can write, and the worker never reuses a file it finds (see
	 * worker_stream_open). A first attempt has no last one (a begun one
	 * comes back from a crash as the next), and its unlinks would only
	 * take the directory's lock from the workers creating files in it. */
	if (job->attempt > 1) {
		run_unlink(out);
		run_unlink(err);
	}
	rc = pool_start(run->pool, &spec);
	free(envp);
	resenv_free(vars.devices);
	if (rc != 0)
		return rc;
	jr->handed = true;
	jr->start_ev = evtimer_new(run->base, run_start_deadline_cb, jr);
	if (jr->start_ev == NULL || evtimer_add(jr->start_ev, &tv) != 0)
		log_warnx("job %llu: cannot arm its start deadline",
		    (unsigned long long)job->id);
	return 0;
}

/* Ends the stopped runs no worker has, and hands the others to idle
 * workers, oldest first. */
static void
run_service(struct run *run)
{
	struct jobrun *jr, *next;
	char why[320];

	for (jr = TAILQ_FIRST(&run->list); jr != NULL; jr = next) {
		next = TAILQ_NEXT(jr, entry);
		if (jr->handed)
			continue;
		if (jr->stop_as != JOB_QUEUED) {
			run_end_unstarted(jr, "");
			continue;
		}
		if (run_hand(jr) == 0)
			continue;
		if (errno == EAGAIN)
			continue;	/* a later one may be ending */
		snprintf(why, sizeof why, "cannot hand it to a worker: %s",
		    strerror(errno));
		log_warnx("job %llu: %s", (unsigned long long)jr->job->id,
		    why);
		run_end_unstarted(jr, why);
	}
}

static void
run_service_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	run_service(arg);
}

static void
run_service_later(struct run *run)
{
	static const struct timeval now = { 0, 0 };

	evtimer_add(run->service_ev, &now);
}

static void
run_set_params(struct run *run, const struct run_params *params)
{
	char *dir = strdup(params->output_dir);

	if (dir == NULL)
		return;		/* the old ones stay */
	free(run->output_dir);
	run->output_dir = dir;
	run->params = *params;
	run->params.output_dir = run->output_dir;
}

void
run_set_limits(struct run *run, uint64_t kill_grace_ms, uint64_t max_output,
    uint64_t max_result, bool no_new_privs)
{
	run->params.kill_grace_ms = kill_grace_ms;
	run->params.max_output = max_output;
	run->params.max_result = max_result;
	run->params.no_new_privs = no_new_privs;
	/* A reload is when an admin expects a change of /etc/group (or
	 * what NSS reads) to take: the workers look the groups up again. */
	run->groups_epoch++;
}

struct run *
run_new(struct event_base *base, struct pool *pool,
    const struct run_params *params, const struct run_callbacks *cb,
    void *arg)
{
	struct run *run;

	if ((run = calloc(1, sizeof *run)) == NULL)
		return NULL;
	run->base = base;
	run->pool = pool;
	run->cb = *cb;
	run->arg = arg;
	TAILQ_INIT(&run->list);
	if ((run->service_ev = evtimer_new(base, run_service_cb, run)) == NULL) {
		free(run);
		return NULL;
	}
	run_set_params(run, params);
	if (run->output_dir == NULL) {
		run_free(run);
		return NULL;
	}
	pool_set_callbacks(pool, &run_pool_callbacks, run);
	return run;
}


void
run_free(struct run *run)
{
	struct jobrun *jr;

	if (run == NULL)
		return;
	while ((jr = TAILQ_FIRST(&run->list)) != NULL)
		run_jobrun_free(jr);
	event_free(run->service_ev);
	free(run->output_dir);
	free(run);
}

/* True when a run granted before jr still waits for a worker. */
static bool
run_waiting_before(const struct run *run, const struct jobrun *jr)
{
	const struct jobrun *it;

	TAILQ_FOREACH(it, &run->list, entry) {
		if (it == jr)
			return false;
		if (!it->handed)
			return true;
	}
	return false;
}

/* A run of job, not listed yet; with a timeout timer when timed and the
 * job has a timeout, due left_ms from now. NULL out of memory. */
static struct jobrun *
run_jobrun_new(struct run *run, struct job *job,
    const struct run_job_opts *opts, bool timed, uint64_t left_ms)
{
	struct jobrun *jr;
	struct timeval tv;

	if ((jr = calloc(1, sizeof *jr)) == NULL)
		return NULL;
	jr->run = run;
	jr->job = job;
	jr->opts = *opts;
	jr->stop_as = JOB_QUEUED;
	if (!timed || job->timeout_ms == 0)
		return jr;
	tv = timefmt_tv(left_ms);
	jr->timeout_due_us = timefmt_mono_us() + left_ms * 1000;
	if ((jr->timeout_ev = evtimer_new(run->base, run_timeout_cb, jr)) ==
	    NULL || evtimer_add(jr->timeout_ev, &tv) != 0) {
		if (jr->timeout_ev != NULL)
			event_free(jr->timeout_ev);
		free(jr);
		return NULL;
	}
	return jr;
}

int
run_start(struct run *run, struct job *job, const struct run_job_opts *opts)
{
	struct jobrun *jr;

	if ((jr = run_jobrun_new(run, job, opts, true, job->timeout_ms)) ==
	    NULL)
		return -1;
	TAILQ_INSERT_TAIL(&run->list, jr, entry);
	run->n++;
	/* Straight to an idle worker when none waits before it: a turn of
	 * the loop later, a commit waiting for the disk may come first. A
	 * failure is the service's to handle, from the loop. */
	if (!run_waiting_before(run, jr) && run_hand(jr) == 0)
		return 0;
	run_service_later(run);
	return 0;
}

int
run_adopt(struct run *run, struct job *job, const struct run_job_opts *opts,
    const struct run_adoptee *from)
{
	struct jobrun *jr;
	int64_t ran = 0;

	/* Its timeout runs from its start, not from the adoption: what the
	 * clock of the wall says it has run already is spent. One that
	 * ended meanwhile needs none. */
	if (job->run->started_at >= 0)
		ran = timefmt_now() - job->run->started_at;
	if (ran < 0)
		ran = 0;
	jr = run_jobrun_new(run, job, opts, from->ended == NULL,
	    (uint64_t)ran >= job->timeout_ms ? 0 : job->timeout_ms -
	    (uint64_t)ran);
	if (jr == NULL)
		return -1;
	jr->handed = jr->started = true;
	if (from->ended == NULL && pool_adopt(run->pool, from->fd,
	    from->worker, job->id, from->pid, from->exited) != 0) {
		if (jr->timeout_ev != NULL)
			event_free(jr->timeout_ev);
		free(jr);
		return -1;
	}
	TAILQ_INSERT_TAIL(&run->list, jr, entry);
	run->n++;
	run_name_cgroup(jr, true);
	/* Frozen it stays (its processes still are), and its timeout's clock
	 * stands still from now on, as for any frozen run. */
	if (job->frozen && from->ended == NULL) {
		jr->frozen = true;
		run_timeout_hold(jr, true);
	}
	/* One whose start had not reached the store yet is running now. */
	if (job->state != JOB_RUNNING)
		run->cb.started_cb(job, from->pid, from->start_ticks, run->arg);
	if (from->ended != NULL)
		run_finished_cb(job->id, from->ended, run);
	return 0;
}

/*
 * Freezes the run's processes, or thaws them: its cgroup's freezer, which
 * holds every process of it where they stand (none can tell, nor escape
 * by a fork); without one, SIGSTOP or SIGCONT to its process group
 * (protocol.md). 0, or -1 with errno (ESRCH: it has just ended).
 */
static int
run_freeze_procs(struct jobrun *jr, bool freeze)
{
	const struct cgroups *cg = run_cgroups(jr->run);

	if (cg != NULL && cgroups_can_freeze(cg)) {
		if (cgroups_job_freeze(cg, jr->job->id, jr->job->attempt,
		    freeze) == 0)
			return 0;
		if (errno == ENOENT)
			errno = ESRCH;	/* its cgroup is gone: it ended */
		return -1;
	}
	return pool_signal(jr->run->pool, jr->job->id, freeze ? SIGSTOP :
	    SIGCONT);
}

static void
run_signal(struct jobrun *jr, int sig)
{
	if (sig == SIGKILL)
		jr->killed = true;
	if (!jr->started) {
		if (jr->pending_signal != SIGKILL)
			jr->pending_signal = sig;
		return;
	}
	/* ESRCH: it has just ended, and the report is on its way. */
	if (pool_signal(jr->run->pool, jr->job->id, sig) != 0 &&
	    errno != ESRCH)
		log_warn("job %llu: cannot signal it",
		    (unsigned long long)jr->job->id);
	/* A frozen job takes no signal but SIGKILL until it is thawed:
	 * whatever stops it must end it, so it is thawed to take it. */
	if (jr->frozen && run_freeze_procs(jr, false) == 0)
		jr->frozen = false;
}

bool
run_stop(struct run *run, struct job *job, enum job_state as, int sig,
    const char *reason)
{
	struct jobrun *jr = run_find_id(run, job->id);
	struct timeval tv = timefmt_tv(run->params.kill_grace_ms);

	if (jr == NULL)
		return false;
	if (jr->stop_as != JOB_QUEUED)
		return true;	/* on its way out already */
	jr->stop_as = as;
	snprintf(jr->stop_reason, sizeof jr->stop_reason, "%s", reason);
	if (!jr->handed) {
		run_service_later(run);
		return true;
	}
	run_signal(jr, sig);
	if (sig == SIGKILL)
		tv = timefmt_tv(RUN_STUCK_MARGIN_MS);
	jr->kill_ev = evtimer_new(run->base, run_kill_cb, jr);
	if (jr->kill_ev == NULL || evtimer_add(jr->kill_ev, &tv) != 0)
		run_signal(jr, SIGKILL);
	return true;
}

/* Everything in the job's cgroup killed by the daemon itself: its worker
 * is stuck or gone. What is left of the cgroup, the next start (or this
 * daemon's stop) removes. */
static void
run_kill_cgroup(const struct jobrun *jr)
{
	const struct cgroups *cg = run_cgroups(jr->run);

	if (cg != NULL && jr->started &&
	    cgroups_job_kill(cg, jr->job->id, jr->job->attempt) == -1 &&
	    errno != ENOENT)
		log_warn("job %llu: cannot kill its cgroup",
		    (unsigned long long)jr->job->id);
}

/* The worker cannot be trusted with the job any more: the pool kills the
 * job's process group and the worker, and lost_cb ends the run. */
static void
run_abandon(struct jobrun *jr, const char *what, const char *span)
{
	char cause[160];

	snprintf(jr->abandoned, sizeof jr->abandoned, "its worker did not %s "
	    "it within %s", what, span);
	snprintf(cause, sizeof cause, "did not %s job %llu within %s", what,
	    (unsigned long long)jr->job->id, span);
	log_warnx("job %llu: %s; the daemon kills its process group and "
	    "replaces the worker", (unsigned long long)jr->job->id,
	    jr->abandoned);
	if (pool_abandon(jr->run->pool, jr->job->id, cause) != 0)
		log_warnx("job %llu: no worker has it",
		    (unsigned long long)jr->job->id);
	run_kill_cgroup(jr);
}

static void
run_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct jobrun *jr = arg;
	struct timeval tv = timefmt_tv(RUN_STUCK_MARGIN_MS);
	char span[UNITS_FORMAT_MAX];

	(void)fd;
	(void)what;
	if (!jr->killed) {
		log_info("job %llu: still there after kill_grace, sending "
		    "SIGKILL", (unsigned long long)jr->job->id);
		run_signal(jr, SIGKILL);
		if (evtimer_add(jr->kill_ev, &tv) == 0)
			return;
	}
	units_format_duration(jr->run->params.kill_grace_ms +
	    RUN_STUCK_MARGIN_MS, span, sizeof span);
	run_abandon(jr, "stop", span);
}

static void
run_start_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct jobrun *jr = arg;
	char span[UNITS_FORMAT_MAX];

	(void)fd;
	(void)what;
	if (jr->started)
		return;
	units_format_duration(RUN_START_DEADLINE_MS, span, sizeof span);
	run_abandon(jr, "start", span);
}

static void
run_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct jobrun *jr = arg;
	char span[UNITS_FORMAT_MAX], reason[64];

	(void)fd;
	(void)what;
	units_format_duration(jr->job->timeout_ms, span, sizeof span);
	snprintf(reason, sizeof reason, "timed out after %s", span);
	log_info("job %llu: %s", (unsigned long long)jr->job->id, reason);
	run_stop(jr->run, jr->job, JOB_TIMED_OUT, SIGTERM, reason);
}

/* Stops the timeout's clock of a run being frozen, or (freeze false) starts
 * it again with what was left: a frozen job's time does not count. */
static void
run_timeout_hold(struct jobrun *jr, bool freeze)
{
	uint64_t now = timefmt_mono_us();
	struct timeval tv;

	if (jr->timeout_ev == NULL)
		return;
	if (freeze) {
		evtimer_del(jr->timeout_ev);
		jr->timeout_left_us = jr->timeout_due_us > now ?
		    jr->timeout_due_us - now : 0;
		return;
	}
	jr->timeout_due_us = now + jr->timeout_left_us;
	tv.tv_sec = (time_t)(jr->timeout_left_us / 1000000);
	tv.tv_usec = (suseconds_t)(jr->timeout_left_us % 1000000);
	if (evtimer_add(jr->timeout_ev, &tv) != 0) {
		log_warnx("job %llu: cannot arm its timeout again: it times "
		    "out now", (unsigned long long)jr->job->id);
		run_timeout_cb(-1, EV_TIMEOUT, jr);
	}
}

int
run_freeze(struct run *run, struct job *job, bool freeze)
{
	struct jobrun *jr = run_find_id(run, job->id);

	/* Not started, it is not running: nothing to freeze. Being stopped,
	 * it stays as its stop left it. */
	if (jr == NULL || !jr->started || jr->stop_as != JOB_QUEUED ||
	    jr->frozen == freeze)
		return 0;
	if (run_freeze_procs(jr, freeze) != 0)
		return errno == ESRCH ? 0 : -1;
	jr->frozen = freeze;
	run_timeout_hold(jr, freeze);
	return 1;
}

void
run_ack(struct run *run, uint64_t id)
{
	pool_ack(run->pool, id);
}

bool
run_has(const struct run *run, const struct job *job)
{
	return run_find_id(run, job->id) != NULL;
}

bool
run_handed(const struct run *run, const struct job *job)
{
	const struct jobrun *jr = run_find_id(run, job->id);

	return jr != NULL && jr->handed;
}

unsigned
run_count(const struct run *run)
{
	return run->n;
}

struct run_workers
run_workers(const struct run *run)
{
	return (struct run_workers){ pool_size(run->pool),
	    pool_busy(run->pool) };
}

unsigned
run_output_attempt(const struct run *run, const struct job *job)
{
	bool fresh = (job->run->begun && job->state != JOB_QUEUED) ||
	    run_handed(run, job);

	return job->attempt > 1 && !fresh ? job->attempt - 1 : job->attempt;
}

/* A negative offset counts back from the end: from 0 when the stream is
 * shorter. */
static int64_t
run_output_offset(int64_t offset, off_t size)
{
	if (offset >= 0)
		return offset;
	/* size >= 0: no overflow, even from INT64_MIN */
	return size + offset < 0 ? 0 : size + offset;
}

int
run_output_read(const struct run *run, uint64_t id, const char *stream,
    int64_t offset, size_t limit, struct run_output_page *pg,
    const char **what)
{
	struct capture c;
	unsigned char *buf = NULL;
	ssize_t got = 0;
	int saved;

	if (capture_open(&c, run->output_dir, id, stream, what) != 0)
		return -1;
	*what = "read";
	pg->offset = run_output_offset(offset, c.size);
	/* Past the end there is nothing to read (and pread refuses offsets
	 * past what a file can hold). */
	if (c.fd != -1 && pg->offset < c.size && ((buf = malloc(limit)) ==
	    NULL || (got = capture_read(&c, buf, limit, (off_t)pg->offset))
	    < 0)) {
		capture_close(&c);
		saved = errno;
		free(buf);
		errno = saved;
		return -1;
	}
	capture_close(&c);
	pg->buf = buf;
	pg->got = (size_t)got;
	pg->size = (uint64_t)c.size;
	pg->dropped = c.dropped;
	return 0;
}

static struct jobrun *
run_reported(struct run *run, uint64_t job_id, const char *what)
{
	struct jobrun *jr = run_find_id(run, job_id);

	if (jr == NULL || !jr->handed)
		log_warnx("a worker reported %s of job %llu, which it does "
		    "not run", what, (unsigned long long)job_id);
	return jr != NULL && jr->handed ? jr : NULL;
}

static void
run_started_cb(uint64_t job_id, pid_t pid, uint64_t start_ticks, void *arg)
{
	struct run *run = arg;
	struct jobrun *jr = run_reported(run, job_id, "the start");

	if (jr == NULL)
		return;
	jr->started = true;
	if (jr->start_ev != NULL)
		evtimer_del(jr->start_ev);
	run_name_cgroup(jr, true);
	run->cb.started_cb(jr->job, pid, start_ticks, run->arg);
	if (jr->pending_signal != 0)
		run_signal(jr, jr->pending_signal);
}

/* A size as a sentence says it: "64 MiB" (the config's "64MiB"). */
static void
run_size_words(uint64_t bytes, char *buf, size_t size)
{
	char text[UNITS_FORMAT_MAX];
	size_t digits;

	units_format_size(bytes, text, sizeof text);
	digits = strspn(text, "0123456789.");
	snprintf(buf, size, "%.*s%s%s", (int)digits, text,
	    text[digits] != '\0' ? " " : "", text + digits);
}

/* "killed: out of memory, limit 64 MiB, peak 64 MiB"; a job without a
 * limit of its own met the kernel's. */
static void
run_oom_reason(const struct jobrun *jr, const struct pool_result *res,
    char *buf, size_t size)
{
	char limit[UNITS_FORMAT_MAX + 1], peak[UNITS_FORMAT_MAX + 1];

	if (res->peak_memory >= 0)
		run_size_words((uint64_t)res->peak_memory, peak, sizeof peak);
	if (jr->opts.memory_max != 0) {
		run_size_words(jr->opts.memory_max, limit, sizeof limit);
		snprintf(buf, size, "killed: out of memory, limit %s%s%s",
		    limit, res->peak_memory >= 0 ? ", peak " : "",
		    res->peak_memory >= 0 ? peak : "");
	} else
		snprintf(buf, size, "killed: out of memory (the kernel's OOM "
		    "killer, no limit of its own)%s%s", res->peak_memory >= 0 ?
		    ", peak " : "", res->peak_memory >= 0 ? peak : "");
}

/* The processes its main one left in its cgroup, killed then, after the
 * reason there is ("exit code 1; 3 processes it left running were
 * killed"). */
static void
run_left_reason(unsigned left, char *buf, size_t size)
{
	size_t len = strlen(buf);

	if (left == 0)
		return;
	snprintf(buf + len, size - len, "%s%u process%s it left running "
	    "%s killed", len > 0 ? "; " : "", left, left == 1 ? "" : "es",
	    left == 1 ? "was" : "were");
}

static void
run_finished_cb(uint64_t job_id, const struct pool_result *res, void *arg)
{
	struct run *run = arg;
	struct jobrun *jr = run_reported(run, job_id, "the end");
	struct run_outcome out;

	if (jr == NULL) {
		run_service(run);
		return;
	}
	if (!res->started) {
		run_end_unstarted(jr, res->error);
		run_service(run);
		return;
	}
	run_outcome_init(&out);
	out.started = out.reaped = true;
	out.status = res->status;
	out.user_time = res->user_time;
	out.system_time = res->system_time;
	out.max_rss_kb = res->max_rss_kb;
	out.stdout_truncated = res->stdout_truncated;
	out.stderr_truncated = res->stderr_truncated;
	out.stdout_dropped = res->stdout_dropped;
	out.stderr_dropped = res->stderr_dropped;
	out.lease_ended = res->lease_ended;
	out.peak_memory = res->peak_memory;
	out.oom = res->oom;
	out.left = res->left;
	out.result = res->result;
	out.result_len = res->result_len;
	out.result_truncated = res->result_truncated;
	if (jr->stop_as != JOB_QUEUED) {
		out.state = jr->stop_as;
		snprintf(out.reason, sizeof out.reason, "%s", jr->stop_reason);
	} else if (WIFEXITED(res->status) && WEXITSTATUS(res->status) == 0)
		out.state = JOB_SUCCEEDED;
	else {
		out.state = JOB_FAILED;
		if (res->oom)
			run_oom_reason(jr, res, out.reason, sizeof out.reason);
		else
			waitstatus_describe(res->status, out.reason,
			    sizeof out.reason);
	}
	run_left_reason(res->left, out.reason, sizeof out.reason);
	run_end(jr, &out);
	run_service(run);
}

static void
run_lost_cb(uint64_t job_id, const char *why, void *arg)
{
	struct run *run = arg;
	struct jobrun *jr = run_reported(run, job_id, "the loss");
	struct run_outcome out;

	if (jr == NULL)
		return;
	run_outcome_init(&out);
	out.started = jr->started;
	if (jr->stop_as != JOB_QUEUED) {
		out.state = jr->stop_as;
		snprintf(out.reason, sizeof out.reason, "%s; %s", jr->stop_reason,
		    jr->abandoned[0] != '\0' ? "its worker did not stop it, so "
		    "the daemon killed it and replaced the worker" : why);
	} else {
		out.state = JOB_FAILED;
		snprintf(out.reason, sizeof out.reason, "%s", why);
	}
	log_warnx("job %llu: %s", (unsigned long long)job_id, why);
	run_kill_cgroup(jr);
	run_end(jr, &out);
}

static void
run_idle_cb(void *arg)
{
	run_service(arg);
}

static void
run_error_cb(const char *msg, void *arg)
{
	(void)arg;
	log_warnx("worker pool: %s", msg);
}

static const struct pool_callbacks run_pool_callbacks = {
	.started_cb = run_started_cb,
	.finished_cb = run_finished_cb,
	.lost_cb = run_lost_cb,
	.idle_cb = run_idle_cb,
	.error_cb = run_error_cb,
};

void
run_set_lease(struct run *run, const struct job *job, uint64_t until_us)
{
	struct jobrun *jr;

	TAILQ_FOREACH(jr, &run->list, entry)
		if (jr->handed && (job == NULL || jr->job == job))
			(void)pool_lease(run->pool, jr->job->id, until_us,
			    run->params.kill_grace_ms);
}
