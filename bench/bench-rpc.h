/* bench-rpc.h - for the benchmarks: one call to a daemon on a connection
 * of its own, for the controls around a measurement (pause, stats). */
#ifndef TRIAGE_BENCH_RPC_H
#define TRIAGE_BENCH_RPC_H

#include <jansson.h>

/*
 * Calls method with params (stolen; NULL for none) on a new connection to
 * sock. Returns the result (a new reference), or NULL after saying why on
 * stderr, prefixed by prog.
 */
json_t *bench_rpc_call(const char *prog, const char *sock, const char *method,
    json_t *params);
/* The jobs stats counts queued, or -1 after saying why. */
long long bench_rpc_queued(const char *prog, const char *sock);

#endif
