/* membudget.c - the memory budget: how much memory the daemon may use (the
 * machine's, or its cgroup's limit) and what [daemon] memory makes of it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "config.h"
#include "membudget.h"

#define MEMBUDGET_MEMINFO "/proc/meminfo"
#define MEMBUDGET_PROC_CGROUP "/proc/self/cgroup"
#define MEMBUDGET_MOUNTINFO "/proc/self/mountinfo"
/* /proc/meminfo is some 1.5 KiB; memory.max a number. */
#define MEMBUDGET_FILE_MAX 8192

/* The whole of a small file, NUL-terminated, into buf; -1 when it cannot
 * be read. */
static int
membudget_slurp(const char *path, char *buf, size_t size)
{
	size_t len;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	len = fread(buf, 1, size - 1, f);
	buf[len] = '\0';
	fclose(f);
	return 0;
}

/* A decimal number at *p, which moves past it; -1 when there is none or
 * it overflows. */
static int
membudget_number(const char **p, uint64_t *n)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned digit;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		digit = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return -1;
		v = v * 10 + digit;
	}
	*p = s;
	*n = v;
	return 0;
}

int
membudget_meminfo(const char *meminfo, const char *key, uint64_t *bytes)
{
	size_t klen = strlen(key);
	const char *p = meminfo;
	uint64_t kb;

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p != NULL ? p + 1 : NULL) {
		if (strncmp(p, key, klen) != 0 || p[klen] != ':')
			continue;
		p += klen + 1;
		p += strspn(p, " \t");
		if (membudget_number(&p, &kb) == -1 ||
		    strncmp(p, " kB", 3) != 0 || (p[3] != '\n' &&
		    p[3] != '\0') || kb > UINT64_MAX / 1024)
			return -1;
		*bytes = kb * 1024;
		return 0;
	}
	return -1;
}

uint64_t
membudget_max_of(const char *text)
{
	const char *p = text;
	uint64_t n;

	if (text == NULL || membudget_number(&p, &n) == -1 ||
	    (*p != '\n' && *p != '\0'))
		return 0;	/* "max", or nothing we can read */
	return n;
}

/* Keeps the smaller limit, 0 meaning none. */
static uint64_t
membudget_min(uint64_t a, uint64_t b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}

uint64_t
membudget_cgroup_limit(const char *mount, const char *path)
{
	char *dir, *file, *slash, text[64];
	uint64_t limit = 0;

	if ((dir = strdup(path)) == NULL)
		return 0;
	/* Our own cgroup up to the root, which has no memory.max: any of
	 * them may hold the limit that binds. */
	for (;;) {
		if (asprintf(&file, "%s%s/memory.max", mount,
		    strcmp(dir, "/") == 0 ? "" : dir) != -1) {
			if (membudget_slurp(file, text, sizeof text) == 0)
				limit = membudget_min(limit,
				    membudget_max_of(text));
			free(file);
		}
		if ((slash = strrchr(dir, '/')) == NULL || dir[1] == '\0')
			break;
		slash[slash == dir ? 1 : 0] = '\0';
	}
	free(dir);
	return limit;
}

uint64_t
membudget_of(const struct config *cfg, uint64_t may_use)
{
	uint64_t p, left;

	switch (cfg->memory_kind) {
	case CONFIG_MEMORY_SIZE:
		return cfg->memory_value;
	case CONFIG_MEMORY_PERCENT:
		p = cfg->memory_value;
		/* Without overflow, whatever may_use is. */
		return may_use / 100 * p + may_use % 100 * p / 100;
	case CONFIG_MEMORY_AUTO:
		break;
	}
	left = may_use - may_use / 10;
	if (left < MEMBUDGET_AUTO_RESERVE + MEMBUDGET_AUTO_MIN)
		return MEMBUDGET_AUTO_MIN;
	return left - MEMBUDGET_AUTO_RESERVE;
}

/* MemTotal, or when /proc cannot tell, the physical pages. */
static uint64_t
membudget_total(void)
{
	char text[MEMBUDGET_FILE_MAX];
	uint64_t bytes;
	long pages, size;

	if (membudget_slurp(MEMBUDGET_MEMINFO, text, sizeof text) == 0 &&
	    membudget_meminfo(text, "MemTotal", &bytes) == 0)
		return bytes;
	pages = sysconf(_SC_PHYS_PAGES);
	size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || size <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)size;
}

uint64_t
membudget_compute(const struct config *cfg)
{
	char mount[PATH_MAX], path[PATH_MAX];
	uint64_t may_use = membudget_total();

	if (cgroup_mount_find(MEMBUDGET_MOUNTINFO, mount, sizeof mount) == 0 &&
	    cgroup_path_of(MEMBUDGET_PROC_CGROUP, path, sizeof path) == 0)
		may_use = membudget_min(may_use,
		    membudget_cgroup_limit(mount, path));
	return membudget_of(cfg, may_use);
}

int64_t
membudget_available(void)
{
	char text[MEMBUDGET_FILE_MAX];
	uint64_t bytes;

	if (membudget_slurp(MEMBUDGET_MEMINFO, text, sizeof text) == -1 ||
	    membudget_meminfo(text, "MemAvailable", &bytes) == -1 ||
	    bytes > INT64_MAX)
		return -1;
	return (int64_t)bytes;
}

void
membudget_words(uint64_t bytes, bool up, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
	    "PiB", "EiB" };
	uint64_t unit = 1, whole, tenths, rest;
	unsigned i = 0;

	while (i + 1 < sizeof units / sizeof units[0] && bytes / unit >= 1024) {
		unit *= 1024;
		i++;
	}
	whole = bytes / unit;
	rest = bytes % unit;
	/* rest < unit <= 2^60: ten times it still fits. */
	tenths = rest * 10 / unit;
	if (up && rest * 10 % unit != 0)
		tenths++;
	if (tenths == 10) {
		whole++;
		tenths = 0;
	}
	if (tenths == 0)
		snprintf(buf, size, "%llu %s", (unsigned long long)whole,
		    units[i]);
	else
		snprintf(buf, size, "%llu.%llu %s", (unsigned long long)whole,
		    (unsigned long long)tenths, units[i]);
}
