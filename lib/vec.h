/* vec.h - a growable array of elements of one size, for the lists a store
 * keeps between commits (new jobs, changed ids, callbacks). */
#ifndef TRIAGE_VEC_H
#define TRIAGE_VEC_H

#include <stddef.h>

struct vec {
	void *v;
	size_t n;
	size_t cap;
};

/* Appends the size bytes at elem; 0, or -1 with ENOMEM. */
int vec_push(struct vec *vec, size_t size, const void *elem);
/* Room for n more elements; 0, or -1 with ENOMEM. */
int vec_reserve(struct vec *vec, size_t size, size_t n);
/* Takes the vector's contents away, leaving it empty: callbacks run over
 * what was taken may fill it again. */
struct vec vec_take(struct vec *vec);
/* Empties it and frees its memory (not what its elements point to). */
void vec_free(struct vec *vec);

#endif
