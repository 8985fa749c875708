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
	    "Prints each field the job has as \"key: value\"; with --json, "
	    "the job\n"
	    "object on one line.\n",
	.exec = cmd_status_exec,
};

/* The fields shown, in this order; others the daemon adds come after. */
static const char *const cmd_status_known[] = {
	"id", "name", "state", "priority", "node", "pinned_node", "argv",
	"cwd", "slots",
	"exclusive", "timeout", "uid", "gid", "submitted_at", "started_at",
	"finished_at", "position", "pid", "exit_code", "signal", "reason",
	"attempt", "retries", "after", "user_time", "system_time",
	"max_rss_kb", NULL,
};

static void
cmd_status_line(const char *key, const char *value)
{
	char *clean = format_clean(value);

	printf("%-13s %s\n", key, clean);
	free(clean);
}

/* The jobs it runs after, as "3, 4". */
static void
cmd_status_after(const json_t *after)
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
	cmd_status_line("after:", buf);
}

/* Prints one known field in its readable form; nothing when it is null. */
static void
cmd_status_field(const json_t *job, const char *key)
{
	const json_t *v = json_object_get(job, key);
	char buf[96], label[32];
	const char *s;
	char *text;

	if (v == NULL || json_is_null(v))
		return;
	snprintf(label, sizeof label, "%s:", key);
	if (strcmp(key, "argv") == 0) {
		text = format_argv(v);
		cmd_status_line(label, text);
		free(text);
	} else if (strcmp(key, "after") == 0) {
		if (json_array_size(v) > 0)
			cmd_status_after(v);
	} else if (strcmp(key, "timeout") == 0)
		cmd_status_line(label, json_is_number(v) &&
		    json_number_value(v) == 0 ? "none" :
		    format_seconds(v, buf, sizeof buf));
	else if (strcmp(key, "submitted_at") == 0 ||
	    strcmp(key, "started_at") == 0 || strcmp(key, "finished_at") == 0) {
		if ((s = format_time(job, key, buf, sizeof buf)) != NULL)
			cmd_status_line(label, s);
	} else if (strcmp(key, "user_time") == 0 ||
	    strcmp(key, "system_time") == 0) {
		snprintf(buf, sizeof buf, "%.3fs", json_number_value(v));
		cmd_status_line(label, buf);
	} else if (strcmp(key, "pending_reason") == 0 && json_is_string(v))
		cmd_status_line(label, format_pending(v, buf, sizeof buf));
	else if (json_is_string(v))
		cmd_status_line(label, json_string_value(v));
	else if (json_is_true(v))
		cmd_status_line(label, "yes");
	else if (json_is_false(v))
		cmd_status_line(label, "no");
	else {
		text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
		cmd_status_line(label, text != NULL ? text : "?");
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
	json_t *v;
	bool known;

	for (k = cmd_status_known; *k != NULL; k++) {
		cmd_status_field(job, *k);
		/* The spans people ask for, by the times they come from. */
		if (strcmp(*k, "finished_at") == 0) {
			if (json_object_get(job, "submitted_at") != NULL)
				cmd_status_line("waited:", format_span(
				    timefmt_waited(job, now), buf, sizeof buf));
			if (timefmt_ran(job, now) >= 0)
				cmd_status_line("ran:", format_span(
				    timefmt_ran(job, now), buf, sizeof buf));
		}
	}
	json_object_foreach(job, key, v) {
		known = false;
		for (k = cmd_status_known; *k != NULL && !known; k++)
			known = strcmp(*k, key) == 0;
		if (!known)
			cmd_status_field(job, key);
	}
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
