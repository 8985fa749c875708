/* cmd-resources.c - triage resources: the memory budget and each resource
 * from stats, with the jobs that hold each named unit and those that wait. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "table.h"
#include "xmalloc.h"

/* How many ids a line names before "and N more": a table stays a table
 * however many jobs wait. */
#define CMD_RESOURCES_IDS 5

static int cmd_resources_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_resources_entry = {
	.name = "resources",
	.args = "",
	.summary = "show the memory budget and the resources: units, holders, "
	    "waiting jobs",
	.options = NULL,
	.notes =
	    "UNITS is how many may be held at once (the count, or the units "
	    "times their\n"
	    "share); KEPT, those free but kept for a job that waits for more; "
	    "WAITING,\n"
	    "the queued jobs that ask for it. JOBS names those that wait for "
	    "want of its\n"
	    "units, and for each unit of a unit-named resource the jobs that "
	    "hold it.\n"
	    "With --json, prints the stats' memory and resources on one line, "
	    "with\n"
	    "\"jobs_waiting\" (ids) and, for unit-named ones, \"jobs_holding\" "
	    "(unit to ids).\n",
	.exec = cmd_resources_exec,
};

/* An array of id v appended to the array at key of obj, made if need be. */
static void
cmd_resources_add_id(json_t *obj, const char *key, json_t *id)
{
	json_t *ids = json_object_get(obj, key);

	if (ids == NULL) {
		ids = xjson(json_array());
		json_object_set_new(obj, key, ids);
	}
	json_array_append(ids, id);
}

/*
 * Adds to stats' memory and each of its resources (all, an object) what
 * jobs (queued and running ones) say: "jobs_waiting", the ids of queued
 * jobs whose pending_reason is for want of it, and of a unit-named one,
 * "jobs_holding", each unit's name to the ids of the jobs its devices name.
 */
static void
cmd_resources_add_jobs(json_t *memory, json_t *all, const json_t *jobs)
{
	const char *reason, *name, *unit;
	const json_t *job, *units, *u;
	json_t *r, *holding, *id, *held;
	size_t i, k;

	json_object_foreach(all, name, r) {
		json_object_set_new(r, "jobs_waiting", xjson(json_array()));
		if (json_is_object(json_object_get(r, "holders"))) {
			holding = xjson(json_object());
			json_object_set_new(r, "jobs_holding", holding);
			/* Every unit, held or not, in stats' order. */
			json_object_foreach(json_object_get(r, "holders"), unit,
			    held)
				json_object_set_new(holding, unit,
				    xjson(json_array()));
		}
	}
	if (json_is_object(memory))
		json_object_set_new(memory, "jobs_waiting", xjson(json_array()));
	json_array_foreach(jobs, i, job) {
		id = json_object_get(job, "id");
		reason = json_string_value(json_object_get(job,
		    "pending_reason"));
		if (reason != NULL && strcmp(reason, "memory") == 0 &&
		    json_is_object(memory))
			cmd_resources_add_id(memory, "jobs_waiting", id);
		else if (reason != NULL && strncmp(reason, "resource:", 9) == 0 &&
		    (r = json_object_get(all, reason + 9)) != NULL)
			cmd_resources_add_id(r, "jobs_waiting", id);
		json_object_foreach(json_object_get(job, "devices"), name,
		    units) {
			holding = json_object_get(json_object_get(all, name),
			    "jobs_holding");
			json_array_foreach(units, k, u)
				if (json_is_string(u) && holding != NULL)
					cmd_resources_add_id(holding,
					    json_string_value(u), id);
		}
	}
}

/* ids (an array) as "3, 4, 5, 6, 7 and 12 more" after prefix, into buf. */
static const char *
cmd_resources_ids(const char *prefix, const json_t *ids, char *buf,
    size_t size)
{
	size_t i, n = json_array_size(ids), len;

	len = (size_t)snprintf(buf, size, "%s", prefix);
	for (i = 0; i < n && i < CMD_RESOURCES_IDS && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%"
		    JSON_INTEGER_FORMAT, i > 0 ? ", " : "",
		    json_integer_value(json_array_get(ids, i)));
	if (n > CMD_RESOURCES_IDS && len < size)
		snprintf(buf + len, size - len, " and %zu more",
		    n - CMD_RESOURCES_IDS);
	return buf;
}

/* One unit's row: its name, how many hold it, and which jobs. */
static void
cmd_resources_unit(struct table *t, const char *unit, const json_t *r)
{
	const char *cells[7] = { "", "", "", "", "", "", "" };
	const json_t *ids = json_object_get(json_object_get(r,
	    "jobs_holding"), unit);
	json_int_t n = json_integer_value(json_object_get(json_object_get(r,
	    "holders"), unit));
	char name[64], load[24], jobs[160];

	snprintf(name, sizeof name, "  %s", unit);
	cells[0] = name;
	snprintf(load, sizeof load, "%" JSON_INTEGER_FORMAT, n);
	cells[3] = load;
	if (n == 0)
		cells[6] = "free";
	else if (json_array_size(ids) == 0)
		/* Held, but by no job the list has its devices of. */
		cells[6] = "held";
	else
		cells[6] = cmd_resources_ids("held by ", ids, jobs,
		    sizeof jobs);
	table_add(t, cells);
}

static void
cmd_resources_print(const json_t *memory, json_t *all)
{
	static const char *const headers[] = { "NAME", "SCOPE", "UNITS",
	    "USED", "KEPT", "WAITING", "JOBS" };
	static const char *const nums[] = { "units", "used", "kept",
	    "waiting" };
	const char *cells[7], *name, *unit;
	const json_t *waiting;
	json_t *r, *u;
	char num[4][24], a[32], b[32], c[48], jobs[160];
	struct table *t;
	unsigned i;

	waiting = json_object_get(memory, "jobs_waiting");
	/* The kernel's MemAvailable, where it could be read. */
	c[0] = '\0';
	if (json_is_integer(json_object_get(memory, "available")))
		snprintf(c, sizeof c, ", %s available", format_size_about(
		    json_object_get(memory, "available"), a, sizeof a));
	printf("memory:  %s used of %s%s%s\n",
	    format_size(json_object_get(memory, "used"), a, sizeof a),
	    format_size(json_object_get(memory, "budget"), b, sizeof b), c,
	    json_array_size(waiting) > 0 ? cmd_resources_ids("; waiting for "
	    "memory: ", waiting, jobs, sizeof jobs) : "");
	if (json_object_size(all) == 0)
		return;
	printf("\n");
	t = table_new(headers, 7);
	for (i = 2; i < 6; i++)
		table_align_right(t, i);
	json_object_foreach(all, name, r) {
		cells[0] = name;
		cells[1] = json_string_value(json_object_get(r, "scope"));
		if (cells[1] == NULL)
			cells[1] = "-";
		for (i = 0; i < 4; i++)
			cells[2 + i] = format_int(json_object_get(r, nums[i]),
			    num[i], sizeof num[i]);
		waiting = json_object_get(r, "jobs_waiting");
		cells[6] = json_array_size(waiting) > 0 ? cmd_resources_ids(
		    "waiting for units: ", waiting, jobs, sizeof jobs) : "";
		table_add(t, cells);
		json_object_foreach(json_object_get(r, "holders"), unit, u)
			cmd_resources_unit(t, unit, r);
	}
	table_print(t, stdout);
	table_free(t);
}

static int
cmd_resources_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	json_t *stats, *jobs, *params, *memory, *all, *out;
	int rc;

	if ((rc = cmd_plain_args(ctx, argc, argv, 0, 0, NULL)) != CMD_EXIT_OK)
		return rc;
	if ((rc = cmd_call(ctx, "stats", NULL, &stats)) != CMD_EXIT_OK)
		return rc;
	memory = json_object_get(stats, "memory");
	all = json_object_get(stats, "resources");
	if (!json_is_object(memory) || !json_is_object(all)) {
		cmd_error("the daemon's stats have no memory and resources "
		    "(a daemon before protocol v1.2?)");
		json_decref(stats);
		return CMD_EXIT_FAILURE;
	}
	/* Who holds and who waits: the queued and running jobs, in one
	 * list (paged), not a call per resource. */
	params = xjson(json_pack("{s[ss]}", "state", "queued", "running"));
	if ((rc = cmd_list_fetch(ctx, params, &jobs)) != CMD_EXIT_OK) {
		json_decref(stats);
		return rc;
	}
	cmd_resources_add_jobs(memory, all, jobs);
	json_decref(jobs);
	if (ctx->json) {
		out = xjson(json_pack("{sOsO}", "memory", memory, "resources",
		    all));
		format_json_line(out);
		json_decref(out);
	} else
		cmd_resources_print(memory, all);
	json_decref(stats);
	return CMD_EXIT_OK;
}
