/* test-reload.c - a changed config put in force while jobs run, by `reload`
 * and by SIGHUP, or rejected whole with its reasons. A real daemon each. */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"

/* The daemon's config from now on: what tdaemon_start wrote ([daemon]
 * socket, state_dir), then log_level (debug unless extra says otherwise:
 * a key may be given once), then extra. */
static void
rewrite(const struct tdaemon *d, const char *extra)
{
	tdaemon_rewrite(d, "%s%s\n", strstr(extra, "log_level") ? "" :
	    "log_level = debug\n", extra);
}

static void
reload_ok(struct triage_client *c)
{
	json_t *res = tcall(c, "reload", "{}");

	assert_true(json_is_object(res));
	assert_int_equal(json_object_size(res), 0);
	json_decref(res);
}

/* A rejected reload: its errors, one line each, in e->errors. */
static void
reload_rejected(struct triage_client *c, struct triage_error *e)
{
	assert_int_equal(tcall_error(c, "reload", e, "{}"), -32006);
	assert_true(e->errors[0] != '\0');
}

/* stats' entry for priority name (a new reference), NULL when none. */
static json_t *
prio_stats(struct triage_client *c, const char *name)
{
	json_t *st = tcall(c, "stats", "{}"), *p, *found = NULL;
	size_t i;

	json_array_foreach(json_object_get(st, "priorities"), i, p)
		if (strcmp(tjstr(p, "name"), name) == 0)
			found = json_incref(p);
	json_decref(st);
	return found;
}

static json_int_t
stats_int(struct triage_client *c, const char *key)
{
	json_t *st = tcall(c, "stats", "{}");
	json_int_t v = tjint(st, key);

	json_decref(st);
	return v;
}

static json_int_t
nprios(struct triage_client *c)
{
	json_t *st = tcall(c, "stats", "{}");
	json_int_t n = (json_int_t)json_array_size(json_object_get(st,
	    "priorities"));

	json_decref(st);
	return n;
}

/* Waits until the job is running. */
static void
wait_running(struct triage_client *c, int64_t id)
{
	(void)trunning_pid(c, id);
}

#define TWO_PRIOS \
	"slots = 1\n[priority.a]\nrank = 0\n[priority.b]\nrank = 10\n"

/* A new priority appears in stats, with its settings; one that stays
 * takes its new ones. */
static void
test_new_priority(void **state)
{
	struct tdaemon *d = tdaemon_start(TWO_PRIOS);
	struct triage_client *c = tconnect(d);
	json_t *p, *st, *job;

	(void)state;
	assert_null(prio_stats(c, "urgent"));
	rewrite(d, "policy = weighted\ndefault_priority = urgent\n"
	    TWO_PRIOS "max_running = 1\nweight = 3\n"
	    "[priority.urgent]\nrank = 5\nmax_queued = 7\nretries = 2\n");
	reload_ok(c);
	assert_non_null(p = prio_stats(c, "urgent"));
	assert_int_equal(tjint(p, "rank"), 5);
	assert_int_equal(tjint(p, "max_queued"), 7);
	json_decref(p);
	assert_non_null(p = prio_stats(c, "b"));
	assert_int_equal(tjint(p, "max_running"), 1);
	assert_int_equal(tjint(p, "weight"), 3);
	json_decref(p);
	assert_int_equal(nprios(c), 3);
	st = tcall(c, "stats", "{}");
	assert_string_equal(tjstr(st, "policy"), "weighted");
	json_decref(st);
	/* It takes jobs, as the default, with its defaults. */
	job = twait(c, tsubmit(c, "{s[s]}", "argv", "true"));
	assert_string_equal(tjstr(job, "priority"), "urgent");
	assert_int_equal(tjint(job, "retries"), 2);
	json_decref(job);
	tdaemon_end(d, c);
}

/* Re-ranking changes which queue goes first, as watch tells it. */
static void
test_rerank_changes_order(void **state)
{
	struct tdaemon *d = tdaemon_start(TWO_PRIOS);
	struct triage_client *c = tconnect(d), *w = tconnect(d);
	int64_t hold, x, y, first = 0;
	json_t *ev;

	(void)state;
	json_decref(tcall(w, "watch", "{}"));
	hold = tsubmit_gated_with(c, d, "hold", "{ss}", "priority", "a");
	wait_running(c, hold);
	x = tsubmit(c, "{s[s] ss}", "argv", "true", "priority", "a");
	y = tsubmit(c, "{s[s] ss}", "argv", "true", "priority", "b");
	/* b is now the more urgent. */
	rewrite(d, "slots = 1\n[priority.a]\nrank = 20\n"
	    "[priority.b]\nrank = 0\n");
	reload_ok(c);
	topen_gate(d, "hold");
	while (first == 0) {
		ev = tnotification(w);
		if (strcmp(tstate(ev), "running") == 0 &&
		    (tjint(ev, "id") == x || tjint(ev, "id") == y))
			first = tjint(ev, "id");
		json_decref(ev);
	}
	assert_int_equal(first, y);
	json_decref(twait(c, x));
	json_decref(twait(c, y));
	triage_client_free(w);
	tdaemon_end(d, c);
}

/* More slots: a queued job starts while the running one goes on. */
static void
test_more_slots(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 1\n[priority.a]\n"
	    "rank = 0\n");
	struct triage_client *c = tconnect(d);
	int64_t j1, j2;
	pid_t pid1;
	json_t *job;

	(void)state;
	j1 = tsubmit_gated(c, d, "g1", false);
	pid1 = trunning_pid(c, j1);
	j2 = tsubmit_gated(c, d, "g2", false);
	job = tget(c, j2);
	assert_string_equal(tstate(job), "queued");
	json_decref(job);
	rewrite(d, "slots = 2\n[priority.a]\nrank = 0\n");
	reload_ok(c);
	wait_running(c, j2);
	assert_true(tpid_alive(pid1));
	job = tget(c, j1);
	assert_string_equal(tstate(job), "running");
	json_decref(job);
	assert_int_equal(stats_int(c, "slots"), 2);
	assert_int_equal(stats_int(c, "workers"), 2);
	topen_gate(d, "g1");
	topen_gate(d, "g2");
	job = twait(c, j1);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	job = twait(c, j2);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	tdaemon_end(d, c);
}

/* Fewer slots and workers: the running jobs run to their end; the new
 * count holds for what starts after them. */
static void
test_fewer_never_kills(void **state)
{
	struct tdaemon *d = tdaemon_start("slots = 2\n[priority.a]\n"
	    "rank = 0\n");
	struct triage_client *c = tconnect(d);
	int64_t j1, j2, j3;
	json_t *job;

	(void)state;
	j1 = tsubmit_gated(c, d, "g1", false);
	j2 = tsubmit_gated(c, d, "g2", false);
	wait_running(c, j1);
	wait_running(c, j2);
	rewrite(d, "slots = 1\nworkers = 1\n[priority.a]\nrank = 0\n");
	reload_ok(c);
	assert_int_equal(stats_int(c, "slots"), 1);
	assert_int_equal(stats_int(c, "workers"), 1);
	assert_int_equal(stats_int(c, "slots_busy"), 2);
	j3 = tsubmit(c, "{s[s]}", "argv", "true");
	job = tget(c, j3);
	assert_string_equal(tstate(job), "queued");
	json_decref(job);
	topen_gate(d, "g1");
	job = twait(c, j1);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	/* One still holds the one slot. */
	job = tget(c, j3);
	assert_string_equal(tstate(job), "queued");
	json_decref(job);
	job = tget(c, j2);
	assert_string_equal(tstate(job), "running");
	json_decref(job);
	topen_gate(d, "g2");
	job = twait(c, j2);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	job = twait(c, j3);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	tdaemon_end(d, c);
}

/* A syntax error: rejected with the file and line, nothing changes. */
static void
test_syntax_error_rejected(void **state)
{
	struct tdaemon *d = tdaemon_start(TWO_PRIOS);
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	char where[400];

	(void)state;
	rewrite(d, "slots = 3\n[priority.a\nrank = 0\n");
	reload_rejected(c, &e);
	snprintf(where, sizeof where, "%s:6:", d->conf);
	if (strstr(e.errors, where) == NULL)
		fail_msg("errors do not name %s: %s", where, e.errors);
	assert_int_equal(stats_int(c, "slots"), 1);
	assert_int_equal(nprios(c), 2);
	twait_log(d, "reload: rejected: ");
	/* Restart-only keys: named, and nothing changes either. */
	rewrite(d, "slots = 3\nsocket_mode = 0600\n"
	    "[priority.a]\nrank = 0\n[priority.b]\nrank = 10\n");
	reload_rejected(c, &e);
	assert_non_null(strstr(e.errors, "socket_mode changed"));
	assert_non_null(strstr(e.errors, "needs a restart"));
	assert_int_equal(stats_int(c, "slots"), 1);
	/* Whether jobs get cgroups is settled at the start. */
	rewrite(d, "slots = 3\ncgroups = off\n"
	    "[priority.a]\nrank = 0\n[priority.b]\nrank = 10\n");
	reload_rejected(c, &e);
	assert_non_null(strstr(e.errors,
	    "cgroups changed (auto -> off): that needs a restart"));
	twait_log(d, "reload: rejected: cgroups changed (auto -> off)");
	assert_int_equal(stats_int(c, "slots"), 1);
	json_decref(twait(c, tsubmit(c, "{s[s] ss}", "argv", "true",
	    "priority", "b")));
	tdaemon_end(d, c);
}

/* d's config becomes TWO_PRIOS's with a [cluster] whose postgresql is
 * cluster (and any more lines); a reload is refused, with what among its
 * errors and in the log. */
static void
reload_refused_saying(const struct tdaemon *d, struct triage_client *c,
    struct triage_error *e, const char *cluster, const char *what)
{
	char extra[512];

	snprintf(extra, sizeof extra, "%s[cluster]\npostgresql = %s\n",
	    TWO_PRIOS, cluster);
	rewrite(d, extra);
	reload_rejected(c, e);
	if (strstr(e->errors, what) == NULL)
		fail_msg("the errors do not say \"%s\": %s", what, e->errors);
	twait_log(d, what);
}

/* [cluster] cannot come or go while the daemon runs; its connection
 * string, which may hold a password, shows neither in the reply nor in the
 * log, even when libpq cannot parse it. */
static void
test_cluster_needs_a_restart_and_is_never_shown(void **state)
{
	struct tdaemon *d;
	struct triage_client *c;
	struct triage_error e;
	char *log;

	(void)state;
	if (tcluster()) {
		print_message("skipped: it adds [cluster] to a daemon that has "
		    "none\n");
		skip();
	}
	d = tdaemon_start(TWO_PRIOS);
	c = tconnect(d);
	reload_refused_saying(d, c, &e, "host=db1 user=t password=hunter2\n"
	    "node = n1", "[cluster] added: that needs a restart");
	assert_null(strstr(e.errors, "hunter2"));
	reload_refused_saying(d, c, &e, "postgresql://t:hunter2@[::1/db",
	    "postgresql: libpq cannot parse this connection string: ");
	assert_null(strstr(e.errors, "hunter2"));
	assert_null(strstr(e.message, "hunter2"));
	log = tslurp(d->log);
	if (strstr(log, "hunter2") != NULL)
		fail_msg("the password is in the log:\n%s", log);
	free(log);
	json_decref(twait(c, tsubmit(c, "{s[s]}", "argv", "true")));
	tdaemon_end(d, c);
}

/* A priority with a queued job cannot go; once empty it can. */
static void
test_drop_priority(void **state)
{
	struct tdaemon *d = tdaemon_start(TWO_PRIOS);
	struct triage_client *c = tconnect(d);
	struct triage_error e;
	int64_t hold, q;
	json_t *job;

	(void)state;
	hold = tsubmit_gated_with(c, d, "hold", "{ss}", "priority", "a");
	wait_running(c, hold);
	q = tsubmit(c, "{s[s] ss}", "argv", "true", "priority", "b");
	rewrite(d, "slots = 1\n[priority.a]\nrank = 0\n");
	reload_rejected(c, &e);
	if (strstr(e.errors, "priority b") == NULL ||
	    strstr(e.errors, "1 of its jobs is queued or running: keep its "
	    "section until it has finished (or cancel it)") == NULL)
		fail_msg("errors do not name b and its job: %s", e.errors);
	assert_int_equal(nprios(c), 2);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)q));
	json_decref(twait(c, q));
	reload_ok(c);
	assert_int_equal(nprios(c), 1);
	assert_null(prio_stats(c, "b"));
	/* Its ended job stays known; the running one goes on. */
	job = tget(c, q);
	assert_string_equal(tjstr(job, "priority"), "b");
	json_decref(job);
	topen_gate(d, "hold");
	job = twait(c, hold);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s] ss}", "argv",
	    "true", "priority", "b"), -32602);
	tdaemon_end(d, c);
}

/* log_level: debug lines stop, and start again. */
static void
test_log_level(void **state)
{
	struct tdaemon *d = tdaemon_start(TWO_PRIOS);
	struct triage_client *c = tconnect(d);
	char line[64];
	int64_t id;

	(void)state;
	rewrite(d, "log_level = info\n" TWO_PRIOS);
	reload_ok(c);
	id = tsubmit(c, "{s[s]}", "argv", "true");
	json_decref(twait(c, id));
	snprintf(line, sizeof line, "job %lld (", (long long)id);
	assert_false(tlog_has(d, line));
	rewrite(d, TWO_PRIOS);
	reload_ok(c);
	id = tsubmit(c, "{s[s]}", "argv", "true");
	json_decref(twait(c, id));
	snprintf(line, sizeof line, "job %lld (", (long long)id);
	twait_log(d, line);
	tdaemon_end(d, c);
}

/* Runs pause as uid 65534 with group nogroup: its error code, 0 when it
 * was allowed. */
static int
pause_as_nobody(const struct tdaemon *d)
{
	struct triage_error e;
	struct triage_client *c;
	json_t *res;
	gid_t gid = 65534;
	pid_t pid;
	int status;
	char *cause;

	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		if (setgroups(1, &gid) == -1 || setgid(gid) == -1 ||
		    setuid(65534) == -1)
			_exit(90);
		if ((c = triage_client_connect(d->sock, &cause)) == NULL)
			_exit(91);
		res = triage_client_call(c, "pause", json_pack("{ss}",
		    "priority", "b"), HARNESS_TIMEOUT_MS, &e);
		status = res != NULL ? 0 : e.code == -32002 ? 2 : 92;
		/* Freed, for valgrind's leak check at exit. */
		json_decref(res);
		triage_client_free(c);
		_exit(status);
	}
	while (waitpid(pid, &status, 0) == -1)
		assert_int_equal(errno, EINTR);
	assert_true(WIFEXITED(status));
	assert_true(WEXITSTATUS(status) < 90);
	return WEXITSTATUS(status);
}

/* admin_group is read at each call: a reload grants and takes back. */
static void
test_admin_group(void **state)
{
	struct tdaemon *d;
	struct triage_client *c;

	(void)state;
	if (geteuid() != 0 || getgrnam("nogroup") == NULL) {
		print_message("# skipped: needs root and a group nogroup "
		    "(gid 65534)\n");
		skip();
	}
	d = tdaemon_start("socket_mode = 0666\n" TWO_PRIOS);
	c = tconnect(d);
	assert_int_equal(chmod(d->dir, 0711), 0);
	assert_int_equal(pause_as_nobody(d), 2);
	rewrite(d, "socket_mode = 0666\nadmin_group = nogroup\n" TWO_PRIOS);
	reload_ok(c);
	assert_int_equal(pause_as_nobody(d), 0);
	rewrite(d, "socket_mode = 0666\n" TWO_PRIOS);
	reload_ok(c);
	assert_int_equal(pause_as_nobody(d), 2);
	tdaemon_end(d, c);
}

/* A shorter keep_finished takes effect at once, not at the expiry the
 * pruning timer was armed for under the old one. */
static void
test_keep_finished(void **state)
{
	struct tdaemon *d = tdaemon_start("keep_finished = 1h\n");
	struct triage_client *c = tconnect(d);
	int64_t id;

	(void)state;
	id = tsubmit(c, "{s[s]}", "argv", "true");
	tassert_ends(c, id, "succeeded");
	rewrite(d, "keep_finished = 1s\n");
	reload_ok(c);
	twait_pruned(c, id);
	tdaemon_end(d, c);
}

/* SIGHUP does what reload does, and logs the outcome. */
static void
test_sighup(void **state)
{
	struct tdaemon *d = tdaemon_start(TWO_PRIOS);
	struct triage_client *c = tconnect(d);
	json_t *p;

	(void)state;
	rewrite(d, TWO_PRIOS "[priority.c]\nrank = 30\n");
	assert_int_equal(kill(d->pid, SIGHUP), 0);
	twait_log(d, "reloaded: 3 priorities, 1 slots, 1 workers, "
	    "policy strict");
	assert_non_null(p = prio_stats(c, "c"));
	json_decref(p);
	rewrite(d, "slots = 1\n[priority.a]\nrank = 0\n[priority.b\n");
	assert_int_equal(kill(d->pid, SIGHUP), 0);
	twait_log(d, "reload: rejected: ");
	assert_int_equal(nprios(c), 3);
	tdaemon_end(d, c);
}

/* The output of a shell command line, and its exit status in *rc. */
static char *
run_cli(const char *cmd, int *rc)
{
	char *buf = calloc(1, 8192);
	size_t len = 0;
	FILE *f;
	int st;

	assert_non_null(buf);
	assert_non_null(f = popen(cmd, "r"));
	while (len < 8191 && !feof(f))
		len += fread(buf + len, 1, 8191 - len, f);
	st = pclose(f);
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return buf;
}

/* triage reload: "reloaded", or each error on stderr and status 4. */
static void
test_cli(void **state)
{
	struct tdaemon *d = tdaemon_start(TWO_PRIOS);
	struct triage_client *c = tconnect(d);
	char cmd[1024], where[400], *out;
	int rc;

	(void)state;
	snprintf(cmd, sizeof cmd, "%s --socket %s reload 2>/dev/null",
	    tbin("triage"), d->sock);
	out = run_cli(cmd, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "reloaded\n");
	free(out);
	rewrite(d, "slots = 1\n[priority.a]\nrnk = 0\n[priority.b\n");
	snprintf(cmd, sizeof cmd, "%s --socket %s reload 2>&1 >/dev/null",
	    tbin("triage"), d->sock);
	out = run_cli(cmd, &rc);
	assert_int_equal(rc, 4);
	snprintf(where, sizeof where, "%s:7:", d->conf);
	if (strstr(out, where) == NULL || strchr(out, '\n') == NULL ||
	    strchr(out, '\n') == strrchr(out, '\n'))
		fail_msg("want two lines naming %s, got: %s", where, out);
	free(out);
	tdaemon_end(d, c);
}

/* A page of a job's stdout that has ended (a new reference). */
static json_t *
stdout_page(struct triage_client *c, int64_t id)
{
	json_t *page = tcall(c, "output", "{sI ss}", "id", (json_int_t)id,
	    "stream", "stdout");

	assert_true(json_is_true(json_object_get(page, "eof")));
	return page;
}

/*
 * nice, io_class and output_keep change for the jobs started after a
 * reload (nice: submitted after, as its default); a job running already
 * keeps what it started with.
 */
static void
test_job_process_settings(void **state)
{
	struct tdaemon *d = tdaemon_start("max_output = 1000\n"
	    "[priority.a]\nrank = 0\n");
	struct triage_client *c = tconnect(d);
	char script[1000];
	int64_t old, new;
	json_t *job, *page;
	const char *data;

	(void)state;
	snprintf(script, sizeof script, "nice; seq 1 1000; %s",
	    tgate_sh(d, "settings-gate"));
	old = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", script);
	wait_running(c, old);
	rewrite(d, "max_output = 1000\n[priority.a]\nrank = 0\nnice = 4\n"
	    "io_class = idle\noutput_keep = tail\n");
	reload_ok(c);

	new = tsubmit(c, "{s[sss]}", "argv", "sh", "-c",
	    "seq 1 1000; nice; ionice -p $$");
	job = twait(c, new);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "nice"), 4);
	json_decref(job);
	page = stdout_page(c, new);
	data = tjstr(page, "data");
	assert_true(tjint(page, "dropped") > 0);
	assert_string_equal(data + strlen(data) - 12, "1000\n4\nidle\n");
	json_decref(page);

	topen_gate(d, "settings-gate");
	job = twait(c, old);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "nice"), 0);
	json_decref(job);
	page = stdout_page(c, old);
	assert_int_equal(tjint(page, "dropped"), 0);
	assert_true(json_is_true(json_object_get(page, "truncated")));
	assert_true(strncmp(tjstr(page, "data"), "0\n1\n2\n", 6) == 0);
	json_decref(page);
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_priority),
		cmocka_unit_test(test_rerank_changes_order),
		cmocka_unit_test(test_more_slots),
		cmocka_unit_test(test_fewer_never_kills),
		cmocka_unit_test(test_syntax_error_rejected),
		cmocka_unit_test(test_cluster_needs_a_restart_and_is_never_shown),
		cmocka_unit_test(test_drop_priority),
		cmocka_unit_test(test_log_level),
		cmocka_unit_test(test_admin_group),
		cmocka_unit_test(test_keep_finished),
		cmocka_unit_test(test_sighup),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_job_process_settings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
