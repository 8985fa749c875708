/* exitcode.h - the exit status `triage wait` and `triage submit --wait` give
 * for a finished job, as triage(1) documents it under EXIT STATUS. */
#ifndef TRIAGE_EXITCODE_H
#define TRIAGE_EXITCODE_H

#include <jansson.h>

/* A job killed by signal N gives EXITCODE_SIGNAL + N, as a shell does. */
#define EXITCODE_SIGNAL		128
#define EXITCODE_TIMED_OUT	124	/* as timeout(1) */
#define EXITCODE_CANCELED	125
#define EXITCODE_LOST		126
#define EXITCODE_FAILED		127	/* failed without an exit code */

/*
 * The exit status for a job object in a terminal state: 0 for succeeded;
 * for failed, its exit_code, or EXITCODE_SIGNAL + the number of its signal,
 * or EXITCODE_FAILED when it has neither (it never ran); EXITCODE_TIMED_OUT,
 * EXITCODE_CANCELED and EXITCODE_LOST for those states, whatever the process
 * did. Returns -1 with errno EINVAL when job is not an object with a terminal
 * state (queued, running, or a state this version does not know).
 */
int exitcode_of_job(const json_t *job);

/*
 * The number of a signal named as the job object names it: "SIGKILL", also
 * "KILL", "SIGRTMIN+3", "SIGRTMAX-1" or "SIG40". Returns -1 when unknown.
 */
int exitcode_signal_number(const char *name);

#endif
