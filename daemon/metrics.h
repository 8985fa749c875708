/* metrics.h - the daemon's figures in the Prometheus text format (0.0.4),
 * for /metrics: read from what their owners count, at the scrape. */
#ifndef TRIAGED_METRICS_H
#define TRIAGED_METRICS_H

struct evbuffer;
struct triaged;

/*
 * Starts counting job events into td->metrics: after jobs_init, before
 * recovery, so that what recovery changes is counted. 0, or -1 with *cause
 * set (allocated, or NULL out of memory).
 */
int metrics_init(struct triaged *td, char **cause);
void metrics_free(struct triaged *td);

/*
 * Counts what the end of job's run measured (out): an OOM kill, its peak
 * memory (run_outcome_peak), under the job's priority. The run listener
 * of metrics_init calls it for every run that ends.
 */
struct job;
struct run_outcome;
void metrics_run_ended(struct triaged *td, const struct job *job,
    const struct run_outcome *out);

/* For a reload that renumbered the priorities: map[i] is the new index of
 * old priority i (i < nold), or -1 when it goes (jobs_reprioritize's).
 * The counts of a priority that stays keep their values; a new one's
 * start at 0. */
void metrics_reprioritize(struct triaged *td, unsigned nold, const int *map);

/*
 * Appends the whole exposition to out: every family with its HELP and
 * TYPE lines, a series for each priority of the config in force. 0, or
 * -1 out of memory (out may hold part of it).
 */
int metrics_write(struct triaged *td, struct evbuffer *out);

#endif
