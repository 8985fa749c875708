/* bench-beanstalk.h - for the submit benchmark: a beanstalkd with its binlog
 * in a temp dir, fed by build/bin/ref-beanstalk, never left behind. */
#ifndef TRIAGE_BENCH_BEANSTALK_H
#define TRIAGE_BENCH_BEANSTALK_H

#include <stdint.h>
#include <sys/types.h>

#include "bench-load.h"

struct bench_beanstalk {
	pid_t pid;		/* also the process group; 0 once reaped */
	char dir[256];		/* its log, and its binlog in binlog/ */
	char port[16];		/* on 127.0.0.1 */
};

/*
 * Starts beanstalkd (from PATH) on 127.0.0.1 and a free port, with its
 * binlog on a new temp dir under parent and its default fsync policy
 * (every 50 ms), in a process group the benchmark's guard kills on a
 * signal, and waits until it accepts connections. Returns it, or NULL with
 * *cause set (allocated) and nothing left behind.
 */
struct bench_beanstalk *bench_beanstalk_start(const char *parent,
    char **cause);
/*
 * Puts n jobs of 100 bytes through build/bin/ref-beanstalk (beside this
 * binary): on one connection with window puts in flight when nconn is 1,
 * else over nconn connections one at a time each. Fills *r (not_queued
 * counts the acknowledged jobs the server does not hold). Returns 0, or
 * -1 when the load could not run (r->error says why).
 */
int bench_beanstalk_load(const struct bench_beanstalk *b, uint64_t n,
    unsigned window, unsigned nconn, struct bench_load_result *r);
/* Kills its process group, reaps it, removes its dir, frees. */
void bench_beanstalk_free(struct bench_beanstalk *b);

#endif
