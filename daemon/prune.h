/* prune.h - keep_finished: jobs that ended longer ago than that, and their
 * captured output, are deleted a small batch at a time. */
#ifndef TRIAGED_PRUNE_H
#define TRIAGED_PRUNE_H

struct triaged;

/* Starts pruning now and then on a timer; 0, or -1 out of memory. */
int prune_start(struct triaged *td);
void prune_stop(void);

#endif
