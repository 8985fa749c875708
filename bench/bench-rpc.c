/* bench-rpc.c - for the benchmarks: one call to a daemon on a connection
 * of its own, for the controls around a measurement (pause, stats). */
#include <stdio.h>
#include <stdlib.h>

#include "bench-rpc.h"
#include "triage/client.h"

/* Controls wait behind a measurement's backlog, never for ever. */
#define BENCH_RPC_TIMEOUT_MS 60000

json_t *
bench_rpc_call(const char *prog, const char *sock, const char *method,
    json_t *params)
{
	struct triage_error e;
	struct triage_client *c;
	char *cause = NULL;
	json_t *r;

	if ((c = triage_client_connect(sock, &cause)) == NULL) {
		fprintf(stderr, "%s: %s\n", prog, cause ? cause : "oom");
		free(cause);
		json_decref(params);
		return NULL;
	}
	if ((r = triage_client_call(c, method, params, BENCH_RPC_TIMEOUT_MS,
	    &e)) == NULL)
		fprintf(stderr, "%s: %s: %s\n", prog, method, e.message);
	triage_client_free(c);
	return r;
}

long long
bench_rpc_queued(const char *prog, const char *sock)
{
	json_t *stats, *n;
	long long queued = -1;

	if ((stats = bench_rpc_call(prog, sock, "stats", NULL)) == NULL)
		return -1;
	n = json_object_get(json_object_get(stats, "jobs"), "queued");
	if (json_is_integer(n))
		queued = json_integer_value(n);
	else
		fprintf(stderr, "%s: stats without jobs.queued\n", prog);
	json_decref(stats);
	return queued;
}
