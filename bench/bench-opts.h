/* bench-opts.h - the command line every benchmark program takes: --quick,
 * --dir, --help, and counts of its own (--samples N, --rounds N...). */
#ifndef TRIAGE_BENCH_OPTS_H
#define TRIAGE_BENCH_OPTS_H

#include <stdbool.h>
#include <stddef.h>

/* A count option: --name N, from min to max, into *v; else *v is dflt,
 * or with --quick quick_dflt when that is not 0. */
struct bench_opts_count {
	const char *name;
	long min;
	long max;
	long *v;
	long dflt;
	long quick_dflt;
	const char *help;	/* for --help, before "(default N)" */
};

struct bench_opts {
	const char *prog;	/* "bench-idle", for messages */
	const char *about;	/* what it measures, lines ending in '\n' */
	struct bench_opts_count *counts;
	size_t ncounts;		/* at most 8 */
	bool quick;		/* --quick */
	const char *dir;	/* --dir: where temp dirs go; "/tmp" */
};

/*
 * Sets up the benchmark's signal guard (bench_daemon_guard), then parses
 * argv into o. Returns -1 to go on, or the status to exit with at once:
 * 0 after --help, 1 when the guard failed, 2 after a usage error (said).
 */
int bench_opts_parse(struct bench_opts *o, int argc, char **argv);

#endif
