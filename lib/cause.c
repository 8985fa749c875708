/* cause.c - the one-line, allocated message a failing lib/ call leaves in
 * *cause for its caller to log or send. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"

int
cause_fail(char **cause, const char *fmt, ...)
{
	va_list ap;

	if (cause == NULL)
		return -1;
	va_start(ap, fmt);
	if (vasprintf(cause, fmt, ap) < 0)
		*cause = strdup("out of memory");
	va_end(ap);
	return -1;
}
