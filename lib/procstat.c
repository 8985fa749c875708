/* procstat.c - what /proc says of a process: its start time, which tells it
 * apart from a later one with the same pid, and its state. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"

int
procstat_start_ticks(pid_t pid, uint64_t *ticks)
{
	char state;

	return procstat_read(pid, &state, ticks);
}

int
procstat_read(pid_t pid, char *state, uint64_t *ticks)
{
	char path[64], buf[1024], *p, *end;
	unsigned long long v;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0) {
		errno = n == 0 ? EPROTO : errno;
		return -1;
	}
	buf[n] = '\0';
	/* The command name (field 2) may hold anything, ')' included: the
	 * fields after it start after its last ')'. */
	if ((p = strrchr(buf, ')')) == NULL) {
		errno = EPROTO;
		return -1;
	}
	p++;
	/* p is at the space before field 3; field 22 is 20 fields on. */
	for (field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (*p == '\0') {
			errno = EPROTO;
			return -1;
		}
		if (field == 3)
			*state = *p;
		if (field == 22)
			break;
		p += strcspn(p, " ");
	}
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno != 0 || end == p) {
		errno = EPROTO;
		return -1;
	}
	*ticks = (uint64_t)v;
	return 0;
}
