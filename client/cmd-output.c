/* cmd-output.c - triage output: the bytes a job wrote to stdout or stderr,
 * as captured, paged by offset; -f follows a running job to its end. */
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "outstream.h"
#include "xmalloc.h"

#define CMD_OUTPUT_STDERR	0x130
#define CMD_OUTPUT_TAIL		0x131
#define CMD_OUTPUT_BOTH		0x132

static int cmd_output_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_output_entry = {
	.name = "output",
	.args = "[ID] [--stderr | --both] [--tail N] [-f]",
	.summary = "print what a job wrote to stdout (or stderr)",
	.options =
	    "      --stderr         the job's stderr instead of its stdout\n"
	    "      --both           its stdout, then its stderr (when they "
	    "were not merged)\n"
	    "      --tail N         only the last N lines\n"
	    "  -f, --follow         keep printing while the job runs, until "
	    "it ends,\n"
	    "                       through every attempt it retries\n",
	.notes =
	    "Without ID, your most recent job. The bytes are written as the "
	    "job wrote\n"
	    "them, those of its latest attempt (each attempt starts its "
	    "output afresh).\n"
	    "When a new attempt starts, a line \"--- attempt N ---\" goes to "
	    "stderr and\n"
	    "its output follows. With --json, prints the daemon's output "
	    "replies instead,\n"
	    "one per line.\n",
	.exec = cmd_output_exec,
};

/* The id of the caller's most recent job; an exit status. */
static int
cmd_output_latest(struct cmd_ctx *ctx, json_int_t *id)
{
	json_t *jobs, *job;
	size_t i;
	int rc;

	if ((rc = cmd_list_fetch(ctx, xjson(json_object()), &jobs)) !=
	    CMD_EXIT_OK)
		return rc;
	*id = 0;
	json_array_foreach(jobs, i, job) {
		if (json_integer_value(json_object_get(job, "uid")) ==
		    (json_int_t)geteuid())
			*id = json_integer_value(json_object_get(job, "id"));
	}
	json_decref(jobs);
	if (*id != 0)
		return CMD_EXIT_OK;
	cmd_error("you have no jobs the daemon keeps: give an id");
	return CMD_EXIT_FAILURE;
}

/* --both: whether the job's stderr went into its stdout. */
static int
cmd_output_merged(struct cmd_ctx *ctx, json_int_t id, bool *merged)
{
	json_t *job;
	int rc;

	if ((rc = cmd_call(ctx, "get", xjson(json_pack("{s:I}", "id", id)),
	    &job)) != CMD_EXIT_OK)
		return rc;
	*merged = json_is_true(json_object_get(job, "merge_output"));
	json_decref(job);
	return CMD_EXIT_OK;
}

static int
cmd_output_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stderr", no_argument, NULL, CMD_OUTPUT_STDERR },
		{ "both", no_argument, NULL, CMD_OUTPUT_BOTH },
		{ "tail", required_argument, NULL, CMD_OUTPUT_TAIL },
		{ "follow", no_argument, NULL, 'f' },
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct outstream o = { .stream = "stdout" };
	bool both = false, merged = false;
	json_t *result;
	int64_t id;
	int ch, rc;

	while ((ch = cmd_getopt(ctx, argc, argv, ":hf", longopts)) != -1) {
		switch (ch) {
		case CMD_OUTPUT_STDERR:
			o.stream = "stderr";
			break;
		case CMD_OUTPUT_BOTH:
			both = true;
			break;
		case CMD_OUTPUT_TAIL:
			if (cmd_parse_count(optarg, 1, &o.tail) == -1)
				return cmd_usage(ctx, "invalid --tail '%s' (a "
				    "count of lines, at least 1)", optarg);
			break;
		case 'f':
			o.follow = true;
			break;
		case CMD_GETOPT_EXIT:
			return ctx->status;
		default:
			return cmd_usage(ctx, "unknown option");
		}
	}
	if (both && strcmp(o.stream, "stderr") == 0)
		return cmd_usage(ctx, "--both and --stderr exclude each other");
	if (both && o.follow)
		return cmd_usage(ctx, "--both and -f exclude each other: follow "
		    "one stream");
	if (argc - optind > 1)
		return cmd_usage(ctx, "give one job id, or none for your most "
		    "recent job");
	if (argc - optind == 1) {
		if (cmd_parse_id(argv[optind], &id) == -1)
			return cmd_usage(ctx, "invalid job id '%s'",
			    argv[optind]);
		o.id = id;
	} else if ((rc = cmd_output_latest(ctx, &o.id)) != CMD_EXIT_OK)
		return rc;
	if (both && (rc = cmd_output_merged(ctx, o.id, &merged)) !=
	    CMD_EXIT_OK)
		return rc;

	/* Watch before the first read, so no change can slip between. */
	if (o.follow) {
		rc = cmd_call(ctx, "watch", xjson(json_pack("{s:[I]}", "ids",
		    o.id)), &result);
		if (rc != CMD_EXIT_OK)
			return rc;
		json_decref(result);
	}
	if ((rc = outstream_print(ctx, &o)) != CMD_EXIT_OK || !both ||
	    merged)
		return rc;
	fflush(stdout);
	o = (struct outstream){ .id = o.id, .stream = "stderr",
	    .tail = o.tail };
	return outstream_print(ctx, &o);
}
