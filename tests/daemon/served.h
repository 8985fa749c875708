/* served.h - for the daemon tests of what answers clients about jobs (wait,
 * watch): a machine that also serves JSON-RPC over socket pairs. */
#ifndef TRIAGE_TEST_SERVED_H
#define TRIAGE_TEST_SERVED_H

#include <stdint.h>

#include <jansson.h>

#include "rpc.h"

struct job;
struct machine;
struct peer;

#define SERVED_NPEERS	8

struct served {
	struct machine *m;
	struct peer *peers[SERVED_NPEERS];
	int npeers;
};

/*
 * A machine (machine.h) in /tmp/name.XXXXXX whose daemon has connections
 * and the JSON-RPC layer, requests answered by dispatch. The caller's;
 * NULL on error.
 */
struct served *served_new(const char *name, rpc_dispatch_cb dispatch);
/* Closes every client, then ends the machine. */
void served_free(struct served *s);

/* machine_submit, then its wait for the job's first change: it is in
 * the store, queued or beyond. Its id. */
uint64_t served_submit(struct served *s, struct job *job);

/* A new client, reading JSON-RPC; s's. Fails the test on error. */
struct peer *served_peer(struct served *s);
/*
 * The next line p reads, which must be the result of request id, in
 * the envelope byte for byte: its result, parsed (a new reference).
 * Fails the test otherwise.
 */
json_t *served_result(struct peer *p, json_int_t id);

#endif
