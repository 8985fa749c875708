/* test-resources.c - admission by memory and named resources over the wire
 * (protocol v1.2): distinct units and their variables, share, counts, the
 * memory budget, reserved, backfill, stats, reload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define MIB (INT64_C(1) << 20)

/* Two GPUs, told to the job in CUDA_VISIBLE_DEVICES too. */
#define TWO_GPUS "slots = 4\n[resource.gpu]\nunits = 0,1\n" \
	"env = CUDA_VISIBLE_DEVICES\n"

/* A job that runs until gate opens, with more submit params. */
static int64_t
gated(struct triage_client *c, const struct tdaemon *d, const char *gate,
    const char *fmt, ...)
{
	json_t *more;
	va_list ap;
	int64_t id;

	va_start(ap, fmt);
	more = json_vpack_ex(NULL, 0, fmt, ap);
	va_end(ap);
	assert_non_null(more);
	id = tsubmit_gated_with(c, d, gate, "O", more);
	json_decref(more);
	return id;
}

static void
assert_pending(struct triage_client *c, int64_t id, const char *reason)
{
	json_t *job = tget(c, id);

	assert_string_equal(tstate(job), "queued");
	if (strcmp(tjstr(job, "pending_reason"), reason) != 0)
		fail_msg("job %lld waits for %s, not %s", (long long)id,
		    tjstr(job, "pending_reason"), reason);
	json_decref(job);
}

/* The units of name the job holds, joined by commas, into buf. */
static const char *
devices(struct triage_client *c, int64_t id, const char *name, char *buf,
    size_t size)
{
	json_t *job = tget(c, id), *units, *u;
	size_t i, len = 0;

	buf[0] = '\0';
	units = json_object_get(json_object_get(job, "devices"), name);
	json_array_foreach(units, i, u)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
		    i ? "," : "", json_string_value(u));
	json_decref(job);
	return buf;
}

static void
units_are_distinct_and_told_to_the_job(void **state)
{
	struct tdaemon *d = tdaemon_start(TWO_GPUS);
	struct triage_client *c = tconnect(d);
	int64_t a, b, told, cpu;
	char buf[64];
	json_t *job, *out;

	(void)state;
	a = gated(c, d, "a", "{s{si}}", "resources", "gpu", 1);
	trunning_pid(c, a);
	b = gated(c, d, "b", "{s{si}}", "resources", "gpu", 1);
	trunning_pid(c, b);
	assert_string_equal(devices(c, a, "gpu", buf, sizeof buf), "0");
	assert_string_equal(devices(c, b, "gpu", buf, sizeof buf), "1");
	told = tsubmit(c, "{s[sss] s{si}}", "argv", "sh", "-c",
	    "echo \"$TRIAGE_GPU $CUDA_VISIBLE_DEVICES\"", "resources", "gpu",
	    1);
	assert_pending(c, told, "resource:gpu");
	/* A job wanting no GPU is not held up by one that waits for it. */
	cpu = gated(c, d, "cpu", "{}");
	trunning_pid(c, cpu);
	topen_gate(d, "b");
	job = twait(c, told);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	assert_string_equal(devices(c, told, "gpu", buf, sizeof buf), "1");
	out = tcall(c, "output", "{sIss}", "id", (json_int_t)told, "stream",
	    "stdout");
	assert_string_equal(tjstr(out, "data"), "1 1\n");
	json_decref(out);
	topen_gate(d, "a");
	topen_gate(d, "cpu");
	tassert_ends(c, a, "succeeded");
	tassert_ends(c, cpu, "succeeded");
	tdaemon_end(d, c);
}

static void
a_shared_unit_is_held_by_share_jobs_at_most(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 4\n[resource.gpu]\n"
	    "units = 7\nshare = 2\n");
	struct triage_client *c = tconnect(d);
	int64_t id[3];
	char buf[64];
	json_t *st, *gpu;
	int i;

	(void)state;
	for (i = 0; i < 3; i++)
		id[i] = gated(c, d, "g", "{s{si}}", "resources", "gpu", 1);
	trunning_pid(c, id[0]);
	trunning_pid(c, id[1]);
	assert_string_equal(devices(c, id[0], "gpu", buf, sizeof buf), "7");
	assert_string_equal(devices(c, id[1], "gpu", buf, sizeof buf), "7");
	assert_pending(c, id[2], "resource:gpu");
	st = tcall(c, "stats", "{}");
	gpu = json_object_get(json_object_get(st, "resources"), "gpu");
	assert_int_equal(tjint(gpu, "units"), 2);
	assert_int_equal(tjint(gpu, "used"), 2);
	assert_int_equal(tjint(gpu, "waiting"), 1);
	assert_int_equal(tjint(gpu, "share"), 2);
	assert_int_equal(tjint(json_object_get(gpu, "holders"), "7"), 2);
	json_decref(st);
	topen_gate(d, "g");
	for (i = 0; i < 3; i++)
		tassert_ends(c, id[i], "succeeded");
	tdaemon_end(d, c);
}

/*
 * A budget of 1 GiB: 700 MiB run; 600 MiB wait for memory and keep what
 * frees; 100 MiB, which would fit, wait behind them (reserved); a job of
 * no memory and a counted licence go their own ways.
 */
static void
memory_and_counts_are_admitted_without_barging(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 8\nmemory = 1GiB\n"
	    "[resource.lic]\ncount = 2\n");
	struct triage_client *c = tconnect(d);
	int64_t big, next, small, plain, l2, l1;
	json_t *st, *mem, *lic;

	(void)state;
	big = gated(c, d, "big", "{sI}", "memory", (json_int_t)(700 * MIB));
	trunning_pid(c, big);
	next = gated(c, d, "m", "{sI}", "memory", (json_int_t)(600 * MIB));
	assert_pending(c, next, "memory");
	small = gated(c, d, "m", "{sI}", "memory", (json_int_t)(100 * MIB));
	assert_pending(c, small, "reserved");
	plain = gated(c, d, "m", "{}");
	trunning_pid(c, plain);
	l2 = gated(c, d, "l", "{s{si}}", "resources", "lic", 2);
	trunning_pid(c, l2);
	l1 = gated(c, d, "l", "{s{si}}", "resources", "lic", 1);
	assert_pending(c, l1, "resource:lic");

	st = tcall(c, "stats", "{}");
	mem = json_object_get(st, "memory");
	assert_int_equal(tjint(mem, "budget"), 1024 * MIB);
	assert_int_equal(tjint(mem, "used"), 700 * MIB);
	assert_int_equal(tjint(mem, "available") > 0, 1);
	lic = json_object_get(json_object_get(st, "resources"), "lic");
	assert_int_equal(tjint(lic, "units"), 2);
	assert_int_equal(tjint(lic, "used"), 2);
	assert_int_equal(tjint(lic, "waiting"), 1);
	json_decref(st);

	topen_gate(d, "big");
	trunning_pid(c, next);
	trunning_pid(c, small);
	topen_gate(d, "m");
	topen_gate(d, "l");
	tassert_ends(c, l1, "succeeded");
	tassert_ends(c, small, "succeeded");
	tdaemon_end(d, c);
}

/*
 * Two slots: one runs for 100 s at most; a job of both slots waits and
 * keeps the free one. With backfill a job bound to end within 10 s takes
 * it, one without a timeout does not; without backfill neither does.
 */
static void
backfill_takes_kept_slots_only_with_timeouts(void **state)
{
	static const char *const conf[] = { "slots = 2\n",
	    "slots = 2\nbackfill = no\n" };
	struct tdaemon *d;
	struct triage_client *c;
	int64_t run, wide, quick, endless;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		d = tdaemon_start(conf[i]);
		c = tconnect(d);
		run = gated(c, d, "g", "{sf}", "timeout", 100.0);
		trunning_pid(c, run);
		wide = gated(c, d, "g", "{si}", "slots", 2);
		assert_pending(c, wide, "slots");
		endless = gated(c, d, "g", "{}");
		assert_pending(c, endless, "reserved");
		quick = gated(c, d, "g", "{sf}", "timeout", 10.0);
		if (i == 0) {
			trunning_pid(c, quick);
			/* Nothing free now, kept or not. */
			assert_pending(c, endless, "queue");
		} else {
			assert_pending(c, quick, "reserved");
		}
		topen_gate(d, "g");
		tassert_ends(c, wide, "succeeded");
		tassert_ends(c, endless, "succeeded");
		tassert_ends(c, quick, "succeeded");
		tdaemon_end(d, c);
	}
}

/* A resource a running job names cannot go; others can come. */
static void
reload_keeps_what_jobs_hold(void **state)
{
	struct tdaemon *d = tdaemon_start(TWO_GPUS);
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t id, lic;
	json_t *st;

	(void)state;
	id = gated(c, d, "g", "{s{si}}", "resources", "gpu", 1);
	trunning_pid(c, id);
	tdaemon_rewrite(d, "slots = 4\n");
	assert_int_equal(tcall_error(c, "reload", &e, "{}"), -32006);
	if (strstr(e.errors, "[resource.gpu] cannot go") == NULL)
		fail_msg("rejected for: %s", e.errors);
	/* Unit 0 is held: it keeps its place. */
	tdaemon_rewrite(d, "slots = 4\n[resource.gpu]\nunits = 1,0\n");
	assert_int_equal(tcall_error(c, "reload", &e, "{}"), -32006);
	if (strstr(e.errors, "unit 0 is held by a running job") == NULL)
		fail_msg("rejected for: %s", e.errors);
	tdaemon_rewrite(d, "slots = 4\n[resource.gpu]\nunits = 0,1,2\n"
	    "[resource.lic]\ncount = 3\n");
	json_decref(tcall(c, "reload", "{}"));
	st = tcall(c, "stats", "{}");
	assert_int_equal(tjint(json_object_get(json_object_get(st,
	    "resources"), "gpu"), "units"), 3);
	assert_int_equal(tjint(json_object_get(json_object_get(st,
	    "resources"), "lic"), "units"), 3);
	json_decref(st);
	/* A count never below what runs. */
	lic = gated(c, d, "g", "{s{si}}", "resources", "lic", 2);
	trunning_pid(c, lic);
	tdaemon_rewrite(d, "slots = 4\n[resource.gpu]\nunits = 0,1,2\n"
	    "[resource.lic]\ncount = 1\n");
	assert_int_equal(tcall_error(c, "reload", &e, "{}"), -32006);
	if (strstr(e.errors, "[resource.lic] count 1 is less than running "
	    "jobs hold (2)") == NULL)
		fail_msg("rejected for: %s", e.errors);
	topen_gate(d, "g");
	tassert_ends(c, id, "succeeded");
	tassert_ends(c, lic, "succeeded");
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(units_are_distinct_and_told_to_the_job),
		cmocka_unit_test(a_shared_unit_is_held_by_share_jobs_at_most),
		cmocka_unit_test(memory_and_counts_are_admitted_without_barging),
		cmocka_unit_test(backfill_takes_kept_slots_only_with_timeouts),
		cmocka_unit_test(reload_keeps_what_jobs_hold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
