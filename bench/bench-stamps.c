/* bench-stamps.c - for the benchmarks: the FIFO that ref-stamp jobs write
 * their stamps to ("K <ns> <job>"), and its reader, with a deadline. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench-daemon.h"
#include "bench-stamps.h"

/* Polls in slices, so that Ctrl-C is seen at once. */
#define BENCH_STAMPS_SLICE_MS 100

int
bench_stamps_open(struct bench_stamps *s, const char *dir, const char *name)
{
	s->fd = -1;
	s->len = 0;
	if ((size_t)snprintf(s->path, sizeof s->path, "%s/%s.stamps", dir,
	    name) >= sizeof s->path) {
		fprintf(stderr, "%s: %s: %s\n", s->prog, dir,
		    strerror(ENAMETOOLONG));
		return -1;
	}
	if (mkfifo(s->path, 0600) == -1 ||
	    (s->fd = open(s->path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) == -1) {
		fprintf(stderr, "%s: %s: %s\n", s->prog, s->path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
bench_stamps_next(struct bench_stamps *s, int wait_ms, char *kind,
    long long *ns, long long *job)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	int ready, waited = 0;
	ssize_t n;
	char *nl;

	while ((nl = memchr(s->buf, '\n', s->len)) == NULL) {
		if (bench_daemon_interrupted() != 0)
			return -1;
		ready = poll(&pfd, 1, BENCH_STAMPS_SLICE_MS);
		if (ready == -1 && errno == EINTR)
			continue;
		if (ready == 0 && (waited += BENCH_STAMPS_SLICE_MS) < wait_ms)
			continue;
		if (ready <= 0) {
			fprintf(stderr, "%s: no stamp in %s within %d s\n",
			    s->prog, s->path, wait_ms / 1000);
			return -1;
		}
		n = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			fprintf(stderr, "%s: %s: %s\n", s->prog, s->path,
			    n == 0 ? "end of file" : strerror(errno));
			return -1;
		}
		s->len += (size_t)n;
	}
	*nl = '\0';
	if (sscanf(s->buf, "%c %lld %lld", kind, ns, job) != 3) {
		fprintf(stderr, "%s: bad stamp \"%s\"\n", s->prog, s->buf);
		return -1;
	}
	s->len -= (size_t)(nl + 1 - s->buf);
	memmove(s->buf, nl + 1, s->len);
	return 0;
}

void
bench_stamps_close(struct bench_stamps *s)
{
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
}
