/* bench-load.h - the benchmark's two ways of submitting jobs to triaged:
 * pipelined on one connection, or one at a time on many connections. */
#ifndef TRIAGE_BENCH_LOAD_H
#define TRIAGE_BENCH_LOAD_H

#include <stdint.h>

#include <jansson.h>

/* What a load did. Rates are the caller's to compute: ok / seconds. */
struct bench_load_result {
	uint64_t jobs;		/* submissions asked for */
	uint64_t ok;		/* replies with a queued job in them */
	uint64_t errors;	/* submissions that failed, or never answered */
	uint64_t not_queued;	/* jobs accepted but already dispatched */
	double seconds;		/* first send to last reply (CLOCK_MONOTONIC) */
	char error[512];	/* the first error, "" when none */
};

/*
 * Submits n jobs on one connection to the socket at path, with at most window
 * requests outstanding, reading replies as they come. Fills *r. Returns 0,
 * or -1 when the load could not be run at all (r->error says why).
 */
int bench_load_pipelined(const char *path, uint64_t n, unsigned window,
    struct bench_load_result *r);
/* The same with each submission's params a copy of each (NULL: the
 * cheapest job, argv ["true"]); a job replied running counts in
 * not_queued. */
int bench_load_pipelined_params(const char *path, uint64_t n,
    unsigned window, const json_t *each, struct bench_load_result *r);
/*
 * Submits n jobs over nconn connections, each in its own thread waiting for
 * each reply before the next submission; the connections share n as evenly
 * as they can. Fills *r. Returns 0, or -1 when the load could not be run at
 * all (r->error says why).
 */
int bench_load_parallel(const char *path, uint64_t n, unsigned nconn,
    struct bench_load_result *r);

#endif
