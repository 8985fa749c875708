/* cmd-retry.c - triage retry: jobs that failed, timed out, were canceled or
 * lost go back to their queues as new attempts. */
#include "cmd.h"
#include "selector.h"

const struct cmd_entry cmd_retry_entry = {
	.name = "retry",
	.args = SELECTOR_ARGS,
	.summary = "queue ended jobs again, as new attempts",
	.options = SELECTOR_HELP,
	.notes =
	    "A job that failed, timed out, was canceled or was lost goes "
	    "back to the tail\n"
	    "of its priority's queue with its attempt counted up; its "
	    "output is\n"
	    "overwritten by the new run. A single id of a succeeded, queued"
	    " or running\n"
	    "job is refused; with several ids or an option that chooses "
	    "jobs, those are\n"
	    "skipped (each id is said on stderr, status 1), and the ids of "
	    "the jobs\n"
	    "retried are printed, one a line. With --json, prints the "
	    "daemon's answer:\n"
	    "the job, or {\"ids\": [...]}.\n",
	.exec = selector_exec,
};
