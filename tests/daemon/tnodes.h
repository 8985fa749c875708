/* tnodes.h - for the daemon tests: a cluster of real triaged, each its own
 * node (a, b, c), on a database of its own in the tests' PostgreSQL. */
#ifndef TRIAGE_TEST_TNODES_H
#define TRIAGE_TEST_TNODES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "triage/client.h"
#include "harness.h"

#define TNODES_MAX 3
/* Short, so that a dead node's jobs come back within a test's wait; not
 * so short that a live node on a loaded machine (ASan) misses its
 * renewals. */
#define TNODES_LEASE "5s"
#define TNODES_LEASE_S 5

struct tnodes {
	unsigned n;			/* how many nodes */
	struct tdaemon *d[TNODES_MAX];
	struct triage_client *c[TNODES_MAX];
	char *conninfo;
	char db[16];
	const char *lease;		/* TNODES_LEASE unless set */
	/* A node's own conninfo (through a tproxy), or NULL. */
	char *via[TNODES_MAX];
};

/* A cluster of n nodes not started yet, on a database of its own (of
 * tpg_group), for tnodes_start_nodes. Skips without PostgreSQL. */
struct tnodes *tnodes_new(unsigned n);
/* The [cluster] section of node i, and extra [daemon] keys before it. */
void tnodes_conf(const struct tnodes *cl, unsigned i, const char *extra,
    char *buf, size_t size);
/* Its nodes, slots each, and extra config (more [daemon] keys, then
 * sections); each answers on its socket when this returns. */
void tnodes_start_nodes(struct tnodes *cl, unsigned slots, const char *extra);
/* tnodes_new and tnodes_start_nodes. */
struct tnodes *tnodes_start(unsigned n, unsigned slots, const char *extra);
/* Stops every node still there (each must exit cleanly), frees. */
void tnodes_end(struct tnodes *cl);

/* The job as node i sees it; NULL while it has not heard of it (the job
 * was submitted at another node, whose NOTIFY is on its way). */
json_t *tnodes_job(const struct tnodes *cl, unsigned i, int64_t id);
/* A job's member, as node i sees it (a string, "" for null). */
void tnodes_job_str(const struct tnodes *cl, unsigned i, int64_t id,
    const char *key, char *buf, size_t size);
/* Polls node i until job id is in state (and, when attempt > 0, at that
 * attempt); fails past the harness's timeout. */
void tnodes_wait_state(const struct tnodes *cl, unsigned i, int64_t id,
    const char *state, json_int_t attempt);

#endif
