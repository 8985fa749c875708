/* cmd-priorities.c - triage priorities: each priority's rank, load, cap and
 * pause, from stats; its table serves stats and watch as well. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "table.h"
#include "xmalloc.h"

static int cmd_priorities_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_priorities_entry = {
	.name = "priorities",
	.args = "",
	.summary = "show the priorities: rank, queued, held, running, cap, paused",
	.options = NULL,
	.notes =
	    "MAX_RUNNING is the slots a priority may hold at once (- for no "
	    "cap).\n"
	    "With --json, prints the daemon's stats object on one line.\n",
	.exec = cmd_priorities_exec,
};

static const char *const cmd_priorities_columns[] = {
	"name", "rank", "queued", "held", "running", "max_running", "paused",
	NULL,
};

void
cmd_priorities_table(const json_t *stats, const char *const *keys, FILE *f)
{
	const char *headers[16] = { NULL }, *cells[16] = { NULL };
	char header[16][32], num[16][24];
	const json_t *prio, *v;
	struct table *t;
	unsigned i, n;
	size_t j, k;

	for (n = 0; keys[n] != NULL && n < 16; n++) {
		if (strcmp(keys[n], "name") == 0)
			snprintf(header[n], sizeof header[n], "PRIORITY");
		else {
			for (k = 0; keys[n][k] != '\0' &&
			    k < sizeof header[n] - 1; k++)
				header[n][k] = (char)toupper(
				    (unsigned char)keys[n][k]);
			header[n][k] = '\0';
		}
		headers[n] = header[n];
	}
	t = table_new(headers, n);
	for (i = 1; i < n; i++) {
		if (strcmp(keys[i], "paused") != 0)
			table_align_right(t, i);
	}
	json_array_foreach(json_object_get(stats, "priorities"), j, prio) {
		for (i = 0; i < n; i++) {
			v = json_object_get(prio, keys[i]);
			if (json_is_boolean(v))
				cells[i] = json_is_true(v) ? "yes" : "no";
			else if (json_is_string(v))
				cells[i] = json_string_value(v);
			else if (strcmp(keys[i], "max_running") == 0 &&
			    json_integer_value(v) == 0)
				cells[i] = "-";		/* no cap */
			else
				cells[i] = format_int(v, num[i], sizeof num[i]);
		}
		table_add(t, cells);
	}
	table_print(t, f);
	table_free(t);
}

static void
cmd_priorities_print(const json_t *stats)
{
	cmd_priorities_table(stats, cmd_priorities_columns, stdout);
}

static int
cmd_priorities_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	return cmd_show_stats(ctx, argc, argv, cmd_priorities_print);
}
