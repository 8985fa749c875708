/* chaos-cluster.h - the chaos test's world: a PostgreSQL primary with a
 * streaming standby, and three real triaged, each through proxies of its own. */
#ifndef TRIAGE_CHAOS_CLUSTER_H
#define TRIAGE_CHAOS_CLUSTER_H

#include <limits.h>
#include <stdbool.h>

#include "tnodes.h"

#define CHAOS_NODES 3
/* Short, so that a fault held for twice the lease costs seconds; the
 * faults are held that long (chaos-faults.c). */
#define CHAOS_LEASE "2s"
#define CHAOS_LEASE_MS 2000
#define CHAOS_SLOTS 3

struct tpg;
struct tproxy;

struct chaos_cluster {
	/* pg[primary] takes the writes, the other streams from it; a
	 * failover swaps them. */
	struct tpg	*pg[2];
	int		 primary;
	bool		 sync;		/* the standby is synchronous */
	/* Node i reaches pg[k] through px[i][k] alone: cut both, and it
	 * alone is cut off. */
	struct tproxy	*px[CHAOS_NODES][2];
	struct tnodes	*cl;
	char		 dir[256];	/* the ledger's, and what a failed
					 * run keeps */
	char		 ledger[300];
	char		 job[PATH_MAX];	/* chaos-job, beside the test */
};

/*
 * Starts the primary, its standby (synchronous when sync), the proxies and
 * the nodes (CHAOS_SLOTS each, lease CHAOS_LEASE, on the multi-host
 * conninfo of both servers through their proxies). Skips the test without
 * PostgreSQL. Fails the test on error.
 */
struct chaos_cluster *chaos_cluster_start(bool sync);
/* Polls until every node answers and says every node is up (connected to
 * the database, its lease renewed); fails the test past timeout_ms. */
void chaos_cluster_wait_up(struct chaos_cluster *cc, int timeout_ms);
/* Node i's client, connected again (after a restart of its daemon). */
void chaos_cluster_reconnect(struct chaos_cluster *cc, unsigned i);
/* Keeps the daemons' and the servers' logs in cc->dir, which stays, for a
 * failed run's reader. */
void chaos_cluster_keep_logs(struct chaos_cluster *cc);
/* Stops the nodes (each must exit cleanly), the proxies and the servers;
 * removes cc->dir unless the logs were kept. */
void chaos_cluster_end(struct chaos_cluster *cc);

#endif
