/* reload.c - a new config while the daemon runs (SIGHUP, `reload`): read
 * as at the start, checked against what runs, applied whole or not at all. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caller-env.h"
#include "cluster.h"
#include "config.h"
#include "http.h"
#include "jobs.h"
#include "log.h"
#include "membudget.h"
#include "metrics.h"
#include "notify.h"
#include "pool.h"
#include "prune.h"
#include "psem.h"
#include "reload.h"
#include "resources.h"
#include "run.h"
#include "series.h"
#include "store.h"
#include "triaged.h"
#include "units.h"

struct reload {
	char *path;
	bool optional;
	char *cpu_max;
	struct caller_env env;
	char *home, *xdg_state_home, *xdg_runtime_dir, *triage_socket,
	    *triage_config, *hostname;
};

/* A copy of s, which may be NULL; false when out of memory. */
static bool
reload_dup(char **to, const char *s)
{
	*to = NULL;
	return s == NULL || (*to = strdup(s)) != NULL;
}

struct reload *
reload_new(const struct config_opts *opts)
{
	const struct caller_env *env = opts->env;
	struct reload *rl;

	if ((rl = calloc(1, sizeof *rl)) == NULL)
		return NULL;
	rl->optional = opts->optional;
	rl->env.euid = env->euid;
	if (!reload_dup(&rl->path, opts->path) ||
	    !reload_dup(&rl->cpu_max, opts->cpu_max) ||
	    !reload_dup(&rl->home, env->home) ||
	    !reload_dup(&rl->xdg_state_home, env->xdg_state_home) ||
	    !reload_dup(&rl->xdg_runtime_dir, env->xdg_runtime_dir) ||
	    !reload_dup(&rl->triage_socket, env->triage_socket) ||
	    !reload_dup(&rl->triage_config, env->triage_config) ||
	    !reload_dup(&rl->hostname, env->hostname)) {
		reload_free(rl);
		return NULL;
	}
	rl->env.home = rl->home;
	rl->env.xdg_state_home = rl->xdg_state_home;
	rl->env.xdg_runtime_dir = rl->xdg_runtime_dir;
	rl->env.triage_socket = rl->triage_socket;
	rl->env.triage_config = rl->triage_config;
	rl->env.hostname = rl->hostname;
	return rl;
}

void
reload_free(struct reload *rl)
{
	if (rl == NULL)
		return;
	free(rl->path);
	free(rl->cpu_max);
	free(rl->home);
	free(rl->xdg_state_home);
	free(rl->xdg_runtime_dir);
	free(rl->triage_socket);
	free(rl->triage_config);
	free(rl->hostname);
	free(rl);
}

/* Why a config is rejected: lines joined by '\n'. */
struct reload_why {
	char *text;
	bool nomem;
};

static void __attribute__((format(printf, 2, 3)))
reload_reject(struct reload_why *why, const char *fmt, ...)
{
	char *line, *more;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0) {
		why->nomem = true;
		return;
	}
	if (why->text == NULL) {
		why->text = line;
		return;
	}
	if (asprintf(&more, "%s\n%s", why->text, line) < 0)
		why->nomem = true;
	else {
		free(why->text);
		why->text = more;
	}
	free(line);
}

static bool
reload_same_string(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	    (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* [cluster] is fixed while the daemon runs: it is connected to its
 * database as its node under its lease. The connection string is never
 * shown: it may hold a password. Without the section on either side the
 * node is only the host's name, free to follow it. */
static void
reload_check_cluster(const struct config_cluster *old,
    const struct config_cluster *new, const char *restart,
    struct reload_why *why)
{
	char was[UNITS_FORMAT_MAX], is[UNITS_FORMAT_MAX];

	if (old->enabled != new->enabled) {
		reload_reject(why, "[cluster] %s: %s", new->enabled ?
		    "added" : "removed", restart);
		return;
	}
	if (!old->enabled)
		return;
	if (strcmp(old->postgresql, new->postgresql) != 0)
		reload_reject(why, "[cluster] postgresql changed: %s",
		    restart);
	if (strcmp(old->node, new->node) != 0)
		reload_reject(why, "[cluster] node changed (%s -> %s): %s",
		    old->node, new->node, restart);
	if (old->lease_ms != new->lease_ms)
		reload_reject(why, "[cluster] lease changed (%s -> %s): %s",
		    units_format_duration(old->lease_ms, was, sizeof was),
		    units_format_duration(new->lease_ms, is, sizeof is),
		    restart);
}

/* What only a restart can change: the socket is bound, the state_dir
 * locked and open, the jobs' cgroups made where the start found them, and
 * every job's credentials follow run_as_submitter. */
static void
reload_check_fixed(const struct config *old, const struct config *new,
    struct reload_why *why)
{
	static const char *const restart = "that needs a restart";

	if (strcmp(old->state_dir, new->state_dir) != 0)
		reload_reject(why, "state_dir changed (%s -> %s): %s",
		    old->state_dir, new->state_dir, restart);
	if (!reload_same_string(old->http.listen, new->http.listen))
		reload_reject(why, "[http] listen changed (%s -> %s): %s",
		    old->http.listen ? old->http.listen : "unset",
		    new->http.listen ? new->http.listen : "unset", restart);
	if (!reload_same_string(old->socket, new->socket))
		reload_reject(why, "socket changed (%s -> %s): %s",
		    old->socket ? old->socket : "unset",
		    new->socket ? new->socket : "unset", restart);
	if (old->socket_mode != new->socket_mode)
		reload_reject(why, "socket_mode changed (%04o -> %04o): %s",
		    (unsigned)old->socket_mode, (unsigned)new->socket_mode,
		    restart);
	if (old->has_socket_group != new->has_socket_group ||
	    (old->has_socket_group && old->socket_gid != new->socket_gid))
		reload_reject(why, "socket_group changed: %s", restart);
	/* Whether jobs get cgroups is settled as the daemon starts: its
	 * subtree is made (or found) then, and running jobs are in it. */
	if (old->cgroups != new->cgroups)
		reload_reject(why, "cgroups changed (%s -> %s): %s",
		    config_cgroups_name(old->cgroups),
		    config_cgroups_name(new->cgroups), restart);
	if (old->run_as_submitter != new->run_as_submitter)
		reload_reject(why, "run_as_submitter changed (%s -> %s): %s",
		    old->run_as_submitter ? "yes" : "no",
		    new->run_as_submitter ? "yes" : "no", restart);
	reload_check_cluster(&old->cluster, &new->cluster, restart, why);
}

/* map[i]: old priority i's index in new, or -1 when it goes; a priority
 * that goes must have nothing queued, running or on its way in. */
static void
reload_map(struct triaged *td, const struct config *new, int *map,
    struct reload_why *why)
{
	const struct config *old = td->cfg;
	unsigned i, n;

	for (i = 0; i < old->npriorities; i++) {
		map[i] = config_priority_find(new, old->priorities[i].name);
		if (map[i] >= 0)
			continue;
		n = jobs_count(td, (int)i, JOB_QUEUED) +
		    jobs_count(td, (int)i, JOB_RUNNING) +
		    jobs_staged(td, (int)i);
		if (n != 0)
			reload_reject(why, "priority %s is not in the new "
			    "config, but %u of its jobs %s queued or running: "
			    "keep its section until %s finished (or "
			    "cancel %s)", old->priorities[i].name, n,
			    n == 1 ? "is" : "are",
			    n == 1 ? "it has" : "they have",
			    n == 1 ? "it" : "them");
	}
}

/* A queued job must still fit: a waiter needing more than all the slots
 * would hold up every priority; more than its priority's cap, its own. */
static void
reload_check_fit(struct triaged *td, const struct config *new,
    const int *map, struct reload_why *why)
{
	const struct config_priority *p;
	bool said[CONFIG_PRIORITIES_MAX] = { false };
	struct job *job;
	bool slots_said = false;
	int to;

	for (job = store_next(td->store, 0); job != NULL;
	    job = store_next(td->store, job->id)) {
		if (job->state != JOB_QUEUED)
			continue;
		if (job->slots > new->slots && !slots_said) {
			reload_reject(why, "slots %u is fewer than the %u that "
			    "queued job %llu needs", new->slots, job->slots,
			    (unsigned long long)job->id);
			slots_said = true;
		}
		if ((to = map[job->waiter.prio]) < 0)
			continue;
		p = &new->priorities[to];
		if (p->max_running != 0 && job->slots > p->max_running &&
		    !said[to]) {
			said[to] = true;
			reload_reject(why, "priority %s: max_running %u is "
			    "fewer than the %u slots that queued job %llu "
			    "needs", p->name, p->max_running, job->slots,
			    (unsigned long long)job->id);
		}
	}
}

/* Everything that cannot fail any more: the semaphore's settings, the
 * pool, the limits run.c copied, the log level. */
static void
reload_apply(struct triaged *td, const struct config *new, uint64_t budget)
{
	unsigned i;

	for (i = 0; i < new->npriorities; i++) {
		psem_set_weight(td->sem, i, new->priorities[i].weight);
		psem_set_cap(td->sem, i, new->priorities[i].max_running);
	}
	psem_set_policy(td->sem, psem_policy_find(new->policy));
	if (psem_set_permits(td->sem, new->slots) != 0)
		log_warn("reload: slots stay %u", psem_permits(td->sem));
	td->memory_budget = budget;
	resources_reload(td, new, budget);
	if (pool_resize(td->pool, new->workers) != 0)
		log_warn("reload: the pool has %u workers, not %u",
		    pool_size(td->pool), new->workers);
	run_set_limits(td->run, new->kill_grace_ms, new->max_output,
	    new->max_result, new->no_new_privs);
	/* The other nodes wait so much longer once it is written. */
	store_set_grace(td->store, new->kill_grace_ms + CLUSTER_SLACK_MS);
	log_set_level(new->log_level);
}

static void
reload_log_rejected(const char *text)
{
	const char *p = text, *nl;

	while (p != NULL && *p != '\0') {
		nl = strchr(p, '\n');
		log_warnx("reload: rejected: %.*s",
		    nl ? (int)(nl - p) : (int)strlen(p), p);
		p = nl ? nl + 1 : NULL;
	}
}

int
reload_config(struct triaged *td, char **errors)
{
	struct reload *rl = td->reload;
	struct config_opts opts = {
		.path = rl->path,
		.optional = rl->optional,
		.cpu_max = rl->cpu_max,
		.env = &rl->env,
	};
	struct reload_why why = { NULL, false };
	int map[CONFIG_PRIORITIES_MAX];
	struct config *new, *old;
	char *cause = NULL;
	uint64_t budget = 0;

	if (errors != NULL)
		*errors = NULL;
	/* systemd hears of it (Type=notify), and of READY=1 once over. */
	notify_reloading(td);
	if ((new = config_load(&opts, &cause)) == NULL) {
		why.text = cause;
		if (cause == NULL)
			why.nomem = true;
		goto rejected;
	}
	if (td->phase == TRIAGED_STOPPING)
		reload_reject(&why, "the daemon is stopping");
	reload_check_fixed(td->cfg, new, &why);
	if (http_reload_check(td, new, &cause) != 0) {
		reload_reject(&why, "%s", cause ? cause : "out of memory");
		free(cause);
	}
	reload_map(td, new, map, &why);
	if (why.text == NULL && !why.nomem)
		reload_check_fit(td, new, map, &why);
	if (new != NULL)
		budget = membudget_compute(new);
	if (why.text == NULL && !why.nomem &&
	    resources_reload_check(td, new, budget, &cause) != 0) {
		reload_reject(&why, "%s", cause ? cause : "out of memory");
		free(cause);
	}
	if (why.text == NULL && !why.nomem &&
	    cluster_reload_check(td, new, &cause) != 0) {
		reload_reject(&why, "%s", cause ? cause : "out of memory");
		free(cause);
	}
	if (why.text == NULL && !why.nomem &&
	    jobs_reprioritize(td, new->npriorities, map) != 0)
		reload_reject(&why, "cannot renumber the priorities: %s",
		    strerror(errno));
	if (why.text != NULL || why.nomem) {
		config_free(new);
		goto rejected;
	}
	/* Their counts follow their priorities, by the old numbering. */
	metrics_reprioritize(td, td->cfg->npriorities, map);
	series_reprioritize(td, td->cfg->npriorities, map);
	reload_apply(td, new, budget);
	old = td->cfg;
	td->cfg = new;
	config_free(old);
	http_reload_commit(td);
	prune_reload(td);
	log_notice("reloaded: %u priorities, %u slots, %u workers, "
	    "policy %s", new->npriorities, new->slots, new->workers, new->policy);
	notify_ready(td);
	return 0;

rejected:
	if (why.nomem)
		reload_reject(&why, "out of memory");
	if (why.text == NULL)
		why.text = strdup("out of memory");
	reload_log_rejected(why.text ? why.text : "out of memory");
	if (errors != NULL)
		*errors = why.text;
	else
		free(why.text);
	notify_ready(td);	/* the old config goes on */
	return -1;
}
