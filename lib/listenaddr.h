/* listenaddr.h - the address of the HTTP listener as triage.conf writes it:
 * HOST:PORT with a numeric IPv4 or [IPv6] host, or a Unix socket path. */
#ifndef TRIAGE_LISTENADDR_H
#define TRIAGE_LISTENADDR_H

#include <stdbool.h>
#include <sys/socket.h>

/* sizeof(((struct sockaddr_un *)0)->sun_path) - 1. */
#define LISTENADDR_PATH_MAX 107

struct listenaddr {
	struct sockaddr_storage sa;
	socklen_t salen;
	bool is_unix;
	/* Only this host can connect: a Unix socket, 127.0.0.0/8 or ::1. */
	bool is_local;
};

/*
 * Parses text: "127.0.0.1:9187", "[::1]:9187", "0.0.0.0:9187" (port 0 to
 * 65535; 0 lets the kernel choose), or an absolute path. 0, or -1 with *why
 * set to a constant naming what was expected ("HOST:PORT with ...").
 */
int listenaddr_parse(const char *text, struct listenaddr *out,
    const char **why);

#endif
