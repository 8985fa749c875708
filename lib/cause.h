/* cause.h - the one-line, allocated message a failing lib/ call leaves in
 * *cause for its caller to log or send (lib/ never prints). */
#ifndef TRIAGE_CAUSE_H
#define TRIAGE_CAUSE_H

/* Sets *cause (when cause is not NULL) to the formatted message, or to a
 * copy of "out of memory" when that cannot be made; returns -1. */
int cause_fail(char **cause, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
