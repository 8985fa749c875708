/* test-jobs.c - running jobs through a real triaged: how they end, what they
 * see, their output, timeouts, cancel and wait. */
#include <errno.h>
#include <pwd.h>
#include <resolv.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

static struct tdaemon *d;

/* The open files limit the daemon starts with, below its hard limit so
 * that the daemon raises its own: its jobs must still get this one. */
#define JOBS_NOFILE 900

static int
setup(void **state)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max > JOBS_NOFILE) {
		rl.rlim_cur = JOBS_NOFILE;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	d = tdaemon_start("slots = 2\nkill_grace = 1s\nmax_output = 64KiB\n");
	*state = d;
	return 0;
}

/* Submits sh -c script and waits for it to end. */
static json_t *
run_sh(struct triage_client *c, const char *script)
{
	return twait(c, tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script));
}

/* The whole of a stream, paged by limit; *encoding of the last page.
 * Each page but the last must move on, and all must fit in 1 MiB (the
 * daemon keeps max_output): so the paging ends. */
static char *
read_output(struct triage_client *c, int64_t id, const char *stream, int limit,
    size_t *len, bool *truncated)
{
	size_t cap = 1 << 20, n = 0;
	char *all = malloc(cap);
	unsigned char dec[1 << 17];
	json_int_t offset = 0;
	json_t *page;
	const char *data;
	int got;

	for (;;) {
		page = tcall(c, "output", "{sIsssIsi}", "id", (json_int_t)id,
		    "stream", stream, "offset", offset, "limit", limit);
		assert_int_equal(tjint(page, "offset"), offset);
		data = tjstr(page, "data");
		if (strcmp(tjstr(page, "encoding"), "base64") == 0) {
			got = b64_pton(data, dec, sizeof dec);
			assert_true(got >= 0);
			data = (const char *)dec;
		} else {
			assert_string_equal(tjstr(page, "encoding"), "utf-8");
			got = (int)json_string_length(json_object_get(page,
			    "data"));
		}
		if ((size_t)got > cap - n)
			fail_msg("job %lld's %s: more than %zu bytes",
			    (long long)id, stream, cap);
		memcpy(all + n, data, (size_t)got);
		n += (size_t)got;
		assert_int_equal(tjint(page, "next_offset"), offset + got);
		offset = tjint(page, "next_offset");
		*truncated = json_is_true(json_object_get(page, "truncated"));
		if (json_is_true(json_object_get(page, "eof"))) {
			json_decref(page);
			break;
		}
		assert_true(got > 0);
		json_decref(page);
	}
	*len = n;
	return all;
}

static void
test_exit_codes_and_signals(void **state)
{
	struct triage_client *c = tconnect(d);
	json_t *job;

	(void)state;
	job = run_sh(c, "exit 0");
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "exit_code"), 0);
	assert_true(json_is_null(json_object_get(job, "signal")));
	assert_true(json_is_null(json_object_get(job, "reason")));
	assert_true(tjint(job, "pid") > 0);
	assert_int_equal(tjint(job, "attempt"), 1);
	assert_non_null(tjstr(job, "submitted_at"));
	assert_non_null(tjstr(job, "started_at"));
	assert_non_null(tjstr(job, "finished_at"));
	assert_true(json_is_number(json_object_get(job, "user_time")));
	assert_true(tjint(job, "max_rss_kb") > 0);
	/* Without a cgroup's peak (none has memory control here), the
	 * largest child's max RSS, in bytes; nothing declared, no OOM. */
	assert_int_equal(tjint(job, "peak_memory"),
	    tjint(job, "max_rss_kb") * 1024);
	assert_false(json_is_true(json_object_get(job, "oom")));
	assert_false(json_is_true(json_object_get(job, "frozen")));
	assert_true(json_is_null(json_object_get(job, "memory")));
	json_decref(job);

	job = run_sh(c, "exit 3");
	assert_string_equal(tstate(job), "failed");
	assert_int_equal(tjint(job, "exit_code"), 3);
	assert_non_null(strstr(tjstr(job, "reason"), "status 3"));
	json_decref(job);

	job = run_sh(c, "kill -USR1 $$");
	assert_string_equal(tstate(job), "failed");
	assert_true(json_is_null(json_object_get(job, "exit_code")));
	assert_string_equal(tjstr(job, "signal"), "SIGUSR1");
	assert_non_null(strstr(tjstr(job, "reason"), "SIGUSR1"));
	json_decref(job);
	triage_client_free(c);
}

static void
test_failed_exec_is_a_failed_job(void **state)
{
	struct triage_client *c = tconnect(d);
	json_t *job;

	(void)state;
	job = twait(c, tsubmit(c, "{s[s]}", "argv", "no-such-command-xyz"));
	assert_string_equal(tstate(job), "failed");
	assert_non_null(strstr(tjstr(job, "reason"), "No such file"));
	assert_true(json_is_null(json_object_get(job, "exit_code")));
	json_decref(job);
	job = twait(c, tsubmit(c, "{s[s]ss}", "argv", "true", "cwd",
	    "/no/such/dir"));
	assert_string_equal(tstate(job), "failed");
	assert_non_null(strstr(tjstr(job, "reason"), "chdir"));
	json_decref(job);
	triage_client_free(c);
}

static void
test_job_sees_its_environment_and_cwd(void **state)
{
	struct triage_client *c = tconnect(d);
	size_t len;
	bool trunc;
	int64_t id;
	json_t *job;
	char *out, expect[256];

	(void)state;
	/* No env: the minimal one, with HOME as cwd. */
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "echo \"$PATH|$USER|$TRIAGE_JOB_ID|$TRIAGE_PRIORITY|"
	    "$TRIAGE_ATTEMPT|$(pwd)|$(env | grep -c .)\"");
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	out = read_output(c, id, "stdout", 65536, &len, &trunc);
	snprintf(expect, sizeof expect,
	    "/usr/local/bin:/usr/bin:/bin|root|%lld|normal|1|%s|",
	    (long long)id, tjstr(job, "cwd"));
	assert_memory_equal(out, expect, strlen(expect));
	free(out);
	json_decref(job);

	/* With env: exactly it, plus TRIAGE_*; cwd as given. */
	id = tsubmit(c, "{s[sss]s{ssss}ss}", "argv", "sh", "-c",
	    "echo \"$FOO|${HOME-unset}|$(pwd)|$TRIAGE_JOB_ID\"", "env",
	    "FOO", "bar baz", "PATH", "/usr/bin:/bin", "cwd", "/tmp");
	json_decref(twait(c, id));
	out = read_output(c, id, "stdout", 65536, &len, &trunc);
	snprintf(expect, sizeof expect, "bar baz|unset|/tmp|%lld\n",
	    (long long)id);
	assert_int_equal(len, strlen(expect));
	assert_memory_equal(out, expect, len);
	free(out);
	triage_client_free(c);
}

/* The daemon's children, from /proc; returns how many. */
static int
daemon_children(pid_t *pids, int max)
{
	char path[64];
	int n = 0, pid;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)d->pid,
	    (int)d->pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (n < max && fscanf(f, "%d", &pid) == 1)
		pids[n++] = pid;
	fclose(f);
	return n;
}

/* Kills every worker and waits until as many new ones are up. */
static void
replace_workers(void)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	pid_t old[16], now[16];
	int n, m, i, k;
	bool fresh;

	n = daemon_children(old, 16);
	assert_true(n > 0);
	for (i = 0; i < n; i++)
		kill(old[i], SIGKILL);
	for (;;) {
		m = daemon_children(now, 16);
		fresh = m == n;
		for (i = 0; fresh && i < m; i++)
			for (k = 0; k < n; k++)
				if (now[i] == old[k])
					fresh = false;
		if (fresh)
			return;
		tcheck_deadline(deadline, "%d new workers", n);
		usleep(10000);	/* polling the daemon's children */
	}
}

static void
test_job_gets_the_limits_the_daemon_started_with(void **state)
{
	struct triage_client *c = tconnect(d);
	struct rlimit rl;
	char want[32];
	bool trunc;
	size_t len;
	int64_t id;
	char *out;

	(void)state;
	if (twrapped()) {
		print_message("skipped: valgrind keeps the top fds for itself, "
		    "so the limit it shows differs from the jobs'\n");
		triage_client_free(c);
		skip();
	}
	/* On workers forked after the daemon raised its own limit. */
	replace_workers();
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	snprintf(want, sizeof want, "%llu\n", (unsigned long long)rl.rlim_cur);
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", "ulimit -n");
	json_decref(twait(c, id));
	out = read_output(c, id, "stdout", 65536, &len, &trunc);
	out[len] = '\0';
	assert_string_equal(out, want);
	free(out);
	triage_client_free(c);
}

static void
test_output_paging_base64_and_truncation(void **state)
{
	struct triage_client *c = tconnect(d);
	size_t len, i;
	bool trunc;
	int64_t id;
	json_t *job, *page;
	char *out;

	(void)state;
	/* 20,000 lines of text, read 1000 bytes at a time. */
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "seq 1 20000 | head -c 50000; echo err >&2");
	json_decref(twait(c, id));
	out = read_output(c, id, "stdout", 1000, &len, &trunc);
	assert_int_equal(len, 50000);
	assert_false(trunc);
	assert_memory_equal(out, "1\n2\n3\n", 6);
	free(out);
	out = read_output(c, id, "stderr", 1000, &len, &trunc);
	assert_int_equal(len, 4);
	assert_memory_equal(out, "err\n", 4);
	free(out);

	/* Binary comes back as base64, byte for byte. */
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "printf '\\000\\001\\377\\376abc'");
	json_decref(twait(c, id));
	out = read_output(c, id, "stdout", 65536, &len, &trunc);
	assert_int_equal(len, 7);
	assert_memory_equal(out, "\0\1\377\376abc", 7);
	free(out);

	/* A multibyte character cut by a page's end stays whole. */
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", "printf 'a\\303\\251b'");
	json_decref(twait(c, id));
	page = tcall(c, "output", "{sIsssi}", "id", (json_int_t)id, "stream",
	    "stdout", "limit", 2);
	assert_string_equal(tjstr(page, "encoding"), "utf-8");
	assert_string_equal(tjstr(page, "data"), "a");
	assert_int_equal(tjint(page, "next_offset"), 1);
	json_decref(page);

	/* Beyond max_output (64 KiB) the rest is dropped, and said so. */
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "head -c 200000 /dev/zero | tr '\\000' x");
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	out = read_output(c, id, "stdout", 65536, &len, &trunc);
	assert_int_equal(len, 65536);
	assert_true(trunc);
	for (i = 0; i < len; i++)
		assert_int_equal(out[i], 'x');
	free(out);

	/* A job that never started has empty, finished streams. */
	id = tsubmit(c, "{s[s]}", "argv", "no-such-command-xyz");
	json_decref(twait(c, id));
	page = tcall(c, "output", "{sIss}", "id", (json_int_t)id, "stream",
	    "stderr");
	assert_string_equal(tjstr(page, "data"), "");
	assert_true(json_is_true(json_object_get(page, "eof")));
	json_decref(page);
	triage_client_free(c);
}

static void
test_timeout_kills_the_whole_process_group(void **state)
{
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t id;
	pid_t grandchild;

	(void)state;
	id = tsubmit(c, "{s[sss]sf}", "argv", "sh", "-c",
	    "sleep 300 & echo $!; wait", "timeout", 0.3);
	grandchild = toutput_pid(c, id);
	job = twait(c, id);
	assert_string_equal(tstate(job), "timed_out");
	assert_non_null(strstr(tjstr(job, "reason"), "timed out after 300ms"));
	assert_string_equal(tjstr(job, "signal"), "SIGTERM");
	assert_false(tpid_alive(grandchild));
	json_decref(job);
	triage_client_free(c);
}

static void
test_cancel_queued_running_and_stubborn(void **state)
{
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t a, b, q;
	pid_t pid;

	(void)state;
	/* Both slots busy, so the third waits in the queue. */
	a = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", "echo $$; exec sleep 300");
	b = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "trap '' TERM; echo $$; while :; do sleep 1; done");
	q = tsubmit(c, "{s[s]}", "argv", "true");
	job = tcall(c, "get", "{sI}", "id", (json_int_t)q);
	assert_string_equal(tstate(job), "queued");
	assert_int_equal(tjint(job, "position"), 0);
	json_decref(job);

	job = tcall(c, "cancel", "{sI}", "id", (json_int_t)q);
	assert_string_equal(tstate(job), "canceled");
	assert_non_null(strstr(tjstr(job, "reason"), "canceled by uid 0"));
	assert_true(json_is_null(json_object_get(job, "started_at")));
	json_decref(job);

	pid = toutput_pid(c, a);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)a));
	job = twait(c, a);
	assert_string_equal(tstate(job), "canceled");
	assert_string_equal(tjstr(job, "signal"), "SIGTERM");
	assert_false(tpid_alive(pid));
	json_decref(job);

	/* It ignores SIGTERM: SIGKILL after kill_grace (1s). */
	pid = toutput_pid(c, b);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)b));
	job = twait(c, b);
	assert_string_equal(tstate(job), "canceled");
	assert_string_equal(tjstr(job, "signal"), "SIGKILL");
	assert_false(tpid_alive(pid));
	json_decref(job);

	/* Canceling what has ended changes nothing. */
	job = tcall(c, "cancel", "{sI}", "id", (json_int_t)b);
	assert_string_equal(tstate(job), "canceled");
	assert_string_equal(tjstr(job, "signal"), "SIGKILL");
	json_decref(job);
	triage_client_free(c);
}

static void
test_wait_times_out_while_connection_serves_others(void **state)
{
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t id, wait_id, stats_id, got;
	json_t *res;

	(void)state;
	id = tsubmit(c, "{s[ss]}", "argv", "sleep", "300");
	/* A wait with no timeout is parked; a stats after it is answered
	 * first, and a wait with a timeout answers with the job running. */
	wait_id = triage_client_send(c, "wait", json_pack("{sI}", "id",
	    (json_int_t)id), &e);
	stats_id = triage_client_send(c, "stats", NULL, &e);
	res = triage_client_recv(c, &got, 30000, &e);
	assert_non_null(res);
	assert_int_equal(got, stats_id);
	json_decref(res);
	/* Running first: a slow start (valgrind) must not look queued. */
	(void)trunning_pid(c, id);
	res = tcall(c, "wait", "{sIsf}", "id", (json_int_t)id, "timeout", 0.2);
	assert_string_equal(tstate(res), "running");
	json_decref(res);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	res = triage_client_recv(c, &got, 30000, &e);
	assert_non_null(res);
	assert_int_equal(got, wait_id);
	assert_string_equal(tstate(res), "canceled");
	json_decref(res);
	triage_client_free(c);
}

static void
test_wait_of_a_closed_connection_is_withdrawn(void **state)
{
	struct triage_client *c = tconnect(d), *w = tconnect(d);
	struct triage_error e;
	int64_t id;

	(void)state;
	id = tsubmit(c, "{s[ss]}", "argv", "sleep", "300");
	assert_true(triage_client_send(w, "wait", json_pack("{sI}", "id",
	    (json_int_t)id), &e) > 0);
	json_decref(tcall(w, "stats", "{}"));	/* the wait is parked */
	triage_client_free(w);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	json_decref(twait(c, id));
	triage_client_free(c);
}

/* output says which attempt's capture it read: while a failed job is
 * queued again, the files still hold the attempt that failed. */
static void
test_output_names_its_attempt(void **state)
{
	struct triage_client *c = tconnect(d), *w = tconnect(d);
	char script[1000];
	json_t *page, *job;
	int64_t id, deadline;

	(void)state;
	snprintf(script, sizeof script, "echo \"a$TRIAGE_ATTEMPT\"; %s; "
	    "exit 1", tgate_sh(d, "output-attempt-gate"));
	id = tsubmit(c, "{s[sss] ss si}", "argv", "sh", "-c", script,
	    "priority", "low", "retries", 1);
	json_decref(tcall(w, "watch", "{s[I]}", "ids", (json_int_t)id));
	trunning_pid(c, id);
	page = tcall(c, "output", "{sIss}", "id", (json_int_t)id, "stream",
	    "stdout");
	assert_int_equal(tjint(page, "attempt"), 1);
	json_decref(page);

	/* Its second attempt stays queued while low is paused. */
	json_decref(tcall(c, "pause", "{ss}", "priority", "low"));
	topen_gate(d, "output-attempt-gate");
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (;;) {
		job = tnotification(w);
		if (strcmp(tstate(job), "queued") == 0 &&
		    tjint(job, "attempt") == 2)
			break;
		json_decref(job);
		tcheck_deadline(deadline, "job %lld's attempt 2 to be queued",
		    (long long)id);
	}
	json_decref(job);
	page = tcall(c, "output", "{sIss}", "id", (json_int_t)id, "stream",
	    "stdout");
	assert_int_equal(tjint(page, "attempt"), 1);
	assert_string_equal(tjstr(page, "data"), "a1\n");
	assert_false(json_is_true(json_object_get(page, "eof")));
	json_decref(page);

	json_decref(tcall(c, "resume", "{ss}", "priority", "low"));
	job = twait(c, id);
	assert_string_equal(tstate(job), "failed");
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	page = tcall(c, "output", "{sIss}", "id", (json_int_t)id, "stream",
	    "stdout");
	assert_int_equal(tjint(page, "attempt"), 2);
	assert_string_equal(tjstr(page, "data"), "a2\n");
	assert_true(json_is_true(json_object_get(page, "eof")));
	json_decref(page);
	triage_client_free(w);
	triage_client_free(c);
}

/* A job is running when its process exists: every job object that says
 * running, in a notification or a reply, carries its pid. */
static void
test_running_always_carries_its_pid(void **state)
{
	enum { N = 20 };
	struct triage_client *c = tconnect(d), *w = tconnect(d);
	json_t *job, *now, *list, *item;
	int ended = 0, running = 0, i;
	size_t k;

	(void)state;
	json_decref(tcall(w, "watch", "{}"));
	for (i = 0; i < N; i++)
		(void)tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
		    i % 2 ? "true" : "sleep 0.01");
	while (ended < N) {
		job = tnotification(w);
		if (strcmp(tstate(job), "running") == 0) {
			running++;
			assert_true(tjint(job, "pid") > 0);
			now = tget(c, tjint(job, "id"));
			assert_true(tjint(now, "pid") > 0);
			json_decref(now);
			list = tcall(c, "list", "{s[s]}", "state", "running");
			json_array_foreach(json_object_get(list, "jobs"), k,
			    item)
				assert_true(tjint(item, "pid") > 0);
			json_decref(list);
		} else if (strcmp(tstate(job), "queued") != 0)
			ended++;
		json_decref(job);
	}
	assert_int_equal(running, N);
	triage_client_free(w);
	triage_client_free(c);
}

/* Names, argv and reasons come from clients: their control bytes and
 * newlines reach the log escaped, never raw. */
static void
test_log_escapes_what_clients_send(void **state)
{
	struct triage_client *c = tconnect(d);

	(void)state;
	json_decref(twait(c, tsubmit(c, "{s[s]ss}", "argv", "true", "name",
	    "x\x1b[31mRED\nsecond line")));
	assert_true(tlog_has(d, "x\\x1b[31mRED\\nsecond line"));
	assert_false(tlog_has(d, "\x1b"));
	assert_false(tlog_has(d, "\nsecond line"));
	triage_client_free(c);
}

/*
 * protocol.md: cwd defaults to the job user's home, else /. A user whose
 * home does not exist (Debian's nobody: /nonexistent) runs in /, as a
 * login would, instead of failing in chdir.
 */
static void
test_missing_home_means_root_dir(void **state)
{
	struct passwd *pw = getpwnam("nobody");
	struct tdaemon *own;
	struct triage_client *c;
	struct stat st;
	int status;
	json_t *page;
	pid_t pid;

	(void)state;
	if (geteuid() != 0 || pw == NULL || stat(pw->pw_dir, &st) == 0) {
		print_message("skipped: needs root and a user without a home\n");
		skip();
	}
	own = tdaemon_start("socket_mode = 0666\n");
	assert_int_equal(chmod(own->dir, 0711), 0);
	if ((pid = fork()) == 0) {
		struct triage_error e;
		json_t *job, *done;
		char *cause;

		if (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0 ||
		    (c = triage_client_connect(own->sock, &cause)) == NULL)
			_exit(2);
		job = triage_client_call(c, "submit", json_pack("{s[sss]}",
		    "argv", "sh", "-c", "pwd"), HARNESS_TIMEOUT_MS, &e);
		if (job == NULL)
			_exit(3);
		done = triage_client_call(c, "wait", json_pack("{sI}", "id",
		    tjint(job, "id")), HARNESS_TIMEOUT_MS, &e);
		status = done != NULL &&
		    strcmp(tstate(done), "succeeded") == 0 &&
		    strcmp(tjstr(done, "cwd"), "/") == 0 ? 0 : 4;
		/* Freed, for valgrind's leak check at exit. */
		json_decref(job);
		json_decref(done);
		triage_client_free(c);
		_exit(status);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	c = tconnect(own);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		page = tget(c, 1);
		fail_msg("the job as nobody: %s (status %#x)",
		    json_dumps(page, 0), status);
	}
	page = tcall(c, "output", "{siss}", "id", 1, "stream", "stdout");
	assert_string_equal(tjstr(page, "data"), "/\n");
	json_decref(page);
	tdaemon_end(own, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_codes_and_signals),
		cmocka_unit_test(test_failed_exec_is_a_failed_job),
		cmocka_unit_test(test_job_sees_its_environment_and_cwd),
		cmocka_unit_test(test_job_gets_the_limits_the_daemon_started_with),
		cmocka_unit_test(test_output_paging_base64_and_truncation),
		cmocka_unit_test(test_timeout_kills_the_whole_process_group),
		cmocka_unit_test(test_cancel_queued_running_and_stubborn),
		cmocka_unit_test(test_wait_times_out_while_connection_serves_others),
		cmocka_unit_test(test_wait_of_a_closed_connection_is_withdrawn),
		cmocka_unit_test(test_output_names_its_attempt),
		cmocka_unit_test(test_running_always_carries_its_pid),
		cmocka_unit_test(test_log_escapes_what_clients_send),
		cmocka_unit_test(test_missing_home_means_root_dir),
	};

	return cmocka_run_group_tests_name("jobs", tests, setup,
	    tdaemon_group_teardown);
}
