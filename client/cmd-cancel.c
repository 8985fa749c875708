/* cmd-cancel.c - triage cancel: cancels jobs, going on past the ones the
 * daemon refuses so that one bad id does not spare the others. */
#include "cmd.h"

static int cmd_cancel_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_cancel_entry = {
	.name = "cancel",
	.args = "ID...",
	.summary = "cancel jobs, queued or running",
	.options = NULL,
	.notes =
	    "A queued job is canceled at once; a running one gets SIGTERM, "
	    "then SIGKILL\n"
	    "after the daemon's kill_grace, and is canceled once it has "
	    "exited. A\n"
	    "finished job is left as it is. With --json, prints each job as "
	    "it is after\n"
	    "the request (a running one may still show running).\n",
	.exec = cmd_cancel_exec,
};

static int
cmd_cancel_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	return cmd_each_id(ctx, argc, argv, "cancel");
}
