/* recover.h - the daemon's start from what the store kept: the jobs that
 * were running when it stopped, and every queue in its order. */
#ifndef TRIAGED_RECOVER_H
#define TRIAGED_RECOVER_H

struct triaged;

/*
 * Counts the stored jobs, puts those that were running back at the head of
 * their priority with attempt + 1 (shutdown = requeue; else they are lost),
 * and queues every queued job in its original order. 0, or -1 out of memory.
 */
int recover_jobs(struct triaged *td);

#endif
