/* listenaddr.c - the HTTP listener's address parsed with getaddrinfo's
 * numeric forms, so that a config never waits on DNS. */
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "listenaddr.h"

static const char listenaddr_expected[] = "HOST:PORT with a "
    "numeric IPv4 or [IPv6] host (127.0.0.1:9187, [::1]:9187), or the "
    "absolute path of a Unix socket of at most 107 bytes";

static bool
listenaddr_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in *in4;
	const struct sockaddr_in6 *in6;

	if (sa->sa_family == AF_INET) {
		in4 = (const struct sockaddr_in *)sa;
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	}
	in6 = (const struct sockaddr_in6 *)sa;
	return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
}

static int
listenaddr_unix(const char *text, struct listenaddr *out)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)&out->sa;
	size_t len = strlen(text);

	if (len > LISTENADDR_PATH_MAX)
		return -1;
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, text, len + 1);
	out->salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    len + 1);
	out->is_unix = true;
	out->is_local = true;
	return 0;
}

/*
 * Not libevent's evutil_parse_sockaddr_port, which would change what a
 * config may say: its port is atoi's ("80x", " 80", "+80", or none at
 * all) and may not be 0, it takes IPv6 without brackets ("::1:9187" as
 * an address) and junk after the bracket, and its IPv4 is inet_pton's,
 * without the short forms getaddrinfo reads ("127.1"). test-listenaddr
 * holds each of these.
 */
int
listenaddr_parse(const char *text, struct listenaddr *out, const char **why)
{
	struct addrinfo hints, *ai;
	const char *colon, *port;
	char host[64], *end;
	size_t hostlen;
	unsigned long n;
	bool bracketed;

	memset(out, 0, sizeof *out);
	*why = listenaddr_expected;
	if (text[0] == '/')
		return listenaddr_unix(text, out);
	colon = strrchr(text, ':');
	if (colon == NULL || colon == text)
		return -1;
	port = colon + 1;
	n = strtoul(port, &end, 10);
	if (*port < '0' || *port > '9' || *end != '\0' || n > 65535)
		return -1;
	bracketed = text[0] == '[';
	if (bracketed) {
		if (colon[-1] != ']')
			return -1;
		text++;
		hostlen = (size_t)(colon - 1 - text);
	} else
		hostlen = (size_t)(colon - text);
	if (hostlen == 0 || hostlen >= sizeof host)
		return -1;
	memcpy(host, text, hostlen);
	host[hostlen] = '\0';
	memset(&hints, 0, sizeof hints);
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -1;
	/* A bracketed host is IPv6, a bare one IPv4: "[1.2.3.4]" and "::1"
	 * without brackets are not what anyone means. */
	if ((ai->ai_family == AF_INET6) != bracketed) {
		freeaddrinfo(ai);
		return -1;
	}
	memcpy(&out->sa, ai->ai_addr, ai->ai_addrlen);
	out->salen = ai->ai_addrlen;
	out->is_local = listenaddr_loopback(ai->ai_addr);
	freeaddrinfo(ai);
	return 0;
}
