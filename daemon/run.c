/* run.c - a job between its grant and its end: handed to a worker, watched
 * for its timeout, signalled on cancel, and finished from the worker's report. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <event2/event.h>

#include "config.h"
#include "jobs.h"
#include "log.h"
#include "pool.h"
#include "psem.h"
#include "run.h"
#include "shutdown.h"
#include "store.h"
#include "triaged.h"
#include "units.h"

struct jobrun {
	struct triaged *td;
	struct job *job;
	TAILQ_ENTRY(jobrun) entry;	/* in run_list */
	bool handed;			/* a worker has it */
	bool started;			/* its process exists */
	int pending_signal;		/* to send once it has started */
	enum job_state outcome;		/* when we stop it ourselves; else 0 */
	struct event *timeout_ev;
	struct event *kill_ev;
};

/* Every run, in the order they were granted: those not yet handed to a
 * worker (none was idle) are handed in that order. */
static TAILQ_HEAD(, jobrun) run_list = TAILQ_HEAD_INITIALIZER(run_list);

static void run_timeout_cb(evutil_socket_t, short, void *);
static void run_kill_cb(evutil_socket_t, short, void *);

static void
run_free(struct jobrun *run)
{
	TAILQ_REMOVE(&run_list, run, entry);
	if (run->timeout_ev != NULL)
		event_free(run->timeout_ev);
	if (run->kill_ev != NULL)
		event_free(run->kill_ev);
	run->job->run = NULL;
	free(run);
}

/*
 * The run is over: its slots go back, and the job takes its final state,
 * or another attempt when it failed with retries left, or (stopping under
 * shutdown = requeue) a place at the head of its queue for the next start.
 */
static void
run_end(struct jobrun *run, enum job_state state)
{
	struct triaged *td = run->td;
	struct job *job = run->job;

	run_free(run);
	if (psem_release(td->sem, &job->waiter) != 0)
		log_warnx("job %llu: ended holding no slots",
		    (unsigned long long)job->id);
	if ((state == JOB_FAILED || state == JOB_TIMED_OUT) &&
	    job->retries > 0 && td->phase == TRIAGED_RUNNING) {
		job->retries--;
		job_set_reason(job, "attempt %u %s: %s", job->attempt,
		    job_state_name(state), job->reason ? job->reason : "?");
		log_info("job %llu: %s; %u retries left",
		    (unsigned long long)job->id, job->reason, job->retries);
		jobs_requeue(td, job, false);
		jobs_enqueue(td, job);
		return;
	}
	if (state == JOB_LOST && td->phase == TRIAGED_STOPPING &&
	    td->cfg->shutdown == CONFIG_SHUTDOWN_REQUEUE) {
		job_set_reason(job, NULL);
		jobs_requeue(td, job, true);	/* it had its turn already */
		shutdown_check(td);
		return;
	}
	jobs_set_state(td, job, state);
}

static struct timeval
run_tv(uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	return tv;
}

/* The TRIAGE_* variables every job gets, in buffers of their own. */
struct run_vars {
	char id[48];
	char priority[24 + CONFIG_PRIORITY_NAME_MAX];
	char attempt[32];
};

static bool
run_is_ours(const char *var)
{
	return strncmp(var, "TRIAGE_JOB_ID=", 14) == 0 ||
	    strncmp(var, "TRIAGE_PRIORITY=", 16) == 0 ||
	    strncmp(var, "TRIAGE_ATTEMPT=", 15) == 0;
}

/* The whole environment: the job's own, then TRIAGE_*, which win. The
 * array is allocated; its strings are borrowed from job and vars. */
static char **
run_envp(const struct job *job, struct run_vars *vars)
{
	size_t n = 0, i, k = 0;
	char **envp;

	while (job->env != NULL && job->env[n] != NULL)
		n++;
	if ((envp = calloc(n + 4, sizeof *envp)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if (!run_is_ours(job->env[i]))
			envp[k++] = job->env[i];
	snprintf(vars->id, sizeof vars->id, "TRIAGE_JOB_ID=%llu",
	    (unsigned long long)job->id);
	snprintf(vars->priority, sizeof vars->priority, "TRIAGE_PRIORITY=%s",
	    job->priority);
	snprintf(vars->attempt, sizeof vars->attempt, "TRIAGE_ATTEMPT=%u",
	    job->attempt);
	envp[k++] = vars->id;
	envp[k++] = vars->priority;
	envp[k] = vars->attempt;
	return envp;
}

/* Hands the run to an idle worker. Returns 0, or -1 with errno EAGAIN when
 * none is idle (it stays waiting) or another errno (it cannot run). */
static int
run_hand(struct jobrun *run)
{
	struct triaged *td = run->td;
	struct job *job = run->job;
	struct pool_spec spec;
	char out[4096], err[4096];
	struct run_vars vars;
	char **envp;
	int rc;

	if ((envp = run_envp(job, &vars)) == NULL)
		return -1;
	snprintf(out, sizeof out, "%s/%llu.stdout", td->output_dir,
	    (unsigned long long)job->id);
	snprintf(err, sizeof err, "%s/%llu.stderr", td->output_dir,
	    (unsigned long long)job->id);
	memset(&spec, 0, sizeof spec);
	spec.job_id = job->id;
	spec.argv = (const char *const *)job->argv;
	spec.envp = (const char *const *)envp;
	spec.cwd = job->cwd;
	spec.set_creds = td->uid == 0 && td->cfg->run_as_submitter;
	spec.uid = job->uid;
	spec.gid = job->gid;
	spec.stdout_path = out;
	spec.stderr_path = err;
	spec.max_output = td->cfg->max_output;
	rc = pool_start(td->pool, &spec);
	free(envp);
	if (rc == 0)
		run->handed = true;
	return rc;
}

/* Hands waiting runs to idle workers, oldest first. */
static void
run_hand_waiting(void)
{
	struct jobrun *run, *next;

	for (run = TAILQ_FIRST(&run_list); run != NULL; run = next) {
		next = TAILQ_NEXT(run, entry);
		if (run->handed)
			continue;
		if (run_hand(run) == 0)
			continue;
		if (errno == EAGAIN)
			return;
		log_warn("job %llu: cannot hand it to a worker",
		    (unsigned long long)run->job->id);
		job_set_reason(run->job, "cannot hand it to a worker: %s",
		    strerror(errno));
		run_end(run, JOB_FAILED);
	}
}

void
run_start(struct triaged *td, struct job *job)
{
	struct jobrun *run;

	if ((run = calloc(1, sizeof *run)) == NULL) {
		log_warnx("job %llu: out of memory starting it",
		    (unsigned long long)job->id);
		psem_release(td->sem, &job->waiter);
		job_set_reason(job, "out of memory in the daemon");
		jobs_set_state(td, job, JOB_FAILED);
		return;
	}
	run->td = td;
	run->job = job;
	job->run = run;
	TAILQ_INSERT_TAIL(&run_list, run, entry);
	jobs_set_state(td, job, JOB_RUNNING);
	if (job->timeout_ms > 0) {
		struct timeval tv = run_tv(job->timeout_ms);

		run->timeout_ev = evtimer_new(td->base, run_timeout_cb, run);
		if (run->timeout_ev == NULL || evtimer_add(run->timeout_ev, &tv))
			log_warnx("job %llu: cannot arm its timeout",
			    (unsigned long long)job->id);
	}
	run_hand_waiting();
}

static void
run_signal(struct jobrun *run, int sig)
{
	if (!run->started) {
		if (run->pending_signal != SIGKILL)
			run->pending_signal = sig;
		return;
	}
	/* ESRCH: it has just ended, and the report is on its way. */
	if (pool_signal(run->td->pool, run->job->id, sig) != 0 &&
	    errno != ESRCH)
		log_warn("job %llu: cannot signal it",
		    (unsigned long long)run->job->id);
}

/* SIGTERM now, SIGKILL after kill_grace. */
static void
run_terminate(struct jobrun *run)
{
	struct timeval tv = run_tv(run->td->cfg->kill_grace_ms);

	if (run->kill_ev != NULL)
		return;		/* already on its way out */
	run_signal(run, SIGTERM);
	run->kill_ev = evtimer_new(run->td->base, run_kill_cb, run);
	if (run->kill_ev == NULL || evtimer_add(run->kill_ev, &tv) != 0)
		run_signal(run, SIGKILL);
}

static void
run_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct jobrun *run = arg;

	(void)fd;
	(void)what;
	log_info("job %llu: still there after kill_grace, sending SIGKILL",
	    (unsigned long long)run->job->id);
	run_signal(run, SIGKILL);
}

static void
run_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct jobrun *run = arg;
	char span[UNITS_FORMAT_MAX];

	(void)fd;
	(void)what;
	if (run->outcome != 0)
		return;
	run->outcome = JOB_TIMED_OUT;
	job_set_reason(run->job, "timed out after %s",
	    units_format_duration(run->job->timeout_ms, span, sizeof span));
	log_info("job %llu: %s", (unsigned long long)run->job->id,
	    run->job->reason);
	if (!run->handed) {
		run_end(run, JOB_TIMED_OUT);
		return;
	}
	run_terminate(run);
}

void
run_stop(struct job *job, bool canceled, uid_t by)
{
	struct jobrun *run = job->run;

	if (run == NULL || run->outcome != 0)
		return;
	run->outcome = canceled ? JOB_CANCELED : JOB_LOST;
	if (canceled)
		job_set_reason(job, "canceled by uid %u", (unsigned)by);
	else
		job_set_reason(job, "the daemon stopped while it ran");
	if (!run->handed) {
		run_end(run, run->outcome);
		return;
	}
	run_terminate(run);
}

static struct jobrun *
run_find(struct triaged *td, uint64_t job_id, const char *what)
{
	struct job *job = store_get(td->store, job_id);

	if (job == NULL || job->run == NULL) {
		log_warnx("a worker reported %s of job %llu, which is not "
		    "running", what, (unsigned long long)job_id);
		return NULL;
	}
	return job->run;
}

static void
run_started_cb(uint64_t job_id, pid_t pid, void *arg)
{
	struct jobrun *run = run_find(arg, job_id, "the start");

	if (run == NULL)
		return;
	run->started = true;
	run->job->pid = pid;
	store_update(run->td->store, run->job);
	log_debug("job %llu: started as pid %d", (unsigned long long)job_id,
	    (int)pid);
	if (run->pending_signal != 0)
		run_signal(run, run->pending_signal);
}

static void
run_finished_cb(uint64_t job_id, const struct pool_result *res, void *arg)
{
	struct triaged *td = arg;
	struct jobrun *run = run_find(td, job_id, "the end");
	enum job_state state;
	struct job *job;
	const char *sig;

	if (run == NULL) {
		run_hand_waiting();
		return;
	}
	job = run->job;
	job->stdout_truncated = res->stdout_truncated;
	job->stderr_truncated = res->stderr_truncated;
	if (!res->started) {
		state = run->outcome ? run->outcome : JOB_FAILED;
		if (run->outcome == 0)
			job_set_reason(job, "%s", res->error);
	} else {
		job->user_time = res->user_time;
		job->system_time = res->system_time;
		job->max_rss_kb = res->max_rss_kb;
		if (WIFEXITED(res->status))
			job->exit_code = WEXITSTATUS(res->status);
		else if (WIFSIGNALED(res->status))
			job->signal = WTERMSIG(res->status);
		if (run->outcome != 0)
			state = run->outcome;
		else if (job->exit_code == 0) {
			state = JOB_SUCCEEDED;
			/* An earlier attempt's failure is not this one's. */
			job_set_reason(job, NULL);
		}
		else {
			state = JOB_FAILED;
			if (job->exit_code > 0)
				job_set_reason(job, "exited with status %d",
				    job->exit_code);
			else if ((sig = sigabbrev_np(job->signal)) != NULL)
				job_set_reason(job, "killed by SIG%s", sig);
			else
				job_set_reason(job, "killed by signal %d",
				    job->signal);
		}
	}
	log_debug("job %llu: %s", (unsigned long long)job_id,
	    job_state_name(state));
	run_end(run, state);
	run_hand_waiting();
}

static void
run_lost_cb(uint64_t job_id, const char *why, void *arg)
{
	struct jobrun *run = run_find(arg, job_id, "the loss");
	enum job_state state;

	if (run == NULL)
		return;
	log_warnx("job %llu: %s", (unsigned long long)job_id, why);
	state = run->outcome == JOB_LOST || run->outcome == JOB_CANCELED ?
	    run->outcome : JOB_FAILED;
	if (state == JOB_FAILED)
		job_set_reason(run->job, "%s", why);
	run_end(run, state);
}

static void
run_idle_cb(void *arg)
{
	(void)arg;
	run_hand_waiting();
}

static void
run_error_cb(const char *msg, void *arg)
{
	(void)arg;
	log_warnx("worker pool: %s", msg);
}

const struct pool_callbacks run_pool_callbacks = {
	.started_cb = run_started_cb,
	.finished_cb = run_finished_cb,
	.lost_cb = run_lost_cb,
	.idle_cb = run_idle_cb,
	.error_cb = run_error_cb,
};

void
run_free_all(void)
{
	struct jobrun *run;

	while ((run = TAILQ_FIRST(&run_list)) != NULL)
		run_free(run);
}
