/* bench-stamps.h - for the benchmarks: the FIFO that ref-stamp jobs write
 * their stamps to ("K <ns> <job>"), and its reader, with a deadline. */
#ifndef TRIAGE_BENCH_STAMPS_H
#define TRIAGE_BENCH_STAMPS_H

#include <limits.h>
#include <stddef.h>

struct bench_stamps {
	const char *prog;	/* "bench-latency", for messages */
	char path[PATH_MAX];
	int fd;			/* -1 while not open */
	char buf[4096];		/* read, not yet parsed */
	size_t len;
};

/*
 * Makes the FIFO DIR/NAME.stamps and opens it read-write, so that no open
 * blocks and no read sees EOF; s->prog names the program in messages.
 * 0, or -1 after saying why on stderr.
 */
int bench_stamps_open(struct bench_stamps *s, const char *dir,
    const char *name);
/*
 * The next stamp: its kind, CLOCK_MONOTONIC ns and job (TRIAGE_JOB_ID, 0
 * outside triage). Waits wait_ms at most, and stops at once on Ctrl-C.
 * 0, or -1 after saying why on stderr (but when interrupted).
 */
int bench_stamps_next(struct bench_stamps *s, int wait_ms, char *kind,
    long long *ns, long long *job);
/* Closes the FIFO, if open; the file goes with the caller's temp dir. */
void bench_stamps_close(struct bench_stamps *s);

#endif
