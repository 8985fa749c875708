/* jobs-freeze.c - what an operator does to a running job: freeze its
 * processes where they are, and thaw them, the change published as an edit. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "config.h"
#include "job.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "run.h"
#include "triaged.h"

bool
jobs_runs_elsewhere(const struct triaged *td, const struct job *job)
{
	return job->state == JOB_RUNNING && !run_has(td->run, job) &&
	    job->node != NULL && strcmp(job->node, td->cfg->cluster.node) != 0;
}

int
jobs_freeze(struct triaged *td, struct job *job, bool freeze, uid_t by)
{
	const char *done = freeze ? "frozen" : "thawed";
	int rc;

	if (job->state != JOB_RUNNING || job->frozen == freeze)
		return 0;
	if ((rc = run_freeze(td->run, job, freeze)) != 1) {
		if (rc == -1)
			log_warn("job %llu: cannot be %s", (unsigned long long)
			    job->id, done);
		return rc;
	}
	job->frozen = freeze;
	jobs_edited(td, job, done);
	log_info("job %llu: %s by uid %u", (unsigned long long)job->id, done,
	    (unsigned)by);
	return 1;
}
