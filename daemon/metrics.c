/* metrics.c - the daemon's figures in the Prometheus text format (0.0.4),
 * for /metrics: read from what their owners count, at the scrape. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "attempts.h"
#include "cluster.h"
#include "config.h"
#include "hist.h"
#include "jobs.h"
#include "log.h"
#include "metrics.h"
#include "prioremap.h"
#include "procstat.h"
#include "psem.h"
#include "resources.h"
#include "run.h"
#include "server.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "version.h"

/*
 * The families, and who counts each (labels: priority, the name of one of
 * the config's; state, a terminal state's name):
 *
 * gauges, read at the scrape:
 *   triage_jobs_queued{priority}      queued jobs, held ones included (jobs)
 *   triage_jobs_held{priority}        queued jobs that are held (jobs)
 *   triage_jobs_running{priority}     running jobs (jobs)
 *   triage_priority_paused{priority}  1 while paused (the semaphore)
 *   triage_slots                      the semaphore's slots
 *   triage_slots_busy                 slots held by granted jobs
 *   triage_workers                    worker processes (the pool)
 *   triage_workers_busy               workers running a job
 *   triage_memory_budget_bytes        the budget jobs' declared memory is
 *                                     admitted against (the semaphore)
 *   triage_memory_used_bytes          of it, what running jobs hold
 *   triage_resource_units{resource}   how many may be held at once: the
 *                                     count, or units times share
 *   triage_resource_used{resource}    held by running jobs
 *   triage_resource_kept{resource}    free, but kept for a job that waits
 *                                     for more
 *   triage_resource_waiting_jobs{resource}  queued jobs that ask for it
 *                                     (the four: resources_stats)
 *   triage_cluster_node_up{node}      in a cluster, 1 for each node up (this
 *                                     one, and each holding its name whose
 *                                     lease has not run out), else 0
 *   triage_cluster_node_slots_busy{node}  its slots held, as it wrote last
 *                                     (both: cluster_nodes_json)
 *   triage_build_info{version}        1
 * counters:
 *   triage_submissions_total{priority}       jobs admitted (job events)
 *   triage_dispatches_total{priority}        slots granted (the semaphore)
 *   triage_jobs_finished_total{priority,state}  attempts that ended in a
 *                                            terminal state (job events)
 *   triage_retries_total{priority}           attempts queued again: retries
 *                                            left, `retry`, requeues at a
 *                                            stop or restart (job events)
 *   triage_jobs_oom_killed_total{priority}   attempts killed for want of
 *                                            memory (run ends)
 *   triage_store_commits_total               commits of the job store
 *   triage_store_commit_failures_total       those that failed (the store)
 *   triage_store_claims_total                jobs this daemon claimed to
 *                                            start (the store)
 *   triage_store_claims_refused_total        those another node had
 *                                            claimed or changed first
 *   triage_store_claims_moved_total          those that went to a job
 *                                            alike instead
 *   triage_connections_accepted_total        clients of the job socket
 *   triage_connections_refused_total         turned away by max_clients or
 *                                            max_clients_per_user (server)
 * histograms (seconds):
 *   triage_job_wait_seconds{priority}  queued (or begin_at) to started
 *   triage_job_run_seconds{priority}   started to ended, retried runs too
 *   triage_store_commit_seconds        a commit's write (the store)
 * histograms (bytes):
 *   triage_job_peak_memory_bytes{priority}  the peak memory of each run
 *                                      that ended, retried ones too (run
 *                                      ends)
 * process (procstat_usage): process_resident_memory_bytes,
 *   process_virtual_memory_bytes, process_open_fds, process_max_fds,
 *   process_cpu_seconds_total, process_start_time_seconds.
 *
 * Labels: resource, the name of one of the config's [resource.NAME].
 *
 * Counters start at 0 with each start of the daemon, as Prometheus
 * expects of a process's counters; a reload keeps them.
 *
 * What a run's end measures is counted as it ends (jobs_listen_runs), not
 * from the job's events: a run that fails with retries left is published
 * as the next attempt queued, its run already cleared, and an attempt
 * killed for want of memory then retried must count all the same.
 */

struct metrics_prio {
	uint64_t submissions;
	uint64_t retries;
	uint64_t finished[JOB_NSTATES];
	uint64_t oom_killed;
	struct hist wait;
	struct hist run;
	struct hist peak_memory;
};

struct metrics {
	struct attempts attempts;
	struct metrics_prio prio[CONFIG_PRIORITIES_MAX];
};

/* The terminal states, in the order they are written. */
static const enum job_state metrics_ends[] = {
	JOB_SUCCEEDED, JOB_FAILED, JOB_TIMED_OUT, JOB_CANCELED, JOB_LOST,
};

static void
metrics_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	struct metrics *m = arg;
	struct metrics_prio *p;
	struct attempts_times t;
	unsigned prio = ev->view->waiter.prio;

	attempts_event(&m->attempts, ev, timefmt_now(), &t);
	if (prio >= td->cfg->npriorities)
		return;
	p = &m->prio[prio];
	switch (t.kind) {
	case ATTEMPTS_SUBMITTED:
		p->submissions++;
		break;
	case ATTEMPTS_REQUEUED:
		p->retries++;
		break;
	case ATTEMPTS_STARTED:
		hist_observe(&p->wait, &hist_job_seconds, t.wait);
		break;
	case ATTEMPTS_ENDED:
		p->finished[ev->view->state]++;
		break;
	case ATTEMPTS_OTHER:
		break;
	}
	if (t.run >= 0)
		hist_observe(&p->run, &hist_job_seconds, t.run);
}

void
metrics_run_ended(struct triaged *td, const struct job *job,
    const struct run_outcome *out)
{
	struct metrics_prio *p;
	unsigned prio = job->waiter.prio;
	int64_t peak = run_outcome_peak(out);

	if (td->metrics == NULL || prio >= td->cfg->npriorities)
		return;
	p = &td->metrics->prio[prio];
	if (out->oom)
		p->oom_killed++;
	if (peak >= 0)
		hist_observe(&p->peak_memory, &hist_memory_bytes,
		    (double)peak);
}

static void
metrics_run_cb(struct triaged *td, const struct jobs_run_event *ev,
    void *arg)
{
	(void)arg;
	if (ev->out != NULL)
		metrics_run_ended(td, ev->job, ev->out);
}

int
metrics_init(struct triaged *td, char **cause)
{
	struct metrics *m;

	*cause = NULL;
	if ((m = calloc(1, sizeof *m)) == NULL)
		return -1;
	attempts_init(&m->attempts, timefmt_now());
	if (jobs_listen(td, metrics_job_cb, m) != 0 ||
	    jobs_listen_runs(td, metrics_run_cb, NULL) != 0) {
		free(m);
		return -1;
	}
	td->metrics = m;
	return 0;
}

void
metrics_free(struct triaged *td)
{
	if (td->metrics == NULL)
		return;
	attempts_clear(&td->metrics->attempts);
	free(td->metrics);
	td->metrics = NULL;
}

void
metrics_reprioritize(struct triaged *td, unsigned nold, const int *map)
{
	/* Counters going back to 0 is what Prometheus copes with. */
	if (td->metrics != NULL && prioremap(td->metrics->prio,
	    sizeof td->metrics->prio[0], nold, map) != 0)
		log_warnx("out of memory: the metrics of every priority start "
		    "again from 0");
}

/* The exposition on its way out: the first failure sticks. */
struct metrics_out {
	struct evbuffer *buf;
	const struct config *cfg;
	int rc;
};

static void
metrics_printf(struct metrics_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
metrics_printf(struct metrics_out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->rc != 0)
		return;
	va_start(ap, fmt);
	if (evbuffer_add_vprintf(o->buf, fmt, ap) < 0)
		o->rc = -1;
	va_end(ap);
}

static void
metrics_family(struct metrics_out *o, const char *name, const char *type,
    const char *help)
{
	metrics_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
	    type);
}

/* A label value as the format escapes it: backslash, quote, newline. */
static void
metrics_label(struct metrics_out *o, const char *v)
{
	size_t n;

	while (*v != '\0') {
		n = strcspn(v, "\\\"\n");
		metrics_printf(o, "%.*s", (int)n, v);
		if (v[n] == '\0')
			break;
		metrics_printf(o, "\\%c", v[n] == '\n' ? 'n' : v[n]);
		v += n + 1;
	}
}

/* The shortest form of v that reads back as v. */
static void
metrics_double(char *buf, size_t len, double v)
{
	int prec;

	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

/*
 * The start of a sample line: name, suffix ("_bucket", or ""), its labels
 * (prio < 0: none; state, le: NULL for none), and the space before its
 * value.
 */
static void
metrics_sample(struct metrics_out *o, const char *name, const char *suffix,
    int prio, const char *state, const char *le)
{
	const char *sep = "{";

	metrics_printf(o, "%s%s", name, suffix);
	if (prio >= 0) {
		metrics_printf(o, "%spriority=\"", sep);
		metrics_label(o, o->cfg->priorities[prio].name);
		metrics_printf(o, "\"");
		sep = ",";
	}
	if (state != NULL) {
		metrics_printf(o, "%sstate=\"%s\"", sep, state);
		sep = ",";
	}
	if (le != NULL) {
		metrics_printf(o, "%sle=\"%s\"", sep, le);
		sep = ",";
	}
	metrics_printf(o, "%s ", sep[0] == ',' ? "}" : "");
}

/* One gauge or counter family with a value for each priority. */
static void
metrics_per_prio(struct metrics_out *o, struct triaged *td, const char *name,
    const char *type, const char *help,
    uint64_t (*value)(struct triaged *, unsigned))
{
	unsigned i;

	metrics_family(o, name, type, help);
	for (i = 0; i < o->cfg->npriorities; i++) {
		metrics_sample(o, name, "", (int)i, NULL, NULL);
		metrics_printf(o, "%" PRIu64 "\n", value(td, i));
	}
}

static void
metrics_single(struct metrics_out *o, const char *name, const char *type,
    const char *help, uint64_t value)
{
	metrics_family(o, name, type, help);
	metrics_sample(o, name, "", -1, NULL, NULL);
	metrics_printf(o, "%" PRIu64 "\n", value);
}

/* The samples of one histogram: cumulative buckets, sum, count; prio < 0
 * for one without labels. */
static void
metrics_hist(struct metrics_out *o, const char *name, int prio,
    const struct hist *h, const struct hist_layout *l)
{
	char num[32];
	uint64_t cum = 0;
	unsigned i;

	for (i = 0; i <= l->nbounds; i++) {
		cum += h->counts[i];
		if (i < l->nbounds)
			metrics_double(num, sizeof num, hist_bound(l, i));
		else
			snprintf(num, sizeof num, "+Inf");
		metrics_sample(o, name, "_bucket", prio, NULL, num);
		metrics_printf(o, "%" PRIu64 "\n", cum);
	}
	metrics_double(num, sizeof num, h->sum);
	metrics_sample(o, name, "_sum", prio, NULL, NULL);
	metrics_printf(o, "%s\n", num);
	metrics_sample(o, name, "_count", prio, NULL, NULL);
	metrics_printf(o, "%" PRIu64 "\n", h->count);
}

static uint64_t
metrics_queued(struct triaged *td, unsigned prio)
{
	return jobs_count(td, (int)prio, JOB_QUEUED);
}

static uint64_t
metrics_held(struct triaged *td, unsigned prio)
{
	return jobs_held(td, (int)prio);
}

static uint64_t
metrics_running(struct triaged *td, unsigned prio)
{
	return jobs_count(td, (int)prio, JOB_RUNNING);
}

static uint64_t
metrics_paused(struct triaged *td, unsigned prio)
{
	struct psem_prio_stats st;

	return psem_prio_stats(td->sem, prio, &st) == 0 && st.paused;
}

static uint64_t
metrics_dispatches(struct triaged *td, unsigned prio)
{
	struct psem_prio_stats st;

	return psem_prio_stats(td->sem, prio, &st) == 0 ? st.dispatched : 0;
}

static uint64_t
metrics_submissions(struct triaged *td, unsigned prio)
{
	return td->metrics->prio[prio].submissions;
}

static uint64_t
metrics_retries(struct triaged *td, unsigned prio)
{
	return td->metrics->prio[prio].retries;
}

static uint64_t
metrics_oom_killed(struct triaged *td, unsigned prio)
{
	return td->metrics->prio[prio].oom_killed;
}

/* One gauge family with a value for each configured resource: member key
 * of its object in stats (all: resources_stats's). */
static void
metrics_per_resource(struct metrics_out *o, const json_t *all,
    const char *name, const char *help, const char *key)
{
	const json_t *one;
	unsigned i;

	metrics_family(o, name, "gauge", help);
	for (i = 0; i < o->cfg->nresources; i++) {
		/* A resource the semaphore has no dimension for has no
		 * figures: nothing rather than a 0 that would be a lie. */
		one = json_object_get(all, o->cfg->resources[i].name);
		if (!json_is_integer(json_object_get(one, key)))
			continue;
		metrics_printf(o, "%s{resource=\"", name);
		metrics_label(o, o->cfg->resources[i].name);
		metrics_printf(o, "\"} %" JSON_INTEGER_FORMAT "\n",
		    json_integer_value(json_object_get(one, key)));
	}
}

/* Admission beyond slots (protocol v1.2): the memory budget and each
 * resource, as stats says them. */
static void
metrics_write_resources(struct metrics_out *o, struct triaged *td)
{
	struct psem_dim_stats st;
	json_t *all;

	/* From the semaphore itself, not resources_stats_memory, which
	 * reads /proc/meminfo for its "available": a scrape needs none. */
	if (psem_dim_stats(td->sem, RESOURCES_DIM_MEMORY, &st) == 0) {
		metrics_single(o, "triage_memory_budget_bytes", "gauge",
		    "The memory budget that jobs' declared memory is admitted "
		    "against.", st.capacity);
		metrics_single(o, "triage_memory_used_bytes", "gauge",
		    "Of the memory budget, the bytes running jobs declared.",
		    st.used);
	}
	if ((all = resources_stats(td)) == NULL) {
		o->rc = -1;
		return;
	}
	metrics_per_resource(o, all, "triage_resource_units", "How many "
	    "units of the resource may be held at once: its count, or its "
	    "units times their share.", "units");
	metrics_per_resource(o, all, "triage_resource_used",
	    "Units of the resource held by running jobs.", "used");
	metrics_per_resource(o, all, "triage_resource_kept", "Free units of "
	    "the resource kept for a queued job that waits for more.", "kept");
	metrics_per_resource(o, all, "triage_resource_waiting_jobs",
	    "Queued jobs that ask for the resource.", "waiting");
	json_decref(all);
}

/* One gauge family with a value for each node of the cluster: member key
 * of its object in nodes (cluster_nodes_json's), a boolean as 0 or 1. */
static void
metrics_per_node(struct metrics_out *o, const json_t *nodes, const char *name,
    const char *help, const char *key)
{
	const json_t *node, *v;
	size_t i;

	metrics_family(o, name, "gauge", help);
	json_array_foreach(nodes, i, node) {
		v = json_object_get(node, key);
		metrics_printf(o, "%s{node=\"", name);
		metrics_label(o, json_string_value(json_object_get(node,
		    "node")));
		metrics_printf(o, "\"} %" JSON_INTEGER_FORMAT "\n",
		    json_is_boolean(v) ? (json_int_t)json_is_true(v) :
		    json_integer_value(v));
	}
}

/* A cluster's nodes, as stats says them; nothing without a cluster. */
static void
metrics_write_nodes(struct metrics_out *o, struct triaged *td)
{
	json_t *nodes;

	if (!td->cfg->cluster.enabled)
		return;
	if ((nodes = cluster_nodes_json(td)) == NULL) {
		o->rc = -1;
		return;
	}
	metrics_per_node(o, nodes, "triage_cluster_node_up", "1 while the "
	    "node is up: this one, and another that holds its name and whose "
	    "lease has not run out; else 0.", "up");
	metrics_per_node(o, nodes, "triage_cluster_node_slots_busy", "The "
	    "node's slots held, as it last wrote them.", "slots_busy");
	json_decref(nodes);
}

static void
metrics_write_gauges(struct metrics_out *o, struct triaged *td)
{
	struct run_workers workers = run_workers(td->run);
	struct psem_prio_stats st;
	unsigned i;
	uint64_t busy = 0;

	metrics_per_prio(o, td, "triage_jobs_queued", "gauge",
	    "Jobs queued, held ones included.", metrics_queued);
	metrics_per_prio(o, td, "triage_jobs_held", "gauge",
	    "Queued jobs that are held.", metrics_held);
	metrics_per_prio(o, td, "triage_jobs_running", "gauge",
	    "Jobs running.", metrics_running);
	metrics_per_prio(o, td, "triage_priority_paused", "gauge",
	    "1 while the priority is paused, else 0.", metrics_paused);
	for (i = 0; i < psem_priorities(td->sem); i++)
		if (psem_prio_stats(td->sem, i, &st) == 0)
			busy += st.held;
	metrics_single(o, "triage_slots", "gauge",
	    "Slots: how many jobs may run at once, weighted by their slots.",
	    psem_permits(td->sem));
	metrics_single(o, "triage_slots_busy", "gauge",
	    "Slots held by the jobs granted them.", busy);
	metrics_single(o, "triage_workers", "gauge",
	    "Worker processes.", workers.size);
	metrics_single(o, "triage_workers_busy", "gauge",
	    "Worker processes running a job.", workers.busy);
	metrics_write_resources(o, td);
	metrics_write_nodes(o, td);
	metrics_family(o, "triage_build_info", "gauge",
	    "Always 1; its label is the version of triaged.");
	metrics_printf(o, "triage_build_info{version=\"");
	metrics_label(o, TRIAGE_VERSION);
	metrics_printf(o, "\"} 1\n");
}

static void
metrics_write_counters(struct metrics_out *o, struct triaged *td)
{
	const struct store_commit_stats *cs = store_commit_stats(td->store);
	uint64_t accepted, refused;
	unsigned i, k;

	metrics_per_prio(o, td, "triage_submissions_total", "counter",
	    "Jobs submitted.", metrics_submissions);
	metrics_per_prio(o, td, "triage_dispatches_total", "counter",
	    "Jobs granted their slots.", metrics_dispatches);
	metrics_family(o, "triage_jobs_finished_total", "counter",
	    "Jobs that reached a terminal state, by that state.");
	for (i = 0; i < o->cfg->npriorities; i++)
		for (k = 0; k < sizeof metrics_ends / sizeof metrics_ends[0];
		    k++) {
			metrics_sample(o, "triage_jobs_finished_total", "",
			    (int)i, job_state_name(metrics_ends[k]), NULL);
			metrics_printf(o, "%" PRIu64 "\n",
			    td->metrics->prio[i].finished[metrics_ends[k]]);
		}
	metrics_per_prio(o, td, "triage_retries_total", "counter",
	    "Attempts queued again: automatic retries, the retry method, "
	    "requeues.", metrics_retries);
	metrics_per_prio(o, td, "triage_jobs_oom_killed_total", "counter",
	    "Attempts killed for want of memory, their own limit's or the "
	    "kernel's.", metrics_oom_killed);
	metrics_single(o, "triage_store_commits_total", "counter",
	    "Commits of the job store.", cs->commits);
	metrics_single(o, "triage_store_commit_failures_total", "counter",
	    "Commits of the job store that failed.", cs->failures);
	metrics_single(o, "triage_store_claims_total", "counter",
	    "Jobs this daemon claimed to start.", cs->claims);
	metrics_single(o, "triage_store_claims_refused_total", "counter",
	    "Claims refused: another node had claimed or changed the job "
	    "first.", cs->claims_refused);
	metrics_single(o, "triage_store_claims_moved_total", "counter",
	    "Claims that went to a job alike, another node having had the "
	    "job claimed first.", cs->claims_moved);
	server_counts(td->server, &accepted, &refused);
	metrics_single(o, "triage_connections_accepted_total", "counter",
	    "Clients accepted on the job socket.", accepted);
	metrics_single(o, "triage_connections_refused_total", "counter",
	    "Clients refused on the job socket by max_clients or "
	    "max_clients_per_user.", refused);
}

static void
metrics_write_hists(struct metrics_out *o, struct triaged *td)
{
	unsigned i;

	metrics_family(o, "triage_job_wait_seconds", "histogram",
	    "Time from an attempt's queueing (or its begin_at) to its start.");
	for (i = 0; i < o->cfg->npriorities; i++)
		metrics_hist(o, "triage_job_wait_seconds", (int)i,
		    &td->metrics->prio[i].wait, &hist_job_seconds);
	metrics_family(o, "triage_job_run_seconds", "histogram",
	    "Time from an attempt's start to its end.");
	for (i = 0; i < o->cfg->npriorities; i++)
		metrics_hist(o, "triage_job_run_seconds", (int)i,
		    &td->metrics->prio[i].run, &hist_job_seconds);
	metrics_family(o, "triage_job_peak_memory_bytes", "histogram",
	    "The most memory an attempt's processes used at once, for each "
	    "attempt that ran: its cgroup's peak, else its largest process's "
	    "max RSS.");
	for (i = 0; i < o->cfg->npriorities; i++)
		metrics_hist(o, "triage_job_peak_memory_bytes", (int)i,
		    &td->metrics->prio[i].peak_memory, &hist_memory_bytes);
	metrics_family(o, "triage_store_commit_seconds", "histogram",
	    "Time a commit of the job store took to write.");
	metrics_hist(o, "triage_store_commit_seconds", -1,
	    &store_commit_stats(td->store)->seconds, &hist_commit_seconds);
}

static void
metrics_write_process(struct metrics_out *o)
{
	struct procstat_usage u;
	char num[32];

	/* Nothing rather than figures that are wrong. */
	if (procstat_usage(&u) != 0) {
		log_warn("metrics: cannot read the process's usage");
		return;
	}
	metrics_single(o, "process_resident_memory_bytes", "gauge",
	    "Resident memory size in bytes.", u.resident_bytes);
	metrics_single(o, "process_virtual_memory_bytes", "gauge",
	    "Virtual memory size in bytes.", u.virtual_bytes);
	metrics_single(o, "process_open_fds", "gauge",
	    "Open file descriptors.", u.open_fds);
	metrics_single(o, "process_max_fds", "gauge",
	    "The limit of open file descriptors.", u.max_fds);
	metrics_family(o, "process_cpu_seconds_total", "counter",
	    "User and system CPU time in seconds.");
	metrics_double(num, sizeof num, u.cpu_seconds);
	metrics_printf(o, "process_cpu_seconds_total %s\n", num);
	metrics_family(o, "process_start_time_seconds", "gauge",
	    "Start time of the process since the Unix epoch in seconds.");
	metrics_double(num, sizeof num, u.start_time);
	metrics_printf(o, "process_start_time_seconds %s\n", num);
}

int
metrics_write(struct triaged *td, struct evbuffer *out)
{
	struct metrics_out o = { out, td->cfg, 0 };

	metrics_write_gauges(&o, td);
	metrics_write_counters(&o, td);
	metrics_write_hists(&o, td);
	metrics_write_process(&o);
	return o.rc;
}
