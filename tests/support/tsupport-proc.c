/* tsupport-proc.c - for tests and benchmarks: what /proc says of a process,
 * and where this program's sibling binaries are. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tsupport-proc.h"

int
tsupport_proc_stat(pid_t pid, struct tsupport_proc_stat *st)
{
	char path[64], buf[2048], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command name may hold anything, ')' too: the last one ends
	 * it. Then state (field 3) to nice (19). */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %c %d %d %d "
	    "%*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %d",
	    &st->state, &st->ppid, &st->pgrp, &st->sid, &st->utime,
	    &st->stime, &st->nice) != 7)
		return -1;
	return 0;
}

int
tsupport_proc_beside(const char *name, int up, char *path, size_t size)
{
	char self[PATH_MAX];
	char *slash;
	ssize_t n;
	int i;

	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) == -1)
		return -1;
	self[n] = '\0';
	for (i = 0; i <= up; i++) {
		if ((slash = strrchr(self, '/')) == NULL) {
			errno = ENOENT;
			return -1;
		}
		*slash = '\0';
	}
	if ((size_t)snprintf(path, size, "%s/%s", self, name) >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
