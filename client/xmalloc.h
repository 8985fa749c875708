/* xmalloc.h - allocation for the triage CLI that cannot fail: out of memory,
 * a command-line tool has nothing better to do than say so and exit. */
#ifndef TRIAGE_XMALLOC_H
#define TRIAGE_XMALLOC_H

#include <stddef.h>

#include <jansson.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
/* Exits when v is NULL (jansson's answer to out of memory); returns v. */
json_t *xjson(json_t *v);
/* Says "triage: out of memory" and exits 1. */
void xoom(void) __attribute__((noreturn));

#endif
