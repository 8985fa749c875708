/* test-listenaddr.c - listenaddr_parse: every form it takes, with the
 * address and locality it gives, and every form it refuses, with why. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include <cmocka.h>

#include "listenaddr.h"

#define EXPECTED "HOST:PORT with a numeric IPv4 or [IPv6] host " \
	"(127.0.0.1:9187, [::1]:9187), or the absolute path of a Unix socket " \
	"of at most 107 bytes"

/* Fails the test unless text parses to host (as inet_ntop writes it) and
 * port, local or not. */
static void
assert_inet(const char *text, const char *host, unsigned port, bool local)
{
	struct listenaddr a;
	const struct sockaddr_in *in4 = (const void *)&a.sa;
	const struct sockaddr_in6 *in6 = (const void *)&a.sa;
	const char *why = NULL;
	char got[INET6_ADDRSTRLEN];

	if (listenaddr_parse(text, &a, &why) != 0)
		fail_msg("\"%s\" was refused", text);
	assert_false(a.is_unix);
	assert_int_equal(a.is_local, local);
	if (strchr(host, ':') != NULL) {
		assert_int_equal(in6->sin6_family, AF_INET6);
		assert_int_equal(a.salen, sizeof *in6);
		assert_int_equal(ntohs(in6->sin6_port), port);
		inet_ntop(AF_INET6, &in6->sin6_addr, got, sizeof got);
	} else {
		assert_int_equal(in4->sin_family, AF_INET);
		assert_int_equal(a.salen, sizeof *in4);
		assert_int_equal(ntohs(in4->sin_port), port);
		inet_ntop(AF_INET, &in4->sin_addr, got, sizeof got);
	}
	assert_string_equal(got, host);
}

static void
assert_refused(const char *text)
{
	struct listenaddr a;
	const char *why = NULL;

	if (listenaddr_parse(text, &a, &why) != -1)
		fail_msg("\"%s\" was taken", text);
	assert_string_equal(why, EXPECTED);
}

static void
numeric_hosts_and_ports_are_taken(void **state)
{
	(void)state;
	assert_inet("127.0.0.1:9187", "127.0.0.1", 9187, true);
	assert_inet("127.255.0.9:1", "127.255.0.9", 1, true);
	assert_inet("0.0.0.0:9187", "0.0.0.0", 9187, false);
	assert_inet("192.0.2.1:65535", "192.0.2.1", 65535, false);
	assert_inet("[::1]:9187", "::1", 9187, true);
	assert_inet("[::]:9187", "::", 9187, false);
	assert_inet("[2001:db8::1]:80", "2001:db8::1", 80, false);
	/* Mapped IPv4 is IPv6 to the kernel: not ::1, so not local. */
	assert_inet("[::ffff:127.0.0.1]:80", "::ffff:127.0.0.1", 80, false);
	/* Port 0 lets the kernel choose; leading zeros are the same port. */
	assert_inet("127.0.0.2:0", "127.0.0.2", 0, true);
	assert_inet("[::1]:0", "::1", 0, true);
	assert_inet("127.0.0.1:0080", "127.0.0.1", 80, true);
	/* getaddrinfo's numeric IPv4 reads inet_aton's short forms too
	 * (libevent's evutil_parse_sockaddr_port, on inet_pton, would not). */
	assert_inet("127.1:9187", "127.0.0.1", 9187, true);
}

static void
unix_paths_are_taken_up_to_their_limit(void **state)
{
	char path[LISTENADDR_PATH_MAX + 2];
	const struct sockaddr_un *sun;
	struct listenaddr a;
	const char *why;

	(void)state;
	memset(path, 'p', sizeof path - 1);
	path[0] = '/';
	path[LISTENADDR_PATH_MAX] = '\0';
	assert_int_equal(listenaddr_parse(path, &a, &why), 0);
	sun = (const void *)&a.sa;
	assert_int_equal(sun->sun_family, AF_UNIX);
	assert_string_equal(sun->sun_path, path);
	assert_int_equal(a.salen, offsetof(struct sockaddr_un, sun_path) +
	    LISTENADDR_PATH_MAX + 1);
	assert_true(a.is_unix);
	assert_true(a.is_local);
	path[LISTENADDR_PATH_MAX] = 'p';
	path[LISTENADDR_PATH_MAX + 1] = '\0';
	assert_refused(path);
}

/* Among them, what a looser parser (libevent's, atoi's port) would take:
 * a missing or signed port, spaces, junk after the port or the bracket,
 * an IPv6 host without brackets. */
static void
everything_else_is_refused_with_why(void **state)
{
	static const char *const bad[] = {
		"", "localhost:9187", "9187", ":9187", "127.0.0.1",
		"127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:x", "::1:9187",
		"[127.0.0.1]:80", "[::1]9187", "[::1]", "[::1]:", "[]:80",
		"[::1]]:80", "[[::1]:80", "relative/path", "1.2.3.4:80x",
		"127.0.0.1:+80", "127.0.0.1:-0", "127.0.0.1: 80",
		" 127.0.0.1:80", "127.0.0.1 :80", "[::1]:9187 ",
		"127.0.0.1:99999999999999999999", "1.2.3.4.5:80",
		"[fe80::1%]:80",
		"1234567890123456789012345678901234567890123456789012345678901:1",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_refused(bad[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numeric_hosts_and_ports_are_taken),
		cmocka_unit_test(unix_paths_are_taken_up_to_their_limit),
		cmocka_unit_test(everything_else_is_refused_with_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
