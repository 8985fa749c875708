/* bench-why.h - for the benchmarks: whether a measurement failed, and the
 * first reason given (the later ones tend to repeat it). */
#ifndef TRIAGE_BENCH_WHY_H
#define TRIAGE_BENCH_WHY_H

#include <stdbool.h>

struct bench_why {
	bool failed;
	char text[512];		/* the first reason, "" while none */
};

/* Marks w failed; the reason is kept only when it is the first. */
void bench_why_set(struct bench_why *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sets *cause to the message, allocated: the caller's to free (NULL when
 * out of memory). */
void bench_why_alloc(char **cause, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
