/* tsupport-err.c - for tests and benchmarks: what went wrong in the support
 * library, a message its caller reports its own way (fail_msg, stderr). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "tsupport-err.h"

int
tsupport_err_set(struct tsupport_err *err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	errno = saved;
	return -1;
}
