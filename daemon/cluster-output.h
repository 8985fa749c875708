/* cluster-output.h - a node's jobs' output shipped to the cluster's
 * database while they run, for the other nodes' `output`. */
#ifndef TRIAGED_CLUSTER_OUTPUT_H
#define TRIAGED_CLUSTER_OUTPUT_H

#include <stdbool.h>

struct job;
struct triaged;

/* Ships the output of the runs of this node, when the store keeps output
 * (a cluster's), into td->shipper: it hears of their hand-overs and ends
 * through jobs_listen_runs (after jobs_init). 0, or -1 out of memory. */
int cluster_output_start(struct triaged *td);
/* Stops shipping: writes on their way finish (or fail) with the store. */
void cluster_output_stop(struct triaged *td);

/* Whether job's output is read from the database: its attempt runs or
 * ran on another node. */
bool cluster_output_elsewhere(const struct triaged *td,
    const struct job *job);

#endif
