/* jobs-edit.c - what an operator does to a queued job: hold it in its place,
 * release it, or change its priority, name, limits, labels or begin time. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "intern.h"
#include "job.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "psem.h"
#include "triaged.h"

bool
jobs_editable(const struct job *job)
{
	enum psem_state ws = psem_waiter_state(&job->waiter);

	return job->state == JOB_QUEUED &&
	    (ws == PSEM_IDLE || ws == PSEM_QUEUED);
}

int
jobs_hold(struct triaged *td, struct job *job, uid_t by)
{
	if (!jobs_editable(job) || job->held)
		return 0;
	/* Out of the semaphore's queue: grants never see it, and the
	 * positions of the others no longer count it. seq keeps its place. */
	jobs_unqueue(td, job);
	jobs_set_held(td, job, true);
	jobs_edited(td, job, "held");
	log_info("job %llu: held by uid %u", (unsigned long long)job->id,
	    (unsigned)by);
	return 1;
}

int
jobs_release(struct triaged *td, struct job *job, uid_t by)
{
	if (job->state != JOB_QUEUED || !job->held)
		return 0;
	jobs_set_held(td, job, false);
	jobs_edited(td, job, "released");
	log_info("job %llu: released by uid %u", (unsigned long long)job->id,
	    (unsigned)by);
	jobs_try_acquire(td, job);
	return 1;
}

int
jobs_update(struct triaged *td, struct job *job, const struct jobs_update *u,
    uid_t by)
{
	struct job_extra *extra = NULL;
	const char *priority = NULL;
	char *name = NULL;
	bool requeue = false;
	/* Whether the update puts in the job's extra what a job that has
	 * none must make one for; else it only clears what there is. */
	bool more = u->name != NULL || json_object_size(u->labels) > 0 ||
	    json_object_size(u->resources) > 0 ||
	    (u->has_begin_at && u->begin_at != job_extra_none.begin_at);

	/* Everything that can fail before anything changes, the job's own
	 * extra too. */
	if ((u->name != NULL && (name = strdup(u->name)) == NULL) ||
	    (u->prio >= 0 && (priority =
	    intern_str(td->cfg->priorities[u->prio].name)) == NULL) ||
	    ((more || !job_extra_is_none(job->extra)) &&
	    (extra = job_extra_edit(job)) == NULL)) {
		free(name);
		intern_str_drop(priority);
		return -1;
	}
	/* It cannot fail: the job has its own extra by now. */
	if (name != NULL)
		(void)job_set_name(job, name);
	if (u->has_timeout)
		job->timeout_ms = u->timeout_ms;
	if (u->has_retries)
		job->retries = u->retries;
	if (u->has_nice)
		job->nice = u->nice;
	if (u->has_memory)
		job->memory = u->memory;
	/* extra NULL: the job shares job_extra_none, which is what
	 * clearing would leave. */
	if (extra != NULL && u->labels != NULL) {
		json_decref(extra->labels);
		extra->labels = json_object_size(u->labels) > 0 ?
		    json_incref(u->labels) : NULL;
	}
	if (extra != NULL && u->resources != NULL) {
		json_decref(extra->resources);
		extra->resources = json_object_size(u->resources) > 0 ?
		    json_incref(u->resources) : NULL;
	}
	/* A new queue or a new time: out of its place, to find the one they
	 * give once it goes. New wants: out and back in its place (seq), to
	 * wait with them. */
	if (priority != NULL || u->has_begin_at || u->has_memory ||
	    u->resources != NULL) {
		jobs_unqueue(td, job);
		requeue = true;
	}
	if (extra != NULL && u->has_begin_at)
		extra->begin_at = u->begin_at;
	if (priority != NULL) {
		intern_str_drop(job->priority);
		job->priority = priority;
		jobs_move(td, job, (unsigned)u->prio);
	}
	jobs_edited(td, job, "updated");
	log_info("job %llu: updated by uid %u", (unsigned long long)job->id,
	    (unsigned)by);
	if (requeue)
		jobs_try_acquire(td, job);
	return 0;
}
