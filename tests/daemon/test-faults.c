/* test-faults.c - a real triaged under load and faults: a worker killed
 * mid-job, many jobs and no zombies, hundreds of clients busy or silent,
 * max_clients, and each way of shutting down. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "proc.h"

/* Zombies whose parent is the daemon or one of its children. */
static int
zombies_under(pid_t daemon)
{
	pid_t zombies[256], ppid;
	int n, i, under = 0;

	n = proc_find(0, 0, PROC_ZOMBIE, zombies, 256);
	for (i = 0; i < n && i < 256; i++)
		if (proc_stat(zombies[i], &(char){ 0 }, &ppid, NULL, NULL) ==
		    0 && (ppid == daemon || tppid(ppid) == daemon))
			under++;
	return under;
}

static void
test_worker_killed_mid_job(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 2\n");
	struct triage_client *c = tconnect(d);
	pid_t pid, worker;
	json_t *job, *stats;
	int64_t id;

	(void)state;
	id = tsubmit(c, "{s[ss]}", "argv", "sleep", "300");
	pid = trunning_pid(c, id);
	worker = tppid(pid);
	assert_true(worker > 0 && worker != d->pid);
	assert_int_equal(tppid(worker), d->pid);
	assert_int_equal(kill(worker, SIGKILL), 0);
	job = twait(c, id);
	assert_string_equal(tstate(job), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(job,
	    "reason")), "SIGKILL"));
	json_decref(job);
	/* The job went with its worker; a new worker took its place. */
	twait_gone(pid);
	stats = tcall(c, "stats", "{}");
	assert_int_equal(json_integer_value(json_object_get(stats, "workers")),
	    2);
	json_decref(stats);
	job = twait(c, tsubmit(c, "{s[s]}", "argv", "true"));
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	job = twait(c, tsubmit(c, "{s[s]}", "argv", "true"));
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	tdaemon_end(d, c);
}

/*
 * A worker that does not act (stopped here) cannot hold its job: once a
 * cancel has gone unheeded for kill_grace and a margin, the daemon kills
 * the job's process group itself, replaces the worker, and says so.
 */
static void
test_stuck_worker_loses_its_job_to_the_daemon(void **state)
{
	struct tdaemon *d = tdaemon_start("kill_grace = 300ms\n");
	struct triage_client *c = tconnect(d);
	pid_t pid, worker;
	int64_t id;
	json_t *job;

	(void)state;
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "echo $$; exec sleep 300");
	pid = toutput_pid(c, id);
	worker = tppid(pid);
	assert_true(worker > 0);
	tstop(worker);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	job = twait(c, id);
	assert_string_equal(tstate(job), "canceled");
	assert_non_null(strstr(tjstr(job, "reason"), "canceled by uid"));
	assert_non_null(strstr(tjstr(job, "reason"), "replaced the worker"));
	json_decref(job);
	twait_gone(pid);
	twait_gone(worker);
	twait_log(d, "its worker did not stop it within");
	/* Its replacement runs the next job. */
	job = twait(c, tsubmit(c, "{s[s]}", "argv", "true"));
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	tdaemon_end(d, c);
}

static void
test_no_zombies_after_a_thousand_jobs(void **state)
{
	/* A tenth under valgrind, where each job's fork costs some 0.2 s:
	 * the same pipeline, minutes shorter. */
	const int njobs = twrapped() ? 100 : 1000;
	struct tdaemon *d = tdaemon_start("slots = 2\n");
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t got, last = 0;
	json_t *res;
	int i;

	(void)state;
	for (i = 0; i < njobs; i++)
		assert_true(triage_client_send(c, "submit", json_pack("{s[s]}",
		    "argv", i % 10 ? "true" : "false"), &e) > 0);
	for (i = 0; i < njobs; i++) {
		res = triage_client_recv(c, &got, HARNESS_TIMEOUT_MS, &e);
		assert_non_null(res);
		if (json_integer_value(json_object_get(res, "id")) > last)
			last = json_integer_value(json_object_get(res, "id"));
		json_decref(res);
	}
	/* Ids are given in order, so the last one ending means... not all
	 * have: wait for each. */
	for (i = 0; i < njobs; i++)
		json_decref(twait(c, last - i));
	res = tcall(c, "stats", "{}");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(res,
	    "jobs"), "succeeded")), njobs - njobs / 10);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(res,
	    "jobs"), "failed")), njobs / 10);
	json_decref(res);
	assert_int_equal(zombies_under(d->pid), 0);
	tdaemon_end(d, c);
}

struct submitter {
	struct tdaemon *d;
	int64_t ids[20];
	int errors;
};

static void *
submitter_main(void *arg)
{
	struct submitter *s = arg;
	struct triage_error e;
	struct triage_client *c;
	char *cause;
	json_t *res;
	int i;

	if ((c = triage_client_connect(s->d->sock, &cause)) == NULL) {
		free(cause);
		s->errors++;
		return NULL;
	}
	for (i = 0; i < 20; i++) {
		res = triage_client_call(c, "submit", json_pack("{s[s]}",
		    "argv", "true"), 60000, &e);
		if (res == NULL) {
			s->errors++;
			continue;
		}
		s->ids[i] = json_integer_value(json_object_get(res, "id"));
		json_decref(res);
	}
	triage_client_free(c);
	return NULL;
}

static int
cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
test_300_clients_submitting_at_once_get_unique_ids(void **state)
{
	enum { NC = 300 };
	struct tdaemon *d = tdaemon_start("slots = 2\n");
	struct triage_client *c = tconnect(d);
	struct submitter *subs = calloc(NC, sizeof *subs);
	pthread_t threads[NC];
	int64_t *all = calloc(NC * 20, sizeof *all);
	pthread_attr_t attr;
	json_t *stats;
	int i, k;

	(void)state;
	/* Nothing runs: this is about taking submissions. */
	json_decref(tcall(c, "pause", "{}"));
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < NC; i++) {
		subs[i].d = d;
		assert_int_equal(pthread_create(&threads[i], &attr,
		    submitter_main, &subs[i]), 0);
	}
	for (i = 0; i < NC; i++) {
		pthread_join(threads[i], NULL);
		assert_int_equal(subs[i].errors, 0);
		for (k = 0; k < 20; k++)
			all[i * 20 + k] = subs[i].ids[k];
	}
	qsort(all, NC * 20, sizeof *all, cmp_id);
	for (i = 0; i < NC * 20; i++) {
		assert_true(all[i] > 0);
		if (i > 0)
			assert_true(all[i] != all[i - 1]);
	}
	stats = tcall(c, "stats", "{}");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    stats, "jobs"), "queued")), NC * 20);
	json_decref(stats);
	pthread_attr_destroy(&attr);
	free(subs);
	free(all);
	tdaemon_end(d, c);
}

static int
raw_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof sun.sun_path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	return fd;
}

static void
test_silent_connections_do_not_hold_up_others(void **state)
{
	enum { NS = 200 };
	struct tdaemon *d = tdaemon_start("slots = 2\n");
	struct triage_client *c;
	int fds[NS], i;
	json_t *job;

	(void)state;
	/* Silent ones, and ones stuck in the middle of a line. */
	for (i = 0; i < NS; i++) {
		fds[i] = raw_connect(d->sock);
		if (i % 2)
			assert_int_equal(write(fds[i], "{\"jsonrpc\":\"2.0\",", 17),
			    17);
	}
	c = tconnect(d);
	json_decref(tcall(c, "stats", "{}"));
	job = twait(c, tsubmit(c, "{s[s]}", "argv", "true"));
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	triage_client_free(c);
	for (i = 0; i < NS; i++)
		close(fds[i]);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_free(d);
}

static void
test_connections_beyond_max_clients_are_refused(void **state)
{
	struct tdaemon *d = tdaemon_start("max_clients = 3\n");
	struct triage_client *c[3], *extra;
	struct triage_error e;
	char *cause = NULL;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		c[i] = tconnect(d);
		json_decref(tcall(c[i], "stats", "{}"));
	}
	extra = triage_client_connect(d->sock, &cause);
	if (extra != NULL) {
		assert_null(triage_client_call(extra, "stats", NULL, 30000,
		    &e));
		assert_int_equal(e.code, TRIAGE_ERR_TRANSPORT);
		triage_client_free(extra);
	}
	free(cause);
	/* Room again once one leaves. */
	triage_client_free(c[0]);
	json_decref(tcall(c[1], "stats", "{}"));	/* the close is seen */
	c[0] = tconnect(d);
	json_decref(tcall(c[0], "stats", "{}"));
	for (i = 0; i < 3; i++)
		triage_client_free(c[i]);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_free(d);
}

/* SIGTERM with one job running and one queued; returns whether the
 * queued one ran, as the watch notifications tell it. */
static bool
shutdown_with(const char *mode, const char *running_ends_as)
{
	char conf[64];
	struct tdaemon *d;
	struct triage_client *c, *w;
	struct triage_error e;
	int64_t run_id, queued_id, deadline;
	bool queued_ran = false, was_running = false;
	char ended_as[32] = "";
	json_t *msg, *job, *res;
	int status, err;

	snprintf(conf, sizeof conf, "slots = 1\nshutdown = %s\n"
	    "kill_grace = 1s\n", mode);
	d = tdaemon_start(conf);
	c = tconnect(d);
	w = tconnect(d);
	json_decref(tcall(w, "watch", "{}"));
	run_id = tsubmit_gated(c, d, "go", true);
	queued_id = tsubmit(c, "{s[s]}", "argv", "true");
	(void)trunning_pid(c, run_id);
	assert_true(triage_client_send(c, "wait", json_pack("{sI}", "id",
	    (json_int_t)run_id), &e) > 0);
	json_decref(tcall(w, "stats", "{}"));
	kill(d->pid, SIGTERM);
	/* Stopping has begun once the socket path is gone; from then on
	 * submissions on open connections are refused. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	while (access(d->sock, F_OK) == 0) {
		tcheck_deadline(deadline, "%s to go at SIGTERM", d->sock);
		usleep(1000);
	}
	res = triage_client_call(c, "submit", json_pack("{s[s]}", "argv",
	    "true"), HARNESS_TIMEOUT_MS, &e);
	err = errno;
	assert_null(res);
	/* Requeue stops the running job (SIGTERM, SIGKILL after
	 * kill_grace) and exits, maybe before the submit comes: then the
	 * connection closed at its exit is the refusal. Finish and drain
	 * wait for the gate, which opens below, so they always answer. */
	if (e.code == TRIAGE_ERR_TRANSPORT && strcmp(mode, "requeue") == 0) {
		if (err != ECONNRESET && err != EPIPE)
			fail_msg("submit while stopping: %s", e.message);
	} else
		assert_int_equal(e.code, -32004);
	if (strcmp(mode, "requeue") != 0)
		topen_gate(d, "go");
	/* Every notification until the daemon closes the connection at its
	 * exit. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	while ((msg = triage_client_notification(w, tleft_ms(deadline), &e))
	    != NULL) {
		job = json_object_get(msg, "params");
		if (json_integer_value(json_object_get(job, "id")) == queued_id &&
		    strcmp(tstate(job), "running") == 0)
			queued_ran = true;
		/* What the running one became, after it ran. */
		if (json_integer_value(json_object_get(job, "id")) == run_id) {
			if (strcmp(tstate(job), "running") == 0)
				was_running = true;
			else if (was_running)
				snprintf(ended_as, sizeof ended_as, "%s",
				    tstate(job));
		}
		json_decref(msg);
		tcheck_deadline(deadline, "the daemon to exit (shutdown = %s)",
		    mode);
	}
	err = errno;
	assert_int_equal(e.code, TRIAGE_ERR_TRANSPORT);
	if (err == ETIMEDOUT)
		fail_msg("timed out waiting for the daemon to exit "
		    "(shutdown = %s)", mode);
	assert_string_equal(ended_as, running_ends_as);
	assert_int_equal(waitpid(d->pid, &status, 0), d->pid);
	d->pid = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	triage_client_free(w);
	triage_client_free(c);
	tdaemon_free(d);
	return queued_ran;
}

static void
test_shutdown_finish_waits_for_running_only(void **state)
{
	(void)state;
	assert_false(shutdown_with("finish", "succeeded"));
}

static void
test_shutdown_drain_runs_the_queue_too(void **state)
{
	(void)state;
	assert_true(shutdown_with("drain", "succeeded"));
}

static void
test_shutdown_requeue_stops_running_jobs(void **state)
{
	(void)state;
	/* Back in its queue for the next start (test-durable restarts). */
	assert_false(shutdown_with("requeue", "queued"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker_killed_mid_job),
		cmocka_unit_test(test_stuck_worker_loses_its_job_to_the_daemon),
		cmocka_unit_test(test_no_zombies_after_a_thousand_jobs),
		cmocka_unit_test(test_300_clients_submitting_at_once_get_unique_ids),
		cmocka_unit_test(test_silent_connections_do_not_hold_up_others),
		cmocka_unit_test(test_connections_beyond_max_clients_are_refused),
		cmocka_unit_test(test_shutdown_finish_waits_for_running_only),
		cmocka_unit_test(test_shutdown_drain_runs_the_queue_too),
		cmocka_unit_test(test_shutdown_requeue_stops_running_jobs),
	};

	return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}
