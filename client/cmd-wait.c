/* cmd-wait.c - triage wait: waits for jobs to finish and exits with the
 * first failing one's status, so a script can wait like the shell's wait. */
#include <stdio.h>

#include "cmd.h"
#include "exitcode.h"
#include "format.h"
#include "selector.h"
#include "xmalloc.h"

static int cmd_wait_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_wait_entry = {
	.name = "wait",
	.args = SELECTOR_ARGS,
	.summary = "wait for jobs to finish; exit with their status",
	.options = SELECTOR_HELP,
	.notes =
	    "Waits for all the jobs and exits with the first non-zero status "
	    "in the order\n"
	    "given (by id for the jobs chosen), else 0: a job's exit code, "
	    "128+N for\n"
	    "signal N, 124 timed out, 125 canceled, 126 lost, 127 failed "
	    "without\n"
	    "running, 1 for an ID the daemon refused. The options choose "
	    "among the\n"
	    "queued and running jobs, unless --state says otherwise, and "
	    "those of every\n"
	    "user. With --json, prints each finished job object.\n",
	.exec = cmd_wait_exec,
};

/* Waits for one job and sets *code to its exit status; returns ours. */
static int
cmd_wait_one(struct cmd_ctx *ctx, json_int_t id, int *code)
{
	json_t *job;
	int rc;

	for (;;) {
		rc = cmd_call(ctx, "wait", xjson(json_pack("{s:I}", "id", id)),
		    &job);
		if (rc != CMD_EXIT_OK)
			return rc;
		*code = exitcode_of_job(job);
		if (*code != -1 && ctx->json)
			format_json_line(job);
		json_decref(job);
		if (*code != -1)
			return CMD_EXIT_OK;
		/* Answered before the end (a daemon's own limit): again. */
	}
}

/* Waits for each job in turn; sets *status as cmd_wait_exec says. */
static int
cmd_wait_each(struct cmd_ctx *ctx, const json_t *ids, int *status)
{
	json_t *id;
	size_t i;
	int rc, code = 0;

	json_array_foreach(ids, i, id) {
		rc = cmd_wait_one(ctx, json_integer_value(id), &code);
		/* Without the daemon, the other jobs cannot be waited for. */
		if (rc == CMD_EXIT_UNREACHABLE)
			return rc;
		if (rc != CMD_EXIT_OK)
			code = rc;
		if (*status == CMD_EXIT_OK)
			*status = code;
	}
	return CMD_EXIT_OK;
}

/* The job of jobs with this id, or NULL. */
static const json_t *
cmd_wait_find(const json_t *jobs, json_int_t id)
{
	const json_t *job;
	size_t i;

	json_array_foreach(jobs, i, job) {
		if (json_integer_value(json_object_get(job, "id")) == id)
			return job;
	}
	return NULL;
}

/*
 * Waits for all of ids at once; sets *status. When the daemon refuses the
 * set (an id it does not know, or a daemon without "ids"), waits for each
 * in turn instead, so that the others are still waited for.
 */
static int
cmd_wait_all(struct cmd_ctx *ctx, json_t *ids, int *status)
{
	struct triage_error err;
	const json_t *job;
	json_t *result, *id;
	struct triage_client *c;
	size_t i;
	int code;
	bool done = false;

	if ((c = cmd_client(ctx)) == NULL)
		return CMD_EXIT_UNREACHABLE;
	while (!done) {
		result = triage_client_call(c, "wait", xjson(json_pack("{s:O}",
		    "ids", ids)), -1, &err);
		if (result == NULL && err.code == TRIAGE_ERR_TRANSPORT)
			return cmd_report(&err);
		if (result == NULL)
			return cmd_wait_each(ctx, ids, status);
		/* Answered before the end (a daemon's own limit): again. A
		 * job missing from the answer is asked for on its own. */
		done = true;
		json_array_foreach(ids, i, id) {
			job = cmd_wait_find(json_object_get(result, "jobs"),
			    json_integer_value(id));
			if (job == NULL) {
				json_decref(result);
				return cmd_wait_each(ctx, ids, status);
			}
			done = done && exitcode_of_job(job) != -1;
		}
		json_array_foreach(ids, i, id) {
			if (!done)
				break;
			job = cmd_wait_find(json_object_get(result, "jobs"),
			    json_integer_value(id));
			code = exitcode_of_job(job);
			if (ctx->json)
				format_json_line(job);
			if (*status == CMD_EXIT_OK)
				*status = code;
		}
		json_decref(result);
	}
	return CMD_EXIT_OK;
}

/* The ids of the jobs sel chooses, those of argv from optind among them
 * when there are some; ascending. */
static int
cmd_wait_chosen(struct cmd_ctx *ctx, struct selector *sel, int argc,
    char **argv, json_t *ids)
{
	json_t *params = json_deep_copy(selector_filter(sel)), *jobs, *job;
	int64_t id;
	size_t i;
	int rc, k;
	bool given;

	if (params == NULL)
		xoom();
	if (json_object_get(params, "state") == NULL)
		json_object_set_new(params, "state",
		    xjson(json_pack("[ss]", "queued", "running")));
	if ((rc = cmd_list_fetch(ctx, params, &jobs)) != CMD_EXIT_OK)
		return rc;
	json_array_foreach(jobs, i, job) {
		given = optind == argc;
		for (k = optind; k < argc && !given; k++) {
			cmd_parse_id(argv[k], &id);
			given = json_integer_value(json_object_get(job,
			    "id")) == id;
		}
		if (given)
			json_array_append(ids, json_object_get(job, "id"));
	}
	json_decref(jobs);
	return CMD_EXIT_OK;
}

static int
cmd_wait_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct selector sel;
	json_t *ids;
	int64_t id;
	int i, rc, status = CMD_EXIT_OK;

	selector_init(&sel);
	rc = selector_parse(ctx, &sel, argc, argv);
	if (rc == CMD_EXIT_OK)
		rc = selector_check(ctx, &sel, argc, argv);
	ids = xjson(json_array());
	if (rc == CMD_EXIT_OK && sel.chosen)
		rc = cmd_wait_chosen(ctx, &sel, argc, argv, ids);
	else if (rc == CMD_EXIT_OK) {
		for (i = optind; i < argc; i++) {
			cmd_parse_id(argv[i], &id);
			json_array_append_new(ids, xjson(json_integer(id)));
		}
	}
	selector_free(&sel);
	if (rc == CMD_EXIT_OK && json_array_size(ids) == 1)
		rc = cmd_wait_each(ctx, ids, &status);
	else if (rc == CMD_EXIT_OK && json_array_size(ids) > 1)
		rc = cmd_wait_all(ctx, ids, &status);
	json_decref(ids);
	return rc != CMD_EXIT_OK ? rc : status;
}
