/* procstat.h - what /proc says of a process that tells it apart from a
 * later one with the same pid: its start time. */
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

#endif
