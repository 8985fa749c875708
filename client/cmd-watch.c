/* cmd-watch.c - triage watch: a live view of the daemon on a terminal,
 * redrawn as jobs change; elsewhere, one line per job change, as it comes. */
#include <sys/ioctl.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "format.h"
#include "jobopt.h"
#include "table.h"
#include "timefmt.h"
#include "xmalloc.h"

/* Redraw at most this often however fast jobs change, and at least this
 * often so running times move. */
#define CMD_WATCH_MIN_MS 100
#define CMD_WATCH_MAX_MS 1000

static int cmd_watch_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_watch_entry = {
	.name = "watch",
	.args = "[-p PRIO] [ID...]",
	.summary = "watch the priorities and running jobs live",
	.options =
	    "  -p, --priority PRIO  only the jobs of this priority\n",
	.notes =
	    "On a terminal, redraws the priorities and the running jobs "
	    "whenever a job\n"
	    "changes, and every second. Otherwise (or with --json) prints a "
	    "line per\n"
	    "job change: the time, the job's id, state and name (or the job "
	    "object).\n"
	    "With IDs or -p, only those jobs (both: those of the IDs in "
	    "PRIO). Runs\n"
	    "until interrupted.\n",
	.exec = cmd_watch_exec,
};

static const char *const cmd_watch_columns[] = {
	"name", "rank", "queued", "held", "running", "paused", NULL,
};

/* Prints the running jobs, at most max of them (0: all). */
static void
cmd_watch_running(const json_t *jobs, size_t max, FILE *f)
{
	static const char *const headers[] = {
		"ID", "PRIORITY", "RAN", "NAME",
	};
	char id[24], ran[TIMEFMT_MAX];
	int64_t now = timefmt_now();
	struct table *t;
	json_t *job;
	size_t i, n = json_array_size(jobs);

	/* What does not fit is counted on a line of its own. */
	if (max > 0 && n > max)
		max--;
	else
		max = n;
	t = table_new(headers, 4);
	table_align_right(t, 0);
	table_align_right(t, 2);
	json_array_foreach(jobs, i, job) {
		if (i == max)
			break;
		table_add(t, (const char *const[]){
		    format_int(json_object_get(job, "id"), id, sizeof id),
		    json_string_value(json_object_get(job, "priority")),
		    format_span(timefmt_ran(job, now), ran, sizeof ran),
		    json_string_value(json_object_get(job, "name")),
		});
	}
	table_print(t, f);
	table_free(t);
	if (max < n)
		fprintf(f, "(%zu more running)\n", n - max);
}

/* The rows of the terminal, or 0 when it does not say. */
static size_t
cmd_watch_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == -1)
		return 0;
	return ws.ws_row;
}

/* Whether job is among those of the watch params (its "ids", if any). */
static bool
cmd_watch_wanted(const json_t *params, const json_t *job)
{
	const json_t *ids = json_object_get(params, "ids"), *id;
	size_t i;

	if (ids == NULL)
		return true;
	json_array_foreach(ids, i, id) {
		if (json_equal(id, json_object_get(job, "id")))
			return true;
	}
	return false;
}

/* Draws the whole screen at once, so it does not flicker; the running
 * jobs are those the watch params choose. */
static int
cmd_watch_draw(struct cmd_ctx *ctx, const json_t *params)
{
	const char *prio = json_string_value(json_object_get(params,
	    "priority"));
	json_t *list, *running;
	size_t i;
	const json_t *counts;
	json_t *stats, *jobs, *job;
	char when[TIMEFMT_MAX], a[24], b[24], c[24], d[24];
	char *frame, *p;
	size_t len, used, rows;
	FILE *f;
	int rc;

	if ((rc = cmd_call(ctx, "stats", NULL, &stats)) != CMD_EXIT_OK)
		return rc;
	list = xjson(json_pack("{s:[s]}", "state", "running"));
	if (prio != NULL)
		json_object_set_new(list, "priority", xjson(json_string(prio)));
	rc = cmd_list_fetch(ctx, list, &running);
	if (rc != CMD_EXIT_OK) {
		json_decref(stats);
		return rc;
	}
	jobs = xjson(json_array());
	json_array_foreach(running, i, job)
		if (cmd_watch_wanted(params, job))
			json_array_append(jobs, job);
	json_decref(running);

	if ((f = open_memstream(&frame, &len)) == NULL)
		xoom();
	counts = json_object_get(stats, "jobs");
	fprintf(f, "\033[H\033[2Jtriage watch  %s  %s\n\n",
	    timefmt_local(timefmt_now(), when, sizeof when), ctx->socket_path);
	fprintf(f, "slots %s/%s busy   workers %s/%s busy   ",
	    format_int(json_object_get(stats, "slots_busy"), a, sizeof a),
	    format_int(json_object_get(stats, "slots"), b, sizeof b),
	    format_int(json_object_get(stats, "workers_busy"), c, sizeof c),
	    format_int(json_object_get(stats, "workers"), d, sizeof d));
	fprintf(f, "queued %s   running %s\n\n",
	    format_int(json_object_get(counts, "queued"), a, sizeof a),
	    format_int(json_object_get(counts, "running"), b, sizeof b));
	cmd_priorities_table(stats, cmd_watch_columns, f);
	fputc('\n', f);
	/* The running jobs get the rows left, less their header and the
	 * cursor's line, so that the top never scrolls away. */
	fflush(f);
	used = 1;
	for (p = frame; p < frame + len; p++)
		used += *p == '\n';
	rows = cmd_watch_rows();
	cmd_watch_running(jobs, rows == 0 ? 0 : rows > used + 2 ?
	    rows - used - 1 : 1, f);
	if (fclose(f) != 0)
		xoom();
	fwrite(frame, 1, len, stdout);
	fflush(stdout);
	free(frame);
	json_decref(stats);
	json_decref(jobs);
	return CMD_EXIT_OK;
}

/* Prints one job change: the time, id, state and name; or the job. */
static void
cmd_watch_line(struct cmd_ctx *ctx, const json_t *msg)
{
	const json_t *job = json_object_get(msg, "params");
	const char *state, *name;
	char when[TIMEFMT_MAX], id[24], *clean;
	struct tm tm;
	time_t now;

	if (ctx->json) {
		format_json_line(job);
		fflush(stdout);
		return;
	}
	now = time(NULL);
	if (localtime_r(&now, &tm) == NULL ||
	    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(when, sizeof when, "%lld", (long long)now);
	state = json_string_value(json_object_get(job, "state"));
	name = json_string_value(json_object_get(job, "name"));
	clean = format_clean(name != NULL ? name : "-");
	printf("%s %s %s%s %s\n", when,
	    format_int(json_object_get(job, "id"), id, sizeof id),
	    state != NULL ? state : "-",
	    json_is_true(json_object_get(job, "frozen")) ? " (frozen)" : "",
	    clean);
	free(clean);
	fflush(stdout);
}

static int
cmd_watch_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "priority", required_argument, NULL, 'p' },
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct triage_error err;
	json_t *params, *ids, *result, *msg;
	int64_t drawn = 0, now, timeout, id;
	bool live, dirty = true;
	const char *method;
	int ch, i, rc = CMD_EXIT_OK;

	params = xjson(json_object());
	while (rc == CMD_EXIT_OK &&
	    (ch = cmd_getopt(ctx, argc, argv, ":hp:", longopts)) != -1) {
		switch (ch) {
		case 'p':
			rc = jobopt_string(ctx, params, ch, optarg);
			break;
		default:
			rc = cmd_getopt_other(ctx, ch);
			break;
		}
	}
	if (rc == CMD_EXIT_OK)
		rc = cmd_check_ids(ctx, argc, argv);
	if (rc != CMD_EXIT_OK) {
		json_decref(params);
		return rc;
	}
	if (optind < argc) {
		ids = xjson(json_array());
		for (i = optind; i < argc; i++) {
			cmd_parse_id(argv[i], &id);
			json_array_append_new(ids, xjson(json_integer(id)));
		}
		json_object_set_new(params, "ids", ids);
	}
	live = !ctx->json && isatty(STDOUT_FILENO);

	rc = cmd_call(ctx, "watch", json_incref(params), &result);
	json_decref(result);
	if (rc != CMD_EXIT_OK) {
		json_decref(params);
		return rc;
	}

	for (;;) {
		now = (int64_t)timefmt_mono_ms();
		if (live && ((dirty && now - drawn >= CMD_WATCH_MIN_MS) ||
		    now - drawn >= CMD_WATCH_MAX_MS)) {
			if ((rc = cmd_watch_draw(ctx, params)) !=
			    CMD_EXIT_OK)
				break;
			drawn = now;
			dirty = false;
		}
		if (!live)
			timeout = -1;
		else if (dirty)
			timeout = drawn + CMD_WATCH_MIN_MS - now;
		else
			timeout = drawn + CMD_WATCH_MAX_MS - now;
		if (timeout < -1)
			timeout = 0;

		msg = triage_client_notification(ctx->client, (int)timeout,
		    &err);
		if (msg == NULL) {
			if (errno == ETIMEDOUT)
				continue;
			rc = cmd_report(&err);
			break;
		}
		method = json_string_value(json_object_get(msg, "method"));
		if (method != NULL && strcmp(method, "job") == 0) {
			if (live)
				dirty = true;
			else
				cmd_watch_line(ctx, msg);
		}
		json_decref(msg);
	}
	json_decref(params);
	return rc;
}
