/* cmd-list.c - triage list: the jobs in a table (queued and running ones
 * unless asked for more), paged through the daemon 1000 at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "jobopt.h"
#include "table.h"
#include "timefmt.h"
#include "xmalloc.h"

/* What one list request asks for; a shorter page is the last. */
#define CMD_LIST_PAGE 1000

#define CMD_LIST_ALL	0x120
#define CMD_LIST_STATE	0x121
#define CMD_LIST_LABEL	0x122
#define CMD_LIST_NAME	0x123
#define CMD_LIST_HELD	0x124

static int cmd_list_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_list_entry = {
	.name = "list",
	.args = "[--all] [-p PRIO] [--state S[,S...]] [--label K=V]...\n"
	    "           [--name NAME] [--held]",
	.summary = "list jobs, queued and running ones by default",
	.options =
	    "      --all            every job the daemon keeps, finished ones "
	    "too\n"
	    "  -p, --priority PRIO  only jobs of this priority\n"
	    "      --state S        only jobs in state S (repeatable, or S,S): "
	    "queued,\n"
	    "                       running, succeeded, failed, timed_out, "
	    "canceled, lost\n"
	    "      --label K=V      only jobs with this label (repeatable: all "
	    "of them)\n"
	    "      --name NAME      only jobs of this name\n"
	    "      --held           only held jobs\n",
	.notes =
	    "REASON says why a queued job waits: held, begin_at (its start "
	    "time), after\n"
	    "(a job it waits for), paused, max_running, queue (jobs ahead "
	    "of it), slots,\n"
	    "memory or resource:NAME (not enough free), or reserved (kept "
	    "for a job ahead\n"
	    "of it); and frozen for a running job whose processes are. "
	    "WAITED is the\n"
	    "time spent queued, RAN the time spent running, so far or in "
	    "all. USES is\n"
	    "the memory a job declared and the resources it asks for "
	    "(gpu=2), or once\n"
	    "it ran, the units it was given (gpu:0,3). With --json, prints "
	    "each job\n"
	    "object on a line of its own.\n",
	.exec = cmd_list_exec,
};

int
cmd_list_fetch(struct cmd_ctx *ctx, json_t *params, json_t **jobs)
{
	json_t *result, *page, *last;
	size_t n;
	int rc;

	*jobs = xjson(json_array());
	json_object_set_new(params, "limit",
	    xjson(json_integer(CMD_LIST_PAGE)));
	for (;;) {
		rc = cmd_call(ctx, "list", json_incref(params), &result);
		if (rc != CMD_EXIT_OK)
			break;
		page = json_object_get(result, "jobs");
		if (!json_is_array(page)) {
			cmd_error("the daemon's list has no jobs array");
			json_decref(result);
			rc = CMD_EXIT_FAILURE;
			break;
		}
		n = json_array_size(page);
		json_array_extend(*jobs, page);
		last = json_object_get(json_array_get(page, n - 1), "id");
		json_decref(result);
		if (n < CMD_LIST_PAGE)
			break;
		/* In submission order: the next page starts after the
		 * last job, whatever its id. */
		if (!json_is_integer(last)) {
			cmd_error("the daemon's list has a job without an id");
			rc = CMD_EXIT_FAILURE;
			break;
		}
		json_object_set_new(params, "after_id",
		    xjson(json_integer(json_integer_value(last))));
	}
	json_decref(params);
	if (rc != CMD_EXIT_OK) {
		json_decref(*jobs);
		*jobs = NULL;
	}
	return rc;
}

static void
cmd_list_print(const json_t *jobs)
{
	static const char *const headers[] = {
		"ID", "PRIORITY", "STATE", "REASON", "WAITED", "RAN", "USES",
		"NAME",
	};
	char id[24], waited[TIMEFMT_MAX], ran[TIMEFMT_MAX], reason[96], *uses;
	int64_t now = timefmt_now();
	struct table *t;
	json_t *job;
	size_t i;

	t = table_new(headers, 8);
	table_align_right(t, 0);
	table_align_right(t, 4);
	table_align_right(t, 5);
	json_array_foreach(jobs, i, job) {
		table_add(t, (const char *const[]){
		    format_int(json_object_get(job, "id"), id, sizeof id),
		    json_string_value(json_object_get(job, "priority")),
		    json_string_value(json_object_get(job, "state")),
		    format_reason(job, reason, sizeof reason),
		    format_span(timefmt_waited(job, now), waited,
		    sizeof waited),
		    format_span(timefmt_ran(job, now), ran, sizeof ran),
		    uses = format_uses(job),
		    json_string_value(json_object_get(job, "name")),
		});
		free(uses);
	}
	table_print(t, stdout);
	table_free(t);
}

static int
cmd_list_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, CMD_LIST_ALL },
		{ "priority", required_argument, NULL, 'p' },
		{ "state", required_argument, NULL, CMD_LIST_STATE },
		{ "label", required_argument, NULL, CMD_LIST_LABEL },
		{ "name", required_argument, NULL, CMD_LIST_NAME },
		{ "held", no_argument, NULL, CMD_LIST_HELD },
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	json_t *params, *states, *jobs, *job;
	bool all = false;
	size_t i;
	int ch, rc = CMD_EXIT_OK;

	params = xjson(json_object());
	states = xjson(json_array());
	while (rc == CMD_EXIT_OK &&
	    (ch = cmd_getopt(ctx, argc, argv, ":hp:", longopts)) != -1) {
		switch (ch) {
		case CMD_LIST_ALL:
			all = true;
			break;
		case 'p':
			rc = jobopt_string(ctx, params, ch, optarg);
			break;
		case CMD_LIST_NAME:
			rc = jobopt_string(ctx, params, 'n', optarg);
			break;
		case CMD_LIST_LABEL:
			rc = jobopt_label(ctx, params, optarg);
			break;
		case CMD_LIST_HELD:
			json_object_set_new(params, "held", json_true());
			break;
		case CMD_LIST_STATE:
			rc = cmd_add_states(ctx, states, optarg);
			break;
		case CMD_GETOPT_EXIT:
			json_decref(params);
			json_decref(states);
			return ctx->status;
		default:
			rc = cmd_usage(ctx, "unknown option");
			break;
		}
	}
	if (rc == CMD_EXIT_OK && optind != argc)
		rc = cmd_usage(ctx, "unexpected argument '%s'", argv[optind]);
	if (rc != CMD_EXIT_OK) {
		json_decref(params);
		json_decref(states);
		return rc;
	}

	/* --state says which; --all alone, every one; else the live ones. */
	if (json_array_size(states) == 0 && !all) {
		json_array_append_new(states, xjson(json_string("queued")));
		json_array_append_new(states, xjson(json_string("running")));
	}
	if (json_array_size(states) > 0)
		json_object_set_new(params, "state", states);
	else
		json_decref(states);

	if ((rc = cmd_list_fetch(ctx, params, &jobs)) != CMD_EXIT_OK)
		return rc;
	if (ctx->json) {
		json_array_foreach(jobs, i, job)
			format_json_line(job);
	} else
		cmd_list_print(jobs);
	json_decref(jobs);
	return CMD_EXIT_OK;
}
