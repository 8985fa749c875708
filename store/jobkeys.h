/* jobkeys.h - the jobs that have an idempotency key, by (uid, key): what a
 * submission with a key looks up before it makes a job. */
#ifndef TRIAGE_JOBKEYS_H
#define TRIAGE_JOBKEYS_H

#include <sys/types.h>

struct job;

/* Zero it to start empty. */
struct jobkeys {
	void *root;		/* tsearch tree of struct job *, by uid, key */
};

/*
 * Indexes job by its uid and extra->key (which must not change while it is
 * in): 0, or -1 with ENOMEM. A job without a key is not indexed (0), nor one
 * whose uid and key another job indexed already has (0: the first keeps it).
 */
int jobkeys_add(struct jobkeys *k, struct job *job);
/* Takes job out, if it is the one indexed under its uid and key. */
void jobkeys_remove(struct jobkeys *k, struct job *job);
struct job *jobkeys_find(const struct jobkeys *k, uid_t uid, const char *key);
/* Empties the index; the jobs are not freed. */
void jobkeys_clear(struct jobkeys *k);

#endif
