/* jobkeys.c - jobs by (uid, idempotency key) in a tsearch tree of the jobs
 * themselves: only jobs with a key pay for it, a tree node each. */
#include <search.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "jobkeys.h"

static int
jobkeys_cmp(const void *a, const void *b)
{
	const struct job *x = a, *y = b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return strcmp(x->extra->key, y->extra->key);
}

int
jobkeys_add(struct jobkeys *k, struct job *job)
{
	if (job->extra->key == NULL)
		return 0;
	return tsearch(job, &k->root, jobkeys_cmp) == NULL ? -1 : 0;
}

void
jobkeys_remove(struct jobkeys *k, struct job *job)
{
	struct job **found;

	if (job->extra->key == NULL ||
	    (found = tfind(job, &k->root, jobkeys_cmp)) == NULL ||
	    *found != job)
		return;
	tdelete(job, &k->root, jobkeys_cmp);
}

struct job *
jobkeys_find(const struct jobkeys *k, uid_t uid, const char *key)
{
	/* A job of its own for the comparison: only uid and key are read. */
	struct job_extra extra = { .key = (char *)(uintptr_t)key };
	struct job probe = { .uid = uid, .extra = &extra };
	struct job **found;

	found = tfind(&probe, &k->root, jobkeys_cmp);
	return found != NULL ? *found : NULL;
}

static void
jobkeys_keep(void *job)
{
	(void)job;
}

void
jobkeys_clear(struct jobkeys *k)
{
	tdestroy(k->root, jobkeys_keep);
	k->root = NULL;
}
