/* jobtable.h - every job a store holds, by id: found by binary search, walked
 * in id order or in submission order, removed without moving the rest. */
#ifndef TRIAGE_JOBTABLE_H
#define TRIAGE_JOBTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobkeys.h"
#include "vec.h"

struct job;

/* Zero it to start empty. */
struct jobtable {
	/* By id: a job's pointer, or where one was removed a tombstone,
	 * (id << 1) | 1, so that a removal moves nothing. Tombstones go in
	 * one sweep once they are a quarter of the entries. */
	struct vec entries;	/* uintptr_t */
	size_t dead;		/* tombstones among them */
	/* By submitted_at, then id: struct jobtable_at, a removed job's
	 * with JOBTABLE_GONE in its id, swept as the entries are. Kept only
	 * when by_submission is set (a cluster's store, whose ids do not
	 * follow submission): on one host id order is submission order,
	 * and 16 bytes a job are saved. */
	struct vec order;
	size_t order_dead;
	bool by_submission;	/* set before the first job is added */
	/* The jobs with an idempotency key, by uid and key. */
	struct jobkeys keys;
};
struct jobtable_at {
	int64_t at;		/* the job's submitted_at */
	uint64_t id;
};
#define JOBTABLE_GONE (UINT64_C(1) << 63)

/* Frees every job and the table's memory. */
void jobtable_free(struct jobtable *t);
/* Room for n more jobs, so that adding them cannot fail: 0, or -1 ENOMEM. */
int jobtable_reserve(struct jobtable *t, size_t n);
/*
 * Adds job, whose id no job in the table has, in its place by id: at the
 * end in O(1) when its id is the largest, as a store's own new jobs are;
 * else by moving the ones after it. The same in submission order, where a
 * new job is last or near the end. Its submitted_at must not change while
 * it is in the table. 0, or -1 with ENOMEM (nothing changed).
 */
int jobtable_add(struct jobtable *t, struct job *job);
/* Takes the job with this id out (the caller frees it); NULL when there
 * is none. */
struct job *jobtable_remove(struct jobtable *t, uint64_t id);
/*
 * The job of uid with this idempotency key; NULL when none. A job with a
 * key is found by it once added, unless memory ran out as it was (its add
 * does not fail for it: the job is there, only not by its key).
 */
struct job *jobtable_by_key(const struct jobtable *t, uid_t uid,
    const char *key);

struct job *jobtable_get(const struct jobtable *t, uint64_t id);
/* The job with the smallest id above after_id; NULL at the end. */
struct job *jobtable_next(const struct jobtable *t, uint64_t after_id);
/*
 * The job after the one with id after_id in submission order (submitted_at,
 * then id; 0: the first). When no job has that id any more (removed since),
 * the walk goes on from where the next job by id stands, as if after_id
 * had been submitted then: in id order itself where ids follow submission
 * (one host). NULL at the end. O(log n).
 */
struct job *jobtable_next_submitted(const struct jobtable *t,
    uint64_t after_id);
/* Every job in id order, in O(1) a step (store_iter). */
struct job *jobtable_iter(const struct jobtable *t, size_t *pos);
struct job *jobtable_last(const struct jobtable *t);
size_t jobtable_count(const struct jobtable *t);

#endif
