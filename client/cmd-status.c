/* cmd-status.c - triage status: one job, every field as "key: value" for
 * people, or the job object as the daemon sent it with --json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "timefmt.h"
#include "xmalloc.h"

static int cmd_status_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.args = "ID",
	.summary = "show one job",
	.options = NULL,
	.notes =
	    "Prints each field the job has as \"key: value\", the values in "
	    "one column,\n"
	    "times in local time; with --json, the job object on one line, "
	    "as the\n"
	    "daemon sent it (times in UTC).\n",
	.exec = cmd_status_exec,
};

/* The fields shown, in this order; others the daemon adds come after. */
static const char *const cmd_status_known[] = {
	"id", "name", "key", "state", "priority", "node", "pinned_node",
	"argv", "cwd", "slots",
	"exclusive", "timeout", "uid", "gid", "submitted_at", "started_at",
	"finished_at", "position", "pid", "exit_code", "signal", "reason",
	"attempt", "retries", "after", "user_time", "system_time",
	"max_rss_kb", "memory", "resources", "devices", "peak_memory",
	"result", "result_truncated", NULL,
};

/* Keeps one "key: value" line, for cmd_status_flush to align. */
static void
cmd_status_line(json_t *lines, const char *key, const char *value)
{
	char *clean = format_clean(value);

	json_array_append_new(lines, xjson(json_pack("[ss]", key, clean)));
	free(clean);
}

/* Prints the lines kept, every value in one column after the longest key. */
static void
cmd_status_flush(const json_t *lines)
{
	const json_t *line;
	size_t i, width = 0, w;

	json_array_foreach(lines, i, line) {
		w = format_width(json_string_value(json_array_get(line, 0)));
		if (w > width)
			width = w;
	}
	json_array_foreach(lines, i, line)
		printf("%-*s %s\n", (int)width, json_string_value(
		    json_array_get(line, 0)), json_string_value(
		    json_array_get(line, 1)));
}

/* The jobs it runs after, as "3, 4". */
static void
cmd_status_after(json_t *lines, const json_t *after)
{
	char buf[512];
	size_t i, len = 0;
	json_t *id;

	buf[0] = '\0';
	json_array_foreach(after, i, id)
		if (len < sizeof buf)
			len += (size_t)snprintf(buf + len, sizeof buf - len,
			    "%s%lld", i ? ", " : "",
			    (long long)json_integer_value(id));
	cmd_status_line(lines, "after:", buf);
}

/* Whether key names a time: "submitted_at", "begin_at"... */
static bool
cmd_status_is_time(const char *key)
{
	size_t len = strlen(key);

	return len > 3 && strcmp(key + len - 3, "_at") == 0;
}

/* Keeps one known field in its readable form; nothing when it is null. */
static void
cmd_status_field(json_t *lines, const json_t *job, const char *key)
{
	const json_t *v = json_object_get(job, key);
	char buf[96], label[80];
	const char *s;
	char *text;

	if (v == NULL || json_is_null(v))
		return;
	/* The daemon's "retries" counts down as attempts fail: what is
	 * left, not what was asked for. */
	snprintf(label, sizeof label, "%s:", strcmp(key, "retries") == 0 ?
	    "retries left" : key);
	if (strcmp(key, "argv") == 0) {
		text = format_argv(v);
		cmd_status_line(lines, label, text);
		free(text);
	} else if (strcmp(key, "result") == 0) {
		if ((text = format_result(v)) != NULL)
			cmd_status_line(lines, label, text);
		free(text);
	} else if (strcmp(key, "cwd") == 0) {
		if ((text = format_bytes(v)) != NULL)
			cmd_status_line(lines, label, text);
		free(text);
	} else if (strcmp(key, "after") == 0) {
		if (json_array_size(v) > 0)
			cmd_status_after(lines, v);
	} else if (strcmp(key, "timeout") == 0)
		cmd_status_line(lines, label, json_is_number(v) &&
		    json_number_value(v) == 0 ? "none" :
		    format_seconds(v, buf, sizeof buf));
	else if (cmd_status_is_time(key) && json_is_string(v)) {
		/* Local time, as every human view shows times. */
		if ((s = format_time(job, key, buf, sizeof buf)) != NULL)
			cmd_status_line(lines, label, s);
	} else if (strcmp(key, "user_time") == 0 ||
	    strcmp(key, "system_time") == 0) {
		snprintf(buf, sizeof buf, "%.3fs", json_number_value(v));
		cmd_status_line(lines, label, buf);
	} else if (strcmp(key, "state") == 0 && json_is_string(v) &&
	    json_is_true(json_object_get(job, "frozen"))) {
		snprintf(buf, sizeof buf, "%s (frozen)", json_string_value(v));
		cmd_status_line(lines, label, buf);
	} else if ((strcmp(key, "memory") == 0 ||
	    strcmp(key, "peak_memory") == 0) && json_is_integer(v))
		cmd_status_line(lines, label, format_size(v, buf, sizeof buf));
	else if (strcmp(key, "resources") == 0 || strcmp(key, "devices") == 0) {
		/* {} is none, and shown as none is: not at all. */
		if ((text = format_resources(v)) != NULL)
			cmd_status_line(lines, label, text);
		free(text);
	} else if (strcmp(key, "pending_reason") == 0 && json_is_string(v))
		cmd_status_line(lines, label, format_pending(v, buf, sizeof buf));
	else if (json_is_string(v))
		cmd_status_line(lines, label, json_string_value(v));
	else if (json_is_true(v))
		cmd_status_line(lines, label, "yes");
	else if (json_is_false(v))
		cmd_status_line(lines, label, "no");
	else {
		text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
		cmd_status_line(lines, label, text != NULL ? text : "?");
		free(text);
	}
}

static void
cmd_status_print(json_t *job)
{
	const char *const *k;
	const char *key;
	char buf[TIMEFMT_MAX];
	int64_t now = timefmt_now();
	json_t *v, *lines = xjson(json_array());
	bool known;

	for (k = cmd_status_known; *k != NULL; k++) {
		cmd_status_field(lines, job, *k);
		/* The spans people ask for, by the times they come from. */
		if (strcmp(*k, "finished_at") == 0) {
			if (json_object_get(job, "submitted_at") != NULL)
				cmd_status_line(lines, "waited:", format_span(
				    timefmt_waited(job, now), buf, sizeof buf));
			if (timefmt_ran(job, now) >= 0)
				cmd_status_line(lines, "ran:", format_span(
				    timefmt_ran(job, now), buf, sizeof buf));
		}
	}
	json_object_foreach(job, key, v) {
		known = false;
		for (k = cmd_status_known; *k != NULL && !known; k++)
			known = strcmp(*k, key) == 0;
		if (!known)
			cmd_status_field(lines, job, key);
	}
	cmd_status_flush(lines);
	json_decref(lines);
}

static int
cmd_status_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	json_t *job;
	int64_t id;
	int rc;

	if ((rc = cmd_plain_args(ctx, argc, argv, 1, 1, "job id")) !=
	    CMD_EXIT_OK || (rc = cmd_check_ids(ctx, argc, argv)) != CMD_EXIT_OK)
		return rc;
	cmd_parse_id(argv[optind], &id);

	rc = cmd_call(ctx, "get", xjson(json_pack("{s:I}", "id",
	    (json_int_t)id)), &job);
	if (rc != CMD_EXIT_OK)
		return rc;
	if (ctx->json)
		format_json_line(job);
	else
		cmd_status_print(job);
	json_decref(job);
	return CMD_EXIT_OK;
}
