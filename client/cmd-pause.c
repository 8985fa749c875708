/* cmd-pause.c - triage pause and triage resume: stop and restart dispatch
 * of one priority or all; one file, as they differ only in the method. */
#include <stdio.h>

#include "cmd.h"
#include "format.h"
#include "xmalloc.h"

static int cmd_pause_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_pause_entry = {
	.name = "pause",
	.args = "[PRIO]",
	.summary = "stop starting jobs of PRIO, or of every priority",
	.options = NULL,
	.notes =
	    "Queued jobs stay queued and new ones are still accepted; running "
	    "jobs go\n"
	    "on. Admins only. With --json, prints the daemon's stats object.\n",
	.exec = cmd_pause_exec,
};

const struct cmd_entry cmd_resume_entry = {
	.name = "resume",
	.args = "[PRIO]",
	.summary = "start jobs of PRIO, or of every priority, again",
	.options = NULL,
	.notes =
	    "Admins only. With --json, prints the daemon's stats object.\n",
	.exec = cmd_pause_exec,
};

static int
cmd_pause_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	json_t *params, *stats, *v;
	int rc;

	if ((rc = cmd_plain_args(ctx, argc, argv, 0, 1, "priority")) !=
	    CMD_EXIT_OK)
		return rc;

	params = xjson(json_object());
	if (optind < argc) {
		if ((v = json_string(argv[optind])) == NULL) {
			json_decref(params);
			return cmd_usage(ctx,
			    "the priority is not valid UTF-8");
		}
		json_object_set_new(params, "priority", v);
	}
	/* The entry says which: pause and resume share the rest. */
	rc = cmd_call(ctx, ctx->entry->name, params, &stats);
	if (rc != CMD_EXIT_OK)
		return rc;
	if (ctx->json)
		format_json_line(stats);
	json_decref(stats);
	return CMD_EXIT_OK;
}
