/* recover.h - the daemon's start from what the store kept: the jobs whose
 * attempt had begun when it stopped, and every queue in its order. */
#ifndef TRIAGED_RECOVER_H
#define TRIAGED_RECOVER_H

struct triaged;

/*
 * Refuses a config without a priority that still holds queued or running
 * jobs. Then, before anything is granted, takes over the attempts that had
 * begun whose workers outlived the last daemon, or takes the ends they
 * recorded (jobs_adopt), the slots of those held again; kills what is left
 * of the others (what their cgroups hold, and the very processes recorded,
 * told apart by their start time), puts those jobs back at the head of
 * their priority with attempt + 1 (shutdown = requeue; else they are
 * lost), and queues every queued job in its original order. 0, or -1 with
 * *cause set (allocated).
 */
int recover_jobs(struct triaged *td, char **cause);

#endif
