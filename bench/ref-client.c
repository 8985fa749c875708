/* ref-client.c - the floor `triage submit` is measured against: the least a
 * dynamically linked C client can do to submit a job and print its id. */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The request as triage sends it (argv, cwd, the caller's environment)
 * fits here for any environment the benchmark uses; a bigger one fails. */
#define REF_CLIENT_BUF 65536

extern char **environ;

struct ref_client_buf {
	char data[REF_CLIENT_BUF];
	size_t len;
	int overflow;
};

static void
ref_client_put(struct ref_client_buf *b, const char *s, size_t n)
{
	if (b->len + n > sizeof b->data) {
		b->overflow = 1;
		return;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

/* s as a JSON string, quotes included: only what JSON requires escaped,
 * the bytes taken for UTF-8 as they are (the daemon checks them). */
static void
ref_client_string(struct ref_client_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char esc[6] = { '\\', 'u', '0', '0', 0, 0 };
	size_t i, run = 0;

	ref_client_put(b, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		ref_client_put(b, s + run, i - run);
		run = i + 1;
		if (ch == '"' || ch == '\\') {
			esc[1] = (char)ch;
			ref_client_put(b, esc, 2);
			esc[1] = 'u';
		} else {
			esc[4] = hex[ch >> 4];
			esc[5] = hex[ch & 15];
			ref_client_put(b, esc, 6);
		}
	}
	ref_client_put(b, s + run, n - run);
	ref_client_put(b, "\"", 1);
}

static void
ref_client_lit(struct ref_client_buf *b, const char *s)
{
	ref_client_put(b, s, strlen(s));
}

/* The submit request of argv with our cwd and environment, one line. */
static int
ref_client_request(struct ref_client_buf *b, char **argv)
{
	char cwd[4096];
	const char *eq;
	char **ep;
	int i;

	if (getcwd(cwd, sizeof cwd) == NULL)
		return -1;
	ref_client_lit(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"submit\","
	    "\"params\":{\"argv\":[");
	for (i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			ref_client_lit(b, ",");
		ref_client_string(b, argv[i], strlen(argv[i]));
	}
	ref_client_lit(b, "],\"cwd\":");
	ref_client_string(b, cwd, strlen(cwd));
	ref_client_lit(b, ",\"env\":{");
	for (ep = environ, i = 0; *ep != NULL; ep++) {
		if ((eq = strchr(*ep, '=')) == NULL || eq == *ep)
			continue;
		if (i++ > 0)
			ref_client_lit(b, ",");
		ref_client_string(b, *ep, (size_t)(eq - *ep));
		ref_client_lit(b, ":");
		ref_client_string(b, eq + 1, strlen(eq + 1));
	}
	ref_client_lit(b, "}}}\n");
	return b->overflow ? -1 : 0;
}

int
main(int argc, char **argv)
{
	static struct ref_client_buf req;
	static char reply[REF_CLIENT_BUF];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *path = getenv("TRIAGE_SOCKET"), *id;
	size_t got = 0, sent = 0;
	ssize_t n;
	int fd;

	if (argc < 2 || path == NULL || strlen(path) >= sizeof sun.sun_path) {
		fprintf(stderr, "usage: TRIAGE_SOCKET=PATH ref-client CMD "
		    "[ARG...]\n");
		return 2;
	}
	if (ref_client_request(&req, argv + 1) == -1) {
		fprintf(stderr, "ref-client: request too long\n");
		return 2;
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		fprintf(stderr, "ref-client: %s: %s\n", path, strerror(errno));
		return 3;
	}
	while (sent < req.len) {
		if ((n = write(fd, req.data + sent, req.len - sent)) == -1) {
			fprintf(stderr, "ref-client: write: %s\n",
			    strerror(errno));
			return 3;
		}
		sent += (size_t)n;
	}
	while (got == 0 || reply[got - 1] != '\n') {
		n = read(fd, reply + got, sizeof reply - 1 - got);
		if (n <= 0) {
			fprintf(stderr, "ref-client: no reply\n");
			return 3;
		}
		got += (size_t)n;
	}
	reply[got] = '\0';
	/* A job's first "id" is its own: nothing nested in it has one. */
	if ((id = strstr(reply, "\"result\":{")) == NULL ||
	    (id = strstr(id, "\"id\":")) == NULL) {
		fprintf(stderr, "ref-client: not a job: %s", reply);
		return 1;
	}
	id += 5;
	printf("%.*s\n", (int)strspn(id, "0123456789"), id);
	return 0;
}
