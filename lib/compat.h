/* compat.h - what glibc's headers lack and the BSD-born code style expects:
 * the _SAFE forms of the <sys/queue.h> TAILQ iterators. */
#ifndef TRIAGE_COMPAT_H
#define TRIAGE_COMPAT_H

#include <sys/queue.h>

#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST((head));				\
	    (var) && ((tvar) = TAILQ_NEXT((var), field), 1);		\
	    (var) = (tvar))
#endif

#endif
