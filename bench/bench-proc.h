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
/*
 * Our environment without the variables whose "NAME=" prefixes drop lists,
 * plus add's "NAME=value" strings. The strings are borrowed: free the
 * array only. Built before a fork, since the child of a threaded process
 * may only call what is async-signal-safe. NULL out of memory.
 */
char **bench_proc_env(const char *const *drop, size_t ndrop,
    char *const *add, size_t nadd);
/* The path of name beside this benchmark's binary (build/bin/NAME), into
 * path. 0, or -1 with errno. */
int bench_proc_beside(const char *name, char *path, size_t size);

#endif
