/* exitcode.c - from a finished job object to the exit status of the triage
 * command that waited for it, so scripts can tell the outcomes apart. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "exitcode.h"

/* Reads "N" of at most 3 digits; -1 if s is anything else. */
static int
exitcode_small_number(const char *s)
{
	int n = 0;
	size_t i;

	for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
		if (i == 3)
			return -1;
		n = n * 10 + (s[i] - '0');
	}
	if (i == 0 || s[i] != '\0')
		return -1;
	return n;
}

int
exitcode_signal_number(const char *name)
{
	const char *abbrev;
	int sig, n;

	if (name == NULL)
		return -1;
	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	if ((n = exitcode_small_number(name)) != -1)
		return n >= 1 && n < NSIG ? n : -1;
	/* glibc does not name the real-time signals: they are counted. */
	if (strcmp(name, "RTMIN") == 0)
		return SIGRTMIN;
	if (strcmp(name, "RTMAX") == 0)
		return SIGRTMAX;
	if (strncmp(name, "RTMIN+", 6) == 0) {
		n = exitcode_small_number(name + 6);
		return n != -1 && n <= SIGRTMAX - SIGRTMIN ? SIGRTMIN + n : -1;
	}
	if (strncmp(name, "RTMAX-", 6) == 0) {
		n = exitcode_small_number(name + 6);
		return n != -1 && n <= SIGRTMAX - SIGRTMIN ? SIGRTMAX - n : -1;
	}
	for (sig = 1; sig < NSIG; sig++) {
		if ((abbrev = sigabbrev_np(sig)) != NULL &&
		    strcmp(abbrev, name) == 0)
			return sig;
	}
	return -1;
}

int
exitcode_of_job(const json_t *job)
{
	const json_t *code;
	const char *state;
	int sig;

	if ((state = json_string_value(json_object_get(job, "state"))) ==
	    NULL) {
		errno = EINVAL;
		return -1;
	}
	if (strcmp(state, "succeeded") == 0)
		return 0;
	if (strcmp(state, "timed_out") == 0)
		return EXITCODE_TIMED_OUT;
	if (strcmp(state, "canceled") == 0)
		return EXITCODE_CANCELED;
	if (strcmp(state, "lost") == 0)
		return EXITCODE_LOST;
	if (strcmp(state, "failed") != 0) {
		errno = EINVAL;
		return -1;
	}

	code = json_object_get(job, "exit_code");
	if (json_is_integer(code)) {
		json_int_t n = json_integer_value(code);

		/* A failure must not read as success, nor wrap around. */
		if (n >= 1 && n <= 255)
			return (int)n;
		return 1;
	}
	sig = exitcode_signal_number(json_string_value(json_object_get(job,
	    "signal")));
	if (sig > 0)
		return EXITCODE_SIGNAL + sig;
	if (json_is_string(json_object_get(job, "signal")))
		return EXITCODE_SIGNAL;		/* a signal we cannot name */
	return EXITCODE_FAILED;
}
