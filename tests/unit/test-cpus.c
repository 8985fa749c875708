/* test-cpus.c - cpus_*: cpu.max quotas in every form, the walk up the cgroup
 * tree, and the affinity limit, with expectations computed on this machine. */
#include <errno.h>
#include <sched.h>
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

#include "cpus.h"
#include "tsupport-dir.h"

/* What the test expects cpus_usable() to find before any quota. */
static unsigned
affinity(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) == -1)
		fail_msg("sched_getaffinity: %s", strerror(errno));
	return (unsigned)CPU_COUNT(&set);
}

static unsigned
expect_usable(unsigned quota)
{
	unsigned n = affinity();

	if (quota != 0 && quota < n)
		n = quota;
	return n > 0 ? n : 1;
}

/* A temporary cpu.max with the given content; the caller unlinks it. */
static char *
fake_cpu_max(const char *content)
{
	char *path = strdup("/tmp/test-cpus-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(write(fd, content, strlen(content)),
	    (ssize_t)strlen(content));
	close(fd);
	return path;
}

static unsigned
quota_of(const char *content)
{
	char *path = fake_cpu_max(content);
	unsigned n = cpus_quota(path);

	unlink(path);
	free(path);
	return n;
}

static unsigned
usable_with(const char *content)
{
	char *path = fake_cpu_max(content);
	unsigned n = cpus_usable(path);

	unlink(path);
	free(path);
	return n;
}

static void
quota_max_means_no_limit(void **state)
{
	(void)state;
	assert_int_equal(quota_of("max 100000\n"), 0);
	assert_int_equal(quota_of("max 100000"), 0);
	assert_int_equal(usable_with("max 100000\n"), expect_usable(0));
}

static void
quota_rounds_up_to_whole_cpus(void **state)
{
	(void)state;
	assert_int_equal(quota_of("150000 100000\n"), 2);
	assert_int_equal(quota_of("100000 100000\n"), 1);
	assert_int_equal(quota_of("200000 100000\n"), 2);
	assert_int_equal(quota_of("200001 100000\n"), 3);
	assert_int_equal(quota_of("1600000 100000"), 16);
	assert_int_equal(usable_with("150000 100000\n"), expect_usable(2));
}

static void
quota_below_one_cpu_still_gives_one(void **state)
{
	(void)state;
	assert_int_equal(quota_of("50000 100000\n"), 1);
	assert_int_equal(quota_of("1000 100000\n"), 1);
	assert_int_equal(quota_of("0 100000\n"), 1);
	assert_int_equal(usable_with("50000 100000\n"), 1);
}

static void
malformed_quota_means_no_limit(void **state)
{
	static const char *const bad[] = {
		"garbage", "", "\n", "100000", "100000\n", "100000 0\n",
		"-50000 100000\n", "50000  100000\n", "50000 100000 junk\n",
		"50000 100000\nmore\n", "5e4 100000\n", "50000 1e5\n",
		"99999999999999999999999 100000\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (quota_of(bad[i]) != 0)
			fail_msg("\"%s\" gave a limit", bad[i]);
	}
	assert_int_equal(usable_with("garbage"), expect_usable(0));
}

static void
missing_quota_file_means_no_limit(void **state)
{
	(void)state;
	assert_int_equal(cpus_quota("/nonexistent/triage/cpu.max"), 0);
	assert_int_equal(cpus_usable("/nonexistent/triage/cpu.max"),
	    expect_usable(0));
}

static void
usable_without_a_path_is_within_affinity(void **state)
{
	unsigned n = cpus_usable(NULL);

	(void)state;
	assert_true(n >= 1);
	assert_true(n <= affinity());
}

/* A fake cgroup tree: <root>/sys holds the cgroup files, <root>/cgroup
 * plays /proc/self/cgroup. */
struct tree {
	char root[64];
	char mount[96];
	char proc[96];
};

static void
tree_file(struct tree *t, const char *rel, const char *content)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", t->root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void
tree_dir(struct tree *t, const char *rel)
{
	char path[256];

	snprintf(path, sizeof path, "%s/%s", t->root, rel);
	assert_int_equal(mkdir(path, 0700), 0);
}

static int
tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof *t);

	if (t == NULL)
		return -1;
	strcpy(t->root, "/tmp/test-cpus-XXXXXX");
	if (mkdtemp(t->root) == NULL)
		return -1;
	snprintf(t->mount, sizeof t->mount, "%s/sys", t->root);
	snprintf(t->proc, sizeof t->proc, "%s/cgroup", t->root);
	if (mkdir(t->mount, 0700) == -1)
		return -1;
	*state = t;
	return 0;
}

static int
tree_teardown(void **state)
{
	struct tree *t = *state;
	struct tsupport_err err;
	int rc;

	rc = tsupport_dir_remove(t->root, &err);
	free(t);
	return rc;
}

static void
cgroup_takes_the_smallest_quota_of_self_and_ancestors(void **state)
{
	struct tree *t = *state;

	tree_dir(t, "sys/a");
	tree_dir(t, "sys/a/b");
	tree_dir(t, "sys/a/b/c");
	tree_file(t, "sys/a/cpu.max", "200000 100000\n");
	/* sys/a/b has no cpu.max: no limit there. */
	tree_file(t, "sys/a/b/c/cpu.max", "max 100000\n");
	tree_file(t, "cgroup", "12:cpu:/elsewhere\n0::/a/b/c\n");
	assert_int_equal(cpus_cgroup_quota(t->proc, t->mount), 2);

	tree_file(t, "sys/a/b/c/cpu.max", "50000 100000\n");
	assert_int_equal(cpus_cgroup_quota(t->proc, t->mount), 1);

	tree_file(t, "sys/a/b/cpu.max", "garbage\n");
	tree_file(t, "sys/a/b/c/cpu.max", "400000 100000\n");
	assert_int_equal(cpus_cgroup_quota(t->proc, t->mount), 2);
}

static void
cgroup_root_is_read_too(void **state)
{
	struct tree *t = *state;

	tree_dir(t, "sys/a");
	tree_file(t, "sys/cpu.max", "300000 100000\n");
	tree_file(t, "cgroup", "0::/a\n");
	assert_int_equal(cpus_cgroup_quota(t->proc, t->mount), 3);
	tree_file(t, "cgroup", "0::/\n");
	assert_int_equal(cpus_cgroup_quota(t->proc, t->mount), 3);
}

static void
cgroup_without_quota_files_means_no_limit(void **state)
{
	struct tree *t = *state;

	tree_dir(t, "sys/a");
	tree_file(t, "cgroup", "0::/a\n");
	assert_int_equal(cpus_cgroup_quota(t->proc, t->mount), 0);
}

static void
cgroup_without_v2_line_means_no_limit(void **state)
{
	struct tree *t = *state;

	tree_file(t, "sys/cpu.max", "100000 100000\n");
	tree_file(t, "cgroup", "4:memory:/x\n1:cpu:/\n");
	assert_int_equal(cpus_cgroup_quota(t->proc, t->mount), 0);
	tree_file(t, "cgroup", "");
	assert_int_equal(cpus_cgroup_quota(t->proc, t->mount), 0);
	assert_int_equal(cpus_cgroup_quota("/nonexistent/cgroup", t->mount),
	    0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quota_max_means_no_limit),
		cmocka_unit_test(quota_rounds_up_to_whole_cpus),
		cmocka_unit_test(quota_below_one_cpu_still_gives_one),
		cmocka_unit_test(malformed_quota_means_no_limit),
		cmocka_unit_test(missing_quota_file_means_no_limit),
		cmocka_unit_test(usable_without_a_path_is_within_affinity),
		cmocka_unit_test_setup_teardown(
		    cgroup_takes_the_smallest_quota_of_self_and_ancestors,
		    tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(cgroup_root_is_read_too,
		    tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(
		    cgroup_without_quota_files_means_no_limit,
		    tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(
		    cgroup_without_v2_line_means_no_limit,
		    tree_setup, tree_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
