/* bench-cpu.h - for the benchmarks: the CPU time triaged and its workers
 * have used, from /proc: what the daemon costs apart from its jobs. */
#ifndef TRIAGE_BENCH_CPU_H
#define TRIAGE_BENCH_CPU_H

#include <stddef.h>
#include <sys/types.h>

#define BENCH_CPU_MAXWORKERS	64

/* The daemon's and its workers' own CPU time at one moment, in clock
 * ticks: utime + stime, fields 14 and 15 of /proc/PID/stat, every thread,
 * without cutime and cstime (the jobs are the workers' children). */
struct bench_cpu {
	unsigned long long daemon;
	size_t nworkers;
	struct {
		pid_t pid;
		unsigned long long ticks;
	} worker[BENCH_CPU_MAXWORKERS];
};

/*
 * Reads the CPU time of daemon and of each of its children named
 * triaged-worker into *c. Returns 0, or -1 with errno (ESRCH: the daemon
 * is gone; E2BIG: more workers than BENCH_CPU_MAXWORKERS).
 */
int bench_cpu_read(pid_t daemon, struct bench_cpu *c);
/*
 * The CPU seconds used from before to after, of the daemon into *daemon_s
 * and of its workers into *workers_s; a worker that is in after only
 * started in between and counts whole. Returns 0, or -1 with errno ESRCH
 * when a worker of before had ended by after: its time went into the
 * daemon's cstime with its jobs' and cannot be told apart.
 */
int bench_cpu_since(const struct bench_cpu *before,
    const struct bench_cpu *after, double *daemon_s, double *workers_s);

#endif
