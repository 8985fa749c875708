/* filter.c - a selection of jobs by ids, priority, state, labels, name and
 * held (protocol.md, "Selecting many jobs"): its check, and its matching. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "filter.h"
#include "job.h"
#include "method.h"
#include "rpc-codes.h"
#include "store.h"

struct filter {
	uint64_t *ids;		/* sorted; NULL: any id */
	size_t nids;
	bool want[JOB_NSTATES];
	char prio[CONFIG_PRIORITY_NAME_MAX + 1];	/* "": any */
	char *name;		/* NULL: any */
	json_t *labels;		/* NULL: any */
	int held;		/* -1: either */
	bool all_users;
	uid_t uid;
};

/* The keys, and the names a field at fault gets with either prefix. */
static const struct {
	const char *key;
	const char *filter_field;
	int keys;
} filter_keys[] = {
	{ "ids", "filter.ids", FILTER_KEYS },
	{ "priority", "filter.priority", FILTER_KEYS },
	{ "state", "filter.state", FILTER_KEYS },
	{ "labels", "filter.labels", FILTER_KEYS },
	{ "name", "filter.name", FILTER_KEYS },
	{ "held", "filter.held", FILTER_HELD },
};
#define FILTER_NKEYS (sizeof filter_keys / sizeof filter_keys[0])

/* The field naming key: a constant, or err's own buffer. */
static const char *
filter_field(struct method_err *err, const char *prefix, const char *key)
{
	size_t i;

	for (i = 0; i < FILTER_NKEYS; i++)
		if (strcmp(filter_keys[i].key, key) == 0)
			return prefix[0] == '\0' ? filter_keys[i].key :
			    filter_keys[i].filter_field;
	snprintf(err->field_buf, sizeof err->field_buf, "%s%s", prefix, key);
	return err->field_buf;
}

static int
filter_check_ids(json_t *v, const char *field, struct method_err *err)
{
	json_t *id;
	size_t i;

	if (!json_is_array(v) || json_array_size(v) > FILTER_MAX_IDS)
		return method_fail(err, RPC_INVALID_PARAMS, field, "\"%s\" "
		    "must be an array of at most %d job ids", field,
		    FILTER_MAX_IDS);
	json_array_foreach(v, i, id)
		if (!json_is_integer(id) || json_integer_value(id) <= 0)
			return method_fail(err, RPC_INVALID_PARAMS, field,
			    "\"%s\" must hold positive integers (job ids)",
			    field);
	return 0;
}

static int
filter_check_states(json_t *v, const char *field, struct method_err *err)
{
	json_t *s;
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, s)
			if (!json_is_string(s) ||
			    job_state_parse(json_string_value(s)) < 0)
				break;
		if (i == json_array_size(v))
			return 0;
	}
	return method_fail(err, RPC_INVALID_PARAMS, field, "\"%s\" must be "
	    "an array of state names (queued, running, succeeded, failed, "
	    "timed_out, canceled, lost)", field);
}

static int
filter_check_labels(json_t *v, const char *field, struct method_err *err)
{
	const char *key;
	json_t *value;

	if (json_is_object(v)) {
		json_object_foreach(v, key, value)
			if (!json_is_string(value))
				break;
		if (key == NULL)
			return 0;
	}
	return method_fail(err, RPC_INVALID_PARAMS, field, "\"%s\" must be "
	    "an object of label names to string values", field);
}

static int
filter_check_priority(const struct method_ctx *ctx, json_t *v,
    const char *field, struct method_err *err)
{
	json_t *wrap;
	int rc;

	if (!json_is_string(v))
		return method_fail(err, RPC_INVALID_PARAMS, field,
		    "\"%s\" must be a string", field);
	/* method_check_priority's error lists the configured names. */
	if ((wrap = json_pack("{sO}", "priority", v)) == NULL)
		return method_fail(err, RPC_INTERNAL_ERROR, NULL,
		    "out of memory");
	rc = method_check_priority(ctx, wrap, err);
	json_decref(wrap);
	if (rc != 0)
		err->field = field;
	return rc;
}

int
filter_check(const struct method_ctx *ctx, json_t *obj, int keys,
    const char *prefix, bool strict, struct method_err *err)
{
	const char *key, *field;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v) {
		for (i = 0; i < FILTER_NKEYS; i++)
			if (strcmp(filter_keys[i].key, key) == 0 &&
			    (filter_keys[i].keys & keys))
				break;
		field = filter_field(err, prefix, key);
		if (i == FILTER_NKEYS) {
			if (!strict)
				continue;
			return method_fail(err, RPC_INVALID_PARAMS, field,
			    "a filter has no key \"%s\" (it takes ids, "
			    "priority, state, labels, name)", key);
		}
		if ((strcmp(key, "ids") == 0 &&
		    filter_check_ids(v, field, err) != 0) ||
		    (strcmp(key, "state") == 0 &&
		    filter_check_states(v, field, err) != 0) ||
		    (strcmp(key, "labels") == 0 &&
		    filter_check_labels(v, field, err) != 0) ||
		    (strcmp(key, "priority") == 0 &&
		    filter_check_priority(ctx, v, field, err) != 0))
			return -1;
		if (strcmp(key, "name") == 0 && !json_is_string(v))
			return method_fail(err, RPC_INVALID_PARAMS, field,
			    "\"%s\" must be a string", field);
		if (strcmp(key, "held") == 0 && !json_is_boolean(v))
			return method_fail(err, RPC_INVALID_PARAMS, field,
			    "\"%s\" must be a boolean", field);
	}
	return 0;
}

int
filter_cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct filter *
filter_new(const struct config *cfg, json_t *obj, bool all_users, uid_t uid)
{
	json_t *ids = json_object_get(obj, "ids");
	json_t *states = json_object_get(obj, "state");
	json_t *name = json_object_get(obj, "name");
	json_t *held = json_object_get(obj, "held");
	json_t *v;
	struct filter *f;
	size_t i;
	int prio;

	if ((f = calloc(1, sizeof *f)) == NULL)
		return NULL;
	if (ids != NULL) {
		/* One more: an empty list must not look like "any id". */
		if ((f->ids = calloc(json_array_size(ids) + 1,
		    sizeof *f->ids)) == NULL)
			goto fail;
		json_array_foreach(ids, i, v)
			f->ids[i] = (uint64_t)json_integer_value(v);
		f->nids = json_array_size(ids);
		qsort(f->ids, f->nids, sizeof *f->ids, filter_cmp_id);
	}
	for (i = 0; i < JOB_NSTATES; i++)
		f->want[i] = states == NULL;
	json_array_foreach(states, i, v)
		f->want[job_state_parse(json_string_value(v))] = true;
	if ((prio = method_priority(cfg, obj)) >= 0)
		snprintf(f->prio, sizeof f->prio, "%s",
		    cfg->priorities[prio].name);
	if (name != NULL && (f->name = strdup(json_string_value(name))) ==
	    NULL)
		goto fail;
	if ((v = json_object_get(obj, "labels")) != NULL &&
	    (f->labels = json_deep_copy(v)) == NULL)
		goto fail;
	f->held = held == NULL ? -1 : json_is_true(held);
	f->all_users = all_users;
	f->uid = uid;
	return f;
fail:
	filter_free(f);
	return NULL;
}

void
filter_free(struct filter *f)
{
	if (f == NULL)
		return;
	free(f->ids);
	free(f->name);
	json_decref(f->labels);
	free(f);
}

static bool
filter_labels_match(const struct filter *f, const struct job *job)
{
	const char *key;
	json_t *want;

	json_object_foreach(f->labels, key, want)
		if (!json_equal(want, json_object_get(job->extra->labels, key)))
			return false;
	return true;
}

bool
filter_match(const struct filter *f, const struct job *job)
{
	return (f->all_users || job->uid == f->uid) &&
	    f->want[job->state] &&
	    (f->held < 0 || job->held == (f->held == 1)) &&
	    (f->prio[0] == '\0' || strcmp(job->priority, f->prio) == 0) &&
	    (f->name == NULL || strcmp(job_name(job), f->name) == 0) &&
	    (f->ids == NULL || bsearch(&job->id, f->ids, f->nids,
	    sizeof *f->ids, filter_cmp_id) != NULL) &&
	    filter_labels_match(f, job);
}

struct job *
filter_next(const struct filter *f, const struct store *st,
    uint64_t after_id)
{
	struct job *job;
	size_t lo = 0, hi = f->nids, mid;

	if (f->ids == NULL)
		return store_next(st, after_id);
	/* The first id above after_id, then on until one exists. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->ids[mid] <= after_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < f->nids; lo++)
		if ((job = store_get(st, f->ids[lo])) != NULL)
			return job;
	return NULL;
}
