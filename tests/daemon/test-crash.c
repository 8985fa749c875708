/* test-crash.c - kill -9 of the daemon at random moments under load, then
 * what clients were told is checked against what the daemon comes back with. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

enum { ROUNDS = 12, BATCH = 24, FLOODERS = 3 };

/* What one job's clients were told, and what its processes did. */
struct told {
	bool acked;		/* its submit was answered */
	char *state;		/* the terminal state a client was told */
	json_int_t attempt;	/* of that report */
};

/* By id; the flood's jobs take most ids, so it grows. */
static struct told *told;
static size_t ntold;

static struct told *
told_of(json_int_t id)
{
	size_t n = ntold;

	assert_true(id > 0);
	if ((size_t)id >= ntold) {
		while ((size_t)id >= n)
			n = n ? n * 2 : 4096;
		assert_non_null(told = realloc(told, n * sizeof *told));
		memset(told + ntold, 0, (n - ntold) * sizeof *told);
		ntold = n;
	}
	return &told[id];
}

/* A terminal report: the first is kept; any later one for the same job
 * must say the same (terminal states never change). */
static void
note_terminal(const json_t *job)
{
	json_int_t id = tjint(job, "id");
	const char *state = tstate(job);
	struct told *t = told_of(id);

	if (strcmp(state, "queued") == 0 || strcmp(state, "running") == 0)
		return;
	if (t->state == NULL) {
		t->state = strdup(state);
		t->attempt = tjint(job, "attempt");
		return;
	}
	if (strcmp(t->state, state) != 0 ||
	    t->attempt != tjint(job, "attempt"))
		fail_msg("job %lld was reported %s (attempt %lld), then %s "
		    "(attempt %lld)", (long long)id, t->state,
		    (long long)t->attempt, state,
		    (long long)tjint(job, "attempt"));
}

static bool
job_running_or_queued(const json_t *job)
{
	return strcmp(tstate(job), "queued") == 0 ||
	    strcmp(tstate(job), "running") == 0;
}

/* Reads the watcher's notifications for at most ms, or until the daemon
 * is gone (ms < 0; failing the test if that takes HARNESS_TIMEOUT_MS), or
 * (until_end) until one reports an end. */
static void
read_watch(struct triage_client *w, int ms, bool until_end)
{
	int64_t deadline = tdeadline(ms < 0 ? HARNESS_TIMEOUT_MS : ms);
	struct triage_error e;
	json_t *msg;

	for (;;) {
		if ((msg = triage_client_notification(w, tleft_ms(deadline),
		    &e)) == NULL) {
			if (errno != ETIMEDOUT) {
				/* The daemon is gone: everything it sent is
				 * read. */
				if (ms >= 0)
					fail_msg("the watch ended: %s",
					    e.message);
				return;
			}
			if (ms >= 0)
				return;
			fail_msg("timed out waiting for the killed daemon's "
			    "watch connection to close");
		}
		note_terminal(json_object_get(msg, "params"));
		if (until_end && !job_running_or_queued(
		    json_object_get(msg, "params"))) {
			json_decref(msg);
			return;
		}
		json_decref(msg);
		if (ms >= 0 && tleft_ms(deadline) == 0)
			return;
		if (ms < 0)
			tcheck_deadline(deadline, "the killed daemon's watch "
			    "connection to close");
	}
}

/*
 * Jobs of four kinds, each writing its attempt number into runs/ID first:
 * quick successes, failures, flaky ones that fail their first attempt and
 * have a retry, and slower ones that are often running at the kill.
 */
static void
send_batch(struct triage_client *c, const struct tdaemon *d, int round)
{
	static const char *const kinds[] = { "exit 0", "exit 3",
	    "[ \"$TRIAGE_ATTEMPT\" -ge 2 ]", "sleep 0.2" };
	struct triage_error e;
	char script[600];
	int i;

	for (i = 0; i < BATCH; i++) {
		snprintf(script, sizeof script, "echo \"$TRIAGE_ATTEMPT\" >> "
		    "%s/runs/$TRIAGE_JOB_ID; %s", d->dir,
		    kinds[(i + round) % 4]);
		assert_true(triage_client_send(c, "submit",
		    json_pack("{s[sss]sssi}", "argv", "sh", "-c", script,
		    "priority", "normal", "retries",
		    (i + round) % 4 == 2 ? 1 : 0), &e) > 0);
	}
}

/* Reads the answers to the submits sent, as many as come before the
 * connection breaks (the daemon killed mid-stream). */
static void
read_acks(struct triage_client *c, int n)
{
	struct triage_error e;
	int64_t got;
	json_t *res;
	json_int_t id;

	for (; n > 0; n--) {
		if ((res = triage_client_recv(c, &got, 30000, &e)) == NULL) {
			assert_int_equal(e.code, TRIAGE_ERR_TRANSPORT);
			return;
		}
		id = tjint(res, "id");
		told_of(id)->acked = true;
		note_terminal(res);
		json_decref(res);
	}
}

/*
 * Load: a process that submits `true` to priority low (one slot at most)
 * as fast as it can, pipelined, until the daemon goes (exit 0), or until a
 * deadline long after the test would have killed it (exit 2). Long loop
 * turns are where a report sent before its commit shows.
 */
static pid_t
flood(const struct tdaemon *d)
{
	pid_t pid;

	if ((pid = fork()) == 0)
		tstorm(d->sock, "low", -1);
	assert_true(pid > 0);
	return pid;
}

/* The attempts job id's processes wrote, in order; returns how many. */
static int
read_runs(const struct tdaemon *d, json_int_t id, int *v, int max)
{
	char path[400];
	int n = 0, a;
	FILE *f;

	snprintf(path, sizeof path, "%s/runs/%lld", d->dir, (long long)id);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (n < max && fscanf(f, "%d", &a) == 1)
		v[n++] = a;
	fclose(f);
	return n;
}

static void
test_crashes_never_undo_what_clients_were_told(void **state)
{
	struct tdaemon *d;
	struct triage_client *c, *w;
	pid_t flooders[FLOODERS];
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	int round, runs[64], n, i, j, acked = 0, reported = 0, rerun = 0;
	char path[400];
	json_int_t id;
	json_t *job;
	int status;

	(void)state;
	if (twrapped()) {
		/* Each daemon dies of SIGKILL, which leaves valgrind no
		 * report to write; the starts alone would take minutes. */
		print_message("skipped: a kill -9 storm under valgrind\n");
		skip();
	}
	/* The flooders are our uid too: past max_queued_per_user (50,000,
	 * a few seconds of flood on a quick machine) the batches' submits
	 * would be refused, which is not what this test looks at. */
	d = tdaemon_start("slots = 2\n"
	    "max_queued_per_user = 100000000\n"
	    "[priority.high]\nrank = 0\n[priority.normal]\nrank = 10\n"
	    "[priority.low]\nrank = 20\nmax_running = 1\n");
	snprintf(path, sizeof path, "%s/runs", d->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	print_message("seed %u\n", seed);
	srand(seed);
	for (round = 0; round < ROUNDS; round++) {
		if (round > 0)
			tdaemon_restart(d);
		w = tconnect(d);
		json_decref(tcall(w, "watch", "{ss}", "priority", "normal"));
		c = tconnect(d);
		for (i = 0; i < FLOODERS; i++)
			flooders[i] = flood(d);
		send_batch(c, d, round);
		read_acks(c, BATCH);
		/* Jobs start and end, commits come and go: a random moment
		 * of that, with more submissions on their way, is the kill;
		 * often right after an end was reported, where a report sent
		 * ahead of its commit would show. */
		read_watch(w, rand() % 250, false);
		send_batch(c, d, round + 1);
		read_watch(w, rand() % 100, rand() % 2 == 0);
		tdaemon_crash(d);
		read_acks(c, BATCH);
		read_watch(w, -1, false);
		triage_client_free(c);
		triage_client_free(w);
		for (i = 0; i < FLOODERS; i++) {
			assert_int_equal(waitpid(flooders[i], &status, 0),
			    flooders[i]);
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				fail_msg("flooder %d: status %#x", i, status);
		}
	}

	/* The last start: everything runs to its end. */
	tdaemon_restart(d);
	c = tconnect(d);
	for (id = 1; (size_t)id < ntold; id++) {
		if (!told[id].acked)
			continue;
		acked++;
		job = twait(c, id);
		note_terminal(job);
		/* 0 reported outcomes changed. */
		assert_string_equal(tstate(job), told[id].state);
		assert_int_equal(tjint(job, "attempt"), told[id].attempt);
		json_decref(job);
		n = read_runs(d, id, runs, 64);
		for (i = 0; i < n; i++) {
			/* 0 attempts repeated: each attempt runs once. */
			for (j = 0; j < i; j++)
				if (runs[j] == runs[i])
					fail_msg("job %lld ran attempt %d twice",
					    (long long)id, runs[i]);
			/* 0 completed attempts rerun: nothing after the
			 * attempt whose end a client was told. */
			if (runs[i] > told[id].attempt)
				fail_msg("job %lld ran attempt %d after its "
				    "attempt %lld was reported %s",
				    (long long)id, runs[i],
				    (long long)told[id].attempt,
				    told[id].state);
		}
		if (n > 0 && runs[n - 1] < told[id].attempt)
			rerun++;	/* a later attempt never got to write */
	}
	for (id = 1; (size_t)id < ntold; id++)
		if (told[id].state != NULL)
			reported++;
	print_message("%d rounds: %d jobs acknowledged, %d outcomes reported, "
	    "%d attempts ended before they wrote\n", ROUNDS, acked, reported,
	    rerun);
	assert_true(acked > ROUNDS * BATCH / 2);
	for (id = 1; (size_t)id < ntold; id++)
		free(told[id].state);
	free(told);
	told = NULL;
	ntold = 0;
	tdaemon_end(d, c);
}

/* Waits until job id's processes wrote n attempts; returns them in v. */
static void
wait_runs(const struct tdaemon *d, json_int_t id, int *v, int n)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);

	while (read_runs(d, id, v, 8) < n) {
		tcheck_deadline(deadline, "job %lld to run %d attempts",
		    (long long)id, n);
		usleep(10000);
	}
	assert_int_equal(read_runs(d, id, v, 8), n);
}

/* Commits of the daemon fail (EFBIG) from now on, or work again. */
static void
break_store(const struct tdaemon *d, bool broken)
{
	struct rlimit rl = { broken ? 1 : RLIM_INFINITY, RLIM_INFINITY };

	assert_int_equal(prlimit(d->pid, RLIMIT_FSIZE, &rl, NULL), 0);
}

/* A job that writes its attempt into runs/ID, then waits for gate. */
static int64_t
submit_recorded(struct triage_client *c, const struct tdaemon *d,
    const char *gate, const char *prio)
{
	char script[1200];

	snprintf(script, sizeof script, "echo \"$TRIAGE_ATTEMPT\" >> "
	    "%s/runs/$TRIAGE_JOB_ID; %s", d->dir, tgate_sh(d, gate));
	return tsubmit(c, "{s[sss]ss}", "argv", "sh", "-c", script,
	    "priority", prio);
}

/*
 * While nothing can be written, nothing is told and nothing starts: a job
 * that ends is not reported, a cancel is not answered, a resumed queue
 * starts nothing. A crash then undoes nothing anyone heard of, and no
 * attempt runs twice.
 */
static void
test_nothing_is_told_or_started_while_commits_fail(void **state)
{
	struct tdaemon *d;
	struct triage_client *c, *w, *k;
	struct triage_error e;
	int64_t ended, resumed, canceled, got, deadline;
	int runs[8], i;
	char path[400];
	json_t *msg, *job;

	(void)state;
	if (tcluster()) {
		print_message("skipped: it breaks the SQLite file; test-cluster "
		    "takes the cluster's database away\n");
		skip();
	}
	d = tdaemon_start(NULL);
	c = tconnect(d);
	w = tconnect(d);
	k = tconnect(d);
	snprintf(path, sizeof path, "%s/runs", d->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	json_decref(tcall(w, "watch", "{}"));
	ended = submit_recorded(c, d, "end", "high");
	(void)trunning_pid(c, ended);
	json_decref(tcall(c, "pause", "{ss}", "priority", "low"));
	resumed = submit_recorded(c, d, "never", "low");
	canceled = submit_recorded(c, d, "never", "low");
	for (i = 0; i < 4; i++)	/* queued x3, running */
		json_decref(tnotification(w));

	/* (Its log is a file too: it says nothing until the end.) */
	break_store(d, true);
	topen_gate(d, "end");
	/* get shows the daemon's view, ahead of the disk. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (;;) {
		job = tget(c, ended);
		i = strcmp(tstate(job), "succeeded");
		json_decref(job);
		if (i == 0)
			break;
		tcheck_deadline(deadline, "job %lld to succeed",
		    (long long)ended);
		usleep(10000);
	}
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]}", "argv",
	    "true"), -32603);
	/* The end of the job is not on disk: nobody hears of it. */
	msg = triage_client_notification(w, 300, &e);
	if (msg != NULL)
		fail_msg("told %s", json_dumps(msg, 0));
	/* Nor of a cancel, which would not be on disk either. */
	assert_true(triage_client_send(k, "cancel", json_pack("{sI}", "id",
	    (json_int_t)canceled), &e) > 0);
	assert_null(triage_client_recv(k, &got, 300, &e));
	assert_int_equal(errno, ETIMEDOUT);
	/* A job granted its slot does not start: its start cannot be
	 * recorded (commits are retried each second: this spans two). */
	/* Its answer waits for the disk too (pauses are kept): it does not
	 * come, but the resume is in force. */
	assert_true(triage_client_send(c, "resume", json_pack("{ss}",
	    "priority", "low"), &e) > 0);
	for (i = 0; i < 150; i++) {
		assert_int_equal(read_runs(d, resumed, runs, 8), 0);
		usleep(10000);
	}

	tdaemon_crash(d);
	triage_client_free(k);
	triage_client_free(w);
	triage_client_free(c);
	tdaemon_restart(d);
	c = tconnect(d);
	/* The ended job's success was never written, so its worker was
	 * never told it was stored: it recorded the end when the daemon
	 * died, and the next start takes that end (issue 26). The job does
	 * not run again. */
	job = twait(c, ended);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "attempt"), 1);
	json_decref(job);
	assert_true(tlog_has(d, "that its worker recorded"));
	assert_int_equal(read_runs(d, ended, runs, 8), 1);
	assert_int_equal(runs[0], 1);
	/* The cancel nobody was told of did not happen. */
	job = tget(c, canceled);
	assert_string_equal(tstate(job), "queued");
	json_decref(job);
	/* The resume was never on disk, nor answered: low is paused still.
	 * The resumed job never began before the crash: now it does, once,
	 * as its first attempt. */
	json_decref(tcall(c, "resume", "{ss}", "priority", "low"));
	(void)trunning_pid(c, resumed);
	wait_runs(d, resumed, runs, 1);
	assert_int_equal(runs[0], 1);
	topen_gate(d, "never");
	json_decref(twait(c, canceled));
	tdaemon_end(d, c);
}

/*
 * A worker that cannot act on the daemon's death (stopped here; frozen by
 * a cgroup, or stuck in the kernel, in real life) leaves its job running.
 * The next start kills that very process group before the job runs again,
 * so two attempts never run at once.
 *
 * Under valgrind, which does not know pidfd_open, this is the daemon's
 * other way, through /proc alone.
 *
 * The test adopts the daemon's orphans: a stopped worker adopted by init
 * would be in an orphaned process group, which the kernel wakes with
 * SIGHUP and SIGCONT, and that would end it before the restart.
 */
static void
test_restart_kills_what_a_stuck_worker_left_running(void **state)
{
	struct tdaemon *d;
	struct triage_client *c;
	pid_t pid, worker, again;
	int64_t id;
	json_t *job;

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	d = tdaemon_start(NULL);
	c = tconnect(d);
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "echo $$; exec sleep 300");
	pid = toutput_pid(c, id);
	worker = tppid(pid);
	assert_true(worker > 0);
	tstop(worker);
	triage_client_free(c);
	tdaemon_crash(d);
	assert_true(tpid_alive(pid));

	tdaemon_restart(d);
	c = tconnect(d);
	twait_gone(pid);
	/* With cgroups, through the job's cgroup; without, by its pid. */
	job = tcall(c, "stats", "{}");
	twait_log(d, strcmp(tjstr(job, "cgroups"), "none") != 0 ?
	    "1 process left by an earlier daemon was killed" :
	    "still runs from before the restart");
	json_decref(job);
	again = trunning_pid(c, id);
	assert_int_not_equal(again, pid);
	job = tget(c, id);
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	kill(worker, SIGKILL);
	assert_int_equal(waitpid(worker, NULL, 0), worker);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	json_decref(twait(c, id));
	tdaemon_end(d, c);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;	/* what else of the first daemon came to us */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crashes_never_undo_what_clients_were_told),
		cmocka_unit_test(test_nothing_is_told_or_started_while_commits_fail),
		cmocka_unit_test(test_restart_kills_what_a_stuck_worker_left_running),
	};

	return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
