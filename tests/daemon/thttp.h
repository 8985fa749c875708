/* thttp.h - for the daemon tests: HTTP requests to triaged's [http]
 * listener (TCP or a Unix socket) through libcurl, and a free port. */
#ifndef TRIAGE_TEST_THTTP_H
#define TRIAGE_TEST_THTTP_H

#include <stddef.h>

struct thttp_resp {
	long status;
	char *body;		/* NUL-terminated */
	size_t len;
	char *headers;		/* the reply's header lines, as received */
};

/*
 * addr: "127.0.0.1:PORT" or an absolute Unix socket path; headers: NULL or
 * "Name: value" lines separated by "\n"; body: NULL or the request body.
 * Fails the test when the request cannot be made at all.
 */
void thttp(const char *addr, const char *method, const char *path,
    const char *headers, const char *body, struct thttp_resp *out);
void thttp_free(struct thttp_resp *r);
/* The value of the reply's header name (case-insensitive), allocated, or
 * NULL. */
char *thttp_header(const struct thttp_resp *r, const char *name);
/* A TCP port on 127.0.0.1 free right now. */
int tfree_port(void);

#endif
