/* proc.h - for the daemon tests that run real jobs: what /proc says of a
 * process, and pidfds to wait for one to end. */
#ifndef TRIAGE_TEST_PROC_H
#define TRIAGE_TEST_PROC_H

#include <stdbool.h>
#include <sys/types.h>

/* From /proc/pid/stat: its state letter, parent, process group and
 * session (each pointer but state may be NULL). 0, or -1 when there is no
 * such pid. */
int proc_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgrp, pid_t *sid);
/* Running: neither gone nor a zombie waiting for its reaper. */
bool proc_alive(pid_t pid);

/* Which states proc_find lists. */
enum proc_which {
	PROC_ANY,
	PROC_LIVE,	/* as proc_alive */
	PROC_ZOMBIE,
};
/*
 * The processes in /proc now whose parent is ppid and whose process group
 * is pgrp (0: any), in the states which asks for: the first max pids into
 * out. Returns how many there are, maybe more than max.
 */
int proc_find(pid_t ppid, pid_t pgrp, enum proc_which which, pid_t *out,
    int max);

/* A pidfd of pid (pidfd_open), or -1 with errno. */
int proc_pidfd(pid_t pid);
/* Waits (in poll, with LOOP_SAFETY_SEC as its deadline) for the process
 * behind pidfd to end, and closes pidfd; fails the test otherwise. */
void proc_assert_exits(int pidfd);

/* A line of /proc/pid/status in kB ("VmRSS", "VmHWM"); fails the test
 * when there is none. */
long proc_status_kb(pid_t pid, const char *key);

#endif
