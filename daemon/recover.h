/* recover.h - the daemon's start from what the store kept: the jobs whose
 * attempt had begun when it stopped, and every queue in its order. */
#ifndef TRIAGED_RECOVER_H
#define TRIAGED_RECOVER_H

struct triaged;

/*
 * Refuses a config without a priority that still holds queued or running
 * jobs. Then kills what is left of the processes of the attempts that had
 * begun (the very processes, told apart by their start time), puts those
 * jobs back at the head of their priority with attempt + 1 (shutdown =
 * requeue; else they are lost), and queues every queued job in its
 * original order. 0, or -1 with *cause set (allocated).
 */
int recover_jobs(struct triaged *td, char **cause);

#endif
