/* tsupport-pg.c - for tests and benchmarks: a real PostgreSQL server of their
 * own in a temp dir, reached on a Unix socket there only. */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <glob.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsupport-clock.h"
#include "tsupport-dir.h"
#include "tsupport-pg.h"

/* The user Debian's package makes, whom a root program runs it as. */
#define TSUPPORT_PG_SYSTEM_USER "postgres"
/* Words of a postgres command line, its -c settings included, at most. */
#define TSUPPORT_PG_ARGS 48
/* How often a start is polled (PQping). */
#define TSUPPORT_PG_POLL_MS 5

/* The newest /usr/lib/postgresql/VERSION/bin with initdb and postgres,
 * into bindir; false when there is none. */
static bool
tsupport_pg_find(char *bindir, size_t size)
{
	char path[PATH_MAX];
	long best = -1, v;
	size_t i, len;
	glob_t g;

	if (glob("/usr/lib/postgresql/*/bin/postgres", 0, NULL, &g) != 0)
		return false;
	for (i = 0; i < g.gl_pathc; i++) {
		v = strtol(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"),
		    NULL, 10);
		len = (size_t)(strrchr(g.gl_pathv[i], '/') - g.gl_pathv[i]);
		snprintf(path, sizeof path, "%.*s/initdb", (int)len,
		    g.gl_pathv[i]);
		if (v > best && access(path, X_OK) == 0 &&
		    access(g.gl_pathv[i], X_OK) == 0) {
			best = v;
			snprintf(bindir, size, "%.*s", (int)len,
			    g.gl_pathv[i]);
		}
	}
	globfree(&g);
	return best >= 0;
}

/* Who runs the server, and its superuser's and our role's names. */
static int
tsupport_pg_users(struct tsupport_pg *pg, struct tsupport_err *err)
{
	const struct passwd *pw;

	if ((pw = getpwuid(geteuid())) == NULL) {
		errno = EINVAL;
		return tsupport_err_set(err, "no user has uid %d",
		    (int)geteuid());
	}
	snprintf(pg->us, sizeof pg->us, "%s", pw->pw_name);
	snprintf(pg->super, sizeof pg->super, "%s", pw->pw_name);
	if (geteuid() != 0)
		return 0;
	if (tsupport_child_user(TSUPPORT_PG_SYSTEM_USER, &pg->user, err) ==
	    -1) {
		errno = ENOENT;
		return tsupport_err_set(err, "PostgreSQL is not installed (no "
		    "user %s, which its package makes)",
		    TSUPPORT_PG_SYSTEM_USER);
	}
	pg->become = true;
	snprintf(pg->super, sizeof pg->super, "%s", TSUPPORT_PG_SYSTEM_USER);
	return 0;
}

struct tsupport_pg *
tsupport_pg_new(const struct tsupport_pg_opts *opts, struct tsupport_err *err)
{
	struct tsupport_pg *pg;

	if ((pg = calloc(1, sizeof *pg)) == NULL) {
		tsupport_err_set(err, "out of memory");
		return NULL;
	}
	pg->opts = *opts;
	pg->port = opts->port > 0 ? opts->port : TSUPPORT_PG_PORT;
	if (!tsupport_pg_find(pg->bindir, sizeof pg->bindir)) {
		tsupport_err_set(err, "PostgreSQL is not installed (no initdb "
		    "and postgres in /usr/lib/postgresql/*/bin)");
		free(pg);
		errno = ENOENT;
		return NULL;
	}
	if (tsupport_pg_users(pg, err) == -1 ||
	    tsupport_dir_make(pg->dir, sizeof pg->dir, opts->parent,
	    opts->name, err) == -1) {
		free(pg);
		return NULL;
	}
	snprintf(pg->data, sizeof pg->data, "%s/data", pg->dir);
	snprintf(pg->log, sizeof pg->log, "%s/log", pg->dir);
	/* The server's own dir, open to all for the socket; initdb closes
	 * data. */
	if (tsupport_pg_chown(pg, pg->dir, err) == -1 ||
	    (chmod(pg->dir, 0755) == -1 && tsupport_err_set(err,
	    "chmod %s: %s", pg->dir, strerror(errno)) == -1)) {
		(void)tsupport_pg_free(pg, NULL);
		return NULL;
	}
	return pg;
}

/* Forks argv as the server's user in its dir, output to log, no signal
 * blocked, dying with us: deathsig. */
static pid_t
tsupport_pg_fork(struct tsupport_pg *pg, const char *log,
    const char *const argv[], bool leader, int deathsig,
    struct tsupport_err *err)
{
	struct tsupport_child c = {
		.path = argv[0], .leader = leader, .log = log,
		.cwd = pg->dir, .user = pg->become ? &pg->user : NULL,
		.deathsig = deathsig,
	};
	sigset_t none;

	/* execv's prototype predates const; it writes none. */
	memcpy(&c.argv, &argv, sizeof c.argv);
	sigemptyset(&none);
	c.mask = &none;
	return tsupport_child_spawn(&c, err);
}

int
tsupport_pg_run(struct tsupport_pg *pg, const char *log,
    const char *const argv[], struct tsupport_err *err)
{
	int status = 0;
	pid_t pid;

	if ((pid = tsupport_pg_fork(pg, log, argv, false, SIGKILL, err)) == -1)
		return -1;
	if (tsupport_child_wait(pid, pg->opts.timeout_ms,
	    pg->opts.interrupted) == -1) {
		(void)tsupport_child_reap(pid, false, NULL);
		if (errno == EINTR)
			return tsupport_err_set(err, "interrupted");
		return tsupport_err_set(err, "%s did not finish within %d s",
		    argv[0], pg->opts.timeout_ms / 1000);
	}
	if (tsupport_child_reap(pid, false, &status) == -1)
		return tsupport_err_set(err, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return tsupport_err_set(err, "%s failed (%s %d): its output is "
		    "in %s", argv[0], WIFEXITED(status) ? "exit status" :
		    "signal", WIFEXITED(status) ? WEXITSTATUS(status) :
		    WTERMSIG(status), log);
	return 0;
}

int
tsupport_pg_initdb(struct tsupport_pg *pg, const char *data, const char *log,
    struct tsupport_err *err)
{
	char initdb[PATH_MAX + 16], user[80];
	/* --no-sync: a throwaway cluster need not survive a host crash;
	 * the server itself keeps fsync on. */
	const char *const argv[] = {
		initdb, "-D", data, "--auth=trust", user, "--no-sync",
		"--no-locale", "--encoding=UTF8", NULL
	};

	snprintf(initdb, sizeof initdb, "%s/initdb", pg->bindir);
	snprintf(user, sizeof user, "--username=%s", pg->super);
	return tsupport_pg_run(pg, log, argv, err);
}

int
tsupport_pg_chown(const struct tsupport_pg *pg, const char *path,
    struct tsupport_err *err)
{
	if (pg->become && chown(path, pg->user.uid, pg->user.gid) == -1)
		return tsupport_err_set(err, "chown %s: %s", path,
		    strerror(errno));
	return 0;
}

int
tsupport_pg_spawn(struct tsupport_pg *pg, struct tsupport_err *err)
{
	char postgres[PATH_MAX + 16], port[16];
	const char *argv[TSUPPORT_PG_ARGS + 1] = {
		postgres, "-D", pg->data, "-k", pg->dir, "-p", port,
		"-c", "listen_addresses=",
	};
	const char *const *s = pg->opts.settings;
	size_t n = 9;

	snprintf(postgres, sizeof postgres, "%s/postgres", pg->bindir);
	snprintf(port, sizeof port, "%d", pg->port);
	for (; s != NULL && *s != NULL; s++) {
		if (n + 2 > TSUPPORT_PG_ARGS)
			return tsupport_err_set(err, "too many settings");
		argv[n++] = "-c";
		argv[n++] = *s;
	}
	/* Its shutdown at once (SIGQUIT) when we die. */
	if ((pg->pid = tsupport_pg_fork(pg, pg->log, argv, true, SIGQUIT,
	    err)) == -1) {
		pg->pid = 0;
		return -1;
	}
	return 0;
}

/* A conninfo of database dbname as the superuser. */
static void
tsupport_pg_conninfo(const struct tsupport_pg *pg, const char *dbname,
    char *buf, size_t size)
{
	snprintf(buf, size, "host=%s port=%d dbname=%s user=%s", pg->dir,
	    pg->port, dbname, pg->super);
}

int
tsupport_pg_ready(struct tsupport_pg *pg, struct tsupport_err *err)
{
	int64_t deadline = tsupport_clock_ms() + pg->opts.timeout_ms;
	char conninfo[512];
	int rc;

	tsupport_pg_conninfo(pg, "postgres", conninfo, sizeof conninfo);
	while (PQping(conninfo) != PQPING_OK) {
		if ((rc = tsupport_child_exited(pg->pid, NULL)) == -1)
			return tsupport_err_set(err, "waitid: %s",
			    strerror(errno));
		if (rc == 1)
			return tsupport_err_set(err, "postgres exited before "
			    "it accepted connections");
		if (pg->opts.interrupted != NULL && pg->opts.interrupted())
			return tsupport_err_set(err, "interrupted");
		if (tsupport_clock_left_ms(deadline) == 0)
			return tsupport_err_set(err, "postgres did not accept "
			    "connections on %s within %d s", pg->dir,
			    pg->opts.timeout_ms / 1000);
		tsupport_clock_sleep_ms(TSUPPORT_PG_POLL_MS);
	}
	return 0;
}

int
tsupport_pg_add_us(struct tsupport_pg *pg, struct tsupport_err *err)
{
	char sql[128];
	PGresult *res;

	if (!pg->become)
		return 0;
	snprintf(sql, sizeof sql, "CREATE ROLE \"%s\" SUPERUSER LOGIN", pg->us);
	if ((res = tsupport_pg_query(pg, "postgres", sql, err)) == NULL)
		return -1;
	PQclear(res);
	return 0;
}

PGconn *
tsupport_pg_connect(const struct tsupport_pg *pg, const char *dbname,
    struct tsupport_err *err)
{
	char conninfo[512];
	PGconn *conn;

	tsupport_pg_conninfo(pg, dbname, conninfo, sizeof conninfo);
	if ((conn = PQconnectdb(conninfo)) == NULL) {
		tsupport_err_set(err, "out of memory");
		return NULL;
	}
	if (PQstatus(conn) != CONNECTION_OK) {
		tsupport_err_set(err, "PostgreSQL, database %s: %s", dbname,
		    PQerrorMessage(conn));
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

PGresult *
tsupport_pg_query(const struct tsupport_pg *pg, const char *dbname,
    const char *sql, struct tsupport_err *err)
{
	PGresult *res;
	PGconn *conn;

	if ((conn = tsupport_pg_connect(pg, dbname, err)) == NULL)
		return NULL;
	res = PQexec(conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK) {
		tsupport_err_set(err, "PostgreSQL: %s: %s", sql,
		    PQerrorMessage(conn));
		PQclear(res);
		res = NULL;
	}
	PQfinish(conn);
	return res;
}

char *
tsupport_pg_createdb(struct tsupport_pg *pg, const char *name,
    struct tsupport_err *err)
{
	char sql[128], *conninfo;
	PGresult *res;

	if (name[0] == '\0' || strlen(name) > 63 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
	    strlen(name)) {
		tsupport_err_set(err, "bad database name \"%s\"", name);
		return NULL;
	}
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
	if ((res = tsupport_pg_query(pg, "postgres", sql, err)) == NULL)
		return NULL;
	PQclear(res);
	if (asprintf(&conninfo, "host=%s port=%d dbname=%s", pg->dir,
	    pg->port, name) == -1) {
		tsupport_err_set(err, "out of memory");
		return NULL;
	}
	return conninfo;
}

int
tsupport_pg_stop(struct tsupport_pg *pg, struct tsupport_err *err)
{
	if (pg->pid <= 0)
		return 0;
	if (kill(pg->pid, SIGINT) == -1)
		return tsupport_err_set(err, "cannot stop postgres: %s",
		    strerror(errno));
	if (tsupport_child_wait(pg->pid, pg->opts.timeout_ms,
	    pg->opts.interrupted) == 0)
		return 0;
	if (errno == EINTR)
		return tsupport_err_set(err, "interrupted");
	return tsupport_err_set(err, "postgres did not stop within %d s of "
	    "SIGINT", pg->opts.timeout_ms / 1000);
}

int
tsupport_pg_reap(struct tsupport_pg *pg, int *status)
{
	int rc;

	if (pg->pid <= 0)
		return 0;
	rc = tsupport_child_reap(pg->pid, true, status);
	pg->pid = 0;
	return rc;
}

int
tsupport_pg_free(struct tsupport_pg *pg, struct tsupport_err *err)
{
	struct tsupport_err ignored;
	int rc;

	if (pg == NULL)
		return 0;
	/* Its children are not in its process group (postgres setsid()s
	 * them): SIGQUIT has it end them and wait for them. */
	tsupport_child_end(pg->pid, SIGQUIT, pg->opts.timeout_ms);
	rc = tsupport_dir_remove(pg->dir, err != NULL ? err : &ignored);
	free(pg);
	return rc;
}
