/* procstat.h - what /proc says of a process: its start time, which tells it
 * apart from a later one with the same pid, and its state. */
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

#endif
