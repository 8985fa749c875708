/* procstat.h - what /proc says of a process: its start time, which tells it
 * apart from a later one with the same pid, its state, and what it uses. */
#ifndef TRIAGE_PROCSTAT_H
#define TRIAGE_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

/*
 * The start time of process pid, in clock ticks since boot (field 22 of
 * /proc/PID/stat), into *ticks. 0, or -1 with errno (ENOENT: no such
 * process; EPROTO: a line that does not parse).
 */
int procstat_start_ticks(pid_t pid, uint64_t *ticks);

/*
 * The same, with the process's state (field 3: 'R', 'S', 'Z' for a zombie,
 * which has ended but not been reaped...) into *state.
 */
int procstat_read(pid_t pid, char *state, uint64_t *ticks);

/*
 * Sends sig to the process pid that started at start_ticks: through pidfd,
 * its pidfd, when that is not -1 (it cannot reach another process); else
 * by pid, once /proc says pid is still the process that started then,
 * where pidfd_open is not to be had (valgrind; a kernel before 5.3). A pid
 * reused between that look and the kill would take a new process through
 * all of pid_max meanwhile, which this accepts. Returns 0, or -1 with
 * errno: ESRCH when the process has gone, pid is another's by now or
 * start_ticks is 0 (unknown, so nothing is sent), else kill's.
 */
int procstat_kill(pid_t pid, int pidfd, uint64_t start_ticks, int sig);

/* What the calling process uses, as Prometheus's process_* metrics name
 * it. */
struct procstat_usage {
	double cpu_seconds;	/* user and system time */
	double start_time;	/* Unix time, seconds */
	uint64_t resident_bytes;
	uint64_t virtual_bytes;
	uint64_t open_fds;
	uint64_t max_fds;	/* the soft RLIMIT_NOFILE */
};

/* Fills *u from /proc/self and getrlimit. 0, or -1 with errno (EPROTO: a
 * file that does not parse); *u is then partly filled. */
int procstat_usage(struct procstat_usage *u);

#endif
