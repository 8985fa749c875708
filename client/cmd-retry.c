/* cmd-retry.c - triage retry: a job that failed, timed out, was canceled or
 * lost goes back to its queue as a new attempt. */
#include "cmd.h"

static int cmd_retry_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_retry_entry = {
	.name = "retry",
	.args = "ID...",
	.summary = "queue ended jobs again, as new attempts",
	.options = NULL,
	.notes =
	    "A job that failed, timed out, was canceled or was lost goes back "
	    "to the tail\n"
	    "of its priority's queue with its attempt counted up; its output "
	    "is\n"
	    "overwritten by the new run. A succeeded, queued or running job "
	    "is refused.\n"
	    "With --json, prints each job as it is after the request.\n",
	.exec = cmd_retry_exec,
};

static int
cmd_retry_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	return cmd_each_id(ctx, argc, argv, "retry");
}
