/* tpg.c - for the daemon tests: a real PostgreSQL server of the test's own,
 * in a temp dir, reached on a Unix socket there only. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "harness.h"
#include "proc.h"
#include "tpg.h"

/* The socket's name is .s.PGSQL.PORT in a dir of the test's own: any port
 * does, no TCP port is opened. */
#define TPG_PORT	5432
/* Processes a postmaster may have forked that a crash kills. */
#define TPG_KIDS_MAX	256
/* The system user Debian's package makes, whom a root test runs it as. */
#define TPG_SYSTEM_USER	"postgres"
/* Words of a command tpg_run runs, at most. */
#define TPG_ARGS_MAX	16

struct tpg {
	struct tdaemon	*d;		/* pid, dir, log: the harness's too */
	char		 bindir[PATH_MAX];
	char		 data[320];	/* the cluster's files, under d->dir */
	char		 super[64];	/* its bootstrap superuser */
};

/* The newest /usr/lib/postgresql/VERSION/bin holding initdb and postgres,
 * into bindir; false when there is none. */
static bool
tpg_find_bindir(char *bindir, size_t size)
{
	glob_t g;
	char path[PATH_MAX];
	long best = -1, v;
	size_t i;
	const char *num;

	if (glob("/usr/lib/postgresql/*/bin/postgres", 0, NULL, &g) != 0)
		return false;
	for (i = 0; i < g.gl_pathc; i++) {
		num = g.gl_pathv[i] + strlen("/usr/lib/postgresql/");
		v = strtol(num, NULL, 10);
		snprintf(path, sizeof path, "%.*s/initdb",
		    (int)(strrchr(g.gl_pathv[i], '/') - g.gl_pathv[i]),
		    g.gl_pathv[i]);
		if (v > best && access(path, X_OK) == 0 &&
		    access(g.gl_pathv[i], X_OK) == 0) {
			best = v;
			snprintf(bindir, size, "%.*s",
			    (int)(strrchr(g.gl_pathv[i], '/') - g.gl_pathv[i]),
			    g.gl_pathv[i]);
		}
	}
	globfree(&g);
	return best >= 0;
}

static void
tpg_nap(void)
{
	struct timespec ts = { 0, 5 * 1000000 };

	nanosleep(&ts, NULL);
}

/* In the forked child, before an exec of the server's programs: output to
 * the log, the server's user, no signals blocked. */
static void
tpg_child_setup(const struct tpg *pg, const char *log)
{
	sigset_t none;
	int fd;

	if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0644)) == -1 || dup2(fd, 1) == -1 || dup2(fd, 2) == -1)
		_exit(127);
	if (chdir(pg->d->dir) == -1)
		_exit(127);
	if (pg->d->user[0] != '\0')
		tbecome(pg->d->user);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * Runs argv (argv[0] a path) in pg's dir as the server's user, its output
 * into log, and waits for it; fails the test with that output when it
 * does not succeed.
 */
static void
tpg_run(struct tpg *pg, const char *log, const char *const argv[])
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	char *args[TPG_ARGS_MAX + 1];
	int status, i;
	pid_t pid, got;

	if ((pid = fork()) == 0) {
		tpg_child_setup(pg, log);
		for (i = 0; i < TPG_ARGS_MAX && argv[i] != NULL; i++)
			if ((args[i] = strdup(argv[i])) == NULL)
				_exit(127);
		args[i] = NULL;
		execv(args[0], args);
		_exit(127);
	}
	if (pid == -1)
		fail_msg("fork: %s", strerror(errno));
	while ((got = waitpid(pid, &status, WNOHANG)) == 0) {
		if (tleft_ms(deadline) == 0)
			kill(pid, SIGKILL);
		tpg_nap();
	}
	if (got != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(pg->d->log, sizeof pg->d->log, "%s", log);
		tdaemon_dump_log(pg->d);
		fail_msg("%s failed (%s)", argv[0], got != pid ?
		    strerror(errno) : WIFEXITED(status) ? "exit status" :
		    "killed");
	}
}

/* rm -rf of dir, for tpg_template_rm. */
static void
tpg_rm(const char *dir)
{
	pid_t pid;

	if ((pid = fork()) == 0) {
		execl("/bin/rm", "rm", "-rf", "--", dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			continue;
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
	if (tpg_template[0] != '\0' && getpid() == tpg_template_owner)
		tpg_rm(tpg_template);
}

/* Removes the templates of programs that are gone. */
static void
tpg_template_sweep(void)
{
	glob_t g;
	size_t i;
	long pid;

	if (glob(TPG_TEMPLATE_PREFIX "*", GLOB_ONLYDIR, NULL, &g) != 0)
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		pid = strtol(g.gl_pathv[i] + strlen(TPG_TEMPLATE_PREFIX),
		    NULL, 10);
		if (pid > 0 && kill((pid_t)pid, 0) == -1 && errno == ESRCH)
			tpg_rm(g.gl_pathv[i]);
	}
	globfree(&g);
}

/* The template's data dir, made the first time (with pg's user and
 * programs). */
static const char *
tpg_template_data(struct tpg *pg, uid_t uid, gid_t gid)
{
	static char data[sizeof tpg_template + 8];
	char initdb[PATH_MAX + 16], log[sizeof tpg_template + 16];
	const char *const argv[] = { initdb, "-D", data, "--auth=trust",
	    "--no-sync", "--no-locale", "--encoding=UTF8", NULL };

	if (tpg_template[0] != '\0')
		return data;
	tpg_template_sweep();
	snprintf(tpg_template, sizeof tpg_template, "%s%d-XXXXXX",
	    TPG_TEMPLATE_PREFIX, (int)getpid());
	if (mkdtemp(tpg_template) == NULL) {
		tpg_template[0] = '\0';
		fail_msg("mkdtemp: %s", strerror(errno));
	}
	tpg_template_owner = getpid();
	atexit(tpg_template_rm);
	if (chown(tpg_template, uid, gid) == -1)
		fail_msg("chown %s: %s", tpg_template, strerror(errno));
	snprintf(data, sizeof data, "%s/data", tpg_template);
	snprintf(log, sizeof log, "%s/initdb.log", tpg_template);
	snprintf(initdb, sizeof initdb, "%s/initdb", pg->bindir);
	/* --no-sync: a test's cluster need not survive a host crash; the
	 * server itself keeps fsync on. */
	tpg_run(pg, log, argv);
	return data;
}

/* The data dir: a copy of the template, the server's user's. */
static void
tpg_initdb(struct tpg *pg, uid_t uid, gid_t gid)
{
	const char *const argv[] = { "/bin/cp", "-a", "--",
	    tpg_template_data(pg, uid, gid), pg->data, NULL };

	tpg_run(pg, pg->d->log, argv);
}

/* A conninfo of the server as its superuser, on database dbname. */
static void
tpg_conninfo(const struct tpg *pg, const char *dbname, char *buf,
    size_t size)
{
	snprintf(buf, size, "host=%s port=%d dbname=%s user=%s", pg->d->dir,
	    TPG_PORT, dbname, pg->super);
}

/* Starts postgres on the data dir and waits until it accepts
 * connections; fails the test with its log when it does not. After a
 * crash that is a recovery and a checkpoint, every dirty page fsynced:
 * on a host busy with other tests' writes, more than the harness's usual
 * wait (a CI run saw 30 s go by), so it gets four. */
static void
tpg_launch(struct tpg *pg)
{
	char postgres[PATH_MAX + 16], port[16], conninfo[512];
	int64_t deadline = tdeadline(4 * HARNESS_TIMEOUT_MS);
	pid_t parent = getpid(), pid;
	int status;

	snprintf(postgres, sizeof postgres, "%s/postgres", pg->bindir);
	snprintf(port, sizeof port, "%d", TPG_PORT);
	if ((pid = fork()) == 0) {
		setpgid(0, 0);
		tpg_child_setup(pg, pg->d->log);
		/* After the change of user, which clears it: the server
		 * shuts down at once (SIGQUIT) when the test dies. */
		prctl(PR_SET_PDEATHSIG, SIGQUIT);
		if (getppid() != parent)
			_exit(127);
		/* A socket in the test's dir and no TCP; small buffers, as
		 * many tests start one; connections enough for several
		 * daemons. fsync stays on: tests of durability use it. */
		execl(postgres, "postgres", "-D", pg->data, "-k", pg->d->dir,
		    "-p", port, "-c", "listen_addresses=", "-c",
		    "shared_buffers=16MB", "-c", "max_connections=64",
		    (char *)NULL);
		_exit(127);
	}
	if (pid == -1)
		fail_msg("fork: %s", strerror(errno));
	setpgid(pid, pid);
	pg->d->pid = pid;
	tpg_conninfo(pg, "postgres", conninfo, sizeof conninfo);
	while (PQping(conninfo) != PQPING_OK) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pg->d->pid = 0;
			tdaemon_dump_log(pg->d);
			fail_msg("postgres exited (status %#x) before it "
			    "accepted connections", status);
		}
		if (tleft_ms(deadline) == 0) {
			tdaemon_dump_log(pg->d);
			fail_msg("postgres did not accept connections on %s",
			    pg->d->dir);
		}
		tpg_nap();
	}
}

struct tpg *
tpg_start(void)
{
	char bindir[PATH_MAX], dir[sizeof ((struct tdaemon *)0)->dir] =
	    "/tmp/tpg-XXXXXX";
	struct passwd *pw = NULL;
	struct tpg *pg;

	if (!tpg_find_bindir(bindir, sizeof bindir)) {
		printf("PostgreSQL is not installed (no initdb and postgres "
		    "in /usr/lib/postgresql/*/bin): skipped\n");
		return NULL;
	}
	if (geteuid() == 0 && (pw = getpwnam(TPG_SYSTEM_USER)) == NULL) {
		printf("PostgreSQL is not installed (no user %s, which its "
		    "package makes): skipped\n", TPG_SYSTEM_USER);
		return NULL;
	}
	assert_non_null(pg = calloc(1, sizeof *pg));
	assert_non_null(pg->d = calloc(1, sizeof *pg->d));
	snprintf(pg->bindir, sizeof pg->bindir, "%s", bindir);
	snprintf(pg->d->kind, sizeof pg->d->kind, "postgres");
	/* Its children are not in its process group (below): SIGQUIT, its
	 * immediate shutdown, has it end them and wait for them, so that no
	 * process writes in the dir being removed. */
	pg->d->stop_signal = SIGQUIT;
	/* From here on a failure leaves the dir and the server to the
	 * harness's clean-up. */
	tdaemon_adopt(pg->d);
	if (mkdtemp(dir) == NULL)
		fail_msg("mkdtemp: %s", strerror(errno));
	memcpy(pg->d->dir, dir, sizeof pg->d->dir);
	snprintf(pg->d->log, sizeof pg->d->log, "%s/log", pg->d->dir);
	snprintf(pg->data, sizeof pg->data, "%s/data", pg->d->dir);
	if (pw != NULL) {
		/* The server refuses to run as root. Its dir is its own and
		 * open to all, for the socket; data is closed. */
		snprintf(pg->d->user, sizeof pg->d->user, "%s",
		    TPG_SYSTEM_USER);
		snprintf(pg->super, sizeof pg->super, "%s", TPG_SYSTEM_USER);
		if (chown(pg->d->dir, pw->pw_uid, pw->pw_gid) == -1)
			fail_msg("chown %s: %s", pg->d->dir, strerror(errno));
	} else {
		if ((pw = getpwuid(geteuid())) == NULL)
			fail_msg("no user has uid %d", (int)geteuid());
		snprintf(pg->super, sizeof pg->super, "%s", pw->pw_name);
	}
	if (chmod(pg->d->dir, 0755) == -1)
		fail_msg("chmod %s: %s", pg->d->dir, strerror(errno));
	tpg_initdb(pg, pw->pw_uid, pw->pw_gid);
	tpg_launch(pg);
	if (geteuid() == 0) {
		/* libpq's default user is the OS user's name. */
		PQclear(tpg_query(pg, "postgres",
		    "CREATE ROLE root SUPERUSER LOGIN"));
	}
	return pg;
}

const char *
tpg_host(const struct tpg *pg)
{
	return pg->d->dir;
}

int
tpg_port(const struct tpg *pg)
{
	(void)pg;
	return TPG_PORT;
}

char *
tpg_createdb(struct tpg *pg, const char *name)
{
	char sql[128], *conninfo;

	if (name[0] == '\0' || strlen(name) > 63 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
	    strlen(name))
		fail_msg("tpg_createdb: bad database name \"%s\"", name);
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
	PQclear(tpg_query(pg, "postgres", sql));
	if (asprintf(&conninfo, "host=%s port=%d dbname=%s", pg->d->dir,
	    TPG_PORT, name) == -1)
		fail_msg("out of memory");
	return conninfo;
}

PGresult *
tpg_query(struct tpg *pg, const char *dbname, const char *sql)
{
	char conninfo[512];
	PGresult *res;
	PGconn *conn;

	tpg_conninfo(pg, dbname, conninfo, sizeof conninfo);
	if ((conn = PQconnectdb(conninfo)) == NULL)
		fail_msg("out of memory");
	if (PQstatus(conn) != CONNECTION_OK) {
		char msg[512];

		snprintf(msg, sizeof msg, "%s", PQerrorMessage(conn));
		PQfinish(conn);
		fail_msg("tpg_query: connecting to %s: %s", dbname, msg);
	}
	res = PQexec(conn, sql);
	if (res == NULL || (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)) {
		char msg[512];

		snprintf(msg, sizeof msg, "%s", PQerrorMessage(conn));
		PQclear(res);
		PQfinish(conn);
		fail_msg("tpg_query: %s: %s", sql, msg);
	}
	PQfinish(conn);
	return res;
}

void
tpg_stop(struct tpg *pg)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	pid_t pid = pg->d->pid;
	int status;

	if (pid <= 0)
		return;
	assert_int_equal(kill(pid, SIGINT), 0);
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (tleft_ms(deadline) == 0) {
			tdaemon_dump_log(pg->d);
			fail_msg("postgres did not stop after SIGINT");
		}
		tpg_nap();
	}
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
tpg_crash_restart(struct tpg *pg)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	pid_t pid = pg->d->pid, kids[TPG_KIDS_MAX];
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
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	pg->d->pid = 0;
	/* A new postmaster refuses to start while any of them holds the
	 * old shared memory. */
	for (i = 0; i < n; i++)
		while (tpid_alive(kids[i])) {
			tcheck_deadline(deadline, "postgres process %d to die",
			    (int)kids[i]);
			tpg_nap();
		}
	tpg_launch(pg);
}

void
tpg_free(struct tpg *pg)
{
	if (pg == NULL)
		return;
	/* Its files go: no checkpoint needed, the immediate shutdown of
	 * its stop_signal does (tdaemon_free waits for it). */
	tdaemon_free(pg->d);
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
