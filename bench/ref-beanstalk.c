/* ref-beanstalk.c - `make bench`'s reference for submit throughput: puts of
 * 100-byte jobs into a beanstalkd, pipelined or over many connections. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The job's body: the size the issue compares with. */
#define REF_BODY 100
/* Longer than any reply line to a put or to stats' header. */
#define REF_LINE_MAX 256
#define REF_WINDOW_MAX 10000
#define REF_CONNECTIONS_MAX 1024

/* One connection and what came back on it. */
struct ref_conn {
	int fd;
	char in[65536];		/* replies read, not yet taken */
	size_t len;
	uint64_t n;		/* puts to make */
	uint64_t ok;		/* INSERTED */
	uint64_t errors;	/* any other answer */
	char error[REF_LINE_MAX];	/* the first such answer */
	pthread_t thread;
};

static const char *ref_host;
static const char *ref_port;
static char ref_put[64 + REF_BODY];	/* one whole put, body and all */
static size_t ref_put_len;

static double
ref_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
ref_connect(void)
{
	struct addrinfo hints = { 0 }, *res, *ai;
	int fd = -1, one = 1, rc;

	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(ref_host, ref_port, &hints, &res)) != 0) {
		fprintf(stderr, "ref-beanstalk: %s:%s: %s\n", ref_host,
		    ref_port, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol)) == -1)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1) {
		fprintf(stderr, "ref-beanstalk: cannot connect to %s:%s: %s\n",
		    ref_host, ref_port, strerror(errno));
		return -1;
	}
	/* Each put leaves in one write: Nagle could only delay it. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

static int
ref_write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The next reply line of c, without its "\r\n", into line (NUL-terminated),
 * reading as needed. 0, or -1 when the connection ended or failed.
 */
static int
ref_read_line(struct ref_conn *c, char *line)
{
	char *eol;
	size_t n;
	ssize_t r;

	for (;;) {
		if ((eol = memmem(c->in, c->len, "\r\n", 2)) != NULL) {
			n = (size_t)(eol - c->in);
			if (n >= REF_LINE_MAX)
				n = REF_LINE_MAX - 1;
			memcpy(line, c->in, n);
			line[n] = '\0';
			n = (size_t)(eol - c->in) + 2;
			memmove(c->in, c->in + n, c->len - n);
			c->len -= n;
			return 0;
		}
		if (c->len == sizeof c->in)
			c->len = 0;	/* no reply is this long: garbage */
		if ((r = read(c->fd, c->in + c->len, sizeof c->in - c->len))
		    == -1 && errno == EINTR)
			continue;
		if (r == 0)
			errno = 0;
		if (r <= 0)
			return -1;
		c->len += (size_t)r;
	}
}

static void
ref_count(struct ref_conn *c, const char *line)
{
	if (strncmp(line, "INSERTED ", 9) == 0) {
		c->ok++;
		return;
	}
	if (c->errors++ == 0)
		snprintf(c->error, sizeof c->error, "%s", line);
}

/* c->n puts on c, window of them unanswered at most. 0, or -1 when the
 * connection failed (what had no answer counts as failed). */
static int
ref_run(struct ref_conn *c, unsigned window)
{
	static char batch[REF_WINDOW_MAX * sizeof ref_put];
	char line[REF_LINE_MAX];
	uint64_t sent = 0, received = 0;
	size_t len;

	while (received < c->n) {
		/* Whatever the window allows, in one write. */
		for (len = 0; sent < c->n && sent - received < window; sent++) {
			if (window == 1) {
				if (ref_write_all(c->fd, ref_put, ref_put_len)
				    == -1)
					goto lost;
				continue;
			}
			memcpy(batch + len, ref_put, ref_put_len);
			len += ref_put_len;
		}
		if (len > 0 && ref_write_all(c->fd, batch, len) == -1)
			goto lost;
		/* Every answer already read, before the next write. */
		do {
			if (ref_read_line(c, line) == -1)
				goto lost;
			ref_count(c, line);
			received++;
		} while (received < sent && memmem(c->in, c->len, "\r\n", 2)
		    != NULL);
	}
	return 0;
lost:
	c->errors += c->n - received;
	if (c->error[0] == '\0')
		snprintf(c->error, sizeof c->error, "connection lost: %s",
		    errno != 0 ? strerror(errno) : "end of file");
	return -1;
}

static void *
ref_thread_cb(void *arg)
{
	(void)ref_run(arg, 1);
	return NULL;
}

/* How many ready jobs the server holds: stats' current-jobs-ready, or -1. */
static long long
ref_ready(struct ref_conn *c)
{
	char line[REF_LINE_MAX], *body, *p;
	unsigned long long bytes;
	long long ready = -1;
	size_t have;
	ssize_t r;

	if (ref_write_all(c->fd, "stats\r\n", 7) == -1 ||
	    ref_read_line(c, line) == -1 ||
	    sscanf(line, "OK %llu", &bytes) != 1 || bytes > (1u << 20) ||
	    (body = malloc(bytes + 3)) == NULL)
		return -1;
	have = c->len < bytes + 2 ? c->len : bytes + 2;
	memcpy(body, c->in, have);
	while (have < bytes + 2) {
		if ((r = read(c->fd, body + have, bytes + 2 - have)) <= 0)
			goto out;
		have += (size_t)r;
	}
	body[bytes] = '\0';
	if ((p = strstr(body, "\ncurrent-jobs-ready: ")) != NULL)
		ready = strtoll(p + 21, NULL, 10);
out:
	free(body);
	return ready;
}

static int
ref_number(const char *what, const char *s, unsigned long long max,
    unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || *v < 1 ||
	    *v > max) {
		fprintf(stderr, "ref-beanstalk: %s wants a number from 1 to "
		    "%llu, not \"%s\"\n", what, max, s);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long long n, window, nconn, i, made = 0;
	struct ref_conn *conns, check = { .fd = -1 };
	uint64_t ok = 0, errors = 0;
	const char *error = "";
	char body[REF_BODY + 1];
	long long ready;
	double t0, seconds;

	if (argc != 6) {
		fprintf(stderr, "usage: ref-beanstalk HOST PORT JOBS WINDOW "
		    "CONNECTIONS\n"
		    "Puts JOBS jobs of %d bytes into the beanstalkd at "
		    "HOST:PORT: on one connection\nwith WINDOW puts "
		    "unanswered at most, or over CONNECTIONS (> 1), each\n"
		    "waiting for every answer. Prints on stdout:\n"
		    "  ok N errors N seconds S ready N\n", REF_BODY);
		return 2;
	}
	ref_host = argv[1];
	ref_port = argv[2];
	if (ref_number("JOBS", argv[3], 1000000000, &n) == -1 ||
	    ref_number("WINDOW", argv[4], REF_WINDOW_MAX, &window) == -1 ||
	    ref_number("CONNECTIONS", argv[5], REF_CONNECTIONS_MAX, &nconn)
	    == -1)
		return 2;
	memset(body, 'x', REF_BODY);
	body[REF_BODY] = '\0';
	/* Priority, delay, time to run: beanstalkd's own defaults. */
	ref_put_len = (size_t)snprintf(ref_put, sizeof ref_put,
	    "put 1024 0 60 %d\r\n%s\r\n", REF_BODY, body);

	if ((conns = calloc(nconn, sizeof *conns)) == NULL) {
		fprintf(stderr, "ref-beanstalk: out of memory\n");
		return 1;
	}
	/* Connected before the clock starts, as triage's clients are. */
	for (i = 0; i < nconn; i++) {
		conns[i].n = n / nconn + (i < n % nconn ? 1 : 0);
		if ((conns[i].fd = ref_connect()) == -1)
			return 1;
	}
	t0 = ref_now();
	if (nconn == 1)
		(void)ref_run(&conns[0], (unsigned)window);
	else {
		for (made = 0; made < nconn; made++)
			if ((errno = pthread_create(&conns[made].thread, NULL,
			    ref_thread_cb, &conns[made])) != 0) {
				fprintf(stderr, "ref-beanstalk: cannot start a "
				    "thread: %s\n", strerror(errno));
				break;
			}
		for (i = 0; i < made; i++)
			pthread_join(conns[i].thread, NULL);
		if (made < nconn)
			return 1;
	}
	seconds = ref_now() - t0;
	for (i = 0; i < nconn; i++) {
		ok += conns[i].ok;
		errors += conns[i].errors;
		if (error[0] == '\0')
			error = conns[i].error;
		close(conns[i].fd);
	}
	if (errors > 0)
		fprintf(stderr, "ref-beanstalk: %llu puts failed; the first: "
		    "%s\n", (unsigned long long)errors, error);
	/* What the server says it holds, on a connection of its own. */
	ready = (check.fd = ref_connect()) == -1 ? -1 : ref_ready(&check);
	printf("ok %llu errors %llu seconds %.6f ready %lld\n",
	    (unsigned long long)ok, (unsigned long long)errors, seconds,
	    ready);
	free(conns);
	return fflush(stdout) == EOF ? 1 : 0;
}
