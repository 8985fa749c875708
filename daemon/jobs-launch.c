/* jobs-launch.c - a job's way from its grant to a worker: its start written,
 * then handed to the executor with what its priority says of its process. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "config.h"
#include "jobs-private.h"
#include "log.h"
#include "passwd.h"
#include "psem.h"
#include "resources.h"
#include "run.h"
#include "store.h"
#include "triaged.h"

static struct job *
jobs_of_waiter(struct psem_waiter *w)
{
	return (struct job *)((char *)w - offsetof(struct job, waiter));
}

void
jobs_grant_cb(struct psem_waiter *w, void *arg)
{
	jobs_begin(arg, jobs_of_waiter(w));
}

/*
 * What the job and its priority say of its process and its cgroup, as the
 * config is now, and
 * in a cluster whom it runs as: its user, by name, on this node (a root
 * daemon). 0, or -1 with the job's reason set when the user is not here.
 */
int
jobs_run_opts(const struct triaged *td, struct job *job,
    struct run_job_opts *opts)
{
	const struct config_priority *p =
	    &td->cfg->priorities[job->waiter.prio];

	memset(opts, 0, sizeof *opts);
	opts->io_idle = p->io_class == CONFIG_IO_IDLE;
	opts->keep_tail = p->output_keep == CONFIG_OUTPUT_KEEP_TAIL;
	opts->memory_max = job->memory;
	opts->pids_max = p->pids_max;
	opts->cpu_weight = p->cpu_weight;
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

void
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
	    td->shutdown_mode != CONFIG_SHUTDOWN_DRAIN) {
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
	jobs_tell_runs(td, job, NULL);
}

void
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

void
jobs_written_cb(uint64_t write, void *arg)
{
	struct triaged *td = arg;

	td->jobs->written = write;
	jobs_launch_written(td);
}

void
jobs_begin(struct triaged *td, struct job *job)
{
	struct jobs_item *it;

	/* The attempt is this node's from the write of its start on. */
	if ((it = calloc(1, sizeof *it)) == NULL ||
	    job_set_node(job, td->cfg->cluster.node) != 0 ||
	    resources_devices(td, job) != 0) {
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
	it->kind = JOBS_LAUNCH;
	it->id = job->id;
	it->status.attempt = job->attempt;
	it->gen = store_claim(td->store, job);
	TAILQ_INSERT_TAIL(&td->jobs->launches, it, entry);
}
