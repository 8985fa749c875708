/* beginq.h - the queued jobs that wait for their begin_at, earliest first:
 * a binary heap, so that one timer for its head serves them all. */
#ifndef TRIAGED_BEGINQ_H
#define TRIAGED_BEGINQ_H

#include <stddef.h>
#include <stdint.h>

struct job;

struct beginq {
	struct job **v;		/* the heap; job->admit.begin_slot is 1 + index */
	size_t n;
	size_t cap;
};

/* Adds job (not in it yet), keyed by its begin_at, then its id. 0, or -1
 * out of memory. */
int beginq_add(struct beginq *q, struct job *job);
/* Takes job out, when it is in. */
void beginq_remove(struct beginq *q, struct job *job);
/* The job that begins first, or NULL. */
struct job *beginq_first(const struct beginq *q);
void beginq_clear(struct beginq *q);

#endif
