/* cpus.c - the CPUs this process may use, so that slots = auto fills the
 * machine or the container, not the host behind a cgroup quota. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpus.h"

/* Enough for "QUOTA PERIOD\n" with two 64-bit numbers, and to spot junk. */
#define CPUS_MAX_FILE 64

/* The CPUs in our affinity mask. cpu_set_t holds 1024; bigger machines need
 * a bigger set, so grow it while the kernel says EINVAL. */
static unsigned
cpus_affinity(void)
{
	size_t ncpus = CPU_SETSIZE;
	cpu_set_t *set;
	long online;
	int n;

	for (;;) {
		size_t size = CPU_ALLOC_SIZE(ncpus);

		set = CPU_ALLOC(ncpus);
		if (set == NULL)
			break;
		CPU_ZERO_S(size, set);
		if (sched_getaffinity(0, size, set) == 0) {
			n = CPU_COUNT_S(size, set);
			CPU_FREE(set);
			return n > 0 ? (unsigned)n : 1;
		}
		CPU_FREE(set);
		if (errno != EINVAL || ncpus >= 1024 * 1024)
			break;
		ncpus *= 2;
	}
	online = sysconf(_SC_NPROCESSORS_ONLN);
	if (online < 1)
		return 1;
	return online > UINT_MAX ? UINT_MAX : (unsigned)online;
}

/* Reads an unsigned decimal at *p, advancing it; -1 if there is none or it
 * does not fit. */
static int
cpus_number(const char **p, uint64_t *n)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned digit = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - digit) / 10)
			return -1;
		v = v * 10 + digit;
	}
	*p = s;
	*n = v;
	return 0;
}

unsigned
cpus_quota(const char *cpu_max_path)
{
	char buf[CPUS_MAX_FILE];
	const char *p = buf;
	uint64_t quota, period, cpus;
	size_t len;
	FILE *f;

	f = fopen(cpu_max_path, "re");
	if (f == NULL)
		return 0;
	len = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[len] = '\0';

	if (strncmp(p, "max", 3) == 0)
		return 0;
	if (cpus_number(&p, &quota) == -1 || *p++ != ' ' ||
	    cpus_number(&p, &period) == -1 || period == 0)
		return 0;
	if (strcmp(p, "\n") != 0 && *p != '\0')
		return 0;

	cpus = quota / period + (quota % period != 0);
	if (cpus == 0)
		return 1;
	return cpus > UINT_MAX ? UINT_MAX : (unsigned)cpus;
}

/* Keeps the smaller limit, 0 meaning none. */
static unsigned
cpus_min_limit(unsigned a, unsigned b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}

unsigned
cpus_cgroup_quota(const char *proc_cgroup, const char *mount)
{
	char *line = NULL, *path = NULL, *file, *slash;
	size_t size = 0;
	ssize_t len;
	unsigned limit = 0;
	FILE *f;

	f = fopen(proc_cgroup, "re");
	if (f == NULL)
		return 0;
	while ((len = getline(&line, &size, f)) != -1) {
		if (strncmp(line, "0::/", 4) != 0)
			continue;
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		path = strdup(line + 3);
		break;
	}
	free(line);
	fclose(f);
	if (path == NULL)
		return 0;

	/* From our own cgroup up to the root: any of them may set the quota
	 * that binds, and the root cgroup has no cpu.max at all. */
	for (;;) {
		if (asprintf(&file, "%s%s/cpu.max", mount,
		    strcmp(path, "/") == 0 ? "" : path) == -1)
			break;
		limit = cpus_min_limit(limit, cpus_quota(file));
		free(file);
		slash = strrchr(path, '/');
		if (slash == NULL || slash == path) {
			if (path[1] == '\0')
				break;
			path[1] = '\0';
			continue;
		}
		*slash = '\0';
	}
	free(path);
	return limit;
}

unsigned
cpus_usable(const char *cpu_max_path)
{
	unsigned n, limit;

	n = cpus_affinity();
	if (cpu_max_path != NULL)
		limit = cpus_quota(cpu_max_path);
	else
		limit = cpus_cgroup_quota(CPUS_PROC_CGROUP, CPUS_CGROUP_MOUNT);
	n = cpus_min_limit(n, limit);
	return n > 0 ? n : 1;
}
