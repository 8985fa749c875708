/* attempts.h - what job events say of attempts: a submission, a return to
 * the queue, a start after its wait, an end after its run. */
#ifndef TRIAGED_ATTEMPTS_H
#define TRIAGED_ATTEMPTS_H

#include <stdint.h>

struct jobs_event;

/*
 * The times a job does not keep itself: when an attempt after the first
 * went back to its queue, and when a running attempt began (a job that
 * goes back to the queue has its run cleared before the event). Kept only
 * for those jobs: retried ones, and running ones.
 */
struct attempts {
	void *root;		/* tsearch tree by job id */
	int64_t since_ms;	/* attempts_init's time */
};

enum attempts_kind {
	ATTEMPTS_OTHER,		/* an edit, or nothing to count */
	ATTEMPTS_SUBMITTED,	/* a new job, queued */
	ATTEMPTS_REQUEUED,	/* another attempt queued: retry or requeue */
	ATTEMPTS_STARTED,	/* running: wait is set */
	ATTEMPTS_ENDED,		/* terminal: run is set when it had run */
};

/* What an event was, and its attempt's times in seconds (-1: none). */
struct attempts_times {
	enum attempts_kind kind;
	double wait;		/* STARTED: from queued to running */
	double run;		/* ENDED, REQUEUED: from running to the end */
};

void attempts_init(struct attempts *a, int64_t now_ms);
void attempts_clear(struct attempts *a);

/*
 * Reads ev, published at now_ms, into *t, and remembers what a later
 * event of the job needs. An attempt waits from its submission (the first)
 * or its return to the queue, or from its begin_at when later; an attempt
 * queued before attempts_init that the job cannot date waits from then.
 * Out of memory, what is not remembered is dated so too.
 */
void attempts_event(struct attempts *a, const struct jobs_event *ev,
    int64_t now_ms, struct attempts_times *t);

#endif
