/* cmd-cancel.c - triage cancel: cancels jobs, going on past the ones the
 * daemon refuses so that one bad id does not spare the others. */
#include <stdio.h>

#include "cmd.h"
#include "format.h"
#include "xmalloc.h"

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
	json_t *job;
	int64_t id;
	int i, rc, status = CMD_EXIT_OK;

	if ((rc = cmd_plain_args(ctx, argc, argv, 1, -1, "job id")) !=
	    CMD_EXIT_OK || (rc = cmd_check_ids(ctx, argc, argv)) != CMD_EXIT_OK)
		return rc;

	for (i = optind; i < argc; i++) {
		cmd_parse_id(argv[i], &id);
		rc = cmd_call(ctx, "cancel", xjson(json_pack("{s:I}", "id",
		    (json_int_t)id)), &job);
		if (rc == CMD_EXIT_UNREACHABLE)
			return rc;
		if (rc != CMD_EXIT_OK) {
			status = rc;
			continue;
		}
		if (ctx->json)
			format_json_line(job);
		json_decref(job);
	}
	return status;
}
