/* slab.c - fixed-size slots in blocks of a few MiB from mmap, asking for huge
 * pages: a million jobs are a few hundred page faults rather than 60,000. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "slab.h"

#define SLAB_BLOCK (4 * 1024 * 1024)

/* Under a sanitizer every slot is its own allocation, so that a use after
 * free is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_MALLOC 1
#endif
#endif

#ifdef SLAB_MALLOC
void *
slab_alloc(struct slab *s)
{
	return calloc(1, s->size);
}

void
slab_free(struct slab *s, void *p)
{
	(void)s;
	free(p);
}
#else
void *
slab_alloc(struct slab *s)
{
	void *p;

	if ((p = s->free) != NULL) {
		memcpy(&s->free, p, sizeof s->free);
		memset(p, 0, s->size);
		return p;
	}
	if (s->next == NULL || (size_t)(s->end - s->next) < s->size) {
		p = mmap(NULL, SLAB_BLOCK, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			errno = ENOMEM;
			return NULL;
		}
		/* Only a hint: without huge pages it is slower, not wrong. */
		(void)madvise(p, SLAB_BLOCK, MADV_HUGEPAGE);
		s->next = p;
		s->end = s->next + SLAB_BLOCK;
	}
	/* Fresh from mmap: zero already. */
	p = s->next;
	s->next += s->size;
	return p;
}

void
slab_free(struct slab *s, void *p)
{
	if (p == NULL)
		return;
	memcpy(p, &s->free, sizeof s->free);
	s->free = p;
}
#endif
