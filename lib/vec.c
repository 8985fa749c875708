/* vec.c - a growable array of elements of one size, doubling as it grows so
 * that appending costs O(1) on average. */
#include <stdlib.h>
#include <string.h>

#include "vec.h"

int
vec_reserve(struct vec *vec, size_t size, size_t n)
{
	size_t cap = vec->cap ? vec->cap : 16;
	void *v;

	while (cap < vec->n + n)
		cap *= 2;
	if (cap == vec->cap)
		return 0;
	if ((v = reallocarray(vec->v, cap, size)) == NULL)
		return -1;
	vec->v = v;
	vec->cap = cap;
	return 0;
}

int
vec_push(struct vec *vec, size_t size, const void *elem)
{
	if (vec->n == vec->cap && vec_reserve(vec, size, 1) != 0)
		return -1;
	memcpy((char *)vec->v + vec->n * size, elem, size);
	vec->n++;
	return 0;
}

struct vec
vec_take(struct vec *vec)
{
	struct vec taken = *vec;

	memset(vec, 0, sizeof *vec);
	return taken;
}

void
vec_free(struct vec *vec)
{
	free(vec->v);
	memset(vec, 0, sizeof *vec);
}
