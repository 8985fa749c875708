/* test-lifecycle.c - a real triaged's start and stop: one daemon per state
 * dir, Ctrl-C on its terminal, truthful stop logs, priorities removed. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

/* A second daemon on the same state_dir, with a socket of its own, would
 * run the first one's jobs again: it refuses, naming the dir and the pid. */
static void
test_second_daemon_on_the_same_state_dir_refuses(void **state)
{
	struct tdaemon *d = tdaemon_start(NULL);
	char conf[400], out[400], text[4096], want[1024];
	int status;

	(void)state;
	snprintf(conf, sizeof conf, "%s/second.conf", d->dir);
	snprintf(out, sizeof out, "%s/second.log", d->dir);
	twrite_text(conf, "[daemon]\nsocket = %s/second.sock\nstate_dir = %s\n",
	    d->dir, d->state);
	status = trun_refused(conf, out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	tread_text(out, text, sizeof text);
	snprintf(want, sizeof want, "state_dir %s is in use by another "
	    "triaged (pid %d, holding %s/lock)", d->state, (int)d->pid,
	    d->state);
	if (strstr(text, want) == NULL)
		fail_msg("wanted \"%s\" in: %s", want, text);
	tdaemon_end(d, tconnect(d));
}

/*
 * Ctrl-C on `make run` sends SIGINT to the terminal's whole process group.
 * Only the daemon takes it, as a SIGTERM: its workers and jobs are out of
 * that group, and the job gets its graceful SIGTERM from the daemon.
 */
static void
test_sigint_to_the_process_group_is_a_graceful_stop(void **state)
{
	struct tdaemon *d = tdaemon_start("kill_grace = 30s\n");
	struct triage_client *c = tconnect(d);
	char script[600], path[400];
	struct timespec ts = { 0, 10 * 1000000 };
	struct stat st;
	int64_t id;
	int status, i;

	(void)state;
	snprintf(path, sizeof path, "%s/got-term", d->dir);
	snprintf(script, sizeof script, "trap 'echo > %s; exit 0' TERM; "
	    "echo $$; while :; do sleep 0.05; done", path);
	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	(void)toutput_pid(c, id);
	triage_client_free(c);
	assert_int_equal(kill(-d->pid, SIGINT), 0);
	/* It stops by itself: the job ends on its SIGTERM at once. */
	for (i = 0; i < 3000 && waitpid(d->pid, &status, WNOHANG) == 0; i++)
		nanosleep(&ts, NULL);
	assert_true(i < 3000);
	d->pid = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(tlog_has(d, "SIGINT: stopping (shutdown = requeue)"));
	assert_false(tlog_has(d, "worker 1 (pid"));
	tdaemon_free(d);
}

/* What the log says of a stop is what happened: a running job stopped
 * with the daemon is requeued, not lost; no worker "died". */
static void
test_stop_log_says_what_happens(void **state)
{
	struct tdaemon *d = tdaemon_start("kill_grace = 1s\n");
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t id;

	(void)state;
	id = tsubmit(c, "{s[ss]}", "argv", "sleep", "300");
	(void)trunning_pid(c, id);
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	assert_true(tlog_has(d, "stopped with the daemon; attempt 2 goes "
	    "first at the next start"));
	assert_false(tlog_has(d, "lost"));
	assert_false(tlog_has(d, "died"));
	tdaemon_restart(d);
	c = tconnect(d);
	job = tget(c, id);
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	tdaemon_end(d, c);
}

/*
 * A priority removed from the config while it still holds jobs: the daemon
 * refuses to start, saying which and how many, and what to do; with the
 * section back it starts and the jobs are there.
 */
static void
test_removed_priority_with_jobs_refuses_to_start(void **state)
{
	struct tdaemon *d = tdaemon_start("[priority.extra]\nrank = 30\n"
	    "[priority.normal]\nrank = 10\n");
	struct triage_client *c = tconnect(d);
	char out[400], text[4096];
	json_t *job;
	int64_t a, b;
	int status, i;

	(void)state;
	json_decref(tcall(c, "pause", "{ss}", "priority", "extra"));
	a = tsubmit(c, "{s[s]ss}", "argv", "true", "priority", "extra");
	b = tsubmit(c, "{s[s]ss}", "argv", "true", "priority", "extra");
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);

	tdaemon_rewrite(d, "[priority.normal]\nrank = 10\n");
	snprintf(out, sizeof out, "%s/refused.log", d->dir);
	status = trun_refused(d->conf, out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	tread_text(out, text, sizeof text);
	if (strstr(text, "priority extra is not in the config, but 2 of its "
	    "jobs are queued or running: put its section back") == NULL)
		fail_msg("not said: %s", text);

	tdaemon_rewrite(d, "[priority.normal]\nrank = 10\n[priority.extra]\n"
	    "rank = 30\n");
	tdaemon_restart(d);
	c = tconnect(d);
	/* Still paused, as before the stop. */
	json_decref(tcall(c, "resume", "{ss}", "priority", "extra"));
	for (i = 0; i < 2; i++) {
		job = twait(c, i == 0 ? a : b);
		assert_string_equal(tstate(job), "succeeded");
		json_decref(job);
	}
	tdaemon_end(d, c);
}

/* Whether priority name is paused, by stats. */
static bool
paused(struct triage_client *c, const char *name)
{
	json_t *stats = tcall(c, "stats", "{}"), *p;
	bool found = false, is = false;
	size_t i;

	json_array_foreach(json_object_get(stats, "priorities"), i, p)
		if (strcmp(tjstr(p, "name"), name) == 0) {
			found = true;
			is = json_is_true(json_object_get(p, "paused"));
		}
	json_decref(stats);
	assert_true(found);
	return is;
}

/*
 * A paused priority stays paused across a restart, with its jobs queued;
 * a crash too; resumed, it stays resumed. The stop's own pausing (shutdown
 * pauses every priority) is not remembered.
 */
static void
test_pause_survives_restarts(void **state)
{
	struct tdaemon *d = tdaemon_start(NULL);
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t id;

	(void)state;
	json_decref(tcall(c, "pause", "{ss}", "priority", "low"));
	id = tsubmit(c, "{s[s]ss}", "argv", "true", "priority", "low");
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	assert_true(paused(c, "low"));
	assert_false(paused(c, "normal"));
	assert_false(paused(c, "high"));
	job = tget(c, id);
	assert_string_equal(tstate(job), "queued");
	json_decref(job);
	triage_client_free(c);
	tdaemon_crash(d);
	tdaemon_restart(d);
	c = tconnect(d);
	assert_true(paused(c, "low"));
	json_decref(tcall(c, "resume", "{ss}", "priority", "low"));
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	assert_false(paused(c, "low"));
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_daemon_on_the_same_state_dir_refuses),
		cmocka_unit_test(test_sigint_to_the_process_group_is_a_graceful_stop),
		cmocka_unit_test(test_stop_log_says_what_happens),
		cmocka_unit_test(test_removed_priority_with_jobs_refuses_to_start),
		cmocka_unit_test(test_pause_survives_restarts),
	};

	return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL);
}
