/* prioremap.h - for those who keep something per priority: moving it to the
 * new numbering of a reload (jobs_reprioritize's map). */
#ifndef TRIAGED_PRIOREMAP_H
#define TRIAGED_PRIOREMAP_H

#include <stddef.h>

/*
 * v is CONFIG_PRIORITIES_MAX elements of size bytes, by priority; map[i]
 * (i < nold) is old priority i's new index, or -1 when it goes. Each kept
 * element moves to its new index; every other one is zeroed. 0, or -1 out
 * of memory, with every element zeroed.
 */
int prioremap(void *v, size_t size, unsigned nold, const int *map);

#endif
