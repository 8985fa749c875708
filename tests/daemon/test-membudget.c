/* test-membudget.c - the memory budget's parts: /proc/meminfo and memory.max
 * read, the cgroup walk on a tree of files, auto, sizes and percentages, the
 * words a budget is said in, and the real machine's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "membudget.h"
#include "tsupport-dir.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

/* The start of a real /proc/meminfo. */
static const char meminfo[] =
    "MemTotal:       24683620 kB\n"
    "MemFree:        23196456 kB\n"
    "MemAvailable:   23998152 kB\n"
    "Buffers:          123456 kB\n"
    "HugePages_Total:       0\n"
    "Hugepagesize:       2048 kB\n";

static void
meminfo_lines_are_read_in_bytes(void **state)
{
	uint64_t n = 7;

	(void)state;
	assert_int_equal(membudget_meminfo(meminfo, "MemTotal", &n), 0);
	assert_int_equal(n, UINT64_C(24683620) * 1024);
	assert_int_equal(membudget_meminfo(meminfo, "MemAvailable", &n), 0);
	assert_int_equal(n, UINT64_C(23998152) * 1024);
	assert_int_equal(membudget_meminfo(meminfo, "Hugepagesize", &n), 0);
	assert_int_equal(n, 2048 * 1024);
	/* The last line without its newline. */
	assert_int_equal(membudget_meminfo("A: 1 kB\nMemTotal: 3 kB",
	    "MemTotal", &n), 0);
	assert_int_equal(n, 3072);

	n = 7;
	assert_int_equal(membudget_meminfo(meminfo, "Mem", &n), -1);
	assert_int_equal(membudget_meminfo(meminfo, "Total", &n), -1);
	assert_int_equal(membudget_meminfo(meminfo, "Swap", &n), -1);
	/* Not "N kB": nothing said. */
	assert_int_equal(membudget_meminfo(meminfo, "HugePages_Total", &n),
	    -1);
	assert_int_equal(membudget_meminfo("MemTotal: lots kB\n", "MemTotal",
	    &n), -1);
	assert_int_equal(membudget_meminfo("MemTotal: 12 MB\n", "MemTotal",
	    &n), -1);
	assert_int_equal(membudget_meminfo("MemTotal: 12 kBytes\n",
	    "MemTotal", &n), -1);
	assert_int_equal(membudget_meminfo("MemTotal: 99999999999999999999 "
	    "kB\n", "MemTotal", &n), -1);
	assert_int_equal(membudget_meminfo("MemTotal: 18014398509481984 "
	    "kB\n", "MemTotal", &n), -1);
	assert_int_equal(membudget_meminfo("", "MemTotal", &n), -1);
	assert_int_equal(n, 7);
}

static void
memory_max_is_a_number_or_none(void **state)
{
	(void)state;
	assert_int_equal(membudget_max_of("1073741824\n"), GIB);
	assert_int_equal(membudget_max_of("4096"), 4096);
	assert_int_equal(membudget_max_of("max\n"), 0);
	assert_int_equal(membudget_max_of(""), 0);
	assert_int_equal(membudget_max_of("12 kB\n"), 0);
	assert_int_equal(membudget_max_of("-1\n"), 0);
	assert_int_equal(membudget_max_of(NULL), 0);
}

/* Writes text into dir/rel/memory.max, making rel's directories. */
static void
write_max(const char *dir, const char *rel, const char *text)
{
	char path[512], *p;
	FILE *f;

	snprintf(path, sizeof path, "%s%s/memory.max", dir, rel);
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0700) == -1 && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The smallest memory.max from the cgroup up to the root binds, whichever
 * it is; "max", a file missing, or none at all, binds nothing. */
static void
the_cgroup_walk_keeps_the_smallest_limit(void **state)
{
	struct tsupport_err err;
	char dir[64] = "/tmp/test-membudget-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_max(dir, "/a", "max\n");
	write_max(dir, "/a/b", "2147483648\n");
	write_max(dir, "/a/b/c", "3221225472\n");
	write_max(dir, "/a/b/c/d", "max\n");
	write_max(dir, "/x/y", "1048576000\n");
	assert_int_equal(membudget_cgroup_limit(dir, "/a/b/c/d"), 2 * GIB);
	assert_int_equal(membudget_cgroup_limit(dir, "/a/b/c"), 2 * GIB);
	assert_int_equal(membudget_cgroup_limit(dir, "/a/b"), 2 * GIB);
	assert_int_equal(membudget_cgroup_limit(dir, "/a"), 0);
	/* A leaf without the file (no memory controller there). */
	assert_int_equal(membudget_cgroup_limit(dir, "/x/y/z"), 1000 * MIB);
	assert_int_equal(membudget_cgroup_limit(dir, "/x"), 0);
	assert_int_equal(membudget_cgroup_limit(dir, "/"), 0);
	assert_int_equal(membudget_cgroup_limit(dir, "/none/at/all"), 0);
	/* The root's own, were there one, counts too. */
	write_max(dir, "", "536870912\n");
	assert_int_equal(membudget_cgroup_limit(dir, "/a/b/c"), 512 * MIB);
	assert_int_equal(membudget_cgroup_limit(dir, "/"), 512 * MIB);
	assert_int_equal(tsupport_dir_remove(dir, &err), 0);
}

static uint64_t
budget(enum config_memory_kind kind, uint64_t value, uint64_t may_use)
{
	struct config cfg = { .memory_kind = kind, .memory_value = value };

	return membudget_of(&cfg, may_use);
}

/* auto: less a tenth, less 512MiB, at least 256MiB; a size as it is; a
 * percentage of what may be used. */
static void
auto_size_and_percent(void **state)
{
	(void)state;
	assert_int_equal(budget(CONFIG_MEMORY_AUTO, 0, 16 * GIB),
	    16 * GIB - 16 * GIB / 10 - 512 * MIB);
	assert_int_equal(budget(CONFIG_MEMORY_AUTO, 0, 10 * GIB),
	    9 * GIB - 512 * MIB);
	/* 900MiB: 810 less 512 is 298. */
	assert_int_equal(budget(CONFIG_MEMORY_AUTO, 0, 900 * MIB),
	    810 * MIB - 512 * MIB);
	/* 860MiB: 774 less 512 is 262; 850MiB: 765 less 512 would be
	 * below the least. */
	assert_int_equal(budget(CONFIG_MEMORY_AUTO, 0, 860 * MIB), 262 * MIB);
	assert_int_equal(budget(CONFIG_MEMORY_AUTO, 0, 850 * MIB), 256 * MIB);
	assert_int_equal(budget(CONFIG_MEMORY_AUTO, 0, 64 * MIB), 256 * MIB);
	assert_int_equal(budget(CONFIG_MEMORY_AUTO, 0, 0), 256 * MIB);
	assert_int_equal(budget(CONFIG_MEMORY_AUTO, 0, UINT64_MAX),
	    UINT64_MAX - UINT64_MAX / 10 - 512 * MIB);

	assert_int_equal(budget(CONFIG_MEMORY_SIZE, 48 * GIB, 16 * GIB),
	    48 * GIB);
	assert_int_equal(budget(CONFIG_MEMORY_SIZE, MIB, 16 * GIB), MIB);

	assert_int_equal(budget(CONFIG_MEMORY_PERCENT, 50, 10 * GIB),
	    5 * GIB);
	assert_int_equal(budget(CONFIG_MEMORY_PERCENT, 100, 10 * GIB),
	    10 * GIB);
	assert_int_equal(budget(CONFIG_MEMORY_PERCENT, 1, 100 * MIB),
	    MIB);
	assert_int_equal(budget(CONFIG_MEMORY_PERCENT, 80, 1001), 800);
	assert_int_equal(budget(CONFIG_MEMORY_PERCENT, 100, UINT64_MAX),
	    UINT64_MAX);
	assert_int_equal(budget(CONFIG_MEMORY_PERCENT, 99, UINT64_MAX),
	    UINT64_MAX / 100 * 99 + UINT64_MAX % 100 * 99 / 100);
}

static void
assert_words(uint64_t bytes, bool up, const char *want)
{
	char buf[MEMBUDGET_WORDS_MAX];

	membudget_words(bytes, up, buf, sizeof buf);
	assert_string_equal(buf, want);
}

/* Whole units as they are; otherwise a tenth, down for a budget, up for
 * a need. */
static void
words_for_people(void **state)
{
	(void)state;
	assert_words(0, false, "0 B");
	assert_words(512, true, "512 B");
	assert_words(1023, false, "1023 B");
	assert_words(1024, false, "1 KiB");
	assert_words(64 * GIB, false, "64 GiB");
	assert_words(64 * GIB, true, "64 GiB");
	assert_words(3 * GIB / 2, false, "1.5 GiB");
	assert_words(3 * GIB / 2, true, "1.5 GiB");
	/* 14.2 GiB and a little: down and up. */
	assert_words(14 * GIB + GIB / 5 + MIB, false, "14.2 GiB");
	assert_words(14 * GIB + GIB / 5 + MIB, true, "14.3 GiB");
	assert_words(64 * GIB - 1, false, "63.9 GiB");
	assert_words(64 * GIB - 1, true, "64 GiB");
	assert_words(64 * GIB + 1, false, "64 GiB");
	assert_words(64 * GIB + 1, true, "64.1 GiB");
	assert_words(UINT64_C(1) << 50, false, "1 PiB");
	assert_words(UINT64_MAX, false, "15.9 EiB");
	assert_words(UINT64_MAX, true, "16 EiB");
}

/* This machine's: a size whatever the machine, and what it has, read. */
static void
the_machine_s_budget(void **state)
{
	struct config cfg = { .memory_kind = CONFIG_MEMORY_SIZE,
	    .memory_value = 48 * GIB };
	uint64_t all;

	(void)state;
	assert_int_equal(membudget_compute(&cfg), 48 * GIB);
	cfg.memory_kind = CONFIG_MEMORY_PERCENT;
	cfg.memory_value = 100;
	all = membudget_compute(&cfg);
	assert_true(all > 16 * MIB);
	cfg.memory_kind = CONFIG_MEMORY_AUTO;
	cfg.memory_value = 0;
	assert_int_equal(membudget_compute(&cfg), membudget_of(&cfg, all));
	/* What the kernel says is free is on the machine. */
	assert_true(membudget_available() > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(meminfo_lines_are_read_in_bytes),
		cmocka_unit_test(memory_max_is_a_number_or_none),
		cmocka_unit_test(the_cgroup_walk_keeps_the_smallest_limit),
		cmocka_unit_test(auto_size_and_percent),
		cmocka_unit_test(words_for_people),
		cmocka_unit_test(the_machine_s_budget),
	};

	return cmocka_run_group_tests_name("membudget", tests, NULL, NULL);
}
