/* slab.h - fixed-size slots for the many objects of one kind (every job), in
 * large blocks: no allocator header each, and not strewn among short-lived
 * allocations. */
#ifndef TRIAGE_SLAB_H
#define TRIAGE_SLAB_H

#include <stddef.h>

/* A slab of objects of size bytes; zero it, then set size. Its blocks
 * stay for the life of the process: freed slots are taken again. */
struct slab {
	size_t size;		/* of one object, a multiple of 8 */
	void *free;		/* freed slots, linked through their start */
	char *next;		/* the unused rest of the newest block */
	char *end;
};

/* A zeroed slot; NULL (errno ENOMEM) when out of memory. */
void *slab_alloc(struct slab *s);
/* Gives the slot back; NULL is fine. */
void slab_free(struct slab *s, void *p);

#endif
