/* bench-cgcost.h - what a job's cgroup costs, step by step, as the worker
 * takes them: mkdir, a child born in it, its kill, rmdir. */
#ifndef TRIAGE_BENCH_CGCOST_H
#define TRIAGE_BENCH_CGCOST_H

#include <stdbool.h>
#include <stddef.h>

/* Microseconds per cgroup, medians of the rounds. */
struct bench_cgcost {
	double mkdir_us;	/* mkdirat + open of the directory */
	double born_us;		/* clone3 into it, over clone3 without */
	double kill_us;		/* cgroup.kill with one process in it */
	double rmdir_us;	/* once empty */
	unsigned n;		/* cgroups per round */
};

/*
 * Measures n cgroups a round, a few rounds, beneath the caller's own
 * cgroup (cgroup v2, as root, where no systemd manages cgroups). Returns
 * 0, or -1 with why (size bytes) saying why it could not.
 */
int bench_cgcost_measure(struct bench_cgcost *cost, unsigned n, char *why,
    size_t size);

#endif
