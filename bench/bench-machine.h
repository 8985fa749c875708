/* bench-machine.h - what the benchmark ran on, printed with its numbers so
 * that results from different machines are not compared blindly. */
#ifndef TRIAGE_BENCH_MACHINE_H
#define TRIAGE_BENCH_MACHINE_H

#include <stdbool.h>

struct bench_machine {
	long cpus;		/* as nproc counts them: our affinity mask */
	char fs[32];		/* filesystem type of the state dir's parent */
	bool fs_tmpfs;		/* fsync costs nothing there */
	char kernel[256];	/* uname: system, release, machine */
	double load;		/* 1-minute load average, -1 if unknown: other
				 * work on the machine skews every rate */
};

/* Fills *m for state dirs made under dir. Returns 0, or -1 with errno when
 * dir cannot be examined (the rest of *m is still filled). */
int bench_machine_get(const char *dir, struct bench_machine *m);

#endif
