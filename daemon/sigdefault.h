/* sigdefault.h - a forked child's way back to a fresh process's signal
 * state, for the worker and for the job it runs. */
#ifndef TRIAGED_SIGDEFAULT_H
#define TRIAGED_SIGDEFAULT_H

/*
 * Sets every disposition to SIG_DFL and unblocks every signal. Returns 0, or
 * -1 with errno, naming the call that failed in *step ("sigaction",
 * "sigprocmask").
 */
int sigdefault_reset(const char **step);

#endif
