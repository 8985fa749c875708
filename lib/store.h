/* store.h - where jobs live: every job the daemon knows, by id, and the next
 * id to give. In memory for now; SQLite goes behind the same interface. */
#ifndef TRIAGE_STORE_H
#define TRIAGE_STORE_H

#include <stddef.h>
#include <stdint.h>

struct job;
struct store;

/* Returns an empty store, or NULL with errno set. */
struct store *store_open(void);
/* Frees the store and every job in it. */
void store_close(struct store *st);

/* The id the next job gets; ids only grow and are never reused. */
uint64_t store_next_id(const struct store *st);

/*
 * Adds job, whose id must be store_next_id(); the store owns it from then on.
 * Returns 0, or -1 with errno (ENOMEM, or EINVAL for a wrong id) and the job
 * still the caller's.
 */
int store_add(struct store *st, struct job *job);

/* Records that job changed; 0, or -1 with errno when it could not be kept. */
int store_update(struct store *st, const struct job *job);

/* The job with this id, borrowed; NULL when there is none. */
struct job *store_get(const struct store *st, uint64_t id);
/* The job with the smallest id above after_id, borrowed; NULL at the end. */
struct job *store_next(const struct store *st, uint64_t after_id);

/* Forgets the job with this id and frees it; -1 with ENOENT if unknown. */
int store_remove(struct store *st, uint64_t id);
size_t store_count(const struct store *st);

#endif
