/* recover.c - the daemon's start from what the store kept: the jobs whose
 * attempt had begun when it stopped, and every queue in its order. */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <time.h>
#include <unistd.h>

#include "cgroups.h"
#include "config.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "procstat.h"
#include "psem.h"
#include "recover.h"
#include "run.h"
#include "store.h"
#include "triaged.h"

/* How long a killed process of the last run may take to be gone. */
#define RECOVER_KILL_WAIT_MS 2000

static int
recover_cmp(const void *a, const void *b)
{
	const struct job *x = *(struct job *const *)a;
	const struct job *y = *(struct job *const *)b;

	if (x->waiter.prio != y->waiter.prio)
		return x->waiter.prio < y->waiter.prio ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Whether v is in recover_cmp's order already: jobs come in id order, which
 * is mostly their queue order too, and a million of them need no sort. */
static bool
recover_sorted(struct job *const *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (recover_cmp(&v[i - 1], &v[i]) > 0)
			return false;
	return true;
}

/* Names the priorities gone from the config that still have jobs to run
 * (the first few), with what to do about it. -1 with *cause when any. */
static int
recover_check_priorities(struct triaged *td, char **cause)
{
	struct {
		const char *name;
		unsigned n;
	} gone[8];
	size_t ngone = 0, i, pos = 0;
	char *text = NULL, *more;
	struct job *job;
	bool one;

	while ((job = store_iter(td->store, &pos)) != NULL) {
		if (job_state_terminal(job->state) ||
		    config_priority_find(td->cfg, job->priority) >= 0)
			continue;
		for (i = 0; i < ngone; i++)
			if (strcmp(gone[i].name, job->priority) == 0)
				break;
		if (i < ngone)
			gone[i].n++;
		else if (ngone < sizeof gone / sizeof gone[0]) {
			gone[ngone].name = job->priority;
			gone[ngone++].n = 1;
		}
	}
	for (i = 0; i < ngone; i++) {
		one = gone[i].n == 1;
		if (asprintf(&more, "%s%spriority %s is not in the config, "
		    "but %u of its jobs %s queued or running: put its "
		    "section back, let %s finish (or cancel %s), then "
		    "remove it", text ? text : "", text ? "\n" : "",
		    gone[i].name, gone[i].n, one ? "is" : "are",
		    one ? "it" : "them", one ? "it" : "them") < 0) {
			free(text);
			*cause = strdup("out of memory");
			return -1;
		}
		free(text);
		text = more;
	}
	if (text == NULL)
		return 0;
	*cause = text;
	return -1;
}

/* The last run's process of job: killed with its process group. */
static void
recover_kill_group(const struct job *job)
{
	log_notice("job %llu: process %d of attempt %u still runs from "
	    "before the restart: killing its process group",
	    (unsigned long long)job->id, (int)job->run->pid, job->attempt);
	if (kill(-job->run->pid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("job %llu: kill process group %d",
		    (unsigned long long)job->id, (int)job->run->pid);
}

/* Whether job's process, as the store recorded it, is still there and has
 * not ended (a zombie has: it runs no more). */
static bool
recover_runs(const struct job *job)
{
	uint64_t ticks;
	char state;

	return procstat_read(job->run->pid, &state, &ticks) == 0 &&
	    ticks == job->run->start_ticks && state != 'Z';
}

/*
 * Where pidfd_open is not to be had (a kernel before 5.3, or valgrind,
 * which does not know it): the process is told by its start time alone,
 * and watched through /proc until it has ended. A pid reused between the
 * look and the kill would take a new process through all of pid_max within
 * microseconds, which this accepts.
 */
static void
recover_kill_by_pid(const struct job *job)
{
	const struct timespec step = { 0, 10 * 1000 * 1000 };
	int waited;

	if (!recover_runs(job))
		return;
	recover_kill_group(job);
	if (kill(job->run->pid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("job %llu: kill process %d",
		    (unsigned long long)job->id, (int)job->run->pid);
	for (waited = 0; recover_runs(job); waited += 10) {
		if (waited >= RECOVER_KILL_WAIT_MS) {
			log_warnx("job %llu: process %d is not gone yet",
			    (unsigned long long)job->id, (int)job->run->pid);
			return;
		}
		nanosleep(&step, NULL);
	}
}

/*
 * The process of an attempt that began before the restart may still run
 * (its worker was stopped or stuck and could not act on the daemon's
 * death) and outside the daemon's cgroups (a daemon that ran without): it
 * is killed, with its process group, before the job runs again. Only the
 * very process recorded: the pidfd holds it while its start time
 * is compared, so a later process with the same pid is never touched.
 */
static void
recover_kill(const struct job *job)
{
	struct pollfd pfd;
	int fd;

	if (job->run->pid <= 0 || job->run->start_ticks == 0)
		return;
	if ((fd = (int)pidfd_open(job->run->pid, 0)) == -1) {
		if (errno != ESRCH)
			recover_kill_by_pid(job);
		return;
	}
	/* A process the daemon's cgroups held is dead by now (cgroups.c
	 * killed what the last daemon left): its zombie is nobody's to
	 * kill. */
	if (recover_runs(job)) {
		recover_kill_group(job);
		if (pidfd_send_signal(fd, SIGKILL, NULL, 0) == -1 &&
		    errno != ESRCH)
			log_warn("job %llu: kill process %d",
			    (unsigned long long)job->id, (int)job->run->pid);
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, RECOVER_KILL_WAIT_MS) != 1)
			log_warnx("job %llu: process %d is not gone yet",
			    (unsigned long long)job->id, (int)job->run->pid);
	}
	close(fd);
}

/* cgroups_keep_cb: the cgroup of a run taken over is in use. */
static bool
recover_adopted(uint64_t id, unsigned attempt, void *arg)
{
	struct triaged *td = arg;
	struct job *job = store_get(td->store, id);

	return job != NULL && job->attempt == attempt && run_has(td->run, job);
}

/* Whether job's attempt began on this daemon: every one does but in a
 * cluster, where the job names its node. */
static bool
recover_here(const struct triaged *td, const struct job *job)
{
	return !td->cfg->cluster.enabled || job->node == NULL ||
	    strcmp(job->node, td->cfg->cluster.node) == 0;
}

int
recover_jobs(struct triaged *td, char **cause)
{
	const bool requeue = jobs_rerun_unheld(td);
	size_t n = 0, nrun = 0, nadopted = 0, i, pos;
	size_t total = store_count(td->store);
	struct job **queued, **ran, *job;
	int64_t max_seq = 0, min_seq = 0;
	int prio;

	if (recover_check_priorities(td, cause) != 0)
		return -1;
	if ((queued = calloc(total + 1, sizeof *queued)) == NULL ||
	    (ran = calloc(total + 1, sizeof *ran)) == NULL) {
		free(queued);
		*cause = strdup("out of memory");
		return -1;
	}
	for (pos = 0; (job = store_iter(td->store, &pos)) != NULL;) {
		if (job->seq > max_seq)
			max_seq = job->seq;
		if (job->seq < min_seq)
			min_seq = job->seq;
		/* Only terminal jobs can have a priority that is gone. */
		prio = config_priority_find(td->cfg, job->priority);
		jobs_loaded(td, job, prio < 0 ? 0 : (unsigned)prio);
		if (job->state == JOB_RUNNING ||
		    (job->state == JOB_QUEUED && job->run->begun)) {
			/* Another node's run is its own, in a cluster. */
			if (recover_here(td, job))
				ran[nrun++] = job;
			else
				jobs_count_elsewhere(td, job);
		} else if (job->state == JOB_QUEUED)
			queued[n++] = job;
	}
	jobs_set_next_seq(td, max_seq + 1);
	/* Before any grant, and before the others are killed: the runs
	 * whose workers outlived the last daemon (or left their ends) take
	 * back what they hold, as the same attempt. */
	jobs_adopt_sweep(td);
	for (i = 0; i < nrun; i++)
		if (jobs_adopt(td, ran[i]) == 1) {
			ran[i] = NULL;
			nadopted++;
		}
	/* What else an earlier daemon left in its cgroups is killed before
	 * the processes it recorded are looked at. */
	cgroups_clear_left(td->cgroups, recover_adopted, td);
	/* At the head, in the order they had: the last one first. */
	for (i = nrun; i > 0; i--) {
		if ((job = ran[i - 1]) == NULL)
			continue;
		recover_kill(job);
		jobs_recover_begun(td, job, requeue, --min_seq);
		if (requeue)
			queued[n++] = job;
	}
	if (!recover_sorted(queued, n))
		qsort(queued, n, sizeof *queued, recover_cmp);

	/* Everything in place before anything is granted, so the first
	 * grants follow the policy, not the order of this loop. */
	for (i = 0; i < psem_priorities(td->sem); i++)
		psem_pause(td->sem, (unsigned)i);
	for (i = 0; i < n; i++)
		jobs_admit(td, queued[i]);
	/* Paused priorities stay paused, as they were before the stop. */
	for (i = 0; i < psem_priorities(td->sem); i++) {
		if (!store_paused(td->store, td->cfg->priorities[i].name))
			psem_resume(td->sem, (unsigned)i);
		else
			log_notice("priority %s stays paused (triage resume "
			    "%s dispatches it)", td->cfg->priorities[i].name,
			    td->cfg->priorities[i].name);
	}
	nrun -= nadopted;
	if (total > 0)
		log_notice("recovered %zu jobs: %zu queued, %zu of them back "
		    "from running, %zu lost, %zu taken over still running or "
		    "ended", total, n, requeue ? nrun : 0, requeue ? 0 : nrun,
		    nadopted);
	free(queued);
	free(ran);
	return 0;
}
