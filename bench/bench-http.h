/* bench-http.h - for the benchmarks: one HTTP/1.0 GET to triaged's [http]
 * listener on a Unix socket, read to its end, as a scraper would. */
#ifndef TRIAGE_BENCH_HTTP_H
#define TRIAGE_BENCH_HTTP_H

#include <stddef.h>

/* GET path on the Unix socket sock: 0 with *bytes the whole reply's
 * size (and, body not NULL, *body the reply, headers and all, the
 * caller's to free) when its status is 200, else -1 with *cause set
 * (allocated). */
int bench_http_get(const char *sock, const char *path, size_t *bytes,
    char **body, char **cause);

#endif
