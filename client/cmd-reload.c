/* cmd-reload.c - triage reload: the daemon reads its config again and puts
 * it in force, or says why not, one reason a line. */
#include <stdio.h>

#include "triage/client.h"
#include "cmd.h"
#include "format.h"
#include "xmalloc.h"

/* protocol.md: the config was rejected; data.errors says why. */
#define CMD_RELOAD_REJECTED	(-32006)

static int cmd_reload_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_reload_entry = {
	.name = "reload",
	.args = "",
	.summary = "make the daemon read its config again",
	.options = NULL,
	.notes =
	    "The same as sending triaged SIGHUP, but waits for the outcome: "
	    "prints\n"
	    "\"reloaded\" once the new config is in force. A rejected config "
	    "changes\n"
	    "nothing: each reason is printed on stderr and the exit status is "
	    "4.\n"
	    "Admins only. With --json, prints the result object.\n",
	.exec = cmd_reload_exec,
};

static int
cmd_reload_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct triage_error err;
	struct triage_client *c;
	json_t *result;
	int rc;

	if ((rc = cmd_plain_args(ctx, argc, argv, 0, 0, NULL)) != CMD_EXIT_OK)
		return rc;
	if ((c = cmd_client(ctx)) == NULL)
		return CMD_EXIT_UNREACHABLE;
	result = triage_client_call(c, "reload", xjson(json_object()), -1,
	    &err);
	if (result == NULL) {
		if (err.code != CMD_RELOAD_REJECTED)
			return cmd_report(&err);
		if (err.errors[0] != '\0')
			fprintf(stderr, "%s\n", err.errors);
		else
			cmd_error("%s", err.message);
		return CMD_EXIT_REJECTED;
	}
	if (ctx->json)
		format_json_line(result);
	else
		printf("reloaded\n");
	json_decref(result);
	return CMD_EXIT_OK;
}
