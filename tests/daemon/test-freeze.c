/* test-freeze.c - freeze and thaw over the wire (protocol v1.2): a running
 * job's processes stopped where they are, its slots kept, its timeout clock
 * stopped; what is not running left as it is; the change watched; a stop of
 * a frozen job still ending it. */
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup.h"
#include "harness.h"
#include "proc.h"
#include "timefmt.h"

/* One slot: a frozen job keeps it, and what comes after waits. */
#define ONE_SLOT "slots = 1\nkill_grace = 30s\n"

/* The [daemon] line every daemon of the run gets first: the tests run
 * twice, with the daemon's cgroups (the freezer, where this machine gives
 * it one) and without (SIGSTOP and SIGCONT). */
static const char *mode = "";

/* A daemon of this run's mode, with more [daemon] keys. */
static struct tdaemon *
start(const char *extra)
{
	char conf[256];

	snprintf(conf, sizeof conf, "%s%s", mode, extra);
	return tdaemon_start(conf);
}

static int
without_cgroups(void **state)
{
	(void)state;
	mode = "cgroups = off\n";
	return 0;
}

static bool
jfrozen(const json_t *job)
{
	return json_is_true(json_object_get(job, "frozen"));
}

/* The cgroup.events of pid's cgroup when that is a job's (the daemon
 * has cgroups, and freezes through them), into path; false without. */
static bool
job_cgroup_events(pid_t pid, char *path, size_t size)
{
	char mount[PATH_MAX], proc[64], cg[PATH_MAX];

	snprintf(proc, sizeof proc, "/proc/%ld/cgroup", (long)pid);
	if (cgroup_path_of(proc, cg, sizeof cg) == -1 ||
	    strstr(cg, "/jobs/") == NULL ||
	    cgroup_mount_find("/proc/self/mountinfo", mount,
	    sizeof mount) == -1)
		return false;
	return (size_t)snprintf(path, size, "%s%s/cgroup.events", mount, cg) <
	    size;
}

/* Whether pid is frozen: its job's cgroup says so ("frozen 1"), or,
 * without one, it is stopped (SIGSTOP: 'T'); *how says which it was. */
static bool
is_frozen(pid_t pid, char *how)
{
	char path[2 * PATH_MAX], text[256];

	if (job_cgroup_events(pid, path, sizeof path)) {
		tread_text(path, text, sizeof text);
		*how = strstr(text, "frozen 1") != NULL ? 'F' : 'f';
		return *how == 'F';
	}
	if (proc_stat(pid, how, NULL, NULL, NULL) != 0)
		*how = '?';
	return *how == 'T';
}

/* Waits (polling, with the harness's deadline) until pid is frozen
 * (stopped true) or no longer. */
static void
wait_stopped(pid_t pid, bool stopped)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	char how = '?';

	while (is_frozen(pid, &how) != stopped) {
		tcheck_deadline(deadline, "pid %ld to be %s (it is %c: F/f "
		    "its cgroup frozen or not, else its /proc state)",
		    (long)pid, stopped ? "frozen" : "running", how);
		usleep(1000);
	}
}

/* A running sleep 600 (one process, so that it is stopped whole), with
 * more submit params from a json_pack format ("{}" for none); its pid. */
static int64_t
submit_sleep(struct triage_client *c, pid_t *pid, const char *fmt, ...)
{
	json_t *params;
	va_list ap;
	int64_t id;

	va_start(ap, fmt);
	params = json_vpack_ex(NULL, 0, fmt, ap);
	va_end(ap);
	assert_non_null(params);
	json_object_set_new(params, "argv", json_pack("[ss]", "sleep", "600"));
	id = tsubmit(c, "O", params);
	json_decref(params);
	*pid = trunning_pid(c, id);
	return id;
}

/*
 * A running job frozen: its process stopped, the job still running with
 * its slot (the next job waits), frozen true in the reply, in get and in a
 * watcher's notification; thawed, the opposite. Freezing what is frozen,
 * queued or ended, and thawing what is not frozen, returns it unchanged.
 */
static void
test_freeze_and_thaw(void **state)
{
	struct tdaemon *d = start(ONE_SLOT);
	struct triage_client *c = tconnect(d), *w = tconnect(d);
	struct triage_error e;
	json_t *job;
	int64_t id, next, done;
	pid_t pid;

	(void)state;
	done = tsubmit(c, "{s[s]}", "argv", "true");
	json_decref(twait(c, done));
	id = submit_sleep(c, &pid, "{}");
	next = tsubmit(c, "{s[s]}", "argv", "true");
	json_decref(tcall(w, "watch", "{s[I]}", "ids", (json_int_t)id));

	job = tcall(c, "freeze", "{sI}", "id", (json_int_t)id);
	assert_true(jfrozen(job));
	assert_string_equal(tstate(job), "running");
	json_decref(job);
	wait_stopped(pid, true);
	job = tnotification(w);
	assert_int_equal(tjint(job, "id"), id);
	assert_true(jfrozen(job));
	assert_string_equal(tstate(job), "running");
	json_decref(job);
	/* It keeps its slot. */
	job = tget(c, next);
	assert_string_equal(tstate(job), "queued");
	assert_string_equal(tjstr(job, "pending_reason"), "slots");
	json_decref(job);

	/* Frozen, queued, ended: nothing to do, the job as it is. */
	job = tcall(c, "freeze", "{sI}", "id", (json_int_t)id);
	assert_true(jfrozen(job));
	json_decref(job);
	job = tcall(c, "freeze", "{sI}", "id", (json_int_t)next);
	assert_false(jfrozen(job));
	assert_string_equal(tstate(job), "queued");
	json_decref(job);
	job = tcall(c, "freeze", "{sI}", "id", (json_int_t)done);
	assert_false(jfrozen(job));
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	job = tcall(c, "thaw", "{sI}", "id", (json_int_t)done);
	assert_false(jfrozen(job));
	json_decref(job);

	job = tcall(c, "thaw", "{sI}", "id", (json_int_t)id);
	assert_false(jfrozen(job));
	assert_string_equal(tstate(job), "running");
	json_decref(job);
	wait_stopped(pid, false);
	job = tnotification(w);
	assert_false(jfrozen(job));
	json_decref(job);
	job = tcall(c, "thaw", "{sI}", "id", (json_int_t)id);
	assert_false(jfrozen(job));
	json_decref(job);

	/* Errors as hold's: no such job, bad params. */
	assert_int_equal(tcall_error(c, "freeze", &e, "{si}", "id", 999999),
	    -32001);
	assert_int_equal(tcall_error(c, "thaw", &e, "{}"), -32602);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	tassert_ends(c, id, "canceled");
	tassert_ends(c, next, "succeeded");
	triage_client_free(w);
	tdaemon_end(d, c);
}

/*
 * The timeout clock stops while the job is frozen: frozen past its whole
 * timeout it is not timed out; thawed, it is, the time it had left later,
 * with its usual reason.
 */
static void
test_frozen_time_does_not_count(void **state)
{
	struct tdaemon *d = start(ONE_SLOT);
	struct triage_client *c = tconnect(d);
	int64_t id, t0, frozen_at, thawed_at, ended_at;
	json_t *job;
	pid_t pid;

	(void)state;
	t0 = timefmt_mono_ms();
	id = submit_sleep(c, &pid, "{si}", "timeout", 2);
	json_decref(tcall(c, "freeze", "{sI}", "id", (json_int_t)id));
	frozen_at = timefmt_mono_ms();
	if (frozen_at - t0 > 1500)
		fail_msg("the job took %lld ms to start and freeze: too slow "
		    "to test", (long long)(frozen_at - t0));
	/* A wait that gives up after 3 s: past its timeout, frozen, it is
	 * running still. */
	job = tcall(c, "wait", "{sI sf}", "id", (json_int_t)id, "timeout",
	    3.0);
	assert_string_equal(tstate(job), "running");
	assert_true(jfrozen(job));
	json_decref(job);
	json_decref(tcall(c, "thaw", "{sI}", "id", (json_int_t)id));
	thawed_at = timefmt_mono_ms();
	job = twait(c, id);
	ended_at = timefmt_mono_ms();
	assert_string_equal(tstate(job), "timed_out");
	assert_string_equal(tjstr(job, "reason"), "timed out after 2s");
	assert_false(jfrozen(job));
	json_decref(job);
	/* What it had left when it froze, counted from the thaw. */
	if (ended_at - thawed_at < 2000 - (frozen_at - t0) - 50)
		fail_msg("timed out %lld ms after the thaw; it had %lld ms "
		    "left", (long long)(ended_at - thawed_at),
		    (long long)(2000 - (frozen_at - t0)));
	tdaemon_end(d, c);
}

/*
 * Whatever stops a frozen job ends it: a cancel with its SIGTERM at once
 * (not kill_grace's SIGKILL 30 s later), and the daemon's stop, which
 * requeues it for the next start as a new attempt, not frozen.
 */
static void
test_stopping_a_frozen_job(void **state)
{
	struct tdaemon *d = start(ONE_SLOT);
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t id;
	pid_t pid;

	(void)state;
	id = submit_sleep(c, &pid, "{}");
	json_decref(tcall(c, "freeze", "{sI}", "id", (json_int_t)id));
	wait_stopped(pid, true);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	job = twait(c, id);
	assert_string_equal(tstate(job), "canceled");
	assert_string_equal(tjstr(job, "signal"), "SIGTERM");
	assert_false(jfrozen(job));
	json_decref(job);

	id = submit_sleep(c, &pid, "{}");
	json_decref(tcall(c, "freeze", "{sI}", "id", (json_int_t)id));
	wait_stopped(pid, true);
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	twait_gone(pid);
	tdaemon_restart(d);
	c = tconnect(d);
	/* Attempt 2 runs, and nothing froze it. */
	pid = trunning_pid(c, id);
	job = tget(c, id);
	assert_int_equal(tjint(job, "attempt"), 2);
	assert_false(jfrozen(job));
	json_decref(job);
	wait_stopped(pid, false);
	tdaemon_end(d, c);
}

/*
 * Stopping with shutdown = finish waits for the running jobs: a frozen one
 * too, said in the log, until it is thawed (a stop does not undo an
 * operator's freeze); then it runs to its end and the daemon exits.
 */
static void
test_finishing_waits_for_a_frozen_job(void **state)
{
	struct tdaemon *d = start("shutdown = finish\n");
	struct triage_client *c = tconnect(d);
	char said[128];
	json_t *job;
	int64_t id;

	(void)state;
	id = tsubmit_gated(c, d, "go", false);
	(void)trunning_pid(c, id);
	json_decref(tcall(c, "freeze", "{sI}", "id", (json_int_t)id));
	assert_int_equal(kill(d->pid, SIGTERM), 0);
	snprintf(said, sizeof said, "job %lld is frozen: finishing waits until "
	    "it is thawed", (long long)id);
	twait_log(d, said);
	job = tcall(c, "thaw", "{sI}", "id", (json_int_t)id);
	assert_false(jfrozen(job));
	json_decref(job);
	topen_gate(d, "go");
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	tdaemon_end(d, c);
}

/* A filter freezes the caller's running jobs it selects, and thaws them;
 * a queued job it selects is skipped. */
static void
test_freeze_by_filter(void **state)
{
	struct tdaemon *d = start("slots = 2\n");
	struct triage_client *c = tconnect(d);
	int64_t a, b, q;
	json_t *res, *job;
	pid_t pa, pb;

	(void)state;
	a = submit_sleep(c, &pa, "{s{ss}}", "labels", "team", "red");
	b = submit_sleep(c, &pb, "{s{ss}}", "labels", "team", "red");
	q = tsubmit(c, "{s[s] sb s{ss}}", "argv", "true", "hold", 1, "labels",
	    "team", "red");
	res = tcall(c, "freeze", "{s{s{ss}}}", "filter", "labels", "team",
	    "red");
	assert_int_equal(json_array_size(json_object_get(res, "ids")), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(res,
	    "ids"), 0)), a);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(res,
	    "ids"), 1)), b);
	json_decref(res);
	wait_stopped(pa, true);
	wait_stopped(pb, true);
	job = tget(c, q);
	assert_false(jfrozen(job));
	json_decref(job);
	res = tcall(c, "thaw", "{s{s[I]}}", "filter", "ids", (json_int_t)b);
	assert_int_equal(json_array_size(json_object_get(res, "ids")), 1);
	json_decref(res);
	wait_stopped(pb, false);
	job = tget(c, a);
	assert_true(jfrozen(job));
	json_decref(job);
	json_decref(tcall(c, "cancel", "{s{s{ss}}}", "filter", "labels",
	    "team", "red"));
	tassert_ends(c, a, "canceled");
	tassert_ends(c, b, "canceled");
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freeze_and_thaw),
		cmocka_unit_test(test_frozen_time_does_not_count),
		cmocka_unit_test(test_stopping_a_frozen_job),
		cmocka_unit_test(test_finishing_waits_for_a_frozen_job),
		cmocka_unit_test(test_freeze_by_filter),
	};

	return cmocka_run_group_tests_name("freeze, cgroups = auto", tests,
	    NULL, NULL) | cmocka_run_group_tests_name("freeze, cgroups = off",
	    tests, without_cgroups, NULL);
}
