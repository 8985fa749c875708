/* test-resenv.c - resenv_*: the variables a job's devices give its process,
 * their names, their order, the resource's env, and devices refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "resenv.h"

/* A config with two resources: gpu gives CUDA_VISIBLE_DEVICES too, fpga
 * nothing but its own variable. */
static char cuda[] = "CUDA_VISIBLE_DEVICES";
static struct config_resource resources[] = {
	{ .name = "gpu", .env = cuda },
	{ .name = "fpga" },
};
static const struct config cfg = {
	.resources = resources,
	.nresources = 2,
};

/* Asserts that vars is exactly the NULL-terminated want, in order. */
static void
assert_vars(char **vars, const char *const *want)
{
	size_t i;

	assert_non_null(vars);
	for (i = 0; want[i] != NULL; i++) {
		if (vars[i] == NULL)
			fail_msg("%zu variables, not more: \"%s\" missing", i,
			    want[i]);
		assert_string_equal(vars[i], want[i]);
	}
	if (vars[i] != NULL)
		fail_msg("one variable too many: \"%s\"", vars[i]);
}

/* devices as JSON text, which must parse. */
static json_t *
devices_of(const char *text)
{
	json_t *d = json_loads(text, 0, NULL);

	assert_non_null(d);
	return d;
}

static void
var_is_the_name_in_upper_case(void **state)
{
	char buf[RESENV_VAR_MAX];

	(void)state;
	resenv_var("gpu", buf);
	assert_string_equal(buf, "TRIAGE_GPU");
	resenv_var("gpu-a_1", buf);
	assert_string_equal(buf, "TRIAGE_GPU_A_1");
	resenv_var("abcdefghijklmnopqrstuvwxyz-01234", buf);
	assert_string_equal(buf, "TRIAGE_ABCDEFGHIJKLMNOPQRSTUVWXYZ_01234");
}

static void
each_resource_gives_its_units_and_its_env(void **state)
{
	json_t *d = devices_of("{\"gpu\": [\"1\", \"3\"], \"fpga\": [\"a\"],"
	    " \"gone\": [\"x:0\", \"x:1\"]}");
	char **vars;

	(void)state;
	assert_int_equal(resenv_vars(d, &cfg, &vars), 0);
	/* In the order of devices; a resource no longer configured (a
	 * reload took it away while the job ran) gives its own variable. */
	assert_vars(vars, (const char *const[]){ "TRIAGE_GPU=1,3",
	    "CUDA_VISIBLE_DEVICES=1,3", "TRIAGE_FPGA=a", "TRIAGE_GONE=x:0,x:1",
	    NULL });
	assert_true(resenv_sets(vars, "CUDA_VISIBLE_DEVICES=0,1,2"));
	assert_true(resenv_sets(vars, "TRIAGE_GPU=9"));
	assert_true(resenv_sets(vars, "TRIAGE_GPU"));
	assert_false(resenv_sets(vars, "CUDA=1"));
	assert_false(resenv_sets(vars, "TRIAGE_GPUS=1"));
	assert_false(resenv_sets(vars, "PATH=/bin"));
	resenv_free(vars);

	/* Without a config: the TRIAGE_ variables alone. */
	assert_int_equal(resenv_vars(d, NULL, &vars), 0);
	assert_vars(vars, (const char *const[]){ "TRIAGE_GPU=1,3",
	    "TRIAGE_FPGA=a", "TRIAGE_GONE=x:0,x:1", NULL });
	resenv_free(vars);
	json_decref(d);
}

static void
no_devices_no_variables(void **state)
{
	json_t *d = json_object();
	char **vars;

	(void)state;
	assert_int_equal(resenv_vars(NULL, &cfg, &vars), 0);
	assert_vars(vars, (const char *const[]){ NULL });
	assert_false(resenv_sets(vars, "CUDA_VISIBLE_DEVICES=1"));
	resenv_free(vars);
	assert_int_equal(resenv_vars(d, &cfg, &vars), 0);
	assert_vars(vars, (const char *const[]){ NULL });
	resenv_free(vars);
	json_decref(d);
	resenv_free(NULL);
}

/* What is not an object of resource names to arrays of unit names is
 * refused whole: a job must not run on units it was not given. */
static void
devices_of_another_form_are_refused(void **state)
{
	static const char *const bad[] = {
		"[\"gpu\"]",
		"{\"gpu\": \"1\"}",
		"{\"gpu\": [1]}",
		"{\"gpu\": []}",
		"{\"gpu\": [\"\"]}",
		"{\"gpu\": [\"0\"], \"GPU\": [\"1\"]}",
		"{\"\": [\"0\"]}",
		"{\"abcdefghijklmnopqrstuvwxyz0123456\": [\"0\"]}",
	};
	char **vars = (char **)(uintptr_t)1;
	json_t *d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		d = devices_of(bad[i]);
		errno = 0;
		if (resenv_vars(d, &cfg, &vars) != -1)
			fail_msg("devices %s accepted", bad[i]);
		assert_int_equal(errno, EINVAL);
		assert_null(vars);
		json_decref(d);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(var_is_the_name_in_upper_case),
		cmocka_unit_test(each_resource_gives_its_units_and_its_env),
		cmocka_unit_test(no_devices_no_variables),
		cmocka_unit_test(devices_of_another_form_are_refused),
	};

	return cmocka_run_group_tests_name("resenv", tests, NULL, NULL);
}
