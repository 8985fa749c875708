/* uidcount.h - a count per uid (queued jobs, say), kept only for the uids
 * whose count is not zero. */
#ifndef TRIAGED_UIDCOUNT_H
#define TRIAGED_UIDCOUNT_H

#include <sys/types.h>

struct uidcount {
	void *root;		/* tsearch tree of the nonzero counts */
};

/* Adds delta (maybe negative) to uid's count; a count never goes below 0.
 * 0, or -1 when out of memory (the count is then unchanged). */
int uidcount_add(struct uidcount *uc, uid_t uid, int delta);
unsigned uidcount_get(const struct uidcount *uc, uid_t uid);
/* Forgets every count. */
void uidcount_clear(struct uidcount *uc);

#endif
