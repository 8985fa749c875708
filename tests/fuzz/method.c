/* method.c - fuzz target: the param checks of every method of the table
 * (method_validate), on a config whose limits the input chooses. */
#include <stdbool.h>
#include <unistd.h>

#include "bytestr.h"
#include "caller-env.h"
#include "config.h"
#include "filter.h"
#include "fuzz.h"
#include "job.h"
#include "method.h"
#include "rpc.h"

/* The memory budget the checks are given. */
#define FUZZ_BUDGET ((uint64_t)1 << 30)

/* Two resources beside the built-in config: gpu of two named units,
 * licence a count of three. */
static char fuzz_unit0[] = "0", fuzz_unit1[] = "1";
static char *fuzz_units[] = { fuzz_unit0, fuzz_unit1, NULL };
static struct config_resource fuzz_resources[] = {
	{ .name = "gpu", .units = fuzz_units, .nunits = 2, .count = 2,
	  .share = 1 },
	{ .name = "licence", .count = 3, .share = 1 },
};

static struct config *
fuzz_config(void)
{
	static struct config *cfg;
	struct caller_env env = { .euid = geteuid(), .home = "/tmp" };
	struct config_opts opts = { .env = &env };

	if (cfg != NULL)
		return cfg;
	if ((cfg = config_load(&opts, NULL)) == NULL)
		abort();
	cfg->resources = fuzz_resources;
	cfg->nresources = 2;
	return cfg;
}

static void
fuzz_check_err(const struct method_err *err)
{
	FUZZ_ASSERT(err->code == RPC_METHOD_NOT_FOUND ||
	    err->code == RPC_INVALID_PARAMS ||
	    err->code == RPC_PERMISSION_DENIED ||
	    err->code == RPC_INTERNAL_ERROR);
	FUZZ_ASSERT(memchr(err->message, '\0', sizeof err->message) != NULL);
	FUZZ_ASSERT(err->message[0] != '\0');
}

/* What submit's and update's checks promise of labels. */
static void
fuzz_check_labels(const struct config *cfg, json_t *params)
{
	json_t *labels = json_object_get(params, "labels"), *v;
	const char *k;

	FUZZ_ASSERT(json_object_size(labels) <= cfg->max_labels);
	json_object_foreach(labels, k, v) {
		FUZZ_ASSERT(strlen(k) >= 1 && strlen(k) <= 64);
		FUZZ_ASSERT(json_is_string(v) &&
		    json_string_length(v) <= cfg->max_label_value);
	}
}

/* What submit's and update's checks promise of memory: an integer of at
 * least 1 MiB and within the budget, when there; and of resources:
 * configured ones, each a count it has. */
static void
fuzz_check_memory(const struct config *cfg, json_t *params)
{
	json_t *memory = json_object_get(params, "memory"), *v;
	const char *k;
	int i;

	FUZZ_ASSERT(memory == NULL || (json_is_integer(memory) &&
	    json_integer_value(memory) >= 1048576 &&
	    (uint64_t)json_integer_value(memory) <= FUZZ_BUDGET));
	json_object_foreach(json_object_get(params, "resources"), k, v) {
		FUZZ_ASSERT((i = config_resource_find(cfg, k)) != -1);
		FUZZ_ASSERT(json_is_integer(v) && json_integer_value(v) >= 1 &&
		    (uint64_t)json_integer_value(v) <=
		    cfg->resources[i].count);
	}
}

/* What submit's check promises its handler. */
static void
fuzz_check_submit(const struct config *cfg, json_t *params)
{
	json_t *argv = json_object_get(params, "argv"), *s, *v;
	const char *why, *k;
	size_t i, bytes = 0;
	char *b;

	FUZZ_ASSERT(json_array_size(argv) >= 1 &&
	    json_array_size(argv) <= cfg->max_argv);
	/* Byte strings, plain or {"base64": ...}, without NUL. */
	json_array_foreach(argv, i, s) {
		FUZZ_ASSERT(bytestr_from_json(s, &b, &why) == 0);
		FUZZ_ASSERT(b[0] != '\0');
		bytes += strlen(b) + 1;
		free(b);
	}
	json_object_foreach(json_object_get(params, "env"), k, v) {
		FUZZ_ASSERT(bytestr_from_json(v, &b, &why) == 0);
		free(b);
	}
	if ((v = json_object_get(params, "cwd")) != NULL) {
		FUZZ_ASSERT(bytestr_from_json(v, &b, &why) == 0);
		FUZZ_ASSERT(b[0] == '/');
		free(b);
	}
	FUZZ_ASSERT(bytes <= cfg->max_argv_bytes);
	FUZZ_ASSERT(json_object_size(json_object_get(params, "env")) <=
	    cfg->max_env);
	FUZZ_ASSERT(json_object_get(params, "nice") == NULL ||
	    (json_integer_value(json_object_get(params, "nice")) >= 0 &&
	    json_integer_value(json_object_get(params, "nice")) <= 19));
	fuzz_check_labels(cfg, params);
	fuzz_check_memory(cfg, params);
}

/* What bulk_check promises bulk_start: one of id and filter, and a filter
 * that filter_new takes and any job can be matched against. */
static void
fuzz_check_bulk(const struct config *cfg, json_t *params)
{
	json_t *filter = json_object_get(params, "filter");
	struct job_extra *extra;
	struct filter *f;
	struct job *job;

	FUZZ_ASSERT((json_object_get(params, "id") != NULL) !=
	    (filter != NULL));
	if (filter == NULL)
		return;
	f = filter_new(cfg, filter, false, 1000);
	job = job_new();
	FUZZ_ASSERT(f != NULL && job != NULL);
	FUZZ_ASSERT((extra = job_extra_edit(job)) != NULL);
	job->id = 1;
	job->uid = 1000;
	job->state = JOB_FAILED;
	extra->name = strdup("build");
	FUZZ_ASSERT(job_set_priority(job, cfg->priorities[0].name) == 0);
	extra->labels = json_pack("{ss}", "team", "a");
	FUZZ_ASSERT(extra->name != NULL && job->priority != NULL &&
	    extra->labels != NULL);
	(void)filter_match(f, job);
	job_free(job);
	filter_free(f);
}

/*
 * Input: limits (max_argv, max_env, max_name, permits; a byte each), then
 * the params as JSON (anything else: no params at all).
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct config *cfg = fuzz_config();
	struct method_ctx ctx = { .cfg = cfg, .uid = 1000, .gid = 1000,
	    .memory_budget = FUZZ_BUDGET };
	const struct method *m;
	struct method_err err;
	json_t *params;
	size_t i;
	int admin;

	cfg->max_argv = (unsigned)fuzz_u8(&in) % 16 + 1;
	cfg->max_argv_bytes = 64;
	cfg->max_env = (unsigned)fuzz_u8(&in) % 8;
	cfg->max_env_bytes = 64;
	cfg->max_name = (unsigned)fuzz_u8(&in) % 32 + 1;
	cfg->max_labels = 4;
	cfg->max_label_value = 16;
	ctx.permits = (unsigned)fuzz_u8(&in) % 8 + 1;
	params = json_loadb((const char *)in.p, in.n, JSON_DECODE_ANY, NULL);
	for (admin = 0; admin < 2; admin++) {
		ctx.admin = admin;
		for (i = 0; (m = method_at(i)) != NULL; i++) {
			if (method_validate(&ctx, m->name, params, &err) != 0)
				fuzz_check_err(&err);
			else {
				FUZZ_ASSERT(params == NULL ||
				    json_is_object(params));
				FUZZ_ASSERT(admin || !(m->flags & METHOD_ADMIN));
				if (strcmp(m->name, "submit") == 0)
					fuzz_check_submit(cfg, params);
				if (strcmp(m->name, "update") == 0) {
					fuzz_check_labels(cfg, params);
					fuzz_check_memory(cfg, params);
				}
				if (strcmp(m->name, "cancel") == 0 ||
				    strcmp(m->name, "retry") == 0 ||
				    strcmp(m->name, "remove") == 0 ||
				    strcmp(m->name, "freeze") == 0 ||
				    strcmp(m->name, "thaw") == 0)
					fuzz_check_bulk(cfg, params);
			}
		}
		FUZZ_ASSERT(method_validate(&ctx, "no-such-method", params,
		    &err) != 0 && err.code == RPC_METHOD_NOT_FOUND);
	}
	json_decref(params);
	return 0;
}
