/* bench-jobs.h - for the benchmarks: many `true` jobs submitted pipelined on
 * one connection, then waited for until each has ended, checked. */
#ifndef TRIAGE_BENCH_JOBS_H
#define TRIAGE_BENCH_JOBS_H

#include <stdint.h>

#include <jansson.h>

#include "bench-why.h"
#include "triage/client.h"

/* Submissions in flight on one connection: neither the socket nor the
 * daemon's buffers grow with n. */
#define BENCH_JOBS_WINDOW	1000

/* Called with each job that succeeded, as its wait reply has it. */
typedef void (*bench_jobs_cb)(const json_t *job, void *arg);

/*
 * Submits n jobs of params (NULL: argv ["true"]) on cl, BENCH_JOBS_WINDOW at most in
 * flight, keeping their ids in ids[0..n); each reply may take reply_ms.
 * 0, or -1 after saying why in *why.
 */
int bench_jobs_submit(struct triage_client *cl, uint64_t n, json_int_t *ids,
    const json_t *params, int reply_ms, struct bench_why *why);
/*
 * Waits on cl until each job of ids[0..n) has ended, a wait reply taking
 * reply_ms at most, calling each (NULL: none) with every job that
 * succeeded. 0 when all did, or -1 after saying why in *why.
 */
int bench_jobs_wait(struct triage_client *cl, uint64_t n, const json_int_t *ids,
    int reply_ms, bench_jobs_cb each, void *arg, struct bench_why *why);

#endif
