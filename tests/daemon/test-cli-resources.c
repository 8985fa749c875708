/* test-cli-resources.c - triage resources against a real triaged (protocol
 * v1.2): the memory budget, each resource, who holds each unit, who waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"

#define MIB ((json_int_t)1 << 20)

/* Two GPUs, a licence of three, a budget of 1 GiB. */
#define RESOURCES "slots = 4\nmemory = 1GiB\n[resource.gpu]\nunits = 0,1\n" \
	"env = CUDA_VISIBLE_DEVICES\n[resource.licence]\ncount = 3\n"

/* How many licence=2 jobs wait behind the one that holds two. */
#define LICENCE_WAITERS 7

/* Asserts that s starts with prefix and ends with suffix. */
static void
assert_framed(const char *s, const char *prefix, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	if (strncmp(s, prefix, strlen(prefix)) != 0 || n < k ||
	    strcmp(s + n - k, suffix) != 0)
		fail_msg("\"%s\" is not \"%s...%s\"", s, prefix, suffix);
}

/* The array of ids at key of obj as "3 4" (for a message and a compare),
 * into buf. */
static const char *
ids_of(const json_t *obj, const char *key, char *buf, size_t size)
{
	const json_t *v;
	size_t i, len = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(obj, key), i, v)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld",
		    i ? " " : "", (long long)json_integer_value(v));
	return buf;
}

/*
 * Job a takes GPU 0 and ends; b, of 256 MiB, holds GPU 1. A job asking
 * for both GPUs waits for units (keeping GPU 0), one asking for one is
 * held up behind it (reserved): WAITING counts both, JOBS names the
 * first. A job holds two licences, seven wait for two more each (five
 * named, then "and 2 more"), and a job of 900 MiB waits for memory.
 */
static void
test_resources_shows_holders_and_waiters(void **state)
{
	struct tdaemon *d = tdaemon_start(RESOURCES);
	struct triage_client *c = tconnect(d);
	int64_t a, b, both, one, lic, wait[LICENCE_WAITERS], mem;
	char *out, *err, *nl, want[1024], suffix[64], buf[64];
	json_t *res, *gpu;
	int i, rc;

	(void)state;
	a = tsubmit_gated_with(c, d, "a", "{s{si}}", "resources", "gpu", 1);
	(void)trunning_pid(c, a);
	b = tsubmit_gated_with(c, d, "b", "{s{si} sI}", "resources", "gpu", 1,
	    "memory", 256 * MIB);
	(void)trunning_pid(c, b);
	topen_gate(d, "a");
	tassert_ends(c, a, "succeeded");
	both = tsubmit(c, "{s[s] s{si}}", "argv", "true", "resources", "gpu",
	    2);
	one = tsubmit(c, "{s[s] s{si}}", "argv", "true", "resources", "gpu",
	    1);
	lic = tsubmit_gated_with(c, d, "lic", "{s{si}}", "resources",
	    "licence", 2);
	(void)trunning_pid(c, lic);
	for (i = 0; i < LICENCE_WAITERS; i++)
		wait[i] = tsubmit(c, "{s[s] s{si}}", "argv", "true",
		    "resources", "licence", 2);
	mem = tsubmit(c, "{s[s] sI}", "argv", "true", "memory", 900 * MIB);
	twait_resource(c, "gpu", "kept", 1);
	twait_resource(c, "licence", "kept", 1);

	rc = tcli(d, &out, &err, "resources", NULL);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");
	assert_non_null(nl = strchr(out, '\n'));
	*nl = '\0';
	/* MemAvailable is the machine's: the rest of the line is known. */
	snprintf(suffix, sizeof suffix, " available; waiting for memory: "
	    "%lld", (long long)mem);
	assert_framed(out, "memory:  256MiB used of 1GiB, ", suffix);
	snprintf(want, sizeof want,
	    "\n"
	    "NAME     SCOPE  UNITS  USED  KEPT  WAITING  JOBS\n"
	    "gpu      node       2     1     1        2  waiting for units: "
	    "%lld\n"
	    "  0                       0                 free\n"
	    "  1                       1                 held by %lld\n"
	    "licence  node       3     2     1        %d  waiting for units: "
	    "%lld, %lld, %lld, %lld, %lld and 2 more\n",
	    (long long)both, (long long)b, LICENCE_WAITERS, (long long)wait[0],
	    (long long)wait[1], (long long)wait[2], (long long)wait[3],
	    (long long)wait[4]);
	assert_string_equal(nl + 1, want);
	free(out);
	free(err);
	/* Job one waits too, but for the units kept for the job ahead. */
	tassert_state(c, one, "queued");

	/* --json: stats' objects with every id, none cut short. */
	rc = tcli(d, &out, &err, "--json", "resources", NULL);
	assert_int_equal(rc, 0);
	assert_non_null(res = json_loads(out, 0, NULL));
	free(out);
	free(err);
	gpu = json_object_get(json_object_get(res, "resources"), "gpu");
	assert_int_equal(tjint(gpu, "waiting"), 2);
	snprintf(want, sizeof want, "%lld", (long long)both);
	assert_string_equal(ids_of(gpu, "jobs_waiting", buf, sizeof buf),
	    want);
	snprintf(want, sizeof want, "%lld", (long long)b);
	assert_string_equal(ids_of(json_object_get(gpu, "jobs_holding"), "1",
	    buf, sizeof buf), want);
	assert_string_equal(ids_of(json_object_get(gpu, "jobs_holding"), "0",
	    buf, sizeof buf), "");
	assert_int_equal(json_array_size(json_object_get(json_object_get(
	    json_object_get(res, "resources"), "licence"), "jobs_waiting")),
	    LICENCE_WAITERS);
	/* A counted resource has no units to name. */
	assert_null(json_object_get(json_object_get(json_object_get(res,
	    "resources"), "licence"), "jobs_holding"));
	snprintf(want, sizeof want, "%lld", (long long)mem);
	assert_string_equal(ids_of(json_object_get(res, "memory"),
	    "jobs_waiting", buf, sizeof buf), want);
	assert_int_equal(tjint(json_object_get(res, "memory"), "used"),
	    256 * MIB);
	json_decref(res);

	/* All ended: nothing held, kept or waited for. */
	topen_gate(d, "b");
	topen_gate(d, "lic");
	tassert_ends(c, both, "succeeded");
	tassert_ends(c, one, "succeeded");
	tassert_ends(c, mem, "succeeded");
	for (i = 0; i < LICENCE_WAITERS; i++)
		tassert_ends(c, wait[i], "succeeded");
	rc = tcli(d, &out, &err, "resources", NULL);
	assert_int_equal(rc, 0);
	assert_framed(out, "memory:  0 used of 1GiB, ", " available\n" "\n"
	    "NAME     SCOPE  UNITS  USED  KEPT  WAITING  JOBS\n"
	    "gpu      node       2     0     0        0\n"
	    "  0                       0                 free\n"
	    "  1                       0                 free\n"
	    "licence  node       3     0     0        0\n");
	free(out);
	free(err);

	/* It takes no arguments. */
	rc = tcli(d, &out, &err, "resources", "gpu", NULL);
	tcli_assert_said(rc, out, err, 2, "", "triage: resources: unexpected "
	    "argument 'gpu' (see 'triage resources --help')\n");
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resources_shows_holders_and_waiters),
	};

	return cmocka_run_group_tests_name("cli-resources", tests, NULL,
	    NULL);
}
