/* test-endrec.c - the end record an orphaned worker leaves in state_dir/adopt:
 * read back as written, whole or not at all, and only for its own attempt. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "endrec.h"
#include "tsupport-dir.h"

static char dir[PATH_MAX];

static int
setup(void **state)
{
	struct tsupport_err err;

	(void)state;
	return tsupport_dir_make(dir, sizeof dir, "/tmp", "triage-endrec",
	    &err);
}

static int
teardown(void **state)
{
	struct tsupport_err err;

	(void)state;
	return tsupport_dir_remove(dir, &err);
}

/* A result with every field set to something other than its default. */
static void
result_init(struct pool_result *res)
{
	memset(res, 0, sizeof *res);
	res->started = true;
	res->status = W_EXITCODE(3, 0);
	res->user_time = 1.25;
	res->system_time = 0.5;
	res->max_rss_kb = 4096;
	res->stdout_bytes = 123;
	res->stderr_bytes = 7;
	res->stdout_truncated = true;
	res->stdout_dropped = 1u << 20;
	res->lease_ended = true;
	res->peak_memory = 1 << 24;
	res->oom = true;
	res->left = 2;
}

static void
a_record_reads_back_as_written(void **state)
{
	struct pool_result res, back;
	int64_t at;
	char path[PATH_MAX];
	struct stat st;

	(void)state;
	result_init(&res);
	assert_int_equal(endrec_write(dir, 42, 3, &res, 1700000000123), 0);
	assert_int_equal(endrec_read(dir, 42, 3, &back, &at), 1);
	assert_int_equal(at, 1700000000123);
	assert_true(back.started);
	assert_int_equal(back.status, res.status);
	assert_true(back.user_time == res.user_time);
	assert_true(back.system_time == res.system_time);
	assert_int_equal(back.max_rss_kb, res.max_rss_kb);
	assert_int_equal(back.stdout_bytes, res.stdout_bytes);
	assert_int_equal(back.stderr_bytes, res.stderr_bytes);
	assert_true(back.stdout_truncated);
	assert_false(back.stderr_truncated);
	assert_int_equal(back.stdout_dropped, res.stdout_dropped);
	assert_int_equal(back.stderr_dropped, 0);
	assert_true(back.lease_ended);
	assert_int_equal(back.peak_memory, res.peak_memory);
	assert_true(back.oom);
	assert_int_equal(back.left, 2);
	assert_null(back.result);
	assert_int_equal(back.result_len, 0);
	/* A result, with its NUL, and truncated, comes back as it was. */
	res.result = (char *)(uintptr_t)"a\0\377";
	res.result_len = 3;
	res.result_truncated = true;
	assert_int_equal(endrec_write(dir, 42, 3, &res, 1700000000123), 0);
	assert_int_equal(endrec_read(dir, 42, 3, &back, &at), 1);
	assert_int_equal(back.result_len, 3);
	assert_memory_equal(back.result, "a\0\377", 3);
	assert_true(back.result_truncated);
	free(back.result);
	/* Its user's only, and no temp file left beside it. */
	assert_int_equal(endrec_path(dir, 42, 3, "end", path, sizeof path), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(endrec_path(dir, 42, 3, "end.tmp", path,
	    sizeof path), 0);
	assert_int_equal(access(path, F_OK), -1);
}

/* No record is no error; one of another job or attempt under this name,
 * or one cut short, is not taken. */
static void
only_its_own_attempt_is_taken(void **state)
{
	struct pool_result res;
	char path[PATH_MAX], from[PATH_MAX];
	int64_t at;
	FILE *f;

	(void)state;
	assert_int_equal(endrec_read(dir, 5, 1, &res, &at), 0);
	result_init(&res);
	assert_int_equal(endrec_write(dir, 5, 1, &res, 1), 0);
	/* attempt 1's record under attempt 2's name */
	assert_int_equal(endrec_path(dir, 5, 1, "end", from, sizeof from), 0);
	assert_int_equal(endrec_path(dir, 5, 2, "end", path, sizeof path), 0);
	assert_int_equal(rename(from, path), 0);
	assert_int_equal(endrec_read(dir, 5, 2, &res, &at), -1);
	assert_int_equal(errno, EINVAL);
	/* cut short */
	assert_int_equal(endrec_path(dir, 6, 1, "end", path, sizeof path), 0);
	assert_non_null(f = fopen(path, "w"));
	fputs("{\"job\": 6, \"attempt\": 1, \"sta", f);
	fclose(f);
	assert_int_equal(endrec_read(dir, 6, 1, &res, &at), -1);
	assert_int_equal(errno, EINVAL);
}

/* A socket's name must fit sockaddr_un; a record's only PATH_MAX. */
static void
a_socket_path_must_fit(void **state)
{
	char longdir[200], path[PATH_MAX];

	(void)state;
	memset(longdir, 'a', sizeof longdir - 1);
	longdir[0] = '/';
	longdir[sizeof longdir - 1] = '\0';
	assert_int_equal(endrec_path(longdir, 1, 1, "sock", path, sizeof path),
	    -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_int_equal(endrec_path(longdir, 1, 1, "end", path, sizeof path),
	    0);
	assert_int_equal(endrec_path("/x", 1, 1, "sock", path, sizeof path),
	    0);
	assert_string_equal(path, "/x/1.1.sock");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_record_reads_back_as_written),
		cmocka_unit_test(only_its_own_attempt_is_taken),
		cmocka_unit_test(a_socket_path_must_fit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
