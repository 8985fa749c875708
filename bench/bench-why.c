/* bench-why.c - for the benchmarks: whether a measurement failed, and the
 * first reason given (the later ones tend to repeat it). */
#include <stdarg.h>
#include <stdio.h>

#include "bench-why.h"

void
bench_why_set(struct bench_why *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->failed) {
		va_start(ap, fmt);
		vsnprintf(w->text, sizeof w->text, fmt, ap);
		va_end(ap);
	}
	w->failed = true;
}

void
bench_why_alloc(char **cause, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(cause, fmt, ap) == -1)
		*cause = NULL;
	va_end(ap);
}
