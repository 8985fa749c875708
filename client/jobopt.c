/* jobopt.c - the options that describe a job, read strictly: a typo must be
 * an error naming the option, never a job run at another time or priority. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "jobopt.h"
#include "nodename.h"
#include "timefmt.h"
#include "units.h"
#include "when.h"
#include "xmalloc.h"

/* The protocol's bound on a label's key; those on values and on their
 * number are the daemon's config (max_label_value, max_labels), its to
 * check. */
#define JOBOPT_LABEL_KEY_MAX	64
/* The least memory a job may declare, protocol.md's 1MiB. */
#define JOBOPT_MEMORY_MIN	(UINT64_C(1) << 20)
/* config.md's bound on a resource's name. */
#define JOBOPT_RESOURCE_NAME_MAX	32

int
jobopt_timeout(struct cmd_ctx *ctx, json_t *params, const char *arg)
{
	uint64_t ms;

	if (units_parse_duration(arg, &ms) == -1)
		return cmd_usage(ctx,
		    "invalid --timeout '%s' (try 30s, 5m, 2h)", arg);
	if (ms % 1000 == 0)
		json_object_set_new(params, "timeout",
		    xjson(json_integer((json_int_t)(ms / 1000))));
	else
		json_object_set_new(params, "timeout",
		    xjson(json_real((double)ms / 1000)));
	return CMD_EXIT_OK;
}

int
jobopt_begin_at(struct cmd_ctx *ctx, json_t *params, const char *opt,
    const char *arg)
{
	char when[WHEN_MAX];

	if (strcmp(opt, "--at") == 0) {
		if (when_at(arg, timefmt_now(), when, sizeof when) == -1)
			return cmd_usage(ctx, "--at: \"%s\" is not a time "
			    "(HH:MM or RFC 3339)", arg);
	} else if (when_delay(arg, timefmt_now(), when, sizeof when) == -1)
		return cmd_usage(ctx, "--delay: \"%s\" is not a duration%s",
		    arg, errno == ERANGE ? " this side of the year 9999" :
		    " (try 30s, 10m, 2h, 1d)");
	json_object_set_new(params, "begin_at", xjson(json_string(when)));
	return CMD_EXIT_OK;
}

int
jobopt_nice(struct cmd_ctx *ctx, json_t *params, const char *arg)
{
	long n;

	if (cmd_parse_count(arg, 0, &n) == -1 || n > JOBOPT_NICE_MAX)
		return cmd_usage(ctx, "invalid --nice '%s' (0 to %d)", arg,
		    JOBOPT_NICE_MAX);
	json_object_set_new(params, "nice", xjson(json_integer(n)));
	return CMD_EXIT_OK;
}

/* --memory or --mem (opt, as typed, for messages). */
static int
jobopt_memory(struct cmd_ctx *ctx, json_t *params, const char *opt,
    const char *arg)
{
	uint64_t bytes;

	if (units_parse_size(arg, &bytes) == -1 || bytes < JOBOPT_MEMORY_MIN ||
	    bytes > INT64_MAX)
		return cmd_usage(ctx, "invalid %s '%s' (a size of at least "
		    "1MiB: 512MiB, 4GiB)", opt, arg);
	json_object_set_new(params, "memory",
	    xjson(json_integer((json_int_t)bytes)));
	return CMD_EXIT_OK;
}

/* --res or --gpus (gpus set). */
static int
jobopt_resource(struct cmd_ctx *ctx, json_t *params, bool gpus,
    const char *arg)
{
	json_t *resources = json_object_get(params, "resources");
	const char *opt = gpus ? "--gpus" : "--res";
	const char *eq = gpus ? NULL : strchr(arg, '=');
	char name[JOBOPT_RESOURCE_NAME_MAX + 1];
	size_t nlen = eq != NULL ? (size_t)(eq - arg) : 0;
	long n;

	if (gpus) {
		if (cmd_parse_count(arg, 1, &n) == -1)
			return cmd_usage(ctx, "invalid --gpus '%s' (a count of "
			    "at least 1)", arg);
		strcpy(name, "gpu");
	} else {
		if (eq == NULL || nlen == 0 || nlen > JOBOPT_RESOURCE_NAME_MAX ||
		    strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
		    nlen || cmd_parse_count(eq + 1, 1, &n) == -1)
			return cmd_usage(ctx, "%s: \"%s\" is not NAME=N (NAME: "
			    "a resource, 1 to %d of a-z 0-9 _ -; N: how many "
			    "of its units, at least 1)", opt, arg,
			    JOBOPT_RESOURCE_NAME_MAX);
		memcpy(name, arg, nlen);
		name[nlen] = '\0';
	}
	if (json_object_get(resources, name) != NULL)
		return cmd_usage(ctx, "%s %s: %s is asked for twice%s", opt, arg,
		    name, strcmp(name, "gpu") == 0 ? " (--gpus N is --res "
		    "gpu=N)" : "");
	if (resources == NULL) {
		resources = xjson(json_object());
		json_object_set_new(params, "resources", resources);
	}
	json_object_set_new(resources, name, xjson(json_integer(n)));
	return CMD_EXIT_OK;
}

int
jobopt_uses(struct cmd_ctx *ctx, json_t *params, int ch, const char *arg)
{
	switch (ch) {
	case JOBOPT_MEMORY:
	case JOBOPT_MEM:
		return jobopt_memory(ctx, params, ch == JOBOPT_MEM ? "--mem" :
		    "--memory", arg);
	default:
		return jobopt_resource(ctx, params, ch == JOBOPT_GPUS, arg);
	}
}

int
jobopt_label(struct cmd_ctx *ctx, json_t *params, const char *arg)
{
	const char *eq = strchr(arg, '=');
	json_t *labels = json_object_get(params, "labels"), *value;
	size_t klen = eq != NULL ? (size_t)(eq - arg) : 0;
	char key[JOBOPT_LABEL_KEY_MAX + 1];

	if (eq == NULL || klen == 0 || klen > JOBOPT_LABEL_KEY_MAX ||
	    strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.-") != klen)
		return cmd_usage(ctx, "--label: \"%s\" is not KEY=VALUE (KEY: "
		    "1 to %d of A-Z a-z 0-9 _ . -)", arg, JOBOPT_LABEL_KEY_MAX);
	if ((value = json_string(eq + 1)) == NULL)
		return cmd_usage(ctx, "--label %.*s: the value is not valid "
		    "UTF-8", (int)klen, arg);
	memcpy(key, arg, klen);
	key[klen] = '\0';
	if (labels == NULL) {
		labels = xjson(json_object());
		json_object_set_new(params, "labels", labels);
	}
	json_object_set_new(labels, key, value);
	return CMD_EXIT_OK;
}

int
jobopt_string(struct cmd_ctx *ctx, json_t *params, int ch, const char *arg)
{
	json_t *v;

	if ((v = json_string(arg)) == NULL)
		return cmd_usage(ctx, "-%c: not valid UTF-8", ch);
	json_object_set_new(params, ch == 'p' ? "priority" : "name", v);
	return CMD_EXIT_OK;
}

int
jobopt_node(struct cmd_ctx *ctx, json_t *params, const char *arg)
{
	if (!nodename_valid(arg))
		return cmd_usage(ctx, "invalid --node '%s' (%s)", arg,
		    NODENAME_FORM);
	json_object_set_new(params, "node", xjson(json_string(arg)));
	return CMD_EXIT_OK;
}

int
jobopt_retries(struct cmd_ctx *ctx, json_t *params, const char *arg)
{
	long n;

	if (cmd_parse_count(arg, 0, &n) == -1)
		return cmd_usage(ctx, "invalid --retries '%s' (a count, 0 or "
		    "more)", arg);
	json_object_set_new(params, "retries", xjson(json_integer(n)));
	return CMD_EXIT_OK;
}
