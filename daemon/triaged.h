/* triaged.h - the daemon's context: the one instance of everything that
 * lives for the daemon's whole run, passed explicitly to whoever needs it. */
#ifndef TRIAGED_TRIAGED_H
#define TRIAGED_TRIAGED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

enum triaged_phase {
	TRIAGED_RUNNING,
	TRIAGED_STOPPING,	/* no new submissions; finishing per `shutdown` */
};

struct triaged {
	struct event_base *base;
	struct config *cfg;
	struct store *store;
	struct psem *sem;
	/* The semaphore's dimensions beyond slots: memory and [resource.NAME]
	 * (resources.c). */
	struct resources *resources;
	struct pool *pool;
	struct cgroups *cgroups;	/* the jobs' cgroups, or none */
	struct jobs *jobs;		/* the state machine's own state */
	struct run *run;		/* the jobs that hold their slots */
	struct server *server;
	struct conns *conns;		/* every client connection */
	struct rpc *rpc;		/* JSON-RPC on them */
	struct waits *waits;		/* `wait` requests, by job */
	struct watchers *watchers;	/* the connections that `watch` */
	struct prune *prune;		/* keep_finished's timer */
	struct removals *removals;	/* `remove`'s jobs, in turn */
	struct notify *notify;		/* NULL: not under systemd */
	struct reload *reload;		/* where the config came from */
	struct metrics *metrics;	/* what /metrics counts of job events */
	struct series *series;		/* the dashboard's last minutes */
	struct http *http;		/* NULL: no [http] listen */
	char *output_dir;		/* state_dir/output */
	char *adopt_dir;		/* state_dir/adopt (endrec.h) */
	/* Ships this node's output to the cluster's database; NULL
	 * unless the store keeps output (cluster-output.c). */
	struct cluster_output *shipper;
	/* The node's lease on the jobs it runs; NULL without a cluster
	 * (cluster-lease.c). */
	struct cluster_lease *lease;
	/* What jobs' declared memory is counted against, in bytes
	 * (membudget.h): worked out at start and at each reload. */
	uint64_t memory_budget;
	uid_t uid;			/* our own */
	uint64_t started_mono_ms;	/* for uptime */
	enum triaged_phase phase;
	unsigned stopping_signals;	/* how many SIGTERM/SIGINT so far */
	/* How it stops, once phase is TRIAGED_STOPPING: the shutdown key,
	 * or keep for a restart (shutdown.c). */
	enum config_shutdown shutdown_mode;
	bool exiting;			/* the exit is on its way */
};

#endif
