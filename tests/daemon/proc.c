/* proc.c - for the daemon tests that run real jobs: what /proc says of a
 * process, and pidfds to wait for one to end. */
#include <dirent.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop.h"
#include "proc.h"
#include "tsupport-proc.h"

int
proc_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgrp, pid_t *sid)
{
	struct tsupport_proc_stat st;

	if (tsupport_proc_stat(pid, &st) == -1)
		return -1;
	*state = st.state;
	if (ppid != NULL)
		*ppid = st.ppid;
	if (pgrp != NULL)
		*pgrp = st.pgrp;
	if (sid != NULL)
		*sid = st.sid;
	return 0;
}

static bool
proc_is(enum proc_which which, char state)
{
	switch (which) {
	case PROC_LIVE:
		return state != 'Z' && state != 'X';
	case PROC_ZOMBIE:
		return state == 'Z';
	default:
		return true;
	}
}

bool
proc_alive(pid_t pid)
{
	char state;

	return proc_stat(pid, &state, NULL, NULL, NULL) == 0 &&
	    proc_is(PROC_LIVE, state);
}

int
proc_find(pid_t ppid, pid_t pgrp, enum proc_which which, pid_t *out,
    int max)
{
	struct dirent *de;
	pid_t pid, parent, group;
	char state;
	DIR *d;
	int n = 0;

	assert_non_null(d = opendir("/proc"));
	while ((de = readdir(d)) != NULL) {
		if ((pid = (pid_t)atol(de->d_name)) <= 0)
			continue;
		if (proc_stat(pid, &state, &parent, &group, NULL) == -1 ||
		    (ppid != 0 && parent != ppid) ||
		    (pgrp != 0 && group != pgrp) || !proc_is(which, state))
			continue;
		if (n < max)
			out[n] = pid;
		n++;
	}
	closedir(d);
	return n;
}

int
proc_pidfd(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

void
proc_assert_exits(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	assert_int_equal(poll(&pfd, 1, LOOP_SAFETY_SEC * 1000), 1);
	assert_true(pfd.revents & POLLIN);
	close(pidfd);
}

long
proc_status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t len = strlen(key);
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, key, len) == 0 && line[len] == ':')
			kb = atol(line + len + 1);
	fclose(f);
	assert_true(kb >= 0);
	return kb;
}
