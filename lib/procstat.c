/* procstat.c - what /proc says of a process: its start time, which tells it
 * apart from a later one with the same pid, its state, and what it uses. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "procstat.h"

int
procstat_start_ticks(pid_t pid, uint64_t *ticks)
{
	char state;

	return procstat_read(pid, &state, ticks);
}

int
procstat_kill(pid_t pid, int pidfd, uint64_t start_ticks, int sig)
{
	uint64_t ticks;

	if (pidfd != -1)
		return pidfd_send_signal(pidfd, sig, NULL, 0);
	if (start_ticks == 0 || procstat_start_ticks(pid, &ticks) == -1 ||
	    ticks != start_ticks) {
		errno = ESRCH;
		return -1;
	}
	return kill(pid, sig);
}

/* Fields 3 to last of /proc/PID/stat: field 3 (the state letter) into
 * *state, the numbers of fields 4 to last into v[field - 4]. */
static int
procstat_fields(pid_t pid, char *state, uint64_t *v, int last)
{
	char path[64], buf[1024], *p, *end;
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
	for (field = 3; field <= last; field++) {
		while (*p == ' ')
			p++;
		if (*p == '\0') {
			errno = EPROTO;
			return -1;
		}
		if (field == 3) {
			*state = *p;
			p += strcspn(p, " ");
			continue;
		}
		/* Some fields are signed (priority, nice): read as such. */
		errno = 0;
		v[field - 4] = (uint64_t)strtoll(p, &end, 10);
		if (errno != 0 || end == p) {
			errno = EPROTO;
			return -1;
		}
		p = end;
	}
	return 0;
}

int
procstat_read(pid_t pid, char *state, uint64_t *ticks)
{
	uint64_t v[22 - 3];

	if (procstat_fields(pid, state, v, 22) != 0)
		return -1;
	*ticks = v[22 - 4];
	return 0;
}

/* The boot time, Unix seconds, from /proc/stat's btime line. */
static int
procstat_boot_time(uint64_t *btime)
{
	FILE *f;
	char line[256];
	unsigned long long v;
	int rc = -1;

	if ((f = fopen("/proc/stat", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "btime %llu", &v) == 1) {
			*btime = (uint64_t)v;
			rc = 0;
			break;
		}
	fclose(f);
	if (rc != 0)
		errno = EPROTO;
	return rc;
}

/* Entries of /proc/self/fd, but the one that reads it. */
static int
procstat_count_fds(uint64_t *n)
{
	DIR *d;
	struct dirent *e;
	uint64_t count = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			count++;
	closedir(d);
	*n = count > 0 ? count - 1 : 0;
	return 0;
}

int
procstat_usage(struct procstat_usage *u)
{
	/* utime 14, stime 15, starttime 22, vsize 23, rss 24 (pages). */
	uint64_t v[24 - 3], btime;
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	char state;

	if (tick <= 0 || page <= 0) {
		errno = EPROTO;
		return -1;
	}
	if (procstat_fields(getpid(), &state, v, 24) != 0)
		return -1;
	u->cpu_seconds = (double)(v[14 - 4] + v[15 - 4]) / (double)tick;
	u->virtual_bytes = v[23 - 4];
	u->resident_bytes = v[24 - 4] * (uint64_t)page;
	if (procstat_boot_time(&btime) != 0)
		return -1;
	u->start_time = (double)btime + (double)v[22 - 4] / (double)tick;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	u->max_fds = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX :
	    (uint64_t)rl.rlim_cur;
	return procstat_count_fds(&u->open_fds);
}
