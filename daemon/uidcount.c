/* uidcount.c - a count per uid (queued jobs, say), kept only for the uids
 * whose count is not zero: a tree of a few nodes on a typical host. */
#include <search.h>
#include <stdlib.h>

#include "uidcount.h"

struct uidcount_node {
	uid_t uid;
	unsigned n;
};

static int
uidcount_cmp(const void *a, const void *b)
{
	uid_t x = ((const struct uidcount_node *)a)->uid;
	uid_t y = ((const struct uidcount_node *)b)->uid;

	return x < y ? -1 : x > y;
}

int
uidcount_add(struct uidcount *uc, uid_t uid, int delta)
{
	struct uidcount_node key = { .uid = uid }, *node, **found;

	if ((found = tfind(&key, &uc->root, uidcount_cmp)) == NULL) {
		if (delta <= 0)
			return 0;
		if ((node = calloc(1, sizeof *node)) == NULL)
			return -1;
		node->uid = uid;
		if (tsearch(node, &uc->root, uidcount_cmp) == NULL) {
			free(node);
			return -1;
		}
	} else
		node = *found;
	if (delta < 0 && node->n <= (unsigned)-delta) {
		tdelete(node, &uc->root, uidcount_cmp);
		free(node);
		return 0;
	}
	node->n += (unsigned)delta;
	return 0;
}

unsigned
uidcount_get(const struct uidcount *uc, uid_t uid)
{
	struct uidcount_node key = { .uid = uid }, **found;

	found = tfind(&key, &uc->root, uidcount_cmp);
	return found != NULL ? (*found)->n : 0;
}

void
uidcount_clear(struct uidcount *uc)
{
	tdestroy(uc->root, free);
	uc->root = NULL;
}
