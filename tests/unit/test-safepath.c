/* test-safepath.c - safepath_check(): directories another user owns or may
 * write to are refused, naming the directory and why; sound ones pass. */
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

#include "safepath.h"
#include "tsupport-dir.h"

struct fixture {
	char dir[64];		/* mkdtemp: 0700, ours */
	char path[128];
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);

	assert_non_null(f);
	snprintf(f->dir, sizeof f->dir, "/tmp/test-safepath.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	struct tsupport_err err;

	assert_int_equal(tsupport_dir_remove(f->dir, &err), 0);
	free(f);
	return 0;
}

/* A subdirectory of the fixture's with mode (umask aside). */
static const char *
subdir(struct fixture *f, const char *name, mode_t mode)
{
	snprintf(f->path, sizeof f->path, "%s/%s", f->dir, name);
	assert_int_equal(mkdir(f->path, 0700), 0);
	assert_int_equal(chmod(f->path, mode), 0);
	return f->path;
}

/* Fails the test unless path is refused with a sentence holding want. */
static void
assert_refused(const char *path, const char *want)
{
	char *why = NULL;

	assert_int_equal(safepath_check(path, geteuid(), &why), -1);
	assert_non_null(why);
	if (strstr(why, want) == NULL)
		fail_msg("\"%s\" does not say \"%s\"", why, want);
	free(why);
}

static void
assert_accepted(const char *path)
{
	char *why = NULL;

	if (safepath_check(path, geteuid(), &why) != 0)
		fail_msg("%s refused: %s", path, why ? why : "out of memory");
	assert_null(why);
}

static void
a_private_directory_under_tmp_is_sound(void **state)
{
	struct fixture *f = *state;

	assert_accepted(f->dir);
	assert_accepted(subdir(f, "state", 0700));
	assert_accepted("/");
}

static void
one_others_may_write_to_is_refused(void **state)
{
	struct fixture *f = *state;
	char want[160];

	snprintf(want, sizeof want, "%s/open: mode 0777 lets everyone write",
	    f->dir);
	assert_refused(subdir(f, "open", 0777), want);
	/* Sticky does not help the directory itself: others could still
	 * create the files we mean to. */
	assert_refused(subdir(f, "sticky", 01777), "lets everyone write");
	assert_refused(subdir(f, "group", 0770), "lets its group write");
}

static void
a_parent_others_may_write_to_is_refused_unless_sticky(void **state)
{
	struct fixture *f = *state;
	char path[160];

	subdir(f, "shared", 0777);
	snprintf(path, sizeof path, "%s/state", f->path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_refused(path, "shared: mode 0777 lets everyone write to it "
	    "without the sticky bit");
	assert_int_equal(chmod(f->path, 01777), 0);
	assert_accepted(path);
}

static void
a_path_not_made_yet_is_checked_where_it_exists(void **state)
{
	struct fixture *f = *state;
	char path[160];

	snprintf(path, sizeof path, "%s/not/yet", f->dir);
	assert_accepted(path);
	subdir(f, "open", 0777);
	snprintf(path, sizeof path, "%s/open/not/yet", f->dir);
	assert_refused(path, "open: mode 0777 lets everyone write");
}

static void
a_symlink_is_judged_by_where_it_leads(void **state)
{
	struct fixture *f = *state;
	char link[160];

	subdir(f, "open", 0777);
	snprintf(link, sizeof link, "%s/link", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	assert_refused(link, "open: mode 0777");
}

static void
one_another_user_owns_is_refused(void **state)
{
	struct fixture *f = *state;

	/* Only root can give a directory away. */
	if (geteuid() != 0)
		skip();
	subdir(f, "theirs", 0700);
	assert_int_equal(chown(f->path, 4242, 4242), 0);
	assert_refused(f->path, "theirs: owned by uid 4242, not by root");
}

static void
a_relative_path_is_refused(void **state)
{
	(void)state;
	assert_refused("var/lib/triage", "not an absolute path");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    a_private_directory_under_tmp_is_sound, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    one_others_may_write_to_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    a_parent_others_may_write_to_is_refused_unless_sticky,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    a_path_not_made_yet_is_checked_where_it_exists, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    a_symlink_is_judged_by_where_it_leads, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    one_another_user_owns_is_refused, setup, teardown),
		cmocka_unit_test(a_relative_path_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
