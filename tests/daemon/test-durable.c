/* test-durable.c - what survives: restarts and kill -9 of a real triaged,
 * retries, dependencies, pruning, an older database file, a full disk. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "harness.h"

static void
test_restart_keeps_queued_jobs_in_order_with_their_ids(void **state)
{
	enum { N = 1000 };
	struct tdaemon *d = tdaemon_start("slots = 1\nkill_grace = 1s\n");
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t first = 0, id, got;
	json_t *res, *job;
	int i, queued = 0;
	size_t k;

	(void)state;
	for (i = 0; i < N; i++)
		assert_true(triage_client_send(c, "submit", json_pack("{s[ss]}",
		    "argv", "sleep", "300"), &e) > 0);
	for (i = 0; i < N; i++) {
		res = triage_client_recv(c, &got, 30000, &e);
		assert_non_null(res);
		id = tjint(res, "id");
		if (first == 0 || id < first)
			first = id;
		json_decref(res);
	}
	(void)trunning_pid(c, first);
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);

	tdaemon_restart(d);
	c = tconnect(d);
	/* The first was running: it comes back first, a second attempt,
	 * and runs again before any other. */
	(void)trunning_pid(c, first);
	job = tget(c, first);
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	/* The rest in their order, with their ids. */
	res = tcall(c, "list", "{s[s]si}", "state", "queued", "limit", N);
	json_array_foreach(json_object_get(res, "jobs"), k, job) {
		assert_int_equal(tjint(job, "id"), first + 1 + (int64_t)k);
		assert_int_equal(tjint(job, "position"), (int64_t)k);
		queued++;
	}
	json_decref(res);
	assert_int_equal(queued, N - 1);
	/* New ids follow the old ones: right after them, but in a cluster,
	 * whose daemons take ids from its sequence ahead, in blocks. */
	id = tsubmit(c, "{s[s]}", "argv", "true");
	if (tcluster())
		assert_true(id >= first + N);
	else
		assert_int_equal(id, first + N);
	tdaemon_end(d, c);
}

/* The kill comes after 1 to this many acknowledgements in a round. */
#define STORM_ACKS 3000

/* Waits until n more lines (ids the storm clients were told) are in the
 * file that fd reads, from where it is. */
static void
wait_acked(int fd, int n)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	char buf[4096];
	ssize_t got, i;
	int seen = 0;

	while (seen < n) {
		if ((got = read(fd, buf, sizeof buf)) > 0) {
			for (i = 0; i < got; i++)
				seen += buf[i] == '\n';
			continue;
		}
		tcheck_deadline(deadline, "%d acknowledged submissions (%d "
		    "came)", n, seen);
		usleep(1000);
	}
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
test_crash_storm_loses_no_acknowledged_job(void **state)
{
	enum { ROUNDS = 20, CLIENTS = 4 };
	struct tdaemon *d;
	int64_t *acked = NULL, *stored = NULL, long_job = 0, id;
	size_t nacked = 0, capacked = 0, nstored = 0, capstored, k;
	char path[400], line[32];
	pid_t pids[CLIENTS], long_pid, grandchild;
	struct triage_client *c;
	json_t *res, *job;
	int round, i, fd, rfd, status;
	FILE *f;

	(void)state;
	if (twrapped()) {
		/* Each daemon dies of SIGKILL, which leaves valgrind no
		 * report to write; the thousands of jobs the storms queue
		 * would take hours. */
		print_message("skipped: a kill -9 storm under valgrind\n");
		skip();
	}
	d = tdaemon_start("slots = 2\n");
	snprintf(path, sizeof path, "%s/acked", d->dir);
	srand((unsigned)time(NULL));
	for (round = 0; round < ROUNDS; round++) {
		if (round > 0)
			tdaemon_restart(d);
		c = tconnect(d);
		/* Last round's long job was running at the kill: its worker
		 * kept it, and this daemon took it over as the same attempt
		 * (issue 26). Its cancel ends all of it. */
		if (long_job != 0) {
			job = tget(c, long_job);
			assert_int_equal(tjint(job, "attempt"), 1);
			assert_string_equal(tstate(job), "running");
			json_decref(job);
			json_decref(tcall(c, "cancel", "{sI}", "id",
			    (json_int_t)long_job));
			json_decref(twait(c, long_job));
			twait_gone(long_pid);
			twait_gone(grandchild);
		}
		/* Ahead of the flood the last rounds left queued; with a
		 * child of its own in the background. */
		long_job = tsubmit(c, "{s[sss]ss}", "argv", "sh", "-c",
		    "sleep 300 & echo $!; wait", "priority", "high");
		long_pid = trunning_pid(c, long_job);
		grandchild = toutput_pid(c, long_job);
		triage_client_free(c);

		fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
		assert_true(fd >= 0);
		assert_true((rfd = open(path, O_RDONLY)) >= 0);
		assert_true(lseek(rfd, 0, SEEK_END) != -1);
		for (i = 0; i < CLIENTS; i++)
			if ((pids[i] = fork()) == 0)
				tstorm(d->sock, "low", fd);
		close(fd);
		/* The moment: after a random number of acknowledgements,
		 * with more submissions on their way. */
		wait_acked(rfd, 1 + rand() % STORM_ACKS);
		close(rfd);
		tdaemon_crash(d);
		for (i = 0; i < CLIENTS; i++) {
			assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				fail_msg("storm client %d: status %#x", i,
				    status);
		}
		/* The running jobs outlive it, with their workers. */
		assert_true(tpid_alive(long_pid));
		assert_true(tpid_alive(grandchild));
	}

	tdaemon_restart(d);
	c = tconnect(d);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof line, f) != NULL) {
		if (nacked == capacked) {
			capacked = capacked ? capacked * 2 : 1024;
			acked = realloc(acked, capacked * sizeof *acked);
		}
		acked[nacked++] = atoll(line);
	}
	fclose(f);
	assert_true(nacked > 0);
	/* Every job stored, a page at a time, each after the one before:
	 * no more than were ever submitted (the acknowledged ones, those a
	 * client had on their way at a kill, a long job a round). */
	capstored = nacked + ROUNDS * (CLIENTS * TSTORM_OUT + 1);
	assert_non_null(stored = calloc(capstored, sizeof *stored));
	for (id = 0;;) {
		res = tcall(c, "list", "{sIsi}", "after_id", (json_int_t)id,
		    "limit", 10000);
		if (json_array_size(json_object_get(res, "jobs")) == 0) {
			json_decref(res);
			break;
		}
		json_array_foreach(json_object_get(res, "jobs"), k, job) {
			if (nstored == capstored)
				fail_msg("more than %zu jobs stored, of %zu "
				    "acknowledged", capstored, nacked);
			if (tjint(job, "id") <= id)
				fail_msg("list after id %lld gave job %lld",
				    (long long)id, (long long)tjint(job, "id"));
			id = tjint(job, "id");
			stored[nstored++] = id;
		}
		json_decref(res);
	}
	qsort(acked, nacked, sizeof *acked, cmp_i64);
	for (k = 1; k < nstored; k++)
		assert_true(stored[k] > stored[k - 1]);	/* none twice */
	for (k = 0; k < nacked; k++) {
		if (k > 0)
			assert_true(acked[k] != acked[k - 1]);
		assert_non_null(bsearch(&acked[k], stored, nstored,
		    sizeof *stored, cmp_i64));
	}
	print_message("crash storm: %zu acknowledged submissions over %d "
	    "kills, all kept (%zu jobs stored)\n", nacked, ROUNDS, nstored);
	free(acked);
	free(stored);
	tdaemon_end(d, c);
}

static void
test_retries_until_success_or_exhaustion(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 2\n"
	    "[priority.normal]\nrank = 10\n"
	    "[priority.flaky]\nrank = 20\nretries = 1\n");
	struct triage_client *c = tconnect(d);
	char script[1024];
	json_t *job;

	(void)state;
	job = twait(c, tsubmit(c, "{s[sss]si}", "argv", "sh", "-c", "exit 7",
	    "retries", 2));
	assert_string_equal(tstate(job), "failed");
	assert_int_equal(tjint(job, "attempt"), 3);
	assert_int_equal(tjint(job, "exit_code"), 7);
	json_decref(job);

	/* Fails once, then succeeds; the priority's default retries. */
	snprintf(script, sizeof script, "[ -e %s/flag ] || { touch %s/flag; "
	    "exit 1; }", d->dir, d->dir);
	job = twait(c, tsubmit(c, "{s[sss]ss}", "argv", "sh", "-c", script,
	    "priority", "flaky"));
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "attempt"), 2);
	/* The first attempt's failure is not the job's. */
	assert_true(json_is_null(json_object_get(job, "reason")));
	json_decref(job);

	/* A timeout is retried too. */
	job = twait(c, tsubmit(c, "{s[ss]sfsi}", "argv", "sleep", "30",
	    "timeout", 0.1, "retries", 1));
	assert_string_equal(tstate(job), "timed_out");
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	tdaemon_end(d, c);
}

static void
test_retry_method(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 2\n");
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	json_t *job, *page;
	int64_t bad, good, slow, envjob;

	(void)state;
	bad = tsubmit(c, "{s[s]}", "argv", "false");
	json_decref(twait(c, bad));
	job = tcall(c, "retry", "{sI}", "id", (json_int_t)bad);
	assert_int_equal(tjint(job, "attempt"), 2);
	assert_true(strcmp(tstate(job), "queued") == 0 ||
	    strcmp(tstate(job), "running") == 0);
	json_decref(job);
	job = twait(c, bad);
	assert_string_equal(tstate(job), "failed");
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);

	good = tsubmit(c, "{s[s]}", "argv", "true");
	json_decref(twait(c, good));
	assert_int_equal(tcall_error(c, "retry", &e, "{sI}", "id",
	    (json_int_t)good), -32005);
	slow = tsubmit(c, "{s[ss]}", "argv", "sleep", "300");
	assert_int_equal(tcall_error(c, "retry", &e, "{sI}", "id",
	    (json_int_t)slow), -32005);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)slow));
	json_decref(twait(c, slow));
	job = tcall(c, "retry", "{sI}", "id", (json_int_t)slow);
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)slow));

	/* A retried job runs with the environment it was submitted with,
	 * which an ended job keeps on disk only: also after a restart. */
	envjob = tsubmit(c, "{s[sss]s{ssss}}", "argv", "sh", "-c",
	    "echo $FOO; exit 1", "env", "FOO", "bar", "PATH", "/usr/bin:/bin");
	json_decref(twait(c, envjob));
	json_decref(tcall(c, "retry", "{sI}", "id", (json_int_t)envjob));
	json_decref(twait(c, envjob));
	page = tcall(c, "output", "{sIss}", "id", (json_int_t)envjob,
	    "stream", "stdout");
	assert_string_equal(tjstr(page, "data"), "bar\n");
	json_decref(page);
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	json_decref(tcall(c, "retry", "{sI}", "id", (json_int_t)envjob));
	job = twait(c, envjob);
	assert_int_equal(tjint(job, "attempt"), 3);
	json_decref(job);
	page = tcall(c, "output", "{sIss}", "id", (json_int_t)envjob,
	    "stream", "stdout");
	assert_string_equal(tjstr(page, "data"), "bar\n");
	json_decref(page);
	tdaemon_end(d, c);
}

static void
test_after_chains_success_failure_and_restart(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 4\n");
	struct triage_client *c = tconnect(d);
	json_t *ja, *jb, *jc;
	int64_t a, b, cc, f, g, h;

	(void)state;
	/* a, then b, then c: each starts after the one before ended. */
	a = tsubmit_gated(c, d, "gate-a", false);
	b = tsubmit(c, "{s[s]s[I]}", "argv", "true", "after", (json_int_t)a);
	cc = tsubmit(c, "{s[s]s[II]}", "argv", "true", "after", (json_int_t)a,
	    (json_int_t)b);
	jb = tget(c, b);
	assert_string_equal(tstate(jb), "queued");
	assert_true(json_is_null(json_object_get(jb, "position")));
	assert_int_equal(json_integer_value(json_array_get(json_object_get(jb,
	    "after"), 0)), a);
	json_decref(jb);

	/* ...and across a restart: a is requeued, b and c still wait. */
	assert_int_equal(tdaemon_stop(d), 0);
	triage_client_free(c);
	tdaemon_restart(d);
	c = tconnect(d);
	jb = tget(c, b);
	assert_string_equal(tstate(jb), "queued");
	json_decref(jb);
	topen_gate(d, "gate-a");
	jc = twait(c, cc);
	assert_string_equal(tstate(jc), "succeeded");
	ja = tget(c, a);
	jb = tget(c, b);
	assert_string_equal(tstate(ja), "succeeded");
	assert_string_equal(tstate(jb), "succeeded");
	assert_true(strcmp(tjstr(jb, "started_at"), tjstr(ja, "finished_at")) >= 0);
	assert_true(strcmp(tjstr(jc, "started_at"), tjstr(jb, "finished_at")) >= 0);
	json_decref(ja);
	json_decref(jb);
	json_decref(jc);

	/* A failure cancels what comes after it, all the way down. */
	f = tsubmit(c, "{s[s]}", "argv", "false");
	g = tsubmit(c, "{s[s]s[I]}", "argv", "true", "after", (json_int_t)f);
	h = tsubmit(c, "{s[s]s[I]}", "argv", "true", "after", (json_int_t)g);
	jc = twait(c, h);
	assert_string_equal(tstate(jc), "canceled");
	json_decref(jc);
	jb = tget(c, g);
	assert_string_equal(tstate(jb), "canceled");
	assert_non_null(strstr(tjstr(jb, "reason"), "failed"));
	json_decref(jb);
	/* After a job that already failed: canceled at once. */
	jb = twait(c, tsubmit(c, "{s[s]s[I]}", "argv", "true", "after",
	    (json_int_t)f));
	assert_string_equal(tstate(jb), "canceled");
	json_decref(jb);
	tdaemon_end(d, c);
}

static void
test_pruning_forgets_old_jobs_and_their_output(void **state)
{
	struct tdaemon *d = tdaemon_start("keep_finished = 1s\n");
	struct triage_client *c = tconnect(d);
	char path[400];
	int64_t id, next;

	(void)state;
	id = tsubmit(c, "{s[ss]}", "argv", "echo", "hello");
	json_decref(twait(c, id));
	snprintf(path, sizeof path, "%s/output/%lld.stdout", d->state,
	    (long long)id);
	assert_int_equal(access(path, F_OK), 0);
	twait_pruned(c, id);
	assert_int_equal(access(path, F_OK), -1);
	/* Its id is never given again, restart or not. */
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	next = tsubmit(c, "{s[s]}", "argv", "true");
	assert_true(next > id);
	tdaemon_end(d, c);
}

/* The pruning timer is armed for the oldest job's expiry, not ticking: a
 * restart arms it from the jobs on disk. */
static void
test_pruning_resumes_after_a_restart(void **state)
{
	struct tdaemon *d = tdaemon_start("keep_finished = 2s\n");
	struct triage_client *c = tconnect(d);
	int64_t id;

	(void)state;
	id = tsubmit(c, "{s[s]}", "argv", "true");
	tassert_ends(c, id, "succeeded");
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	twait_pruned(c, id);
	tdaemon_end(d, c);
}

/* A version 1 file, as an older triage wrote it, with one queued job. */
static void
write_v1_db(const char *dir)
{
	char path[400];
	sqlite3 *db;

	mkdir(dir, 0700);
	snprintf(path, sizeof path, "%s/triage.db", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
	    "CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, "
	    "name TEXT NOT NULL, argv TEXT NOT NULL, env TEXT NOT NULL, "
	    "cwd TEXT NOT NULL, priority TEXT NOT NULL, state TEXT NOT NULL, "
	    "slots INTEGER NOT NULL, exclusive INTEGER NOT NULL, "
	    "timeout_ms INTEGER NOT NULL, uid INTEGER NOT NULL, "
	    "gid INTEGER NOT NULL, submitted_at INTEGER, started_at INTEGER, "
	    "finished_at INTEGER, pid INTEGER, exit_code INTEGER, "
	    "signal INTEGER, reason TEXT, attempt INTEGER NOT NULL, "
	    "user_time REAL, system_time REAL, max_rss_kb INTEGER, "
	    "stdout_truncated INTEGER NOT NULL DEFAULT 0, "
	    "stderr_truncated INTEGER NOT NULL DEFAULT 0);"
	    "INSERT INTO jobs (id, name, argv, env, cwd, priority, state, "
	    "slots, exclusive, timeout_ms, uid, gid, submitted_at, attempt) "
	    "VALUES (41, 'old', '[\"sh\",\"-c\",\"echo from v1\"]', "
	    "'[\"PATH=/usr/bin:/bin\"]', '/', 'normal', 'queued', 1, 0, 0, "
	    "0, 0, 1700000000000, 1);"
	    "PRAGMA user_version = 1;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void
test_older_database_is_migrated(void **state)
{
	struct tdaemon *d;
	struct triage_client *c;
	json_t *job, *page;
	int64_t id;

	(void)state;
	if (tcluster()) {
		print_message("skipped: an older SQLite file, which a cluster "
		    "does not use\n");
		skip();
	}
	d = tdaemon_start(NULL);
	assert_int_equal(tdaemon_stop(d), 0);
	tremove_dir(d->state);
	write_v1_db(d->state);
	tdaemon_restart(d);
	c = tconnect(d);
	job = twait(c, 41);
	assert_string_equal(tstate(job), "succeeded");
	assert_string_equal(tjstr(job, "name"), "old");
	json_decref(job);
	page = tcall(c, "output", "{siss}", "id", 41, "stream", "stdout");
	assert_string_equal(tjstr(page, "data"), "from v1\n");
	json_decref(page);
	id = tsubmit(c, "{s[s]}", "argv", "true");
	assert_int_equal(id, 42);
	tdaemon_end(d, c);
}

static void
test_unusable_state_dir_is_a_clear_fatal_error(void **state)
{
	char dir[] = "/tmp/triage-test-XXXXXX", conf[300], log[300];
	char buf[4096] = "";
	int status;
	pid_t pid;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof conf, "%s/triage.conf", dir);
	snprintf(log, sizeof log, "%s/log", dir);
	assert_non_null(f = fopen(conf, "w"));
	/* The state dir is a file. */
	fprintf(f, "[daemon]\nsocket = %s/sock\nstate_dir = %s\n", dir, conf);
	fclose(f);
	if ((pid = fork()) == 0) {
		int fd = open(log, O_WRONLY | O_CREAT, 0600);

		dup2(fd, 2);
		texec_triaged(conf);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	assert_non_null(f = fopen(log, "r"));
	(void)!fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	assert_non_null(strstr(buf, conf));
	tremove_dir(dir);
}

static void
test_full_disk_fails_submissions_and_recovers(void **state)
{
	char dir[] = "/tmp/triage-test-XXXXXX", mnt[300], conf[1024], fill[400];
	struct tdaemon *d;
	struct triage_client *c;
	struct triage_error e;
	json_t *job;
	char buf[65536];
	int64_t failed;
	int fd, i, code = 0;

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: not root, cannot mount a small tmpfs\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(mnt, sizeof mnt, "%s/state", dir);
	assert_int_equal(mkdir(mnt, 0700), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=4m,mode=0700") != 0) {
		print_message("skipped: cannot mount a tmpfs (%s)\n",
		    strerror(errno));
		rmdir(mnt);
		rmdir(dir);
		skip();
	}
	d = tdaemon_start(NULL);
	/* Point a daemon of our own at the tmpfs. */
	assert_int_equal(tdaemon_stop(d), 0);
	snprintf(conf, sizeof conf, "[daemon]\nsocket = %s\nstate_dir = %s\n"
	    "log_level = debug\n", d->sock, mnt);
	{
		FILE *f = fopen(d->conf, "w");

		assert_non_null(f);
		fputs(conf, f);
		fclose(f);
	}
	tdaemon_restart(d);
	c = tconnect(d);
	json_decref(twait(c, tsubmit(c, "{s[s]}", "argv", "true")));
	failed = tsubmit(c, "{s[s]}", "argv", "false");
	json_decref(twait(c, failed));

	snprintf(fill, sizeof fill, "%s/filler", mnt);
	fd = open(fill, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	memset(buf, 'x', sizeof buf);
	while (write(fd, buf, sizeof buf) > 0)
		;
	close(fd);
	/* Full: a submission is refused as an internal error... */
	for (i = 0; i < 50 && code != -32603; i++) {
		job = triage_client_call(c, "submit", json_pack("{s[s]s{ss}}",
		    "argv", "true", "env", "PAD",
		    "a fairly long value to fill pages"), 30000, &e);
		if (job == NULL)
			code = e.code;
		json_decref(job);
	}
	assert_int_equal(code, -32603);
	assert_non_null(strstr(e.message, "full"));
	/* ...a retry too, and the job stays as it was... */
	assert_int_equal(tcall_error(c, "retry", &e, "{sI}", "id",
	    (json_int_t)failed), -32603);
	job = tcall(c, "get", "{sI}", "id", (json_int_t)failed);
	assert_string_equal(tstate(job), "failed");
	assert_int_equal(tjint(job, "attempt"), 1);
	assert_int_equal(tjint(job, "exit_code"), 1);
	assert_non_null(json_object_get(job, "finished_at"));
	json_decref(job);
	/* ...the daemon stays up... */
	json_decref(tcall(c, "stats", "{}"));
	/* ...and works again once there is room. */
	assert_int_equal(unlink(fill), 0);
	job = twait(c, tsubmit(c, "{s[s]}", "argv", "true"));
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	job = tcall(c, "retry", "{sI}", "id", (json_int_t)failed);
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	tdaemon_end(d, c);
	assert_int_equal(umount(mnt), 0);
	rmdir(mnt);
	rmdir(dir);
}

/* SIGTERM in the middle of a stream of submissions: a job exists exactly
 * when its client was told its id. */
static void
test_stopping_mid_stream_answers_every_stored_job(void **state)
{
	enum { N = 300 };
	struct tdaemon *d = tdaemon_start("shutdown = finish\n");
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t told[N], got, id, deadline;
	size_t ntold = 0, nstored = 0, k, i;
	json_t *res, *job;
	int status;

	(void)state;
	json_decref(tcall(c, "pause", "{}"));
	for (i = 0; i < N; i++)
		assert_true(triage_client_send(c, "submit", json_pack("{s[s]}",
		    "argv", "true"), &e) > 0);
	kill(d->pid, SIGTERM);
	/* An answer to each submit, until the daemon closes the connection
	 * at its exit. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (i = 0;; i++) {
		res = triage_client_recv(c, &got, tleft_ms(deadline), &e);
		if (res == NULL && e.code == TRIAGE_ERR_TRANSPORT) {
			if (errno == ETIMEDOUT)
				fail_msg("timed out waiting for the daemon to "
				    "exit (%zu answers came)", i);
			break;
		}
		if (i == N)
			fail_msg("more than %d answers to %d submits", N, N);
		if (res != NULL)
			told[ntold++] = tjint(res, "id");
		else
			assert_int_equal(e.code, -32004);
		json_decref(res);
	}
	triage_client_free(c);
	assert_int_equal(waitpid(d->pid, &status, 0), d->pid);
	d->pid = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	tdaemon_restart(d);
	c = tconnect(d);
	res = tcall(c, "list", "{si}", "limit", 10000);
	json_array_foreach(json_object_get(res, "jobs"), k, job) {
		id = tjint(job, "id");
		for (i = 0; i < ntold && told[i] != id; i++)
			;
		assert_true(i < ntold);		/* stored, so told */
		nstored++;
	}
	json_decref(res);
	assert_int_equal(nstored, ntold);	/* told, so stored */
	print_message("stopped mid-stream: %zu of %d submissions taken, "
	    "each answered\n", ntold, N);
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_keeps_queued_jobs_in_order_with_their_ids),
		cmocka_unit_test(test_crash_storm_loses_no_acknowledged_job),
		cmocka_unit_test(test_retries_until_success_or_exhaustion),
		cmocka_unit_test(test_retry_method),
		cmocka_unit_test(test_after_chains_success_failure_and_restart),
		cmocka_unit_test(test_pruning_forgets_old_jobs_and_their_output),
		cmocka_unit_test(test_pruning_resumes_after_a_restart),
		cmocka_unit_test(test_older_database_is_migrated),
		cmocka_unit_test(test_unusable_state_dir_is_a_clear_fatal_error),
		cmocka_unit_test(test_full_disk_fails_submissions_and_recovers),
		cmocka_unit_test(test_stopping_mid_stream_answers_every_stored_job),
	};

	return cmocka_run_group_tests_name("durable", tests, NULL, NULL);
}
