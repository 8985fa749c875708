/* cmd-stats.c - triage stats: the daemon at a glance: slots and workers in
 * use, each priority, job counts by state, uptime and version. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "format.h"
#include "table.h"
#include "timefmt.h"

static int cmd_stats_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_stats_entry = {
	.name = "stats",
	.args = "",
	.summary = "show the daemon's slots, workers, priorities and jobs",
	.options = NULL,
	.notes =
	    "With --json, prints the daemon's stats object on one line.\n",
	.exec = cmd_stats_exec,
};

static const char *const cmd_stats_columns[] = {
	"name", "rank", "queued", "held", "running", "max_queued",
	"max_running", "paused", "dispatched", NULL,
};

static const char *const cmd_stats_states[] = {
	"queued", "held", "running", "succeeded", "failed", "timed_out",
	"canceled", "lost", NULL,
};

/* The security model in one line: whose rights a job gets. */
static void
cmd_stats_run_as(const json_t *run_as)
{
	const char *user = json_string_value(json_object_get(run_as, "user"));
	char a[24];

	if (!json_is_object(run_as))
		printf("run as:   -\n");
	else if (json_is_true(json_object_get(run_as, "submitter")))
		printf("run as:   each job's submitter\n");
	else
		printf("run as:   %s (uid %s), whoever submits\n",
		    user != NULL ? user : "?",
		    format_int(json_object_get(run_as, "uid"), a, sizeof a));
}

/* A cluster's nodes, one row each: their slots, as each last wrote what
 * it holds, and whether its daemon runs. */
static void
cmd_stats_nodes(const json_t *nodes)
{
	static const char *const headers[] = { "NODE", "SLOTS", "BUSY", "UP" };
	const char *cells[4];
	char slots[24], busy[24];
	const json_t *node;
	struct table *t;
	size_t i;

	if (!json_is_array(nodes) || json_array_size(nodes) == 0)
		return;
	t = table_new(headers, 4);
	table_align_right(t, 1);
	table_align_right(t, 2);
	json_array_foreach(nodes, i, node) {
		cells[0] = json_string_value(json_object_get(node, "node"));
		cells[1] = format_int(json_object_get(node, "slots"), slots,
		    sizeof slots);
		cells[2] = format_int(json_object_get(node, "slots_busy"), busy,
		    sizeof busy);
		cells[3] = json_is_true(json_object_get(node, "up")) ? "yes" :
		    "no";
		if (cells[0] == NULL)
			cells[0] = "-";
		table_add(t, cells);
	}
	printf("\n");
	table_print(t, stdout);
	table_free(t);
}

static void
cmd_stats_print(const json_t *stats)
{
	const json_t *jobs = json_object_get(stats, "jobs");
	const char *const *s;
	const char *version;
	char a[24], b[24], up[TIMEFMT_MAX];
	double uptime;

	printf("slots:    %s busy of %s\n",
	    format_int(json_object_get(stats, "slots_busy"), a, sizeof a),
	    format_int(json_object_get(stats, "slots"), b, sizeof b));
	printf("workers:  %s busy of %s\n",
	    format_int(json_object_get(stats, "workers_busy"), a, sizeof a),
	    format_int(json_object_get(stats, "workers"), b, sizeof b));
	printf("jobs:    ");
	for (s = cmd_stats_states; *s != NULL; s++)
		printf(" %s %s%s", format_int(json_object_get(jobs, *s), a,
		    sizeof a), *s, s[1] != NULL ? "," : "\n");
	cmd_stats_run_as(json_object_get(stats, "run_as"));
	uptime = json_number_value(json_object_get(stats, "uptime"));
	printf("uptime:   %s\n", format_span(
	    json_is_number(json_object_get(stats, "uptime")) ?
	    (int64_t)(uptime * 1000) : -1, up, sizeof up));
	version = json_string_value(json_object_get(stats, "version"));
	printf("version:  %s\n", version != NULL ? version : "-");
	if (json_is_string(json_object_get(stats, "node")))
		printf("node:     %s\n", json_string_value(json_object_get(
		    stats, "node")));
	printf("\n");
	cmd_priorities_table(stats, cmd_stats_columns, stdout);
	cmd_stats_nodes(json_object_get(stats, "nodes"));
}

static int
cmd_stats_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	return cmd_show_stats(ctx, argc, argv, cmd_stats_print);
}
