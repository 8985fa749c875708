/* resources.c - admission beyond slots: the semaphore's dimensions from the
 * config, what each job wants of them, and the units it was given. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"
#include "config.h"
#include "job.h"
#include "log.h"
#include "membudget.h"
#include "psem.h"
#include "resources.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "units.h"

/* Dimension 1 is memory; [resource.NAME]s take the free ones from 2 on,
 * each keeping its dimension across reloads, so what holds it stays. */
#define RESOURCES_DIM_FIRST 2

struct resources {
	/* A resource's dimension: its name ("": a free dimension). */
	char names[PSEM_DIMS_MAX][CONFIG_RESOURCE_NAME_MAX + 1];
	char reason[CONFIG_RESOURCE_NAME_MAX + 16];
	uint64_t budget;
	/* What jobs running on other nodes hold, by name (an integer
	 * each): of every resource they name, cluster-scoped here or not,
	 * so that a reload that makes one cluster-scoped finds its use. */
	json_t *elsewhere;
};

static int
resources_dim(const struct resources *rs, const char *name)
{
	int d;

	for (d = RESOURCES_DIM_FIRST; d < PSEM_DIMS_MAX; d++)
		if (rs->names[d][0] != '\0' && strcmp(rs->names[d], name) == 0)
			return d;
	return -1;
}

static const struct job *
resources_job(const struct psem_waiter *w)
{
	return (const struct job *)((const char *)w -
	    offsetof(struct job, waiter));
}

/* Backfill's clock: a job is bound by its timeout; a running one's time
 * left is what remains of it, unknown while frozen (the clock stops). */
static uint64_t
resources_limit(const struct psem_waiter *w, void *arg)
{
	(void)arg;
	return resources_job(w)->timeout_ms;
}

static uint64_t
resources_left(const struct psem_waiter *w, void *arg)
{
	const struct job *job = resources_job(w);
	int64_t end;

	(void)arg;
	if (job->timeout_ms == 0 || job->frozen)
		return UINT64_MAX;
	if (job->run->started_at < 0)
		return job->timeout_ms;
	end = job->run->started_at + (int64_t)job->timeout_ms;
	return end > timefmt_now() ? (uint64_t)(end - timefmt_now()) : 0;
}

static const struct psem_clock resources_clock = {
	.limit = resources_limit,
	.left = resources_left,
};

/* What jobs on other nodes hold of name. */
static uint64_t
resources_held_elsewhere(const struct resources *rs, const char *name)
{
	json_int_t n = json_integer_value(json_object_get(rs->elsewhere,
	    name));

	return n > 0 ? (uint64_t)n : 0;
}

/* How much of r, on dimension d, is not free here for being held on other
 * nodes: what they hold of a cluster-scoped counter, else nothing. */
static void
resources_set_elsewhere(struct triaged *td, int d,
    const struct config_resource *r)
{
	if (r->nunits == 0)
		psem_set_dim_elsewhere(td->sem, (unsigned)d, r->cluster ?
		    resources_held_elsewhere(td->resources, r->name) : 0);
}

/* Sets dimension d up as r says. Holders elsewhere are counted after the
 * count: what they hold may be more than is left, which a count less
 * what they hold could not say to a job that waits for the whole count. */
static int
resources_set(struct triaged *td, int d, const struct config_resource *r)
{
	if (r->nunits != 0)
		return psem_set_units(td->sem, (unsigned)d, r->nunits, r->share);
	if (psem_set_count(td->sem, (unsigned)d, r->count) != 0)
		return -1;
	resources_set_elsewhere(td, d, r);
	return 0;
}

/* Tells the store the cluster-scoped counters of cfg, for claims to be
 * checked against. */
static void
resources_share(struct triaged *td, const struct config *cfg)
{
	struct store_resource shared[CONFIG_RESOURCES_MAX];
	unsigned i;
	size_t n = 0;

	for (i = 0; i < cfg->nresources; i++)
		if (cfg->resources[i].cluster && cfg->resources[i].nunits == 0)
			shared[n++] = (struct store_resource){
				cfg->resources[i].name, cfg->resources[i].count };
	if (store_set_shared_resources(td->store, shared, n) != 0)
		log_warnx("out of memory telling the store the cluster's "
		    "counters: it checks claims against the ones before");
}

/* Gives every resource of cfg a dimension, taking the name's own first. */
static int
resources_place(struct resources *rs, const struct config *cfg, int *dims)
{
	unsigned i;
	int d;

	for (i = 0; i < cfg->nresources; i++)
		dims[i] = resources_dim(rs, cfg->resources[i].name);
	for (i = 0; i < cfg->nresources; i++) {
		if (dims[i] >= 0)
			continue;
		for (d = RESOURCES_DIM_FIRST; d < PSEM_DIMS_MAX; d++) {
			unsigned j;
			bool taken = rs->names[d][0] != '\0';

			for (j = 0; j < cfg->nresources && !taken; j++)
				taken = dims[j] == d;
			if (!taken)
				break;
		}
		if (d == PSEM_DIMS_MAX)
			return -1;
		dims[i] = d;
	}
	return 0;
}

static void
resources_apply(struct triaged *td, const struct config *cfg,
    uint64_t budget, const int *dims)
{
	struct resources *rs = td->resources;
	unsigned i;
	int d;
	bool kept;

	rs->budget = budget;
	psem_set_count(td->sem, RESOURCES_DIM_MEMORY, budget);
	for (d = RESOURCES_DIM_FIRST; d < PSEM_DIMS_MAX; d++) {
		if (rs->names[d][0] == '\0')
			continue;
		for (i = 0, kept = false; i < cfg->nresources && !kept; i++)
			kept = dims[i] == d;
		if (kept)
			continue;
		psem_set_count(td->sem, (unsigned)d, 0);
		rs->names[d][0] = '\0';
	}
	for (i = 0; i < cfg->nresources; i++) {
		snprintf(rs->names[dims[i]], sizeof rs->names[dims[i]], "%s",
		    cfg->resources[i].name);
		resources_set(td, dims[i], &cfg->resources[i]);
	}
	psem_set_backfill(td->sem, cfg->backfill ? &resources_clock : NULL);
	resources_share(td, cfg);
}

int
resources_init(struct triaged *td, const struct config *cfg,
    uint64_t budget, char **cause)
{
	int dims[CONFIG_RESOURCES_MAX];

	if ((td->resources = calloc(1, sizeof *td->resources)) == NULL ||
	    (td->resources->elsewhere = json_object()) == NULL ||
	    resources_place(td->resources, cfg, dims) != 0) {
		*cause = strdup("out of memory");
		return -1;
	}
	resources_apply(td, cfg, budget, dims);
	return 0;
}

void
resources_free(struct triaged *td)
{
	if (td->resources == NULL)
		return;
	json_decref(td->resources->elsewhere);
	free(td->resources);
	td->resources = NULL;
}

/* Whether a job that is queued or running names resource name. */
static unsigned
resources_named_by(const struct triaged *td, const char *name)
{
	const struct job *job;
	unsigned n = 0;
	size_t pos = 0;

	while ((job = store_iter(td->store, &pos)) != NULL)
		if ((job->state == JOB_QUEUED || job->state == JOB_RUNNING) &&
		    json_object_get(job->extra->resources, name) != NULL)
			n++;
	return n;
}

int
resources_reload_check(struct triaged *td, const struct config *cfg,
    uint64_t budget, char **cause)
{
	struct resources *rs = td->resources;
	const struct config_resource *r;
	struct psem_dim_stats st;
	int dims[CONFIG_RESOURCES_MAX], d, old;
	unsigned i, u, n;
	uint64_t held;
	char size[32];

	if (psem_dim_wanted_over(td->sem, RESOURCES_DIM_MEMORY, budget))
		return cause_fail(cause, "the memory budget would be "
		    "%s, less than a queued job's memory", units_format_size(
		    budget, size, sizeof size));
	for (d = RESOURCES_DIM_FIRST; d < PSEM_DIMS_MAX; d++)
		if (rs->names[d][0] != '\0' &&
		    config_resource_find(cfg, rs->names[d]) < 0 &&
		    (n = resources_named_by(td, rs->names[d])) != 0)
			return cause_fail(cause, "[resource.%s] cannot go: "
			    "%u queued or running job%s name%s it",
			    rs->names[d], n, n == 1 ? "" : "s",
			    n == 1 ? "s" : "");
	if (resources_place(rs, cfg, dims) != 0)
		return cause_fail(cause, "out of memory");
	for (i = 0; i < cfg->nresources; i++) {
		r = &cfg->resources[i];
		if (psem_dim_stats(td->sem, (unsigned)dims[i], &st) != 0)
			continue;
		if ((r->nunits != 0) != (st.units != 0) && st.used != 0)
			return cause_fail(cause, "[resource.%s] cannot "
			    "change between units and count while running "
			    "jobs hold it", r->name);
		/* A cluster-scoped count, what the cluster's jobs hold. */
		held = st.used + (r->cluster ?
		    resources_held_elsewhere(rs, r->name) : 0);
		if (r->nunits == 0 && r->count < held)
			return cause_fail(cause, "[resource.%s] count %llu "
			    "is less than running jobs hold (%llu%s)", r->name,
			    (unsigned long long)r->count,
			    (unsigned long long)held, r->cluster ?
			    " on every node" : "");
		if (psem_dim_wanted_over(td->sem, (unsigned)dims[i],
		    r->nunits != 0 ? r->nunits : r->count))
			return cause_fail(cause, "[resource.%s] would be "
			    "less than a queued job asks for", r->name);
		if (r->nunits == 0 || st.units == 0 ||
		    (old = config_resource_find(td->cfg, r->name)) < 0)
			continue;
		/* A held unit keeps its index: the grants name units by
		 * it. */
		for (u = 0; u < st.units; u++)
			if (psem_unit_load(td->sem, (unsigned)dims[i], u) != 0 &&
			    (u >= r->nunits || strcmp(r->units[u],
			    td->cfg->resources[old].units[u]) != 0))
				return cause_fail(cause, "[resource.%s] "
				    "unit %s is held by a running job: it must "
				    "stay in its place in units", r->name,
				    td->cfg->resources[old].units[u]);
	}
	return 0;
}

void
resources_reload(struct triaged *td, const struct config *cfg,
    uint64_t budget)
{
	int dims[CONFIG_RESOURCES_MAX];

	if (resources_place(td->resources, cfg, dims) == 0)
		resources_apply(td, cfg, budget, dims);
}

int
resources_want(struct triaged *td, struct job *job)
{
	struct psem_need *need;
	const char *name;
	json_t *v;
	unsigned n;
	int d;

	free(job->waiter.need);
	job->waiter.need = NULL;
	n = (job->memory != 0) +
	    (unsigned)json_object_size(job->extra->resources);
	if (n == 0)
		return 0;
	if ((need = psem_need_new(n)) == NULL) {
		job_set_reason(job, "out of memory in the daemon");
		return -1;
	}
	if (job->memory != 0) {
		need->want[need->n].dim = RESOURCES_DIM_MEMORY;
		need->want[need->n++].amount = job->memory;
	}
	json_object_foreach(job->extra->resources, name, v) {
		if ((d = resources_dim(td->resources, name)) < 0) {
			free(need);
			job_set_reason(job, "it asks for resource %s, which "
			    "is no longer configured", name);
			return -1;
		}
		need->want[need->n].dim = (uint8_t)d;
		need->want[need->n++].amount = (uint64_t)json_integer_value(v);
	}
	psem_waiter_need(&job->waiter, need);
	return 0;
}

/* The units of resource r that job's devices name under its name, as the
 * bits of want.units; units no longer configured are not counted. */
static uint64_t
resources_units_of(const struct config_resource *r, const json_t *devices)
{
	const json_t *names = json_object_get(devices, r->name), *v;
	uint64_t bits = 0;
	unsigned u;
	size_t i;

	json_array_foreach(names, i, v)
		for (u = 0; u < r->nunits && u < 64; u++)
			if (json_is_string(v) &&
			    strcmp(json_string_value(v), r->units[u]) == 0)
				bits |= (uint64_t)1 << u;
	return bits;
}

int
resources_hold(struct triaged *td, struct job *job)
{
	struct psem_need *need;
	const struct config_resource *r;
	unsigned i;
	int ri;

	if (resources_want(td, job) != 0)
		return -1;
	/* Its units are the very ones it was given, which its devices name:
	 * another unit's holder may be running beside it. */
	need = job->waiter.need;
	for (i = 0; need != NULL && i < need->n; i++) {
		if (need->want[i].dim < RESOURCES_DIM_FIRST ||
		    (ri = config_resource_find(td->cfg,
		    td->resources->names[need->want[i].dim])) < 0 ||
		    (r = &td->cfg->resources[ri])->nunits == 0)
			continue;
		need->want[i].units = resources_units_of(r,
		    job->extra->devices);
	}
	if (psem_hold(td->sem, &job->waiter) != 0) {
		job_set_reason(job, "its slots and resources cannot be taken "
		    "back: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Adds sign times what held holds of each resource to what is held
 * elsewhere. Out of memory, a name's count stays as it was. */
static void
resources_tally(struct resources *rs, json_t *held, int sign)
{
	const char *name;
	json_int_t n;
	json_t *v;

	json_object_foreach(held, name, v) {
		n = (json_int_t)resources_held_elsewhere(rs, name) +
		    sign * json_integer_value(v);
		if (n > 0)
			json_object_set_new(rs->elsewhere, name,
			    json_integer(n));
		else
			json_object_del(rs->elsewhere, name);
	}
}

/* The semaphore follows the tally for the cluster-scoped counters of
 * held that grow (grow), or for those that shrink: growing ones first, so
 * that no grant in between (a shrink grants) takes what another node has
 * just taken. */
static void
resources_follow(struct triaged *td, json_t *held, bool grow)
{
	const struct config_resource *r;
	struct psem_dim_stats st;
	const char *name;
	uint64_t n;
	json_t *v;
	int d, ri;

	json_object_foreach(held, name, v) {
		if ((d = resources_dim(td->resources, name)) < 0 ||
		    (ri = config_resource_find(td->cfg, name)) < 0 ||
		    !(r = &td->cfg->resources[ri])->cluster ||
		    psem_dim_stats(td->sem, (unsigned)d, &st) != 0)
			continue;
		n = resources_held_elsewhere(td->resources, name);
		if (n != st.elsewhere && (n > st.elsewhere) == grow)
			resources_set_elsewhere(td, d, r);
	}
}

void
resources_elsewhere(struct triaged *td, struct job *job, bool on)
{
	json_t *was = job->shared.held_elsewhere;
	json_t *now = on ? job->extra->resources : NULL;

	/* Counted already (a running job's resources never change; a row
	 * that says otherwise, after a requeue and an update unheard, is
	 * counted afresh), or never counted. */
	if (was == now || (was != NULL && now != NULL && json_equal(was, now)))
		return;
	if (was != NULL)
		resources_tally(td->resources, was, -1);
	if (now != NULL)
		resources_tally(td->resources, now, 1);
	job->shared.held_elsewhere = json_incref(now);
	if (now != NULL)
		resources_follow(td, now, true);
	if (was != NULL)
		resources_follow(td, was, false);
	if (now != NULL)
		resources_follow(td, now, false);
	json_decref(was);
}

int
resources_devices(struct triaged *td, struct job *job)
{
	const struct psem_need *need = job->waiter.need;
	const struct config_resource *r;
	struct job_extra *extra;
	json_t *devices = NULL, *units;
	uint64_t bits;
	unsigned i;
	int ri;

	for (i = 0; need != NULL && i < need->n; i++) {
		if (need->want[i].dim < RESOURCES_DIM_FIRST ||
		    (ri = config_resource_find(td->cfg,
		    td->resources->names[need->want[i].dim])) < 0 ||
		    (r = &td->cfg->resources[ri])->nunits == 0)
			continue;
		if ((devices == NULL && (devices = json_object()) == NULL) ||
		    (units = json_array()) == NULL ||
		    json_object_set_new(devices, r->name, units) != 0)
			goto fail;
		for (bits = need->want[i].units; bits != 0; bits &= bits - 1)
			if ((unsigned)__builtin_ctzll(bits) < r->nunits &&
			    json_array_append_new(units, json_string(
			    r->units[__builtin_ctzll(bits)])) != 0)
				goto fail;
	}
	/* None where there were none: the job keeps sharing
	 * job_extra_none. */
	if (devices == NULL && job->extra->devices == NULL)
		return 0;
	if ((extra = job_extra_edit(job)) == NULL)
		goto fail;
	json_decref(extra->devices);
	extra->devices = devices;
	return 0;
fail:
	json_decref(devices);
	return -1;
}

const char *
resources_reason(const struct triaged *td, int dim)
{
	struct resources *rs = td->resources;

	if (dim == RESOURCES_DIM_MEMORY)
		return "memory";
	if (dim < RESOURCES_DIM_FIRST || dim >= PSEM_DIMS_MAX ||
	    rs->names[dim][0] == '\0')
		return NULL;
	snprintf(rs->reason, sizeof rs->reason, "resource:%s",
	    rs->names[dim]);
	return rs->reason;
}

json_t *
resources_stats_memory(const struct triaged *td)
{
	struct psem_dim_stats st;
	int64_t avail = membudget_available();

	if (psem_dim_stats(td->sem, RESOURCES_DIM_MEMORY, &st) != 0)
		memset(&st, 0, sizeof st);
	return json_pack("{s:I, s:I, s:o}", "budget",
	    (json_int_t)td->resources->budget, "used", (json_int_t)st.used,
	    "available", avail >= 0 ? json_integer(avail) : json_null());
}

json_t *
resources_stats(const struct triaged *td)
{
	const struct config_resource *r;
	struct psem_dim_stats st;
	json_t *all = json_object(), *one, *loads;
	unsigned i, u;
	int d;

	for (i = 0; all != NULL && i < td->cfg->nresources; i++) {
		r = &td->cfg->resources[i];
		if ((d = resources_dim(td->resources, r->name)) < 0 ||
		    psem_dim_stats(td->sem, (unsigned)d, &st) != 0)
			continue;
		/* A cluster-scoped counter's use is the cluster's. */
		one = json_pack("{s:I, s:I, s:I, s:i, s:s}", "units",
		    (json_int_t)st.capacity, "used", (json_int_t)(st.used +
		    st.elsewhere),
		    "kept", (json_int_t)st.kept, "waiting", (int)st.waiting,
		    "scope", r->cluster ? "cluster" : "node");
		if (one != NULL && r->nunits != 0) {
			/* Of named units, how many jobs hold each. */
			loads = json_object();
			for (u = 0; loads != NULL && u < r->nunits; u++)
				json_object_set_new(loads, r->units[u],
				    json_integer(psem_unit_load(td->sem,
				    (unsigned)d, u)));
			json_object_set_new(one, "share", json_integer(
			    r->share));
			json_object_set_new(one, "holders", loads);
		}
		json_object_set_new(all, r->name, one);
	}
	return all;
}
