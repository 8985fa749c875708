/* intern.c - strings and string vectors that many jobs hold alike, kept once:
 * a chained hash table of counted copies, found again by their content. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"

#define INTERN_MIN_BUCKETS 64

/* One shared copy: a string's bytes, or a vector's pointers followed by its
 * strings, in data. */
struct intern_entry {
	struct intern_entry *next;
	uint64_t hash;
	unsigned long holders;
	bool vec;
	char *data[];
};

static struct {
	struct intern_entry **buckets;
	size_t nbuckets;	/* a power of two, or 0 while empty */
	unsigned long count;
} intern_table;

/* FNV-1a, over the strings and the terminator of each. */
static uint64_t
intern_hash_add(uint64_t h, const char *s)
{
	do {
		h ^= (unsigned char)*s;
		h *= UINT64_C(0x100000001b3);
	} while (*s++ != '\0');
	return h;
}

static uint64_t
intern_hash(const char *s, char *const *v)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	if (v == NULL)
		return intern_hash_add(h, s);
	/* A vector never hashes as the string of its first element does. */
	h = intern_hash_add(h, "\x01vector");
	for (; *v != NULL; v++)
		h = intern_hash_add(h, *v);
	return h;
}

static bool
intern_equal(const struct intern_entry *e, const char *s, char *const *v)
{
	char *const *w = e->data;

	if (v == NULL)
		return !e->vec && strcmp((const char *)e->data, s) == 0;
	if (!e->vec)
		return false;
	for (; *v != NULL && *w != NULL; v++, w++)
		if (strcmp(*v, *w) != 0)
			return false;
	return *v == NULL && *w == NULL;
}

/* The bucket's link that points at the entry of this content (or at NULL
 * where it would go). */
static struct intern_entry **
intern_find(uint64_t hash, const char *s, char *const *v)
{
	struct intern_entry **link;

	link = &intern_table.buckets[hash & (intern_table.nbuckets - 1)];
	for (; *link != NULL; link = &(*link)->next)
		if ((*link)->hash == hash && intern_equal(*link, s, v))
			break;
	return link;
}

/* Room for one more entry: the table doubles past one entry a bucket.
 * 0, or -1 out of memory (the table stays as it was). */
static int
intern_grow(void)
{
	struct intern_entry **buckets, *e, *next;
	size_t n, i;

	if (intern_table.count < intern_table.nbuckets)
		return 0;
	n = intern_table.nbuckets ? intern_table.nbuckets * 2 :
	    INTERN_MIN_BUCKETS;
	if ((buckets = calloc(n, sizeof *buckets)) == NULL)
		return -1;
	for (i = 0; i < intern_table.nbuckets; i++)
		for (e = intern_table.buckets[i]; e != NULL; e = next) {
			next = e->next;
			e->next = buckets[e->hash & (n - 1)];
			buckets[e->hash & (n - 1)] = e;
		}
	free(intern_table.buckets);
	intern_table.buckets = buckets;
	intern_table.nbuckets = n;
	return 0;
}

/* A new entry holding a copy of s or v; NULL out of memory. */
static struct intern_entry *
intern_entry_new(uint64_t hash, const char *s, char *const *v)
{
	struct intern_entry *e;
	size_t n = 0, bytes = 0, i, len;
	char *p;

	if (v == NULL)
		bytes = strlen(s) + 1;
	else
		for (; v[n] != NULL; n++)
			bytes += strlen(v[n]) + 1;
	if (v != NULL)
		bytes += (n + 1) * sizeof(char *);
	if ((e = malloc(sizeof *e + bytes)) == NULL)
		return NULL;
	e->hash = hash;
	e->holders = 1;
	e->vec = v != NULL;
	if (v == NULL) {
		memcpy(e->data, s, bytes);
		return e;
	}
	p = (char *)&e->data[n + 1];
	for (i = 0; i < n; i++) {
		len = strlen(v[i]) + 1;
		e->data[i] = memcpy(p, v[i], len);
		p += len;
	}
	e->data[n] = NULL;
	return e;
}

/* One more holder of the entry for s or v, made when there is none. */
static struct intern_entry *
intern_hold(const char *s, char *const *v)
{
	uint64_t hash = intern_hash(s, v);
	struct intern_entry **link, *e;

	if (intern_grow() == -1) {
		errno = ENOMEM;
		return NULL;
	}
	link = intern_find(hash, s, v);
	if ((e = *link) != NULL) {
		e->holders++;
		return e;
	}
	if ((e = intern_entry_new(hash, s, v)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	e->next = NULL;
	*link = e;
	intern_table.count++;
	return e;
}

/* One holder fewer of the entry for s or v, which must be there. */
static void
intern_release(const char *s, char *const *v)
{
	struct intern_entry **link, *e;

	if (intern_table.nbuckets == 0)
		return;
	link = intern_find(intern_hash(s, v), s, v);
	if ((e = *link) == NULL || --e->holders > 0)
		return;
	*link = e->next;
	free(e);
	/* Empty, it holds no memory: nothing for a leak checker to see. */
	if (--intern_table.count == 0) {
		free(intern_table.buckets);
		intern_table.buckets = NULL;
		intern_table.nbuckets = 0;
	}
}

/* The entry of a copy this table gave out. */
static struct intern_entry *
intern_entry_of(const void *data)
{
	/* Not a const cast away from the caller's data: the entry is the
	 * table's own, and data its member. */
	return (struct intern_entry *)((uintptr_t)data -
	    offsetof(struct intern_entry, data));
}

const char *
intern_str_hold(const char *shared)
{
	intern_entry_of(shared)->holders++;
	return shared;
}

char *const *
intern_strv_hold(char *const *shared)
{
	intern_entry_of(shared)->holders++;
	return shared;
}

const char *
intern_str(const char *s)
{
	struct intern_entry *e = intern_hold(s, NULL);

	return e != NULL ? (const char *)e->data : NULL;
}

void
intern_str_drop(const char *s)
{
	if (s != NULL)
		intern_release(s, NULL);
}

char *const *
intern_strv(char *const *v)
{
	struct intern_entry *e = intern_hold(NULL, v);

	return e != NULL ? e->data : NULL;
}

void
intern_strv_drop(char *const *v)
{
	if (v != NULL)
		intern_release(NULL, v);
}

unsigned long
intern_count(void)
{
	return intern_table.count;
}
