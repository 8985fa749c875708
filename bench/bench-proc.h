/* bench-proc.h - for the benchmarks: a program run as a user's shell runs it
 * (spawned, waited for), timed from the spawn to the end of its wait. */
#ifndef TRIAGE_BENCH_PROC_H
#define TRIAGE_BENCH_PROC_H

#include <stddef.h>

/*
 * Runs argv[0] (a path) with envp, stdout on out_fd (-1: /dev/null), stderr
 * ours, no signal blocked, and waits for it. *seconds is the time from
 * before the spawn to after the wait. Returns its wait status, or -1 with
 * errno when it could not be run.
 */
int bench_proc_run(char *const argv[], char *const envp[], int out_fd,
    double *seconds);

#endif
