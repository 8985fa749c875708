/* test-adopt.c - running jobs outlive triaged (issue 26): a SIGKILLed or kept
 * daemon's next start takes over their workers, or their ends, never reruns. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"
#include "procstat.h"
#include "timefmt.h"
#include "wmsg.h"

/* What the job has printed on stdout so far, allocated. */
static char *
stdout_of(struct triage_client *c, int64_t id)
{
	json_t *page = tcall(c, "output", "{sIss}", "id", (json_int_t)id,
	    "stream", "stdout");
	char *text = strdup(tjstr(page, "data"));

	json_decref(page);
	assert_non_null(text);
	return text;
}

static int
count_lines(const char *text)
{
	int n = 0;

	for (; *text != '\0'; text++)
		n += *text == '\n';
	return n;
}

/* Waits until the job has printed more than n lines; how many it has. */
static int
wait_lines_over(struct triage_client *c, int64_t id, int n)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	char *text;
	int got;

	for (;;) {
		text = stdout_of(c, id);
		got = count_lines(text);
		free(text);
		if (got > n)
			return got;
		tcheck_deadline(deadline, "job %lld printed %d lines, not more "
		    "than %d", (long long)id, got, n);
		poll(NULL, 0, 10);
	}
}

/* Asserts that text is "1\n2\n...n\n" exactly. */
static void
assert_counter(const char *text, int n)
{
	char want[1024];
	size_t len = 0;
	int i;

	for (i = 1; i <= n; i++)
		len += (size_t)snprintf(want + len, sizeof want - len, "%d\n",
		    i);
	assert_string_equal(text, want);
}

/* Waits until path exists (want) or is gone (!want). */
static void
wait_path(const char *path, bool want)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);

	while ((access(path, F_OK) == 0) != want) {
		tcheck_deadline(deadline, "%s never %s", path, want ?
		    "appeared" : "went");
		poll(NULL, 0, 10);
	}
}

/* state_dir/adopt/ID.ATTEMPT.suffix of d. */
static const char *
adopt_path(const struct tdaemon *d, int64_t id, int attempt,
    const char *suffix)
{
	static char path[600];

	snprintf(path, sizeof path, "%s/adopt/%lld.%d.%s", d->state,
	    (long long)id, attempt, suffix);
	return path;
}

/* SIGKILL to the daemon, and a new one on the same state. */
static struct triage_client *
crash_and_restart(struct tdaemon *d, struct triage_client *c)
{
	triage_client_free(c);
	tdaemon_crash(d);
	tdaemon_restart(d);
	return tconnect(d);
}

/* A counter every 50 ms (times TRIAGE_TEST_SLOW: a daemon under valgrind
 * takes that much longer to restart), from 1 to n; at pause it waits for
 * the gate "go" (so that a slow machine cannot outrun the kills). */
static int64_t
submit_counter(struct triage_client *c, const struct tdaemon *d, int n,
    int pause)
{
	char script[1400];

	snprintf(script, sizeof script, "i=0; while [ $i -lt %d ]; do "
	    "i=$((i + 1)); echo $i; if [ $i = %d ]; then %s; fi; "
	    "sleep %d.%02d; done", n, pause, tgate_sh(d, "go"),
	    5 * tslow() / 100, 5 * tslow() % 100);
	return tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
}

/*
 * (a), (e): three SIGKILLs of the daemon while the job counts, each time
 * after it has counted on, then a SIGTERM under shutdown = keep: the next
 * daemon takes its worker over each time, the output goes on without a
 * gap or a repeat, the job ends as attempt 1, and a `triage wait` from
 * before the first kill outlasts them all and returns the job's exit code.
 */
static void
a_job_outlives_three_crashes(void **state)
{
	struct tdaemon *d = tdaemon_start("shutdown = keep\n");
	struct triage_client *c = tconnect(d);
	struct tcli_bg wait;
	char id[32], *out, *err, *text;
	int64_t job;
	int lines, k, rc;
	json_t *got;

	(void)state;
	job = submit_counter(c, d, 60, 40);
	snprintf(id, sizeof id, "%lld", (long long)job);
	tcli_start(d, &wait, "wait", "wait", id, NULL);
	lines = wait_lines_over(c, job, 2);
	for (k = 0; k < 3; k++) {
		c = crash_and_restart(d, c);
		/* Counting on, under the new daemon. */
		lines = wait_lines_over(c, job, lines + 1);
	}
	assert_true(tlog_has(d, "taken over from an earlier daemon"));
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	assert_true(tlog_has(d, "left to its workers for the next start"));
	tdaemon_restart(d);
	c = tconnect(d);
	(void)wait_lines_over(c, job, lines + 1);
	topen_gate(d, "go");
	got = twait(c, job);
	assert_string_equal(tstate(got), "succeeded");
	assert_int_equal(tjint(got, "attempt"), 1);
	assert_int_equal(tjint(got, "exit_code"), 0);
	json_decref(got);
	text = stdout_of(c, job);
	assert_counter(text, 60);
	free(text);
	rc = tcli_finish(&wait, &out, &err);
	if (rc != 0)
		fail_msg("wait: exit %d, stderr \"%s\"", rc, err);
	free(out);
	free(err);
	tdaemon_end(d, c);
}

/*
 * (b), (e): the job ends while no daemon runs: its worker records the
 * end, and the next daemon takes it as attempt 1's, never running the job
 * again; the record goes once the end is stored. The `wait` from before
 * the crash gets the job's exit code.
 */
static void
an_end_while_no_daemon_runs_is_recorded(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	struct tcli_bg wait;
	char script[1400], runs[400], buf[64], id[32], *out, *err;
	int64_t job, ended_at, restart_at, shown;
	json_t *got, *rec;
	struct stat st;
	int rc;

	(void)state;
	snprintf(runs, sizeof runs, "%s/runs", d->dir);
	snprintf(script, sizeof script, "echo $TRIAGE_ATTEMPT >> %s; %s; "
	    "exit 3", runs, tgate_sh(d, "end"));
	job = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	(void)trunning_pid(c, job);
	snprintf(id, sizeof id, "%lld", (long long)job);
	tcli_start(d, &wait, "wait", "wait", id, NULL);
	wait_path(runs, true);

	triage_client_free(c);
	tdaemon_crash(d);
	/* The worker waits for the next daemon, on a socket only the
	 * daemon's user may use; the job ends meanwhile. */
	wait_path(adopt_path(d, job, 1, "sock"), true);
	assert_int_equal(stat(adopt_path(d, job, 1, "sock"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	topen_gate(d, "end");
	wait_path(adopt_path(d, job, 1, "end"), true);
	wait_path(adopt_path(d, job, 1, "sock"), false);
	rec = json_load_file(adopt_path(d, job, 1, "end"), 0, NULL);
	assert_non_null(rec);
	ended_at = tjint(rec, "finished_at");
	json_decref(rec);

	restart_at = timefmt_now();
	tdaemon_restart(d);
	c = tconnect(d);
	got = twait(c, job);
	assert_string_equal(tstate(got), "failed");
	assert_int_equal(tjint(got, "attempt"), 1);
	assert_int_equal(tjint(got, "exit_code"), 3);
	/* It ended when it ended, not when the next daemon heard of it. */
	assert_int_equal(timefmt_parse(tjstr(got, "finished_at"), &shown), 0);
	assert_true(shown <= ended_at && ended_at - shown < 1000);
	assert_true(shown < restart_at);
	json_decref(got);
	tread_text(runs, buf, sizeof buf);
	assert_string_equal(buf, "1\n");
	wait_path(adopt_path(d, job, 1, "end"), false);
	assert_true(tlog_has(d, "that its worker recorded"));
	rc = tcli_finish(&wait, &out, &err);
	if (rc != 3)
		fail_msg("wait: exit %d, stderr \"%s\"", rc, err);
	free(out);
	free(err);
	tdaemon_end(d, c);
}

/* A job whose attempt 1 notes its pid in first and sleeps, and whose
 * attempt 2 fails if that process still runs as it starts (a zombie runs
 * no more: where init is slow to reap, one may be left). */
static int64_t
submit_two_attempts(struct triage_client *c, const char *first)
{
	char script[1400];

	snprintf(script, sizeof script, "if [ $TRIAGE_ATTEMPT = 1 ]; then "
	    "echo $$ > %s; exec sleep 300; fi; "
	    "s=$(cut -d' ' -f3 /proc/$(cat %s)/stat 2>/dev/null); "
	    "if [ -n \"$s\" ] && [ \"$s\" != Z ]; then exit 9; fi; exit 0",
	    first, first);
	return tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
}

/*
 * A two-attempt job whose worker gets sig while no daemon runs; the next
 * daemon, once it answers (and logged said, when not NULL), must run the
 * job again as attempt 2, which finds attempt 1's process gone.
 */
static void
holder_signalled_while_down(int sig, const char *said)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	char first[400];
	pid_t pid, worker;
	int64_t job;
	json_t *got;

	snprintf(first, sizeof first, "%s/first", d->dir);
	job = submit_two_attempts(c, first);
	pid = trunning_pid(c, job);
	wait_path(first, true);
	worker = tppid(pid);
	assert_true(worker > 0);

	triage_client_free(c);
	tdaemon_crash(d);
	wait_path(adopt_path(d, job, 1, "sock"), true);
	assert_int_equal(kill(worker, sig), 0);
	if (sig == SIGKILL)
		twait_gone(worker);

	tdaemon_restart(d);
	c = tconnect(d);
	if (said != NULL) {
		assert_true(tlog_has(d, said));
		twait_gone(worker);
	}
	got = twait(c, job);
	assert_string_equal(tstate(got), "succeeded");
	assert_int_equal(tjint(got, "attempt"), 2);
	json_decref(got);
	assert_false(tpid_alive(pid));
	tdaemon_end(d, c);
}

/*
 * (c): the worker that holds the job is killed while no daemon runs: the
 * next start finds neither its end nor its socket answering, and requeues
 * the job.
 */
static void
a_lost_holder_means_a_new_attempt(void **state)
{
	(void)state;
	holder_signalled_while_down(SIGKILL, NULL);
}

/*
 * A worker stopped (SIGSTOP) while no daemon runs cannot say what it
 * holds: the next start kills it rather than let it go on beside the next
 * attempt.
 */
static void
a_silent_holder_is_killed(void **state)
{
	(void)state;
	holder_signalled_while_down(SIGSTOP,
	    "does not answer as one should: killed");
}

/* state_dir/output/ID.stream of d. */
static const char *
output_path(const struct tdaemon *d, int64_t id, const char *stream)
{
	static char path[600];

	snprintf(path, sizeof path, "%s/output/%lld.%s", d->state,
	    (long long)id, stream);
	return path;
}

/*
 * A capture file is made at its stream's first byte, also by a worker
 * that has lost its daemon: a job silent until then writes while no
 * daemon runs, and the next daemon, taking the worker over, reads it.
 */
static void
a_first_byte_while_orphaned_is_kept(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	char script[1400], first[400], *text;
	int64_t job;
	json_t *got;

	(void)state;
	/* tgate_sh's text is in a static buffer: one at a time */
	snprintf(first, sizeof first, "%s", tgate_sh(d, "first"));
	snprintf(script, sizeof script, "%s; echo late; echo late-err >&2; %s",
	    first, tgate_sh(d, "end"));
	job = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	(void)trunning_pid(c, job);
	assert_int_equal(access(output_path(d, job, "stdout"), F_OK), -1);
	triage_client_free(c);
	tdaemon_crash(d);
	wait_path(adopt_path(d, job, 1, "sock"), true);
	topen_gate(d, "first");
	wait_path(output_path(d, job, "stdout"), true);
	wait_path(output_path(d, job, "stderr"), true);

	tdaemon_restart(d);
	c = tconnect(d);
	assert_true(tlog_has(d, "taken over from an earlier daemon"));
	topen_gate(d, "end");
	got = twait(c, job);
	assert_string_equal(tstate(got), "succeeded");
	assert_int_equal(tjint(got, "attempt"), 1);
	json_decref(got);
	text = stdout_of(c, job);
	assert_string_equal(text, "late\n");
	free(text);
	got = tcall(c, "output", "{sIss}", "id", (json_int_t)job, "stream",
	    "stderr");
	assert_string_equal(tjstr(got, "data"), "late-err\n");
	json_decref(got);
	tdaemon_end(d, c);
}

/*
 * Fencing by attempt: what state_dir/adopt holds for another attempt than
 * the one the store has running is stale. A worker that answers on such a
 * socket (here attempt 1's, under attempt 5's name) is killed with its
 * job, a record of attempt 7 is removed, and the job, its worker gone, runs
 * again as attempt 2 once attempt 1's process is gone.
 */
static void
another_attempts_files_are_fenced_off(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	char first[400], stale_sock[600], stale_end[600];
	pid_t pid;
	int64_t job;
	json_t *got;

	(void)state;
	snprintf(first, sizeof first, "%s/first", d->dir);
	job = submit_two_attempts(c, first);
	pid = trunning_pid(c, job);
	wait_path(first, true);

	triage_client_free(c);
	tdaemon_crash(d);
	wait_path(adopt_path(d, job, 1, "sock"), true);
	snprintf(stale_sock, sizeof stale_sock, "%s",
	    adopt_path(d, job, 5, "sock"));
	assert_int_equal(rename(adopt_path(d, job, 1, "sock"), stale_sock), 0);
	snprintf(stale_end, sizeof stale_end, "%s",
	    adopt_path(d, job, 7, "end"));
	twrite_text(stale_end, "{\"job\": %lld, \"attempt\": 7, "
	    "\"status\": 0}\n", (long long)job);

	tdaemon_restart(d);
	c = tconnect(d);
	got = twait(c, job);
	assert_string_equal(tstate(got), "succeeded");
	assert_int_equal(tjint(got, "attempt"), 2);
	json_decref(got);
	assert_true(tlog_has(d, "is not the job's running attempt: killed"));
	assert_false(tpid_alive(pid));
	assert_int_equal(access(stale_sock, F_OK), -1);
	assert_int_equal(access(stale_end, F_OK), -1);
	tdaemon_end(d, c);
}

/* How a fake worker's hello differs from the one a worker would send. */
enum fake_lie {
	FAKE_VERSION,		/* a later version, a longer hello */
	FAKE_WORKER,		/* names another process as the worker */
	FAKE_TICKS,		/* its process started at another time */
	FAKE_PROCESS,		/* its process is not the store's */
	FAKE_MODE,		/* its socket is 0666: never connected to */
};

/*
 * A process that listens on path as an orphaned worker of job's attempt 1
 * would, and answers the first connection with a hello that lies as lie
 * says, then waits to be killed. It writes a byte to *notes once it has a
 * connection (the read end, non-blocking, the caller's).
 */
static pid_t
fake_worker(const char *path, int64_t job, enum fake_lie lie, int *notes)
{
	struct {
		struct wmsg_hdr hdr;
		struct wmsg_adopted am;
		char more[8];
	} msg;
	struct sockaddr_un sun;
	int p[2], ready[2], fd, c;
	pid_t pid;
	char x;

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	assert_true(strlen(path) < sizeof sun.sun_path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	assert_true((pid = fork()) >= 0);
	if (pid == 0) {
		memset(&msg, 0, sizeof msg);
		msg.hdr.type = WMSG_ADOPTED;
		msg.hdr.len = sizeof msg.am;
		msg.am.version = WMSG_ADOPT_VERSION;
		msg.am.job_id = (uint64_t)job;
		msg.am.attempt = 1;
		msg.am.worker = getpid();
		msg.am.pid = getpid();
		if (procstat_start_ticks(getpid(), &msg.am.start_ticks) == -1)
			_exit(1);
		if (lie == FAKE_VERSION) {
			msg.am.version = WMSG_ADOPT_VERSION + 1;
			msg.hdr.len = sizeof msg.am + sizeof msg.more;
		} else if (lie == FAKE_WORKER)
			msg.am.worker = getppid();
		else if (lie == FAKE_TICKS)
			msg.am.start_ticks++;
		(void)unlink(path);
		umask(lie == FAKE_MODE ? 0111 : 0177);
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
		    -1 || bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
		    listen(fd, 4) == -1 || write(ready[1], "r", 1) != 1)
			_exit(1);
		if ((c = accept(fd, NULL, NULL)) == -1 ||
		    write(p[1], "c", 1) != 1 ||
		    write(c, &msg, sizeof msg.hdr + msg.hdr.len) !=
		    (ssize_t)(sizeof msg.hdr + msg.hdr.len))
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &x, 1), 1);
	close(ready[0]);
	*notes = p[0];
	return pid;
}

/* Whether the child pid has died of SIGKILL, waiting for it until the
 * deadline; a child still alive then is left alive. */
static bool
died_of_sigkill(pid_t pid, int ms)
{
	int64_t deadline = tdeadline(ms);
	int status;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 &&
	    tleft_ms(deadline) > 0)
		poll(NULL, 0, 10);
	assert_true(r == 0 || r == pid);
	return r == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/*
 * Returns once what the daemon knows of its jobs is in its store: a resume
 * is answered after the commit of every change made before it (the pid of
 * a job that just started among them, which `get` tells from memory).
 */
static void
stored(struct triage_client *c)
{
	json_decref(tcall(c, "resume", "{ss}", "priority", "normal"));
}

/*
 * Fencing by what answers, not only by the attempt it names: the worker of
 * the job is gone, and on its socket a process answers that speaks another
 * version, or says it is another process than the one that listens, or
 * whose job's process is not the one it started or the store has; or its
 * socket is not the daemon's own 0600. None is taken over: the next start
 * kills what answered (it is the daemon's user's), or leaves a socket it
 * does not trust unconnected to, and the job runs again as attempt 2.
 */
static void
what_answers_must_be_the_jobs_worker(void **state)
{
	static const struct {
		enum fake_lie lie;
		const char *log;
	} cases[] = {
		{ FAKE_VERSION, "its worker speaks worker protocol 3, this "
		    "daemon 2: killed, and the job runs again" },
		{ FAKE_WORKER, "listens on its socket: killed" },
		{ FAKE_TICKS, "as its worker says: killed" },
		{ FAKE_PROCESS, "the store has process" },
		{ FAKE_MODE, "not a worker's socket" },
	};
	struct tdaemon *d;
	struct triage_client *c;
	char first[400];
	pid_t pid, worker, fake;
	int64_t job;
	json_t *got;
	size_t i;
	int notes;
	char x;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		d = tdaemon_start("");
		c = tconnect(d);
		snprintf(first, sizeof first, "%s/first", d->dir);
		job = submit_two_attempts(c, first);
		pid = trunning_pid(c, job);
		wait_path(first, true);
		worker = tppid(pid);
		assert_true(worker > 0);
		/* FAKE_PROCESS lies against the process the store has. */
		stored(c);

		triage_client_free(c);
		tdaemon_crash(d);
		wait_path(adopt_path(d, job, 1, "sock"), true);
		assert_int_equal(kill(worker, SIGKILL), 0);
		twait_gone(worker);
		twait_gone(pid);
		fake = fake_worker(adopt_path(d, job, 1, "sock"), job,
		    cases[i].lie, &notes);

		tdaemon_restart(d);
		c = tconnect(d);
		got = twait(c, job);
		assert_string_equal(tstate(got), "succeeded");
		assert_int_equal(tjint(got, "attempt"), 2);
		json_decref(got);
		if (!tlog_has(d, cases[i].log))
			fail_msg("case %zu: no \"%s\" in the log", i,
			    cases[i].log);
		if (cases[i].lie == FAKE_MODE) {
			/* Never connected to, nor killed. */
			assert_int_equal(read(notes, &x, 1), -1);
			assert_int_equal(errno, EAGAIN);
			assert_false(died_of_sigkill(fake, 0));
			assert_int_equal(kill(fake, SIGKILL), 0);
		}
		if (!died_of_sigkill(fake, HARNESS_TIMEOUT_MS))
			fail_msg("case %zu: the fake worker lives on", i);
		close(notes);
		tdaemon_end(d, c);
	}
}

/* The units of gpu the job holds, joined by commas, into buf. */
static const char *
gpus_of(struct triage_client *c, int64_t id, char *buf, size_t size)
{
	json_t *job = tget(c, id), *units, *u;
	size_t i, len = 0;

	buf[0] = '\0';
	units = json_object_get(json_object_get(job, "devices"), "gpu");
	json_array_foreach(units, i, u)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
		    i ? "," : "", json_string_value(u));
	json_decref(job);
	return buf;
}

/*
 * An adopted job takes back the very unit it held, before anything is
 * granted: with GPU 1 held by the adopted job, the next job gets GPU 0,
 * and one more waits for a GPU.
 */
static void
an_adopted_job_keeps_its_units(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 4\n[resource.gpu]\n"
	    "units = 0,1\n");
	struct triage_client *c = tconnect(d);
	int64_t a, b, next, more;
	char buf[64];
	json_t *got;

	(void)state;
	a = tsubmit_gated_with(c, d, "a", "{s{si}}", "resources", "gpu", 1);
	b = tsubmit_gated_with(c, d, "b", "{s{si}}", "resources", "gpu", 1);
	(void)trunning_pid(c, a);
	(void)trunning_pid(c, b);
	assert_string_equal(gpus_of(c, b, buf, sizeof buf), "1");
	topen_gate(d, "a");
	json_decref(twait(c, a));

	c = crash_and_restart(d, c);
	got = tget(c, b);
	assert_string_equal(tstate(got), "running");
	assert_int_equal(tjint(got, "attempt"), 1);
	json_decref(got);
	assert_string_equal(gpus_of(c, b, buf, sizeof buf), "1");
	next = tsubmit_gated_with(c, d, "next", "{s{si}}", "resources", "gpu",
	    1);
	(void)trunning_pid(c, next);
	assert_string_equal(gpus_of(c, next, buf, sizeof buf), "0");
	more = tsubmit_gated_with(c, d, "more", "{s{si}}", "resources", "gpu",
	    1);
	got = tget(c, more);
	assert_string_equal(tstate(got), "queued");
	assert_string_equal(tjstr(got, "pending_reason"), "resource:gpu");
	json_decref(got);
	topen_gate(d, "b");
	topen_gate(d, "next");
	topen_gate(d, "more");
	got = twait(c, b);
	assert_string_equal(tstate(got), "succeeded");
	assert_int_equal(tjint(got, "attempt"), 1);
	json_decref(got);
	json_decref(twait(c, more));
	tdaemon_end(d, c);
}

/* An adopted job's timeout counts from its start, not from the adoption:
 * a 3 s timeout with the daemon down for 2.5 s of it ends the job about
 * 3 s after its start, where one counted afresh would take 5.5 s. */
static void
an_adopted_jobs_timeout_counts_from_its_start(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	int64_t job, started, ended, down_until;
	json_t *got;

	(void)state;
	job = tsubmit(c, "{s[ss]sf}", "argv", "sleep", "300", "timeout", 3.0);
	(void)trunning_pid(c, job);
	got = tget(c, job);
	assert_int_equal(timefmt_parse(tjstr(got, "started_at"), &started), 0);
	json_decref(got);
	triage_client_free(c);
	tdaemon_crash(d);
	/* Down for most of its timeout: the point of the test is the time
	 * that passes while no daemon runs. */
	down_until = started + 2500;
	while (timefmt_now() < down_until)
		poll(NULL, 0, (int)(down_until - timefmt_now()));
	tdaemon_restart(d);
	c = tconnect(d);
	got = twait(c, job);
	assert_string_equal(tstate(got), "timed_out");
	assert_int_equal(tjint(got, "attempt"), 1);
	assert_int_equal(timefmt_parse(tjstr(got, "finished_at"), &ended), 0);
	json_decref(got);
	if (ended - started >= 5000)
		fail_msg("timed out %lld ms after its start",
		    (long long)(ended - started));
	tdaemon_end(d, c);
}

/* A frozen job stays frozen across the crash, and thaws under the next
 * daemon, which took it over. */
static void
a_frozen_job_is_taken_over_frozen(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	int64_t job;
	json_t *got;
	char *text;

	(void)state;
	job = submit_counter(c, d, 20, 10);
	(void)wait_lines_over(c, job, 2);
	got = tcall(c, "freeze", "{sI}", "id", (json_int_t)job);
	assert_true(json_is_true(json_object_get(got, "frozen")));
	json_decref(got);

	c = crash_and_restart(d, c);
	got = tget(c, job);
	assert_string_equal(tstate(got), "running");
	assert_true(json_is_true(json_object_get(got, "frozen")));
	json_decref(got);
	got = tcall(c, "thaw", "{sI}", "id", (json_int_t)job);
	assert_false(json_is_true(json_object_get(got, "frozen")));
	json_decref(got);
	topen_gate(d, "go");
	got = twait(c, job);
	assert_string_equal(tstate(got), "succeeded");
	assert_int_equal(tjint(got, "attempt"), 1);
	json_decref(got);
	text = stdout_of(c, job);
	assert_counter(text, 20);
	free(text);
	tdaemon_end(d, c);
}

/*
 * (d): shutdown = keep: SIGTERM leaves the running job to its worker, the
 * daemon exits at once, and the next start takes it over: it ends
 * succeeded as attempt 1 with its whole output.
 */
static void
keep_leaves_jobs_for_the_next_start(void **state)
{
	struct tdaemon *d = tdaemon_start("shutdown = keep\n");
	struct triage_client *c = tconnect(d);
	int64_t job;
	pid_t pid;
	json_t *got;
	char *text;

	(void)state;
	job = submit_counter(c, d, 20, 5);
	pid = trunning_pid(c, job);
	(void)wait_lines_over(c, job, 4);
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	assert_true(tlog_has(d, "left to its workers for the next start"));
	assert_true(tpid_alive(pid));

	tdaemon_restart(d);
	c = tconnect(d);
	twait_log(d, "taken over from an earlier daemon");
	topen_gate(d, "go");
	got = twait(c, job);
	assert_string_equal(tstate(got), "succeeded");
	assert_int_equal(tjint(got, "attempt"), 1);
	json_decref(got);
	text = stdout_of(c, job);
	assert_counter(text, 20);
	free(text);
	tdaemon_end(d, c);
}

/*
 * Asserts that the orphaned worker holds nothing of its dead daemon's:
 * /dev/null as stdin, stdout and stderr (not the daemon's log), and
 * besides only its socket, signalfd, its job's pipes, capture files,
 * result file and cgroups.
 */
static void
assert_holds_its_own(const struct tdaemon *d, pid_t worker)
{
	char dir[64], path[600], to[600], output[400];
	struct dirent *de;
	ssize_t n;
	DIR *fds;
	int fd;

	snprintf(output, sizeof output, "%s/output/", d->state);
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)worker);
	assert_non_null(fds = opendir(dir));
	while ((de = readdir(fds)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if ((n = readlink(path, to, sizeof to - 1)) <= 0)
			continue;	/* closed since */
		to[n] = '\0';
		/* valgrind's own, at the top of the table, out of the
		 * worker's reach */
		if (twrapped() && fd >= 1024)
			continue;
		if (fd <= 2 ? strcmp(to, "/dev/null") == 0 :
		    strcmp(to, "/dev/null") == 0 ||
		    strncmp(to, "socket:[", 8) == 0 ||
		    strncmp(to, "pipe:[", 6) == 0 ||
		    strcmp(to, "anon_inode:[signalfd]") == 0 ||
		    strcmp(to, "/memfd:triage-result (deleted)") == 0 ||
		    strncmp(to, output, strlen(output)) == 0 ||
		    strncmp(to, "/sys/fs/cgroup/", 15) == 0)
			continue;
		closedir(fds);
		fail_msg("worker %d holds fd %d: %s", (int)worker, fd, to);
	}
	closedir(fds);
}

/*
 * A daemon killed and never restarted leaves its worker, and the job it
 * keeps, running in a group of their own: the worker holds only what it
 * needs (not the daemon's stdout and stderr: whoever reads those would
 * wait for their end as long as the job runs), and the harness's clean-up
 * kills it and its job when the daemon is freed, cgroups or not (and
 * whatever /proc calls it: under valgrind a worker is no
 * "triaged-worker").
 */
static void
an_orphaned_worker_holds_its_own_only_and_goes_with_the_test(void **state)
{
	struct tdaemon *d = tdaemon_start("cgroups = off\n");
	struct triage_client *c = tconnect(d);
	pid_t pid, worker;
	int64_t job;

	(void)state;
	job = tsubmit(c, "{s[ss]}", "argv", "sleep", "300");
	pid = trunning_pid(c, job);
	worker = tppid(pid);
	assert_true(worker > 0);
	triage_client_free(c);
	tdaemon_crash(d);
	wait_path(adopt_path(d, job, 1, "sock"), true);
	assert_true(tpid_alive(worker));
	assert_holds_its_own(d, worker);
	tdaemon_free(d);
	twait_gone(worker);
	twait_gone(pid);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_job_outlives_three_crashes),
		cmocka_unit_test(an_end_while_no_daemon_runs_is_recorded),
		cmocka_unit_test(a_lost_holder_means_a_new_attempt),
		cmocka_unit_test(a_silent_holder_is_killed),
		cmocka_unit_test(a_first_byte_while_orphaned_is_kept),
		cmocka_unit_test(another_attempts_files_are_fenced_off),
		cmocka_unit_test(what_answers_must_be_the_jobs_worker),
		cmocka_unit_test(an_adopted_job_keeps_its_units),
		cmocka_unit_test(a_frozen_job_is_taken_over_frozen),
		cmocka_unit_test(an_adopted_jobs_timeout_counts_from_its_start),
		cmocka_unit_test(keep_leaves_jobs_for_the_next_start),
		cmocka_unit_test(
		    an_orphaned_worker_holds_its_own_only_and_goes_with_the_test),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
