/* cmd-clean.c - triage clean: removes the caller's own finished jobs, those
 * of an admin too, which a filter alone would not tell from everyone's. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "format.h"
#include "jobopt.h"
#include "xmalloc.h"

/* Ids per remove request: well under the daemon's max_request. */
#define CMD_CLEAN_CHUNK 1000

#define CMD_CLEAN_STATE 0x160
#define CMD_CLEAN_LABEL 0x161

static int cmd_clean_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_clean_entry = {
	.name = "clean",
	.args = "[-p PRIO] [--state S] [--label K=V]... [-v]",
	.summary = "delete your finished jobs and their output",
	.options =
	    "  -p, --priority PRIO  only jobs of this priority\n"
	    "      --state S        only finished jobs in state S "
	    "(repeatable, or S,S):\n"
	    "                       succeeded, failed, timed_out, canceled, "
	    "lost\n"
	    "      --label K=V      only jobs with this label (repeatable: all "
	    "of them)\n"
	    "  -v, --verbose        print the id of each job removed, one a "
	    "line, too\n",
	.notes =
	    "Removes your own jobs that have finished, also for an admin, and "
	    "prints how\n"
	    "many (\"removed 412 jobs\"). With --json, prints the daemon's "
	    "answers,\n"
	    "{\"ids\": [...]}, one per line.\n",
	.exec = cmd_clean_exec,
};

/* Checks that every state asked for is one a finished job can be in. */
static int
cmd_clean_states(struct cmd_ctx *ctx, const json_t *states)
{
	const char *s;
	json_t *v;
	size_t i;

	json_array_foreach(states, i, v) {
		s = json_string_value(v);
		if (strcmp(s, "queued") == 0 || strcmp(s, "running") == 0)
			return cmd_usage(ctx, "--state %s: only finished jobs "
			    "are removed (succeeded, failed, timed_out, "
			    "canceled, lost)", s);
	}
	return CMD_EXIT_OK;
}

/* Removes the jobs of ids, CMD_CLEAN_CHUNK at a time, printing each
 * answer (--json), or each id removed (verbose), then how many. Returns an
 * exit status. */
static int
cmd_clean_remove(struct cmd_ctx *ctx, const json_t *ids, bool verbose)
{
	json_t *chunk, *result, *id;
	size_t i, j, n = json_array_size(ids), removed = 0;
	int rc = CMD_EXIT_OK;

	for (i = 0; i < n; i += CMD_CLEAN_CHUNK) {
		chunk = xjson(json_array());
		for (j = i; j < n && j < i + CMD_CLEAN_CHUNK; j++)
			json_array_append(chunk, json_array_get(ids, j));
		rc = cmd_call(ctx, "remove", xjson(json_pack("{s:{s:o}}",
		    "filter", "ids", chunk)), &result);
		if (rc != CMD_EXIT_OK)
			break;
		removed += json_array_size(json_object_get(result, "ids"));
		if (ctx->json)
			format_json_line(result);
		else if (verbose) {
			json_array_foreach(json_object_get(result, "ids"), j,
			    id)
				printf("%" JSON_INTEGER_FORMAT "\n",
				    json_integer_value(id));
		}
		json_decref(result);
	}
	/* What was removed before a failure is said too. */
	if (!ctx->json && (rc == CMD_EXIT_OK || removed > 0))
		printf("removed %zu job%s\n", removed, removed == 1 ? "" : "s");
	return rc;
}

static int
cmd_clean_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "priority", required_argument, NULL, 'p' },
		{ "state", required_argument, NULL, CMD_CLEAN_STATE },
		{ "label", required_argument, NULL, CMD_CLEAN_LABEL },
		{ "verbose", no_argument, NULL, 'v' },
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	json_t *params, *states, *jobs, *job, *ids;
	uid_t uid = geteuid();
	size_t i;
	int ch, rc = CMD_EXIT_OK;
	bool verbose = false;

	params = xjson(json_object());
	states = xjson(json_array());
	json_object_set_new(params, "state", states);
	while (rc == CMD_EXIT_OK &&
	    (ch = cmd_getopt(ctx, argc, argv, ":hp:v", longopts)) != -1) {
		switch (ch) {
		case 'p':
			rc = jobopt_string(ctx, params, ch, optarg);
			break;
		case CMD_CLEAN_STATE:
			rc = cmd_add_states(ctx, states, optarg);
			break;
		case CMD_CLEAN_LABEL:
			rc = jobopt_label(ctx, params, optarg);
			break;
		case 'v':
			verbose = true;
			break;
		default:
			rc = cmd_getopt_other(ctx, ch);
			break;
		}
	}
	if (rc == CMD_EXIT_OK && optind != argc)
		rc = cmd_usage(ctx, "unexpected argument '%s'", argv[optind]);
	if (rc == CMD_EXIT_OK)
		rc = cmd_clean_states(ctx, states);
	if (rc != CMD_EXIT_OK) {
		json_decref(params);
		return rc;
	}
	if (json_array_size(states) == 0)
		cmd_add_states(ctx, states,
		    "succeeded,failed,timed_out,canceled,lost");

	if ((rc = cmd_list_fetch(ctx, params, &jobs)) != CMD_EXIT_OK)
		return rc;
	ids = xjson(json_array());
	json_array_foreach(jobs, i, job) {
		if (json_integer_value(json_object_get(job, "uid")) ==
		    (json_int_t)uid)
			json_array_append(ids, json_object_get(job, "id"));
	}
	json_decref(jobs);
	rc = cmd_clean_remove(ctx, ids, verbose);
	json_decref(ids);
	return rc;
}
