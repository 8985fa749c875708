/* test-bounds.c - a submission's bounds against a real triaged: argv and env
 * counts and bytes, name length; each refused clearly, at the limit taken. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

static struct tdaemon *d;

static int
setup(void **state)
{
	d = tdaemon_start("max_argv = 4\nmax_argv_bytes = 1KiB\n"
	    "max_env = 3\nmax_env_bytes = 1KiB\nmax_name = 8\n");
	*state = d;
	return 0;
}

/* A string of n 'x'. */
static json_t *
xs(size_t n)
{
	char *s = malloc(n + 1);
	json_t *j;

	assert_non_null(s);
	memset(s, 'x', n);
	s[n] = '\0';
	j = json_string(s);
	free(s);
	return j;
}

/* ["/bin/true", "a", ...]: n elements. */
static json_t *
argv_of(size_t n)
{
	json_t *a = json_pack("[s]", "/bin/true");
	size_t i;

	for (i = 1; i < n; i++)
		json_array_append_new(a, json_string("a"));
	return a;
}

/* {"V0": "v", ...}: n variables. */
static json_t *
env_of(size_t n)
{
	json_t *o = json_object();
	char key[32];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof key, "V%zu", i);
		json_object_set_new(o, key, json_string("v"));
	}
	return o;
}

/*
 * params (stolen) are refused with -32602, field and message as given; the
 * same client, and another one, still submit. A submission that fails must
 * leave nothing behind, and the daemon must go on serving everyone.
 */
static void
refused(json_t *params, const char *field, const char *message)
{
	struct triage_client *c = tconnect(d), *other = tconnect(d);
	struct triage_error e;

	assert_null(triage_client_call(c, "submit", params, HARNESS_TIMEOUT_MS,
	    &e));
	assert_int_equal(e.code, -32602);
	assert_string_equal(e.field, field);
	assert_string_equal(e.message, message);
	assert_true(tsubmit(other, "{s:[s]}", "argv", "/bin/true") > 0);
	assert_true(tsubmit(c, "{s:[s]}", "argv", "/bin/true") > 0);
	triage_client_free(c);
	triage_client_free(other);
}

/* params (stolen) are taken. */
static void
accepted(json_t *params)
{
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	json_t *job;

	if ((job = triage_client_call(c, "submit", params, HARNESS_TIMEOUT_MS,
	    &e)) == NULL)
		fail_msg("refused at the limit: %s", e.message);
	json_decref(job);
	triage_client_free(c);
}

static void
test_max_argv(void **state)
{
	(void)state;
	accepted(json_pack("{so}", "argv", argv_of(4)));
	refused(json_pack("{so}", "argv", argv_of(5)), "argv",
	    "\"argv\" has 5 elements; the limit is 4 (max_argv)");
}

static void
test_max_argv_bytes(void **state)
{
	(void)state;
	/* "/bin/true" and its NUL are 10 bytes, the rest one string. */
	accepted(json_pack("{s[so]}", "argv", "/bin/true", xs(1024 - 10 - 1)));
	refused(json_pack("{s[so]}", "argv", "/bin/true", xs(1024 - 10)),
	    "argv", "\"argv\" has 1025 bytes; the limit is 1024 "
	    "(max_argv_bytes)");
}

static void
test_max_env(void **state)
{
	(void)state;
	accepted(json_pack("{s[s]so}", "argv", "/bin/true", "env", env_of(3)));
	refused(json_pack("{s[s]so}", "argv", "/bin/true", "env", env_of(4)),
	    "env", "\"env\" has 4 variables; the limit is 3 (max_env)");
}

static void
test_max_env_bytes(void **state)
{
	(void)state;
	/* "A=" and the NUL are 3 bytes. */
	accepted(json_pack("{s[s]s{so}}", "argv", "/bin/true", "env", "A",
	    xs(1024 - 3)));
	refused(json_pack("{s[s]s{so}}", "argv", "/bin/true", "env", "A",
	    xs(1024 - 2)), "env",
	    "\"env\" has 1025 bytes; the limit is 1024 (max_env_bytes)");
}

static void
test_max_name(void **state)
{
	(void)state;
	accepted(json_pack("{s[s]so}", "argv", "/bin/true", "name", xs(8)));
	refused(json_pack("{s[s]so}", "argv", "/bin/true", "name", xs(9)),
	    "name", "\"name\" has 9 bytes; the limit is 8 (max_name)");
	refused(json_pack("{s[s]ss}", "argv", "/bin/true", "name", ""),
	    "name", "\"name\" must be 1 to 8 bytes");
}

/* The defaults: 4096 elements of argv, a name of 256 bytes. */
static void
test_defaults(void **state)
{
	struct tdaemon *dd = tdaemon_start("");
	struct triage_client *c = tconnect(dd);
	struct triage_error e;
	json_t *job;

	(void)state;
	job = triage_client_call(c, "submit", json_pack("{so}", "argv",
	    argv_of(4096)), HARNESS_TIMEOUT_MS, &e);
	if (job == NULL)
		fail_msg("4096 elements refused: %s", e.message);
	json_decref(job);
	assert_null(triage_client_call(c, "submit", json_pack("{so}", "argv",
	    argv_of(4097)), HARNESS_TIMEOUT_MS, &e));
	assert_string_equal(e.message,
	    "\"argv\" has 4097 elements; the limit is 4096 (max_argv)");
	assert_true(tsubmit(c, "{s[s]so}", "argv", "/bin/true", "name",
	    xs(256)) > 0);
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]so}", "argv",
	    "/bin/true", "name", xs(257)), -32602);
	assert_string_equal(e.field, "name");
	tdaemon_end(dd, c);
}

/*
 * One string over the kernel's MAX_ARG_STRLEN (128 KiB, its NUL included)
 * is refused at submit, under max_argv_bytes and max_env_bytes as it is:
 * exec would fail on it. One at the bound runs.
 */
static void
test_kernel_bound_on_one_string(void **state)
{
	struct tdaemon *dd = tdaemon_start("");
	struct triage_client *c = tconnect(dd);
	struct triage_error e;
	json_t *job;
	int64_t id;

	(void)state;
	id = tsubmit(c, "{s[sso]s{so}}", "argv", "sh", "-c", xs(131071),
	    "env", "A", xs(131072 - 3));
	job = twait(c, id);
	/* sh ran the string of x's: a command it did not find. */
	assert_int_equal(tjint(job, "exit_code"), 127);
	json_decref(job);
	assert_int_equal(tcall_error(c, "submit", &e, "{s[sso]}", "argv",
	    "sh", "-c", xs(131072)), -32602);
	assert_string_equal(e.field, "argv");
	assert_string_equal(e.message, "element 2 of \"argv\" has 131073 "
	    "bytes; the kernel runs no command with a string over 131072 "
	    "bytes (MAX_ARG_STRLEN)");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]s{so}}", "argv",
	    "/bin/true", "env", "LONG", xs(131072 - 5)), -32602);
	assert_string_equal(e.field, "env");
	assert_string_equal(e.message, "variable LONG of \"env\" has 131073 "
	    "bytes; the kernel runs no command with a string over 131072 "
	    "bytes (MAX_ARG_STRLEN)");
	tdaemon_end(dd, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_argv),
		cmocka_unit_test(test_max_argv_bytes),
		cmocka_unit_test(test_max_env),
		cmocka_unit_test(test_max_env_bytes),
		cmocka_unit_test(test_max_name),
		cmocka_unit_test(test_kernel_bound_on_one_string),
		cmocka_unit_test(test_defaults),
	};

	return cmocka_run_group_tests(tests, setup,
	    tdaemon_group_teardown);
}
