/* test-passwd.c - passwd_lookup(): a uid's name and home as getpwuid(3)
 * gives them, either one alone, and an unknown uid. */
#include <errno.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "passwd.h"

/* No system hands out this uid: one below (uid_t)-1, which means "none". */
#define UNKNOWN_UID ((uid_t)-2)

static void
name_and_home_of_a_known_uid(void **state)
{
	struct passwd *pw;
	char *name = NULL, *home = NULL;

	(void)state;
	assert_non_null(pw = getpwuid(0));
	assert_int_equal(passwd_lookup(0, &name, &home, NULL), 0);
	assert_string_equal(name, pw->pw_name);
	assert_string_equal(home, pw->pw_dir);
	free(name);
	free(home);
}

static void
either_may_be_left_out(void **state)
{
	struct passwd *pw;
	char *s = NULL;

	(void)state;
	assert_non_null(pw = getpwuid(0));
	assert_int_equal(passwd_lookup(0, NULL, &s, NULL), 0);
	assert_string_equal(s, pw->pw_dir);
	free(s);
	s = NULL;
	assert_int_equal(passwd_lookup(0, &s, NULL, NULL), 0);
	assert_string_equal(s, pw->pw_name);
	free(s);
	assert_int_equal(passwd_lookup(0, NULL, NULL, NULL), 0);
}

static void
unknown_uid_sets_nothing(void **state)
{
	char *name = NULL, *home = NULL;

	(void)state;
	if (getpwuid(UNKNOWN_UID) != NULL)
		skip();
	errno = 0;
	assert_int_equal(passwd_lookup(UNKNOWN_UID, &name, &home, NULL), -1);
	assert_int_equal(errno, ENOENT);
	assert_null(name);
	assert_null(home);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(name_and_home_of_a_known_uid),
		cmocka_unit_test(either_may_be_left_out),
		cmocka_unit_test(unknown_uid_sets_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
