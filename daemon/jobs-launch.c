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

/* Of the queued waiters walked for a claim's alternates, how many may be
 * passed over (not alike) for each one taken: a queue of other shapes is
 * not walked to its end for every claim. */
#define JOBS_ALTERNATES_WALK 4

/*
 * The jobs a claim of job may go to when another node had job first:
 * those queued here behind it that this node would grant next and that
 * hold its slots as they are, in that order. Only jobs that want slots
 * alone: memory and devices are reckoned per job (their budget, the units
 * picked at the grant).
 */
size_t
jobs_alternates_cb(const struct job *job, struct job **out, size_t max,
    void *arg)
{
	struct triaged *td = arg;
	const struct psem_waiter *w;
	const struct job *alt;
	size_t n = 0, walked = 0;

	if (job->waiter.need != NULL ||
	    psem_waiter_state(&job->waiter) != PSEM_HELD)
		return 0;
	for (w = psem_first(td->sem, job->waiter.prio);
	    w != NULL && n < max && walked++ < JOBS_ALTERNATES_WALK * max;
	    w = psem_next(w)) {
		alt = (const struct job *)((const char *)w -
		    offsetof(struct job, waiter));
		if (w->need == NULL && psem_alike(td->sem, &job->waiter, w) &&
		    (out[n] = store_get(td->store, alt->id)) != NULL)
			n++;
	}
	return n;
}

/*
 * A claim of from went to to instead (another node had from, which is
 * told refused next): to takes from's slots and its launch, as though it
 * had been granted them. When to can no longer take them (changed here
 * since it was named), they stay from's, which the refusal gives back,
 * and to's row, which the claim made begun here, is written again as to
 * is.
 */
void
jobs_moved_cb(struct job *from, struct job *to, void *arg)
{
	struct triaged *td = arg;
	struct jobs_item *it;

	TAILQ_FOREACH(it, &td->jobs->launches, entry)
		if (it->id == from->id && it->status.attempt == from->attempt)
			break;
	if (it == NULL || to->state != JOB_QUEUED || to->run->begun ||
	    psem_waiter_state(&from->waiter) != PSEM_HELD ||
	    psem_waiter_state(&to->waiter) != PSEM_QUEUED ||
	    !psem_alike(td->sem, &from->waiter, &to->waiter) ||
	    job_set_node(to, td->cfg->cluster.node) != 0) {
		store_update(td->store, to);
		return;
	}
	(void)psem_swap(td->sem, &from->waiter, &to->waiter);
	jobs_run(from)->begun = false;
	jobs_run(to)->begun = true;
	jobs_starting_add(td, to->id);
	it->id = to->id;
	it->status.attempt = to->attempt;
	log_debug("job %llu: its claim went to job %llu, another node having "
	    "claimed it first", (unsigned long long)from->id,
	    (unsigned long long)to->id);
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
