/* cluster.h - this daemon as a node of a cluster: the store it shares with
 * the other nodes through PostgreSQL, and what it says of it in the log. */
#ifndef TRIAGED_CLUSTER_H
#define TRIAGED_CLUSTER_H

struct config;
struct triaged;

/*
 * What of the config's priorities every node of a cluster must share (the
 * policy and each priority's name, rank, weight, max_queued and
 * max_running; the rest is each host's own): "; "-separated items, in a
 * new string. NULL out of memory.
 */
char *cluster_priorities_text(const struct config *cfg);

/* The store in the cluster's database ([cluster]), into td->store; 0, or
 * -1 with *cause. */
int cluster_open_store(struct triaged *td, char **cause);

#endif
