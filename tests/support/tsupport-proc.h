/* tsupport-proc.h - for tests and benchmarks: what /proc says of a process,
 * and where this program's sibling binaries are. */
#ifndef TRIAGE_TSUPPORT_PROC_H
#define TRIAGE_TSUPPORT_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* The fields of /proc/PID/stat that tests and benchmarks read. */
struct tsupport_proc_stat {
	char			state;	/* 'R', 'S', 'T', 'Z'... */
	pid_t			ppid;
	pid_t			pgrp;
	pid_t			sid;
	unsigned long long	utime;	/* CPU time, in clock ticks */
	unsigned long long	stime;
	int			nice;
};

/* Reads /proc/pid/stat into *st. 0, or -1 when there is no such process
 * (or the file is not as the kernel writes it). */
int tsupport_proc_stat(pid_t pid, struct tsupport_proc_stat *st);
/*
 * The path of name in the directory up levels above this program's own
 * (0: beside it; 1: build/tests/x finds build/bin/NAME as "bin/NAME"),
 * into path. 0, or -1 with errno.
 */
int tsupport_proc_beside(const char *name, int up, char *path, size_t size);

#endif
