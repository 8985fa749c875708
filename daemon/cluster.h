/* cluster.h - this daemon as a node of a cluster: the store it shares with
 * the other nodes through PostgreSQL, and what it says of it in the log. */
#ifndef TRIAGED_CLUSTER_H
#define TRIAGED_CLUSTER_H

#include <stdbool.h>

#include <jansson.h>

/* Past a node's lease and its kill_grace, what the others wait more before
 * they take its jobs: for the lateness of its timers. */
#define CLUSTER_SLACK_MS 1000

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

/* For a reload to new: priorities that change become the cluster's, which
 * only a node running alone may do. 0, or -1 with *cause. */
int cluster_reload_check(struct triaged *td, const struct config *new,
    char **cause);

/* Whether name is this node or one the cluster has seen. */
bool cluster_has_node(struct triaged *td, const char *name);
/* Whether node name is up: this one, or another holding its name's lock
 * whose lease has not run out (store_node_up). */
bool cluster_node_up(struct triaged *td, const char *name);

/* The lease, takeovers and cancels (cluster-lease.c), after recovery,
 * their timers in td->lease; nothing without a cluster. 0, or -1 out of
 * memory. cluster_lease_stop frees it. */
int cluster_lease_start(struct triaged *td);
void cluster_lease_stop(struct triaged *td);
/* This node's lease ran out unrenewed (its fence, or a worker that
 * stopped its job for it): every job still running here is killed and
 * becomes another attempt; logged once until a renewal comes. */
void cluster_lease_ran_out(struct triaged *td);

/* stats' nodes: each node's node (its name: the priorities have stats'
 * "name"s), slots, slots_busy (as it last wrote) and whether it runs (up:
 * cluster_node_up);
 * a new reference, NULL without a cluster. */
json_t *cluster_nodes_json(struct triaged *td);

#endif
