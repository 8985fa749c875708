/* test-cli-reconnect.c - triage wait, output -f and watch across a restart
 * of triaged: they reconnect, say so once, and carry on to the job's end. */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"

/* How many times needle is in haystack. */
static int
tcount(const char *haystack, const char *needle)
{
	const char *p;
	int n = 0;

	for (p = haystack; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* Waits until the file of a background triage holds text. */
static void
twait_file(const char *path, const char *text)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	char *buf;

	for (;;) {
		/* The child may not have made it yet. */
		buf = access(path, F_OK) == 0 ? tslurp(path) : strdup("");
		if (strstr(buf, text) != NULL)
			break;
		tcheck_deadline(deadline, "\"%s\" in %s, which holds \"%s\"",
		    text, path, buf);
		free(buf);
		poll(NULL, 0, 10);
	}
	free(buf);
}

/* Waits until the daemon's log says the process pid connected. */
static void
twait_connected(const struct tdaemon *d, pid_t pid)
{
	char text[64];

	snprintf(text, sizeof text, " pid %d\n", (int)pid);
	twait_log(d, text);
}

/* Asserts that a background triage said once that it lost the daemon,
 * and once that it was back. */
static void
tassert_one_outage(const char *what, const char *err)
{
	if (tcount(err, "triage: lost triaged at ") != 1 ||
	    tcount(err, "; reconnecting\n") != 1 ||
	    tcount(err, "triage: reconnected to triaged at ") != 1)
		fail_msg("%s: stderr \"%s\", not one outage", what, err);
}

static void
test_wait_output_and_watch_outlast_a_restart(void **state)
{
	struct tdaemon *d;
	struct tcli_bg wait, follow, watch;
	struct triage_client *c;
	char script[1200], id[32], *out, *err;
	int64_t job;
	int rc;

	(void)state;
	d = tdaemon_start("shutdown = requeue\n");
	c = tconnect(d);
	/* Attempt 1 runs until the daemon stops it; attempt 2, the requeued
	 * one, until the test opens its gate, so that the watch sees it. */
	snprintf(script, sizeof script, "echo start $TRIAGE_ATTEMPT; %s; "
	    "echo done; exit 7", tgate_sh(d, "gate.$TRIAGE_ATTEMPT"));
	job = tsubmit(c, "{s:[sss]}", "argv", "sh", "-c", script);
	snprintf(id, sizeof id, "%lld", (long long)job);

	tcli_start(d, &wait, "wait", "wait", id, NULL);
	tcli_start(d, &follow, "follow", "output", "-f", id, NULL);
	tcli_start(d, &watch, "watch", "watch", id, NULL);
	twait_file(follow.out, "start 1\n");
	twait_connected(d, wait.pid);
	twait_connected(d, watch.pid);

	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	twait_file(wait.err, "reconnected");
	twait_file(follow.err, "reconnected");
	twait_file(watch.err, "reconnected");
	topen_gate(d, "gate.2");

	rc = tcli_finish(&wait, &out, &err);
	if (rc != 7)
		fail_msg("wait: exit %d, stderr \"%s\"", rc, err);
	tassert_one_outage("wait", err);
	free(out);
	free(err);

	rc = tcli_finish(&follow, &out, &err);
	if (rc != 0)
		fail_msg("output -f: exit %d, stderr \"%s\"", rc, err);
	/* The attempt that finished, whole, after what the first wrote. */
	assert_string_equal(out, "start 1\nstart 2\ndone\n");
	assert_non_null(strstr(err, "--- attempt 2 ---\n"));
	tassert_one_outage("output -f", err);
	free(out);
	free(err);

	/* The watch goes on after the restart: it sees the job end. */
	twait_file(watch.out, " failed sh\n");
	kill(watch.pid, SIGTERM);
	tcli_finish(&watch, &out, &err);
	tassert_one_outage("watch", err);
	free(out);
	free(err);
	tassert_state(c, job, "failed");
	tdaemon_end(d, c);
}

/* Counts what a client's outage callback heard: [0] lost, [1] back. */
static void
toutage_cb(const char *path, enum triage_outage what, void *arg)
{
	int *n = arg;

	(void)path;
	n[what == TRIAGE_OUTAGE_LOST ? 0 : 1]++;
}

/* The C client library itself: a watch renewed on the restarted daemon
 * goes on with the job's changes, up to its end in the new attempt. */
static void
test_library_watch_outlasts_a_restart(void **state)
{
	struct tdaemon *d;
	struct triage_client *c, *w;
	char script[1200];
	int outages[2] = { 0, 0 };
	json_t *job;
	int64_t id;
	bool ended = false;

	(void)state;
	d = tdaemon_start("shutdown = requeue\n");
	c = tconnect(d);
	w = tconnect(d);
	triage_client_reconnect(w, HARNESS_TIMEOUT_MS, toutage_cb, outages);
	snprintf(script, sizeof script, "%s; exit 5",
	    tgate_sh(d, "gate.$TRIAGE_ATTEMPT"));
	id = tsubmit(c, "{s:[sss]}", "argv", "sh", "-c", script);
	json_decref(tcall(w, "watch", "{s:[I]}", "ids", (json_int_t)id));
	trunning_pid(c, id);
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	/* A read on the broken connection: reconnects, renews the watch. */
	job = tget(w, id);
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	assert_int_equal(outages[0], 1);
	assert_int_equal(outages[1], 1);
	topen_gate(d, "gate.2");
	while (!ended) {
		job = tnotification(w);
		ended = strcmp(tstate(job), "failed") == 0;
		if (ended)
			assert_int_equal(tjint(job, "attempt"), 2);
		json_decref(job);
	}
	assert_int_equal(outages[0], 1);
	tdaemon_end(d, w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_output_and_watch_outlast_a_restart),
		cmocka_unit_test(test_library_watch_outlasts_a_restart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
