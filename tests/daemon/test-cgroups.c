/* test-cgroups.c - every job in a cgroup of its own, through a real triaged on
 * this machine's cgroup v2 (partial here): contained, killed whole, swept
 * after a crash, and the subtree gone with the daemon; cgroups = off. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <systemd/sd-daemon.h>

#include "cgroup.h"
#include "harness.h"

/* The subtree a daemon on state makes beneath the test's own cgroup
 * (cgroups.c), into path; false when this machine gives a daemon none:
 * no cgroup2, not root, or a systemd that manages cgroups and has not
 * delegated ours. */
static bool
subtree_of(const char *state, char *path, size_t size)
{
	char mount[PATH_MAX], self[PATH_MAX], name[CGROUP_DAEMON_NAME_MAX];

	if (geteuid() != 0 || sd_booted() > 0 ||
	    cgroup_mount_find("/proc/self/mountinfo", mount,
	    sizeof mount) == -1 || cgroup_path_of("/proc/self/cgroup", self,
	    sizeof self) == -1)
		return false;
	cgroup_daemon_name(state, name, sizeof name);
	return (size_t)snprintf(path, size, "%s%s/%s", mount,
	    strcmp(self, "/") == 0 ? "" : self, name) < size;
}

/* A daemon that gets cgroups here, or a skip saying why not. */
static struct tdaemon *
start(const char *extra)
{
	char base[2 * PATH_MAX];
	struct tdaemon *d = tdaemon_start(extra);

	if (!subtree_of(d->state, base, sizeof base)) {
		tdaemon_end(d, NULL);
		print_message("skipped: no cgroup v2 subtree to be had here "
		    "(not root, no cgroup2, or systemd's without Delegate=)\n");
		skip();
	}
	return d;
}

/* A process that leaves the job's session, prints its pid once it has
 * (through fd 3, which it then closes), and holds none of the job's pipes:
 * out of reach of a kill of the job's process group. */
#define ESCAPE	"{ setsid sh -c 'echo $$ >&3; exec sleep 1000 3>&- " \
	">/dev/null 2>&1' 3>&1 >/dev/null 2>&1 & } | head -n 1"

/* Submits sh -c script; its id. */
static int64_t
submit_sh(struct triage_client *c, const char *script)
{
	return tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
}

static bool
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* stats says which mode, and the controllers jobs get; the log says why. */
static void
stats_say_the_mode(void **state)
{
	struct tdaemon *d = start("");
	struct triage_client *c = tconnect(d);
	json_t *stats = tcall(c, "stats", "{}");
	const char *mode = tjstr(stats, "cgroups");

	(void)state;
	if (strcmp(mode, "v2") != 0 && strcmp(mode, "partial") != 0)
		fail_msg("cgroups %s, not v2 or partial", mode);
	assert_true(json_is_array(json_object_get(stats, "cgroup")));
	/* "v2" is cpu, memory and pids, all three. */
	if (strcmp(mode, "v2") == 0)
		assert_int_equal(json_array_size(json_object_get(stats,
		    "cgroup")), 3);
	assert_true(tlog_has(d, "cgroups: "));
	json_decref(stats);
	tdaemon_end(d, c);
}

/* The start of what the job with id printed, once it has printed a
 * line. */
static void
first_line(struct triage_client *c, int64_t id, char *buf, size_t size)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *page;

	for (buf[0] = '\0'; strchr(buf, '\n') == NULL;) {
		tcheck_deadline(deadline, "job %lld printed nothing",
		    (long long)id);
		page = tcall(c, "output", "{sIss}", "id", (json_int_t)id,
		    "stream", "stdout");
		snprintf(buf, size, "%s", tjstr(page, "data"));
		json_decref(page);
	}
}

/* Born in ID.ATTEMPT under the subtree's jobs, as the job itself sees it
 * and its `cgroup` says while it runs; removed once it has ended. */
static void
a_job_runs_in_a_cgroup_of_its_own(void **state)
{
	struct tdaemon *d = start("");
	struct triage_client *c = tconnect(d);
	char base[2 * PATH_MAX], want[2 * PATH_MAX + 64], seen[512];
	char path[3 * PATH_MAX], procs[64], *mount_end;
	int64_t id = submit_sh(c, "grep '^0::' /proc/self/cgroup; "
	    "exec sleep 1000");
	pid_t pid = trunning_pid(c, id);
	json_t *job, *r;

	(void)state;
	assert_true(subtree_of(d->state, base, sizeof base));
	first_line(c, id, seen, sizeof seen);
	/* From the mount: what follows /sys/fs/cgroup (or .../unified). */
	mount_end = strstr(base, "/triaged-");
	assert_non_null(mount_end);
	snprintf(want, sizeof want, "%s/jobs/%lld.1", mount_end,
	    (long long)id);
	if (strncmp(seen, "0::", 3) != 0 || strncmp(seen + 3, want,
	    strlen(want)) != 0)
		fail_msg("the job saw %s, not 0::%s", seen, want);
	job = tget(c, id);
	assert_string_equal(tjstr(job, "cgroup"), want);
	json_decref(job);
	snprintf(path, sizeof path, "%s/jobs/%lld.1/cgroup.procs", base,
	    (long long)id);
	tread_text(path, procs, sizeof procs);
	assert_int_equal(atoi(procs), pid);
	r = tcall(c, "cancel", "{sI}", "id", (json_int_t)id);
	json_decref(r);
	tassert_ends(c, id, "canceled");
	job = tget(c, id);
	assert_true(json_is_null(json_object_get(job, "cgroup")));
	json_decref(job);
	*strrchr(path, '/') = '\0';
	assert_false(exists(path));
	tdaemon_end(d, c);
}

/* A process that left the job's session (setsid) dies when the job's main
 * process ends, and the reason counts it. */
static void
what_a_job_leaves_is_killed(void **state)
{
	struct tdaemon *d = start("");
	struct triage_client *c = tconnect(d);
	int64_t id = submit_sh(c, ESCAPE);
	pid_t left = toutput_pid(c, id);
	json_t *job;

	(void)state;
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_string_equal(tjstr(job, "reason"),
	    "1 process it left running was killed");
	json_decref(job);
	twait_gone(left);
	/* And with an exit code of its own, after it. */
	id = submit_sh(c, "setsid sleep 1000 & setsid sleep 1000 & exit 3");
	job = twait(c, id);
	assert_string_equal(tstate(job), "failed");
	assert_string_equal(tjstr(job, "reason"), "exited with status 3; "
	    "2 processes it left running were killed");
	json_decref(job);
	tdaemon_end(d, c);
}

/* cancel ends the whole cgroup, what left the process group too. */
static void
cancel_ends_the_whole_cgroup(void **state)
{
	struct tdaemon *d = start("kill_grace = 1s\n");
	struct triage_client *c = tconnect(d);
	int64_t id = submit_sh(c, ESCAPE "; exec sleep 1000");
	pid_t left = toutput_pid(c, id);
	json_t *r;

	(void)state;
	r = tcall(c, "cancel", "{sI}", "id", (json_int_t)id);
	json_decref(r);
	tassert_ends(c, id, "canceled");
	twait_gone(left);
	tdaemon_end(d, c);
}

/*
 * A daemon and its worker killed outright leave a job's processes behind;
 * the next daemon on the same state kills them through their cgroup before
 * the job runs again, and says so. Its stop removes the whole subtree.
 */
static void
a_crash_leaves_nothing_behind_the_next_start(void **state)
{
	struct tdaemon *d = start("");
	struct triage_client *c = tconnect(d);
	char base[2 * PATH_MAX];
	int64_t id = submit_sh(c, ESCAPE "; exec sleep 1000");
	pid_t left = toutput_pid(c, id), main = trunning_pid(c, id);
	pid_t worker = tppid(main);

	(void)state;
	assert_true(worker > 0);
	triage_client_free(c);
	/* The worker first: a live one would kill the job itself. */
	assert_int_equal(kill(worker, SIGKILL), 0);
	tdaemon_crash(d);
	twait_gone(main);		/* its parent-death signal */
	assert_true(tpid_alive(left));
	tdaemon_restart(d);
	twait_gone(left);
	assert_true(tlog_has(d, "left by an earlier daemon was killed"));
	assert_true(subtree_of(d->state, base, sizeof base));
	assert_true(exists(base));
	assert_int_equal(tdaemon_stop(d), 0);
	assert_false(exists(base));
	tdaemon_free(d);
}

/* A process's oom_score_adj. */
static int
oom_score_adj(pid_t pid)
{
	char path[64], text[16];

	snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int)pid);
	tread_text(path, text, sizeof text);
	return atoi(text);
}

/* Whether this process has CAP_SYS_RESOURCE (bit 24 of CapEff), which
 * lowering an oom_score_adj takes: root has it, but not everywhere (a
 * container may keep it back). */
static bool
may_lower_oom_score(void)
{
	char text[2048], *cap;

	tread_text("/proc/self/status", text, sizeof text);
	if ((cap = strstr(text, "CapEff:\t")) == NULL)
		fail_msg("/proc/self/status has no CapEff");
	return (strtoull(cap + 8, NULL, 16) & (1ULL << 24)) != 0;
}

/* The kernel's OOM killer takes a job before the daemon or a worker: they
 * lower their oom_score_adj where they may, and a job gets back the one
 * the daemon started with (the test's own); where they may not, all keep
 * it, and the log says why. */
static void
the_daemon_is_the_oom_killers_last_choice(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	int64_t id = submit_sh(c, "exec sleep 1000");
	pid_t job = trunning_pid(c, id);
	int own = oom_score_adj(getpid());
	json_t *r;

	(void)state;
	if (own > -900 && may_lower_oom_score()) {
		assert_int_equal(oom_score_adj(d->pid), -900);
		assert_int_equal(oom_score_adj(tppid(job)), -900);
	} else {
		assert_int_equal(oom_score_adj(d->pid), own);
		if (own > -900)
			assert_true(tlog_has(d, "lowering it takes "
			    "CAP_SYS_RESOURCE"));
	}
	assert_int_equal(oom_score_adj(job), own);
	r = tcall(c, "cancel", "{sI}", "id", (json_int_t)id);
	json_decref(r);
	tassert_ends(c, id, "canceled");
	tdaemon_end(d, c);
}

/*
 * A daemon not run as root whose cgroup is not its own (here, the test's,
 * root's) gets none, and says why; with cgroups = required it refuses to
 * start, saying why.
 */
static void
not_root_without_a_cgroup_of_its_own(void **state)
{
	struct tdaemon *d;
	struct triage_client *c;
	char out[600], text[4096];
	json_t *stats;
	int status;

	(void)state;
	if (geteuid() != 0)
		skip();
	d = tdaemon_start_as(NULL, "daemon");
	c = tconnect(d);
	stats = tcall(c, "stats", "{}");
	assert_string_equal(tjstr(stats, "cgroups"), "none");
	json_decref(stats);
	triage_client_free(c);
	assert_true(tlog_has(d, "cgroups: none (") &&
	    (tlog_has(d, "is not its own") || tlog_has(d, "no cgroup2") ||
	    tlog_has(d, "did not delegate")));
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_rewrite(d, "cgroups = required\n");
	snprintf(out, sizeof out, "%s/refused.log", d->dir);
	status = tdaemon_refused(d, out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	tread_text(out, text, sizeof text);
	if (strstr(text, "cgroups = required, and there are none") == NULL)
		fail_msg("wanted the refusal in: %s", text);
	tdaemon_free(d);
}

/* cgroups = off: jobs run as process groups, and stats says none. */
static void
off_is_process_groups(void **state)
{
	struct tdaemon *d = tdaemon_start("cgroups = off\n");
	struct triage_client *c = tconnect(d);
	json_t *stats = tcall(c, "stats", "{}"), *job;
	int64_t id;

	(void)state;
	assert_string_equal(tjstr(stats, "cgroups"), "none");
	assert_int_equal(json_array_size(json_object_get(stats, "cgroup")),
	    0);
	json_decref(stats);
	id = submit_sh(c, ESCAPE);
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_true(json_is_null(json_object_get(job, "reason")));
	json_decref(job);
	/* Out of its process group: nobody's to kill without a cgroup. */
	{
		pid_t left = toutput_pid(c, id);

		assert_true(tpid_alive(left));
		kill(left, SIGKILL);
	}
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stats_say_the_mode),
		cmocka_unit_test(a_job_runs_in_a_cgroup_of_its_own),
		cmocka_unit_test(what_a_job_leaves_is_killed),
		cmocka_unit_test(cancel_ends_the_whole_cgroup),
		cmocka_unit_test(a_crash_leaves_nothing_behind_the_next_start),
		cmocka_unit_test(the_daemon_is_the_oom_killers_last_choice),
		cmocka_unit_test(not_root_without_a_cgroup_of_its_own),
		cmocka_unit_test(off_is_process_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
