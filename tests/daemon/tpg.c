/* tpg.c - for the daemon tests: a real PostgreSQL server of the test's own,
 * in a temp dir, reached on a Unix socket there only. */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "harness.h"
#include "proc.h"
#include "tpg.h"
#include "tsupport-clock.h"
#include "tsupport-dir.h"
#include "tsupport-pg.h"

/* Processes a postmaster may have forked that a crash kills. */
#define TPG_KIDS_MAX	256

/* Settings of a server's command line, at most (tpg_new's). */
#define TPG_SETTINGS 5

struct tpg {
	struct tsupport_pg	*pg;
	struct tdaemon		*d;	/* pid, dir, log: for the harness's
					 * clean-up of a failed test */
	/* Its cluster_name, which is also its WAL receiver's
	 * application_name as a standby: what a primary's
	 * synchronous_standby_names names. */
	char			 name[16];
	char			 name_setting[32];
	const char		*settings[TPG_SETTINGS];
};

/* Fails the test with err's message, after log. */
static void
tpg_fail(struct tpg *pg, const char *log, const struct tsupport_err *err)
{
	snprintf(pg->d->log, sizeof pg->d->log, "%s", log);
	tdaemon_dump_log(pg->d);
	fail_msg("%s", err->msg);
}

/*
 * initdb runs once per test program, into the template, and each server
 * starts on a copy of it (cp -a takes a fifth of initdb's time): its dir,
 * TPG_TEMPLATE_PREFIX and the program's pid, removed at exit. One a killed
 * program left is removed by the next one that makes a template.
 */
#define TPG_TEMPLATE_PREFIX "/tmp/tpg-template-"
static char tpg_template[64];
static pid_t tpg_template_owner;

static void
tpg_template_rm(void)
{
	struct tsupport_err err;

	if (tpg_template[0] != '\0' && getpid() == tpg_template_owner)
		(void)tsupport_dir_remove(tpg_template, &err);
}

/* Removes the templates of programs that are gone. */
static void
tpg_template_sweep(void)
{
	struct tsupport_err err;
	glob_t g;
	size_t i;
	long pid;

	if (glob(TPG_TEMPLATE_PREFIX "*", GLOB_ONLYDIR, NULL, &g) != 0)
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		pid = strtol(g.gl_pathv[i] + strlen(TPG_TEMPLATE_PREFIX),
		    NULL, 10);
		if (pid > 0 && kill((pid_t)pid, 0) == -1 && errno == ESRCH)
			(void)tsupport_dir_remove(g.gl_pathv[i], &err);
	}
	globfree(&g);
}

/* The template's data dir, made the first time (with pg's user and
 * programs). */
static const char *
tpg_template_data(struct tpg *pg)
{
	static char data[sizeof tpg_template + 8];
	char name[32], log[sizeof tpg_template + 16];
	struct tsupport_err err;

	if (tpg_template[0] != '\0')
		return data;
	tpg_template_sweep();
	snprintf(name, sizeof name, "tpg-template-%d", (int)getpid());
	if (tsupport_dir_make(tpg_template, sizeof tpg_template, "/tmp", name,
	    &err) == -1) {
		tpg_template[0] = '\0';
		fail_msg("%s", err.msg);
	}
	tpg_template_owner = getpid();
	atexit(tpg_template_rm);
	if (tsupport_pg_chown(pg->pg, tpg_template, &err) == -1)
		fail_msg("%s", err.msg);
	snprintf(data, sizeof data, "%s/data", tpg_template);
	snprintf(log, sizeof log, "%s/initdb.log", tpg_template);
	if (tsupport_pg_initdb(pg->pg, data, log, &err) == -1)
		tpg_fail(pg, log, &err);
	return data;
}

/* The data dir: a copy of the template, the server's user's. */
static void
tpg_initdb(struct tpg *pg)
{
	const char *const argv[] = { "/bin/cp", "-a", "--",
	    tpg_template_data(pg), pg->pg->data, NULL };
	struct tsupport_err err;

	if (tsupport_pg_run(pg->pg, pg->pg->log, argv, &err) == -1)
		tpg_fail(pg, pg->pg->log, &err);
}

/* Starts postgres on the data dir and waits until it accepts
 * connections; fails the test with its log when it does not. After a
 * crash that is a recovery and a checkpoint, every dirty page fsynced:
 * on a host busy with other tests' writes, more than the harness's usual
 * wait (a CI run saw 30 s go by), so it gets four. */
static void
tpg_launch(struct tpg *pg)
{
	struct tsupport_err err;

	if (tsupport_pg_spawn(pg->pg, &err) == -1)
		fail_msg("%s", err.msg);
	pg->d->pid = pg->pg->pid;
	if (tsupport_pg_ready(pg->pg, &err) == -1)
		tpg_fail(pg, pg->pg->log, &err);
}

/*
 * A server not started yet, its dir made and adopted by the harness: port
 * and name its own (every server of a program has a socket of its own
 * port, as servers on one host would). NULL, having printed why, when
 * PostgreSQL is not installed.
 */
static struct tpg *
tpg_new(void)
{
	static int nservers;
	struct tsupport_pg_opts opts = {
		.parent = "/tmp", .name = "tpg",
		.timeout_ms = 4 * HARNESS_TIMEOUT_MS,	/* see tpg_launch */
	};
	struct tsupport_err err;
	struct tpg *pg;

	assert_non_null(pg = calloc(1, sizeof *pg));
	snprintf(pg->name, sizeof pg->name, "tpg%d", nservers);
	snprintf(pg->name_setting, sizeof pg->name_setting, "cluster_name=%s",
	    pg->name);
	/* Small buffers, as many tests start one; connections enough for
	 * several daemons. fsync stays on: tests of durability use it. */
	pg->settings[0] = "shared_buffers=16MB";
	pg->settings[1] = "max_connections=64";
	pg->settings[2] = pg->name_setting;
	/* A standby whose primary restarted streams again within this, not
	 * the default 5 s, in which a synchronous primary commits nothing. */
	pg->settings[3] = "wal_retrieve_retry_interval=100ms";
	opts.settings = pg->settings;
	opts.port = TSUPPORT_PG_PORT + nservers++;
	if ((pg->pg = tsupport_pg_new(&opts, &err)) == NULL) {
		if (errno != ENOENT)
			fail_msg("%s", err.msg);
		printf("%s: skipped\n", err.msg);
		free(pg);
		return NULL;
	}
	assert_non_null(pg->d = calloc(1, sizeof *pg->d));
	snprintf(pg->d->kind, sizeof pg->d->kind, "postgres");
	snprintf(pg->d->dir, sizeof pg->d->dir, "%s", pg->pg->dir);
	snprintf(pg->d->log, sizeof pg->d->log, "%s", pg->pg->log);
	/* Its children are not in its process group: SIGQUIT, its
	 * immediate shutdown, has it end them and wait for them, so that no
	 * process writes in the dir being removed. */
	pg->d->stop_signal = SIGQUIT;
	/* From here on a failure leaves the dir and the server to the
	 * harness's clean-up. */
	tdaemon_adopt(pg->d);
	return pg;
}

struct tpg *
tpg_start(void)
{
	struct tsupport_err err;
	struct tpg *pg;

	if ((pg = tpg_new()) == NULL)
		return NULL;
	tpg_initdb(pg);
	tpg_launch(pg);
	if (tsupport_pg_add_us(pg->pg, &err) == -1)
		fail_msg("%s", err.msg);
	return pg;
}

const char *
tpg_host(const struct tpg *pg)
{
	return pg->pg->dir;
}

int
tpg_port(const struct tpg *pg)
{
	return pg->pg->port;
}

char *
tpg_createdb(struct tpg *pg, const char *name)
{
	struct tsupport_err err;
	char *conninfo;

	if ((conninfo = tsupport_pg_createdb(pg->pg, name, &err)) == NULL)
		fail_msg("tpg_createdb: %s", err.msg);
	return conninfo;
}

PGresult *
tpg_query(struct tpg *pg, const char *dbname, const char *sql)
{
	struct tsupport_err err;
	PGresult *res;

	if ((res = tsupport_pg_query(pg->pg, dbname, sql, &err)) == NULL)
		fail_msg("tpg_query: %s", err.msg);
	return res;
}

void
tpg_stop(struct tpg *pg)
{
	struct tsupport_err err;
	int status = 0;

	if (pg->pg->pid <= 0)
		return;
	if (tsupport_pg_stop(pg->pg, &err) == -1) {
		tdaemon_dump_log(pg->d);
		fail_msg("%s", err.msg);
	}
	(void)tsupport_pg_reap(pg->pg, &status);
	pg->d->pid = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		tdaemon_dump_log(pg->d);
		fail_msg("postgres stopped with status %#x", status);
	}
}

void
tpg_restart(struct tpg *pg)
{
	tpg_stop(pg);
	tpg_launch(pg);
}

void
tpg_kill(struct tpg *pg)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	pid_t pid = pg->pg->pid, kids[TPG_KIDS_MAX];
	int n, i;

	assert_true(pid > 0);
	/*
	 * Its children are session leaders of their own (postgres setsid()s
	 * them): a kill of the process group misses them. Stopped, the
	 * postmaster forks no more while they are found and killed.
	 */
	tstop(pid);
	n = proc_find(pid, 0, PROC_LIVE, kids, TPG_KIDS_MAX);
	assert_true(n <= TPG_KIDS_MAX);
	for (i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	assert_int_equal(tsupport_pg_reap(pg->pg, NULL), 0);
	pg->d->pid = 0;
	/* A new postmaster refuses to start while any of them holds the
	 * old shared memory. */
	for (i = 0; i < n; i++)
		while (tpid_alive(kids[i])) {
			tcheck_deadline(deadline, "postgres process %d to die",
			    (int)kids[i]);
			tsupport_clock_sleep_ms(5);
		}
}

void
tpg_crash_restart(struct tpg *pg)
{
	tpg_kill(pg);
	tpg_launch(pg);
}

void
tpg_immediate_restart(struct tpg *pg)
{
	assert_true(pg->pg->pid > 0);
	/* What pg_ctl stop -m immediate sends: the postmaster ends its
	 * children at once, without a checkpoint, and exits. */
	assert_int_equal(kill(pg->pg->pid, SIGQUIT), 0);
	if (tsupport_child_wait(pg->pg->pid, HARNESS_TIMEOUT_MS, NULL) == -1) {
		tdaemon_dump_log(pg->d);
		fail_msg("postgres did not exit on SIGQUIT");
	}
	(void)tsupport_pg_reap(pg->pg, NULL);
	pg->d->pid = 0;
	tpg_launch(pg);
}

/* The one value of a query's result on dbname of pg, into buf ("" for
 * none). */
static void
tpg_value(struct tpg *pg, const char *dbname, const char *sql, char *buf,
    size_t size)
{
	PGresult *res = tpg_query(pg, dbname, sql);

	snprintf(buf, size, "%s", PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) :
	    "");
	PQclear(res);
}

/*
 * Whether primary names standby as its synchronous standby. ALTER SYSTEM
 * writes postgresql.auto.conf, which a base backup copies: so it is said
 * after the standby's copy is made, or the standby, promoted, would wait
 * for a standby of its own name.
 */
static void
tpg_sync_names(struct tpg *primary, const struct tpg *standby, bool sync)
{
	char sql[128];

	if (sync)
		snprintf(sql, sizeof sql, "ALTER SYSTEM SET "
		    "synchronous_standby_names = '\"%s\"'", standby->name);
	else
		snprintf(sql, sizeof sql, "ALTER SYSTEM RESET "
		    "synchronous_standby_names");
	PQclear(tpg_query(primary, "postgres", sql));
	/* The default, said: a commit waits for the standby's flush. */
	PQclear(tpg_query(primary, "postgres",
	    "ALTER SYSTEM SET synchronous_commit = on"));
	PQclear(tpg_query(primary, "postgres", "SELECT pg_reload_conf()"));
}

/* pg, not running, made a standby of primary: its data a base backup of
 * primary's (-R: it follows primary once started), started, and streaming
 * (in sync when sync) when this returns. */
static void
tpg_follow(struct tpg *pg, struct tpg *primary, bool sync)
{
	int64_t deadline = tdeadline(4 * HARNESS_TIMEOUT_MS);
	char bin[PATH_MAX + 32], port[16], sql[256], state[16];
	const char *const argv[] = { bin, "-D", pg->pg->data, "-R",
	    "-X", "stream", "-c", "fast", "--no-sync", "-h", primary->pg->dir,
	    "-p", port, "-U", primary->pg->super, NULL };
	struct tsupport_err err;

	snprintf(bin, sizeof bin, "%s/pg_basebackup", pg->pg->bindir);
	snprintf(port, sizeof port, "%d", primary->pg->port);
	if (tsupport_pg_run(pg->pg, pg->pg->log, argv, &err) == -1)
		tpg_fail(pg, pg->pg->log, &err);
	tpg_launch(pg);
	tpg_sync_names(primary, pg, sync);
	/* Until the primary sees it stream, in the mode asked: before
	 * that, a commit waits for it or is not on it. */
	snprintf(sql, sizeof sql, "SELECT sync_state FROM pg_stat_replication "
	    "WHERE application_name = '%s' AND state = 'streaming'", pg->name);
	for (;;) {
		tpg_value(primary, "postgres", sql, state, sizeof state);
		if (strcmp(state, sync ? "sync" : "async") == 0)
			return;
		tcheck_deadline(deadline, "standby %s to stream (%s) from %s",
		    pg->name, sync ? "sync" : "async", primary->name);
		tsupport_clock_sleep_ms(20);
	}
}

struct tpg *
tpg_standby_start(struct tpg *primary, bool sync)
{
	struct tpg *pg;

	assert_non_null(pg = tpg_new());
	tpg_follow(pg, primary, sync);
	return pg;
}

void
tpg_rejoin(struct tpg *pg, struct tpg *primary, bool sync)
{
	struct tsupport_err err;

	assert_int_equal(pg->pg->pid, 0);
	if (tsupport_dir_remove(pg->pg->data, &err) == -1)
		fail_msg("%s", err.msg);
	tpg_follow(pg, primary, sync);
}

void
tpg_promote(struct tpg *pg)
{
	int64_t deadline = tdeadline(4 * HARNESS_TIMEOUT_MS);
	char v[16];

	/* It waits (60 s at most) until the server is out of recovery. */
	tpg_value(pg, "postgres", "SELECT pg_promote(true, 60)", v, sizeof v);
	if (strcmp(v, "t") != 0) {
		tdaemon_dump_log(pg->d);
		fail_msg("pg_promote of %s: %s", pg->name, v);
	}
	for (;;) {
		tpg_value(pg, "postgres", "SELECT pg_is_in_recovery()", v,
		    sizeof v);
		if (strcmp(v, "f") == 0)
			return;
		tcheck_deadline(deadline, "%s to accept writes", pg->name);
		tsupport_clock_sleep_ms(20);
	}
}

bool
tpg_is_primary(struct tpg *pg)
{
	char v[16];

	if (pg->pg->pid <= 0)
		return false;
	tpg_value(pg, "postgres", "SELECT pg_is_in_recovery()", v, sizeof v);
	return strcmp(v, "f") == 0;
}

char *
tpg_multihost(const struct tpg *a, const struct tpg *b, const char *dbname)
{
	char *conninfo;

	assert_int_not_equal(asprintf(&conninfo, "host=%s,%s port=%d,%d "
	    "dbname=%s target_session_attrs=read-write", a->pg->dir,
	    b->pg->dir, a->pg->port, b->pg->port, dbname), -1);
	return conninfo;
}

void
tpg_free(struct tpg *pg)
{
	struct tsupport_err err;

	if (pg == NULL)
		return;
	/* The library ends the server and removes its dir: the harness has
	 * nothing left to. */
	pg->d->pid = 0;
	pg->d->dir[0] = '\0';
	tdaemon_free(pg->d);
	if (tsupport_pg_free(pg->pg, &err) == -1)
		fprintf(stderr, "tpg: %s\n", err.msg);
	free(pg);
}

void
tpg_keep(struct tpg *pg)
{
	tdaemon_keep(pg->d);
}

struct tpg *tpg_group;

int
tpg_group_setup(void **state)
{
	(void)state;
	tpg_group = tpg_start();
	return 0;
}

int
tpg_group_teardown(void **state)
{
	(void)state;
	tpg_free(tpg_group);
	tpg_group = NULL;
	return 0;
}
