/* cmd-wait.c - triage wait: waits for jobs to finish and exits with the
 * first failing one's status, so a script can wait like the shell's wait. */
#include <stdio.h>

#include "cmd.h"
#include "exitcode.h"
#include "format.h"
#include "xmalloc.h"

static int cmd_wait_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_wait_entry = {
	.name = "wait",
	.args = "ID...",
	.summary = "wait for jobs to finish; exit with their status",
	.options = NULL,
	.notes =
	    "Waits for each job in turn and exits with the first non-zero "
	    "status in the\n"
	    "order given, else 0: a job's exit code, 128+N for signal N, 124 "
	    "timed out,\n"
	    "125 canceled, 126 lost, 127 failed without running, 1 for an ID "
	    "the\n"
	    "daemon refused. With --json, prints each finished job object.\n",
	.exec = cmd_wait_exec,
};

/* Waits for one job and sets *code to its exit status; returns ours. */
static int
cmd_wait_one(struct cmd_ctx *ctx, int64_t id, int *code)
{
	json_t *job;
	int rc;

	for (;;) {
		rc = cmd_call(ctx, "wait", xjson(json_pack("{s:I}", "id",
		    (json_int_t)id)), &job);
		if (rc != CMD_EXIT_OK)
			return rc;
		*code = exitcode_of_job(job);
		if (*code != -1 && ctx->json)
			format_json_line(job);
		json_decref(job);
		if (*code != -1)
			return CMD_EXIT_OK;
		/* Answered before the end (a daemon's own limit): again. */
	}
}

static int
cmd_wait_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	int64_t id;
	int i, rc, code = 0, status = CMD_EXIT_OK;

	if ((rc = cmd_plain_args(ctx, argc, argv, 1, -1, "job id")) !=
	    CMD_EXIT_OK || (rc = cmd_check_ids(ctx, argc, argv)) != CMD_EXIT_OK)
		return rc;

	for (i = optind; i < argc; i++) {
		cmd_parse_id(argv[i], &id);
		rc = cmd_wait_one(ctx, id, &code);
		/* Without the daemon, the other jobs cannot be waited for. */
		if (rc == CMD_EXIT_UNREACHABLE)
			return rc;
		if (rc != CMD_EXIT_OK)
			code = rc;
		if (status == CMD_EXIT_OK)
			status = code;
	}
	return status;
}
