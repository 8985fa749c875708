/* triaged.h - the daemon's context: the one instance of everything that
 * lives for the daemon's whole run, passed explicitly to whoever needs it. */
#ifndef TRIAGED_TRIAGED_H
#define TRIAGED_TRIAGED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "job.h"

enum triaged_phase {
	TRIAGED_RUNNING,
	TRIAGED_STOPPING,	/* no new submissions; finishing per `shutdown` */
};

struct triaged {
	struct event_base *base;
	struct config *cfg;
	struct store *store;
	struct psem *sem;
	struct pool *pool;
	struct server *server;
	struct watchers *watchers;
	char *output_dir;		/* state_dir/output */
	uid_t uid;			/* our own */
	uint64_t started_mono_ms;	/* for uptime */
	enum triaged_phase phase;
	unsigned stopping_signals;	/* how many SIGTERM/SIGINT so far */
	bool exiting;			/* the exit is on its way */
	unsigned running;		/* jobs in JOB_RUNNING */
	unsigned prio_running[CONFIG_PRIORITIES_MAX]; /* the same, by priority */
	unsigned prio_staged[CONFIG_PRIORITIES_MAX]; /* submitted, not committed */
	unsigned prio_waiting[CONFIG_PRIORITIES_MAX]; /* queued for their after */
	int64_t next_seq;		/* queue order of the next at a tail */
	uint64_t counts[JOB_NSTATES];	/* jobs in each state, in the store */
};

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t triaged_mono_ms(void);

#endif
