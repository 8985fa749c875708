/* jobs-end.c - the decisions on a job's end: what its run's outcome makes
 * of it (final state, another attempt, its place back), and cancels. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cluster.h"
#include "config.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "psem.h"
#include "run.h"
#include "store.h"
#include "triaged.h"

void
jobs_end(struct triaged *td, struct job *job, enum job_state state)
{
	jobs_change(td, job, state);
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
	    job->node != NULL &&
	    strcmp(job->node, td->cfg->cluster.node) != 0) {
		if (store_cancel_elsewhere(td->store, job, sig, (unsigned)by)
		    != 0)
			log_warnx("job %llu: out of memory asking node %s "
			    "to cancel it", (unsigned long long)job->id,
			    job->node);
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
	job->shared.cancel.by = by;
	job->shared.cancel.sig = (int8_t)sig;
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

/* The end is on disk: its worker may forget it (run_ack). */
static void
jobs_ack_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	uint64_t *id = arg;

	(void)job;
	(void)cause;
	run_ack(td->run, *id);
	free(id);
}

/* Once what the end changed is stored, its worker is told. Out of memory
 * it is not: should the daemon go, the worker records an end stored
 * already, which the next start finds stale. */
static void
jobs_ack_later(struct triaged *td, uint64_t job_id)
{
	uint64_t *id;

	if ((id = malloc(sizeof *id)) == NULL)
		return;
	*id = job_id;
	if (jobs_after_commit(td, jobs_ack_cb, id) != 0)
		free(id);
}

/*
 * The run is over: the job takes its final state, or another attempt when
 * it failed with retries left, or (stopping under shutdown = requeue) its
 * place at the head of its queue for the next start. This is the one place
 * that decides.
 */
static void
jobs_ended_decide(struct triaged *td, struct job *job,
    const struct run_outcome *out)
{
	enum job_state state = out->state;
	struct job_run *run;
	int prio;

	/* Heard before its end changes it: whatever must go ahead of the
	 * commit of that end (the output a node ships) goes now. */
	jobs_tell_runs(td, job, out);
	if (psem_release(td->sem, &job->waiter) != 0)
		log_warnx("job %llu: ended holding no slots",
		    (unsigned long long)job->id);
	if (job->shared.taken) {
		/* Another node has the job: this run's end is nobody's. */
		job->shared.taken = false;
		prio = config_priority_find(td->cfg, job->priority);
		job->waiter.prio = prio < 0 ? 0 : (unsigned)prio;
		if (job->state == JOB_QUEUED && !job->run->begun)
			jobs_admit(td, job);
		return;
	}
	if (out->lease_ended) {
		log_warnx("job %llu: its worker stopped it: this node's lease "
		    "ran out unrenewed", (unsigned long long)job->id);
		job->shared.fenced = true;
		cluster_lease_ran_out(td);
	}
	if (job->shared.fenced) {
		/* As another node's takeover would: whichever write comes
		 * first stands, the other is refused and reads it back. */
		job->shared.fenced = false;
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
	run->peak_memory = run_outcome_peak(out);
	run->oom = out->oom;
	/* Set here, with the rest of the end: the row that records the end
	 * holds it, in the same commit (a retry below clears it again). */
	if (job_set_result(job, out->result, out->result_len,
	    out->result_truncated) != 0)
		log_warnx("job %llu: out of memory for its result of %zu "
		    "bytes: it has none", (unsigned long long)job->id,
		    out->result_len);
	if (out->reaped && WIFEXITED(out->status))
		run->exit_code = WEXITSTATUS(out->status);
	else if (out->reaped && WIFSIGNALED(out->status))
		run->signal = WTERMSIG(out->status);
	job_set_reason(job, out->reason[0] != '\0' ? "%s" : NULL,
	    out->reason);

	if (state == JOB_LOST && td->phase == TRIAGED_STOPPING &&
	    td->shutdown_mode == CONFIG_SHUTDOWN_REQUEUE) {
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

static void
jobs_ended_cb(struct job *job, const struct run_outcome *out, void *arg)
{
	struct triaged *td = arg;
	uint64_t id = job->id;
	bool ack = out->started && out->handed;

	jobs_ended_decide(td, job, out);
	/* After the changes the end made, whichever path it took. */
	if (ack)
		jobs_ack_later(td, id);
}

const struct run_callbacks jobs_run_callbacks = {
	.started_cb = jobs_started_cb,
	.ended_cb = jobs_ended_cb,
};
