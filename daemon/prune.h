/* prune.h - keep_finished: jobs that ended longer ago than that, and their
 * captured output, are deleted a small batch at a time. */
#ifndef TRIAGED_PRUNE_H
#define TRIAGED_PRUNE_H

#include <stdint.h>

struct triaged;

/* Forgets a terminal job now, and removes its capture files (a file that
 * cannot be removed is only logged). 0, or -1 with errno (ENOENT: no such
 * job), changing nothing. */
int prune_job(struct triaged *td, uint64_t id);

/* Starts pruning now, then whenever the oldest terminal job expires, its
 * timer in td->prune; 0, or -1 out of memory. prune_stop frees it. */
int prune_start(struct triaged *td);
/* After a reload: keep_finished may have changed, so the next expiry. */
void prune_reload(struct triaged *td);
void prune_stop(struct triaged *td);

#endif
