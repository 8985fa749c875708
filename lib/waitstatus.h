/* waitstatus.h - how a process ended, in words: "exited with status 3",
 * "killed by SIGKILL", and signal names, the same everywhere. */
#ifndef TRIAGE_WAITSTATUS_H
#define TRIAGE_WAITSTATUS_H

#include <stddef.h>

/* Enough for any waitstatus_describe() text and its NUL. */
#define WAITSTATUS_MAX 64
/* Enough for any signal name ("SIGKILL", "SIG64") and its NUL. */
#define WAITSTATUS_SIGNAME_MAX 16

/* "exited with status 3", "killed by SIGSEGV (core dumped)", for a wait
 * status; truncated like snprintf. Returns buf. */
char *waitstatus_describe(int status, char *buf, size_t len);

/* "SIGTERM", or "SIG%d" for a number without a name. Returns buf. */
char *waitstatus_signame(int sig, char buf[WAITSTATUS_SIGNAME_MAX]);

#endif
