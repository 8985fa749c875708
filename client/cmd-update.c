/* cmd-update.c - triage update: changes what a queued job will be when it
 * runs, its priority, name, limits, start time, nice value, memory,
 * resources and labels. */
#include "cmd.h"
#include "format.h"
#include "jobopt.h"
#include "xmalloc.h"

#define CMD_UPDATE_TIMEOUT	0x170
#define CMD_UPDATE_RETRIES	0x171
#define CMD_UPDATE_AT		0x172
#define CMD_UPDATE_DELAY	0x173
#define CMD_UPDATE_NICE		0x174
#define CMD_UPDATE_LABEL	0x175

static int cmd_update_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_update_entry = {
	.name = "update",
	.args = "ID [-p PRIO] [-n NAME] [--timeout T] [--retries N]\n"
	    "           [--at TIME | --delay D] [--nice N] [--memory SIZE]\n"
	    "           [--gpus N] [--res NAME=N]... [--label K=V]...",
	.summary = "change a queued job",
	.options =
	    "  -p, --priority PRIO  move it to the tail of PRIO's queue\n"
	    "  -n, --name NAME      a new name\n"
	    "      --timeout T      kill it after T once it runs: 30s, 5m, 2h "
	    "(0 = none)\n"
	    "      --retries N      run it again up to N times if it fails\n"
	    "      --at TIME        start it no sooner than TIME: HH:MM (today, "
	    "or\n"
	    "                       tomorrow once past) or RFC 3339\n"
	    "      --delay D        start it no sooner than D from now: 10m, "
	    "2h, 1d\n"
	    "      --nice N         its nice value, 0 to 19\n"
	    "      --memory SIZE, --mem SIZE\n"
	    "                       the memory it may use: 512MiB, 4GiB, at "
	    "least 1MiB\n"
	    "      --gpus N         N units of the resource gpu, as --res "
	    "gpu=N\n"
	    "      --res NAME=N     its resources: the ones given replace all "
	    "(repeatable)\n"
	    "      --label K=V      its labels: the ones given replace all "
	    "(repeatable)\n",
	.notes =
	    "Only a queued job can be changed, by its owner or an admin. With "
	    "--json,\n"
	    "prints the job as it is after the change.\n",
	.exec = cmd_update_exec,
};

static int
cmd_update_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "priority", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, CMD_UPDATE_TIMEOUT },
		{ "retries", required_argument, NULL, CMD_UPDATE_RETRIES },
		{ "at", required_argument, NULL, CMD_UPDATE_AT },
		{ "delay", required_argument, NULL, CMD_UPDATE_DELAY },
		{ "nice", required_argument, NULL, CMD_UPDATE_NICE },
		{ "label", required_argument, NULL, CMD_UPDATE_LABEL },
		JOBOPT_USES_LONGOPTS,
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	json_t *params, *job;
	int ch, rc = CMD_EXIT_OK, starts = 0;
	int64_t id;

	params = xjson(json_object());
	while (rc == CMD_EXIT_OK &&
	    (ch = cmd_getopt(ctx, argc, argv, ":hp:n:", longopts)) != -1) {
		switch (ch) {
		case 'p':
		case 'n':
			rc = jobopt_string(ctx, params, ch, optarg);
			break;
		case CMD_UPDATE_TIMEOUT:
			rc = jobopt_timeout(ctx, params, optarg);
			break;
		case CMD_UPDATE_RETRIES:
			rc = jobopt_retries(ctx, params, optarg);
			break;
		case CMD_UPDATE_AT:
		case CMD_UPDATE_DELAY:
			starts++;
			rc = jobopt_begin_at(ctx, params, ch == CMD_UPDATE_AT ?
			    "--at" : "--delay", optarg);
			break;
		case CMD_UPDATE_NICE:
			rc = jobopt_nice(ctx, params, optarg);
			break;
		case CMD_UPDATE_LABEL:
			rc = jobopt_label(ctx, params, optarg);
			break;
		case JOBOPT_MEMORY:
		case JOBOPT_MEM:
		case JOBOPT_GPUS:
		case JOBOPT_RES:
			rc = jobopt_uses(ctx, params, ch, optarg);
			break;
		default:
			rc = cmd_getopt_other(ctx, ch);
			break;
		}
	}
	if (rc == CMD_EXIT_OK && starts > 1)
		rc = cmd_usage(ctx, "give one of --at and --delay, once");
	if (rc == CMD_EXIT_OK && argc - optind != 1)
		rc = cmd_usage(ctx, "give one job id");
	if (rc == CMD_EXIT_OK && cmd_parse_id(argv[optind], &id) == -1)
		rc = cmd_usage(ctx, "invalid job id '%s'", argv[optind]);
	if (rc == CMD_EXIT_OK && json_object_size(params) == 0)
		rc = cmd_usage(ctx, "nothing to change: give -p, -n, "
		    "--timeout, --retries, --at, --delay, --nice, --memory, "
		    "--gpus, --res or --label");
	if (rc != CMD_EXIT_OK) {
		json_decref(params);
		return rc;
	}
	json_object_set_new(params, "id", xjson(json_integer(id)));
	if ((rc = cmd_call(ctx, "update", params, &job)) != CMD_EXIT_OK)
		return rc;
	if (ctx->json)
		format_json_line(job);
	json_decref(job);
	return CMD_EXIT_OK;
}
