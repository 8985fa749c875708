/* chaos-load.h - the chaos test's clients: on every node a submitter of
 * ledgered jobs and a waiter on some of them, each recording what it was told. */
#ifndef TRIAGE_CHAOS_LOAD_H
#define TRIAGE_CHAOS_LOAD_H

#include <stddef.h>

struct chaos_cluster;
struct chaos_check;
struct chaos_load;

/* What the clients did, so far. */
struct chaos_load_counts {
	size_t	acked;		/* submissions answered with an id */
	size_t	refused;	/* answered with an error */
	size_t	unanswered;	/* the connection broke or timed out first */
	size_t	outcomes;	/* waits answered with a final state */
};

/*
 * Starts, for each node of cc, a thread that submits a chaos-job (20 to
 * 300 ms, one in five failing, of a random priority) every
 * CHAOS_LOAD_EVERY_MS, reconnecting whenever its connection breaks, and a
 * thread that waits at the next node on every third job the first was
 * told of. Threads call nothing of cmocka's. Aborts out of memory.
 */
struct chaos_load *chaos_load_start(const struct chaos_cluster *cc);
/* Stops and joins the submitters: no submission is under way after it. */
void chaos_load_stop_submitting(struct chaos_load *load);
/* Stops and joins the waiters (each within its call's bound). */
void chaos_load_stop(struct chaos_load *load);
/* The counts, over every node's clients. */
void chaos_load_counts(struct chaos_load *load, struct chaos_load_counts *n);
/* Gives ck every acknowledged submission and every outcome; once
 * stopped. */
void chaos_load_feed(const struct chaos_load *load, struct chaos_check *ck);
/* Frees load, stopped. */
void chaos_load_free(struct chaos_load *load);

#endif
