/* cluster-output.h - a node's jobs' output shipped to the cluster's
 * database while they run, for the other nodes' `output`. */
#ifndef TRIAGED_CLUSTER_OUTPUT_H
#define TRIAGED_CLUSTER_OUTPUT_H

#include <stdbool.h>

struct job;
struct triaged;

/* Ships the output of the runs of this node, when the store keeps output
 * (a cluster's), into td->shipper. 0, or -1 out of memory. */
int cluster_output_start(struct triaged *td);
/* Stops shipping: writes on their way finish (or fail) with the store. */
void cluster_output_stop(struct triaged *td);

/* job's run was given to run_start: its capture files are shipped from
 * the hand-over on, every 500 ms while it runs. */
void cluster_output_begin(struct triaged *td, const struct job *job);
/*
 * job's run is over (before its end changes the job and is committed):
 * what its files hold beyond what was shipped goes now, ahead of that
 * commit. handed: a worker had the run, so the files are this attempt's.
 * taken: another node has the job now, and nothing more is shipped.
 */
void cluster_output_end(struct triaged *td, const struct job *job,
    bool handed, bool taken);

/* Whether job's output is read from the database: its attempt runs or
 * ran on another node. */
bool cluster_output_elsewhere(const struct triaged *td,
    const struct job *job);

#endif
