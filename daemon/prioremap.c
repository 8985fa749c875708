/* prioremap.c - for those who keep something per priority: moving it to the
 * new numbering of a reload (jobs_reprioritize's map). */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "prioremap.h"

int
prioremap(void *v, size_t size, unsigned nold, const int *map)
{
	size_t all = size * CONFIG_PRIORITIES_MAX;
	char *old;
	unsigned i;

	/* A reload is rare; the copy is the simple way around a map that
	 * moves one priority where another still is. */
	if ((old = malloc(all)) == NULL) {
		memset(v, 0, all);
		return -1;
	}
	memcpy(old, v, all);
	memset(v, 0, all);
	for (i = 0; i < nold && i < CONFIG_PRIORITIES_MAX; i++)
		if (map[i] >= 0 && map[i] < CONFIG_PRIORITIES_MAX)
			memcpy((char *)v + size * (size_t)map[i],
			    old + size * i, size);
	free(old);
	return 0;
}
