/* test-intern.c - shared strings and vectors: one copy for equal contents,
 * freed with its last holder; and the job fields that use them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "intern.h"
#include "job.h"

static char **
strv(const char *first, ...)
{
	char **v = calloc(8, sizeof *v);
	const char *s;
	va_list ap;
	size_t n = 0;

	assert_non_null(v);
	va_start(ap, first);
	for (s = first; s != NULL; s = va_arg(ap, const char *))
		assert_non_null(v[n++] = strdup(s));
	va_end(ap);
	return v;
}

static void
test_strings_shared_and_counted(void **state)
{
	char buf[16];
	const char *a, *b, *c;

	(void)state;
	assert_int_equal(intern_count(), 0);
	snprintf(buf, sizeof buf, "/home/%s", "me");
	assert_non_null(a = intern_str("/home/me"));
	assert_non_null(b = intern_str(buf));
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, buf);
	assert_non_null(c = intern_str("/"));
	assert_ptr_not_equal(a, c);
	assert_int_equal(intern_count(), 2);
	/* Held again without a lookup: one more drop to go. */
	assert_ptr_equal(intern_str_hold(c), c);
	intern_str_drop(c);
	assert_string_equal(c, "/");
	intern_str_drop(a);
	assert_int_equal(intern_count(), 2);	/* b still holds it */
	assert_string_equal(b, "/home/me");
	intern_str_drop(b);
	intern_str_drop(c);
	intern_str_drop(NULL);
	assert_int_equal(intern_count(), 0);
}

static void
test_vectors_whole(void **state)
{
	char **x = strv("A=1", "B=2", NULL), **y = strv("A=1", "B=2", NULL);
	char **z = strv("A=1", NULL), **e = strv(NULL);
	char *const *vx, *const *vy, *const *vz, *const *ve;
	const char *s;

	(void)state;
	assert_non_null(vx = intern_strv(x));
	assert_non_null(vy = intern_strv(y));
	assert_non_null(vz = intern_strv(z));
	assert_non_null(ve = intern_strv(e));
	assert_ptr_equal(vx, vy);
	assert_ptr_equal(intern_strv_hold(vx), vx);
	intern_strv_drop(vx);
	assert_ptr_not_equal(vx, vz);	/* a prefix is not the same */
	assert_string_equal(vx[1], "B=2");
	assert_null(vx[2]);
	assert_null(ve[0]);
	/* A string and a one-string vector are apart. */
	assert_non_null(s = intern_str("A=1"));
	assert_int_equal(intern_count(), 4);
	intern_strv_drop(vx);
	intern_strv_drop(vy);
	intern_strv_drop(vz);
	intern_strv_drop(ve);
	intern_str_drop(s);
	assert_int_equal(intern_count(), 0);
	job_free_strv(x);
	job_free_strv(y);
	job_free_strv(z);
	job_free_strv(e);
}

/* Enough entries to grow the table several times, then gone again. */
static void
test_many(void **state)
{
	static const char *held[5000];
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < 5000; i++) {
		snprintf(buf, sizeof buf, "/dir/%zu", i);
		assert_non_null(held[i] = intern_str(buf));
	}
	assert_int_equal(intern_count(), 5000);
	for (i = 0; i < 5000; i++) {
		snprintf(buf, sizeof buf, "/dir/%zu", i);
		assert_ptr_equal(intern_str(buf), held[i]);
		intern_str_drop(held[i]);
		assert_string_equal(held[i], buf);
		intern_str_drop(held[i]);
	}
	assert_int_equal(intern_count(), 0);
}

static void
test_job_fields(void **state)
{
	struct job *a = job_new(), *b = job_new();

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(job_set_cwd(a, "/tmp"), 0);
	assert_int_equal(job_set_cwd(b, "/tmp"), 0);
	assert_ptr_equal(a->cwd, b->cwd);
	assert_int_equal(job_set_priority(a, "high"), 0);
	assert_int_equal(job_set_priority(a, "low"), 0);
	assert_string_equal(a->priority, "low");
	assert_int_equal(job_set_env(a, strv("PATH=/bin", NULL)), 0);
	assert_int_equal(job_set_env(b, strv("PATH=/bin", NULL)), 0);
	assert_ptr_equal(a->env, b->env);
	job_drop_env(a);
	assert_null(a->env);
	assert_string_equal(b->env[0], "PATH=/bin");

	/* The default name is not stored. */
	assert_int_equal(job_set_argv(a, strv("/usr/bin/make", "-j2", NULL)),
	    0);
	job_set_name(a, strdup("make"));
	assert_null(a->extra->name);
	assert_string_equal(job_name(a), "make");
	job_set_name(a, strdup("build"));
	assert_string_equal(job_name(a), "build");
	job_free(a);
	job_free(b);
	assert_int_equal(intern_count(), 0);
}

static void
test_job_run(void **state)
{
	struct job *job = job_new();
	struct job_status st;
	struct job_run *run;

	(void)state;
	assert_non_null(job);
	/* Never ran: the shared record, nothing allocated. */
	assert_ptr_equal(job->run, &job_run_none);
	assert_int_equal(job->run->exit_code, -1);
	job_new_attempt(job);
	assert_ptr_equal(job->run, &job_run_none);
	assert_int_equal(job_set_reason(job, NULL), 0);
	assert_ptr_equal(job->run, &job_run_none);

	job_status_get(job, &st);
	assert_non_null(run = job_run_edit(job));
	assert_ptr_equal(job->run, run);
	assert_ptr_equal(job_run_edit(job), run);	/* made once */
	run->pid = 42;
	run->exit_code = 1;
	assert_int_equal(job_set_reason(job, "exited with %d", 1), 0);
	assert_false(job_run_is_none(job->run));

	/* A new attempt clears the run, not why the last one ended. */
	job_new_attempt(job);
	assert_int_equal(job->run->pid, 0);
	assert_int_equal(job->run->exit_code, -1);
	assert_string_equal(job->run->reason, "exited with 1");
	assert_true(job_run_is_none(job->run));

	/* The status taken before comes back whole, the reason apart. */
	run->pid = 7;
	assert_int_equal(job_status_set(job, &st), 0);
	assert_int_equal(job->run->pid, 0);
	assert_string_equal(job->run->reason, "exited with 1");
	job_free(job);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings_shared_and_counted),
		cmocka_unit_test(test_vectors_whole),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_job_fields),
		cmocka_unit_test(test_job_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
