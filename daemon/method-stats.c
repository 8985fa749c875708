/* method-stats.c - `stats`: slots, workers, each priority's queue, the
 * count of jobs in each state, uptime and version. */
#include "cgroups.h"
#include "resources.h"
#include "cluster.h"
#include "config.h"
#include "jobs.h"
#include "method.h"
#include "passwd.h"
#include "psem.h"
#include "rpc.h"
#include "run.h"
#include "timefmt.h"
#include "triaged.h"
#include "version.h"

/* Whom jobs run as: {"submitter": true}, or the one user every job runs
 * as, by uid and name (a daemon that is not root runs them as itself). */
static json_t *
stats_run_as(const struct triaged *td)
{
	static char *name;	/* looked up once: our uid never changes */
	uid_t uid = td->uid;

	if (uid == 0 && td->cfg->run_as_submitter)
		return json_pack("{sb}", "submitter", 1);
	if (name == NULL && passwd_lookup(uid, &name, NULL, NULL) != 0)
		name = NULL;
	return json_pack("{sb sI ss?}", "submitter", 0, "uid",
	    (json_int_t)uid, "user", name);
}

json_t *
method_stats_result(struct triaged *td)
{
	const struct config *cfg = td->cfg;
	const struct config_priority *p;
	struct psem_prio_stats st;
	struct run_workers workers = run_workers(td->run);
	json_t *prios, *counts;
	unsigned i, busy = 0;

	if ((prios = json_array()) == NULL)
		return NULL;
	for (i = 0; i < cfg->npriorities; i++) {
		p = &cfg->priorities[i];
		psem_prio_stats(td->sem, i, &st);
		busy += st.held;
		json_array_append_new(prios, json_pack(
		    "{ss sI sI sI sI sI sI sI sb sI sI}",
		    "name", p->name,
		    "rank", (json_int_t)p->rank,
		    "queued", (json_int_t)jobs_count(td, (int)i, JOB_QUEUED),
		    "held", (json_int_t)jobs_held(td, (int)i),
		    "running", (json_int_t)jobs_count(td, (int)i, JOB_RUNNING),
		    "slots_busy", (json_int_t)st.held,
		    "max_queued", (json_int_t)p->max_queued,
		    "max_running", (json_int_t)p->max_running,
		    "paused", st.paused,
		    "dispatched", (json_int_t)st.dispatched,
		    "weight", (json_int_t)p->weight));
	}
	if ((counts = json_object()) == NULL) {
		json_decref(prios);
		return NULL;
	}
	for (i = 0; i < JOB_NSTATES; i++)
		json_object_set_new(counts, job_state_name(i),
		    json_integer((json_int_t)jobs_count(td, -1, i)));
	/* Counted as queued too: held is a kind of queued. */
	json_object_set_new(counts, "held",
	    json_integer((json_int_t)jobs_held(td, -1)));
	return json_pack("{sI sI sI sI so so sf ss ss so ss so* ss so* so* so*}",
	    "slots", (json_int_t)psem_permits(td->sem),
	    /* What is held: above slots for a while after a reload made
	     * them fewer. */
	    "slots_busy", (json_int_t)busy,
	    "workers", (json_int_t)workers.size,
	    "workers_busy", (json_int_t)workers.busy,
	    "priorities", prios,
	    "jobs", counts,
	    "uptime", (double)(timefmt_mono_ms() - td->started_mono_ms) / 1000,
	    "version", TRIAGE_VERSION,
	    "policy", cfg->policy,
	    "run_as", stats_run_as(td),
	    "node", cfg->cluster.node,
	    "nodes", cluster_nodes_json(td),
	    "cgroups", cgroups_mode_name(cgroups_mode(td->cgroups)),
	    "cgroup", cgroups_ctls_json(td->cgroups),
	    "memory", resources_stats_memory(td),
	    "resources", resources_stats(td));
}

static void
stats_handler(struct rpc_req *req, json_t *params)
{
	(void)params;
	rpc_reply(req, method_stats_result(rpc_daemon(req)));
}

static const struct method_param stats_params[] = {
	{ NULL, 0, false, NULL },
};

const struct method method_stats = {
	.name = "stats",
	.params = stats_params,
	.handler = stats_handler,
};
