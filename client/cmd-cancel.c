/* cmd-cancel.c - triage cancel: cancels jobs given by id or chosen by what
 * they are, with SIGTERM or the signal asked for first. */
#include "cmd.h"
#include "exitcode.h"
#include "selector.h"
#include "xmalloc.h"

#define CMD_CANCEL_SIGNAL 0x150

static int cmd_cancel_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_cancel_entry = {
	.name = "cancel",
	.args = "[--signal SIG] [-p PRIO] [--state S] [--label K=V]...\n"
	    "           [--name NAME] [--all] [ID...]",
	.summary = "cancel jobs, queued or running",
	.options =
	    "      --signal SIG     send SIG (INT, SIGINT...) to a running job "
	    "first,\n"
	    "                       not SIGTERM\n"
	    SELECTOR_HELP,
	.notes =
	    "A queued job is canceled at once; a running one gets SIGTERM "
	    "(or SIG), then\n"
	    "SIGKILL after the daemon's kill_grace, and is canceled once it"
	    " has exited. A\n"
	    "finished job is left as it is, and a line notes it. With "
	    "several ids or an\n"
	    "option that chooses jobs (they all apply), prints the ids of "
	    "the jobs it\n"
	    "acted on, one a line; only your own jobs are chosen, unless "
	    "you are an\n"
	    "admin. An id that names no job, or a job not yours, is said on"
	    " stderr\n"
	    "(status 1). With --json, prints the daemon's answer: the job, "
	    "or {\"ids\":\n"
	    "[...]}.\n",
	.exec = cmd_cancel_exec,
};

static int
cmd_cancel_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "signal", required_argument, NULL, CMD_CANCEL_SIGNAL },
		SELECTOR_LONGOPTS,
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct selector sel;
	const char *sig = NULL;
	json_t *params;
	bool bulk;
	int ch, rc = CMD_EXIT_OK;

	selector_init(&sel);
	while (rc == CMD_EXIT_OK && (ch = selector_getopt(ctx, &sel, argc,
	    argv, longopts)) != -1) {
		if (ch == CMD_GETOPT_EXIT)
			rc = ctx->status;
		/* --signal: the only option of its own. */
		else if (exitcode_signal_number(sig = optarg) == -1)
			rc = cmd_usage(ctx, "--signal: unknown signal '%s' "
			    "(try INT, TERM, KILL, USR1)", sig);
	}
	if (rc == CMD_EXIT_OK)
		rc = selector_params(ctx, &sel, argc, argv, &params, &bulk);
	selector_free(&sel);
	if (rc != CMD_EXIT_OK)
		return rc;
	if (sig != NULL)
		json_object_set_new(params, "signal", xjson(json_string(sig)));
	return selector_call(ctx, "cancel", params, bulk);
}
