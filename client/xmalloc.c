/* xmalloc.c - allocation for the triage CLI that exits on failure, so that
 * commands are not buried under checks they could do nothing about. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

void
xoom(void)
{
	fputs("triage: out of memory\n", stderr);
	exit(1);
}

void *
xmalloc(size_t size)
{
	void *p;

	if ((p = malloc(size == 0 ? 1 : size)) == NULL)
		xoom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size)) == NULL)
		xoom();
	return p;
}

void *
xreallocarray(void *p, size_t n, size_t size)
{
	if ((p = reallocarray(p, n == 0 ? 1 : n, size == 0 ? 1 : size)) ==
	    NULL)
		xoom();
	return p;
}

char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		xoom();
	return p;
}

json_t *
xjson(json_t *v)
{
	if (v == NULL)
		xoom();
	return v;
}
