/* bench-pg.c - for the cluster benchmark: a PostgreSQL server of its own in a
 * temp dir, on a Unix socket only, never left running or on disk. */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "bench-daemon.h"
#include "bench-pg.h"
#include "bench-tmpdir.h"
#include "bench-why.h"

/* The socket is DIR/.s.PGSQL.PORT in a dir of our own: any port does, no
 * TCP port is opened. */
#define BENCH_PG_PORT		5432
/* initdb, a start and a fast shutdown take seconds; this is a stuck one. */
#define BENCH_PG_TIMEOUT_MS	60000
#define BENCH_PG_POLL_MS	10
/* The user Debian's package makes, whom a root benchmark runs it as: the
 * server refuses to run as root. */
#define BENCH_PG_SYSTEM_USER	"postgres"

struct bench_pg {
	pid_t pid;		/* the postmaster, leader of its group */
	char dir[256];		/* everything of the server lives here */
	char data[300];
	char log[300];
	char bindir[PATH_MAX];
	char super[64];		/* the bootstrap superuser's name */
	char us[64];		/* our user's role name */
	uid_t uid;		/* the server's user, when we are root */
	gid_t gid;
	bool become;		/* whether the child changes to uid, gid */
};

/* The newest /usr/lib/postgresql/VERSION/bin with initdb and postgres. */
static bool
bench_pg_bindir(char *bindir, size_t size)
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

/*
 * Forks argv (a path) with output to the server's log, in the server's dir,
 * as its user, no signal blocked, in a process group of its own when
 * leader. argv is built before: the child of a threaded process may only
 * call what is async-signal-safe. The child's pid, or -1 with errno.
 */
static pid_t
bench_pg_spawn(const struct bench_pg *pg, const char *const argv[],
    bool leader)
{
	pid_t parent = getpid(), pid;
	char *const *av;
	sigset_t none;
	int fd;

	/* execv's prototype predates const; it writes none. */
	memcpy(&av, &argv, sizeof av);

	sigemptyset(&none);
	if ((pid = fork()) != 0)
		return pid;
	if (leader)
		(void)setpgid(0, 0);
	if ((fd = open(pg->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0644)) == -1 || dup2(fd, 1) == -1 || dup2(fd, 2) == -1 ||
	    chdir(pg->dir) == -1)
		_exit(127);
	if (pg->become && (setgroups(0, NULL) == -1 || setgid(pg->gid) == -1
	    || setuid(pg->uid) == -1))
		_exit(127);
	/* After the change of user, which clears it: the server shuts down
	 * at once when we die. */
	if (prctl(PR_SET_PDEATHSIG, SIGQUIT) == -1 || getppid() != parent)
		_exit(127);
	if (sigprocmask(SIG_SETMASK, &none, NULL) == -1)
		_exit(127);
	execv(av[0], av);
	_exit(127);
}

/* Prints the server's log to stderr, for a failure. */
static void
bench_pg_dump_log(const struct bench_pg *pg)
{
	bench_daemon_dump_file("postgres", pg->log);
}

/* Whether pid has exited; WNOWAIT leaves it a zombie, so that its group id
 * is not reused before the group is killed. */
static bool
bench_pg_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1)
		return errno == ECHILD;
	return si.si_pid == pid;
}

static int
bench_pg_initdb(struct bench_pg *pg, char **cause)
{
	char initdb[PATH_MAX + 16], user[80];
	const char *argv[] = {
		initdb, "-D", pg->data, "--auth=trust", user, "--no-sync",
		"--no-locale", "--encoding=UTF8", NULL
	};
	int status, waited = 0;
	pid_t pid;

	snprintf(initdb, sizeof initdb, "%s/initdb", pg->bindir);
	snprintf(user, sizeof user, "--username=%s", pg->super);
	if ((pid = bench_pg_spawn(pg, argv, false)) == -1) {
		bench_why_alloc(cause, "cannot fork: %s", strerror(errno));
		return -1;
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if ((waited += BENCH_PG_POLL_MS) > BENCH_PG_TIMEOUT_MS ||
		    bench_daemon_interrupted() != 0)
			kill(pid, SIGKILL);
		bench_daemon_sleep_ms(BENCH_PG_POLL_MS);
	}
	if (bench_daemon_interrupted() != 0) {
		*cause = strdup("interrupted");
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		bench_pg_dump_log(pg);
		bench_why_alloc(cause, "initdb failed (%s %d): its output is "
		    "above", WIFEXITED(status) ? "exit status" : "signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) :
		    WTERMSIG(status));
		return -1;
	}
	return 0;
}

/* A conninfo of database dbname as the superuser. */
static void
bench_pg_conninfo(const struct bench_pg *pg, const char *dbname, char *buf,
    size_t size)
{
	snprintf(buf, size, "host=%s port=%d dbname=%s user=%s", pg->dir,
	    BENCH_PG_PORT, dbname, pg->super);
}

static int
bench_pg_launch(struct bench_pg *pg, char **cause)
{
	char postgres[PATH_MAX + 16], port[16], conninfo[512];
	/* A socket in our dir and no TCP. fsync stays on: a commit is what
	 * a submit's reply waits for, and its cost is part of the figure.
	 * No autovacuum: its workers' transactions would count as the
	 * daemons' in the idle figure (a run's tables stay small). */
	const char *argv[] = {
		postgres, "-D", pg->data, "-k", pg->dir, "-p", port,
		"-c", "listen_addresses=", "-c", "max_connections=64",
		"-c", "autovacuum=off", NULL
	};
	int waited = 0;

	snprintf(postgres, sizeof postgres, "%s/postgres", pg->bindir);
	snprintf(port, sizeof port, "%d", BENCH_PG_PORT);
	if ((pg->pid = bench_pg_spawn(pg, argv, true)) == -1) {
		pg->pid = 0;
		bench_why_alloc(cause, "cannot fork: %s", strerror(errno));
		return -1;
	}
	/* Also here: the guard may kill the group before the child ran.
	 * EACCES: the child has exec'd, after its own setpgid. */
	if (setpgid(pg->pid, pg->pid) == -1 && errno != EACCES) {
		bench_why_alloc(cause, "setpgid: %s", strerror(errno));
		return -1;
	}
	bench_daemon_guard_group(pg->pid);
	bench_pg_conninfo(pg, "postgres", conninfo, sizeof conninfo);
	while (PQping(conninfo) != PQPING_OK) {
		if (bench_pg_exited(pg->pid)) {
			if (bench_daemon_interrupted() != 0) {
				*cause = strdup("interrupted");
				return -1;
			}
			bench_pg_dump_log(pg);
			*cause = strdup("postgres exited before it accepted "
			    "connections (its log is above)");
			return -1;
		}
		if ((waited += BENCH_PG_POLL_MS) > BENCH_PG_TIMEOUT_MS) {
			bench_pg_dump_log(pg);
			bench_why_alloc(cause, "postgres did not accept "
			    "connections on %s within %d s", pg->dir,
			    BENCH_PG_TIMEOUT_MS / 1000);
			return -1;
		}
		bench_daemon_sleep_ms(BENCH_PG_POLL_MS);
	}
	return 0;
}

/* Runs sql on database dbname as the superuser; the result (tuples or
 * none), the caller's to PQclear, or NULL with *cause set (allocated). */
static PGresult *
bench_pg_query(const struct bench_pg *pg, const char *dbname,
    const char *sql, char **cause)
{
	char conninfo[512];
	PGresult *res;
	PGconn *conn;

	bench_pg_conninfo(pg, dbname, conninfo, sizeof conninfo);
	if ((conn = PQconnectdb(conninfo)) == NULL) {
		*cause = strdup("out of memory");
		return NULL;
	}
	if (PQstatus(conn) != CONNECTION_OK) {
		bench_why_alloc(cause, "PostgreSQL, database %s: %s", dbname,
		    PQerrorMessage(conn));
		PQfinish(conn);
		return NULL;
	}
	res = PQexec(conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK) {
		bench_why_alloc(cause, "PostgreSQL: %s: %s", sql,
		    PQerrorMessage(conn));
		PQclear(res);
		res = NULL;
	}
	PQfinish(conn);
	return res;
}

/* Who runs the server, and under which role names. 0, or -1. */
static int
bench_pg_users(struct bench_pg *pg, char **cause)
{
	const struct passwd *pw;

	if ((pw = getpwuid(geteuid())) == NULL) {
		bench_why_alloc(cause, "no user has uid %d", (int)geteuid());
		return -1;
	}
	snprintf(pg->us, sizeof pg->us, "%s", pw->pw_name);
	snprintf(pg->super, sizeof pg->super, "%s", pw->pw_name);
	if (geteuid() != 0)
		return 0;
	if ((pw = getpwnam(BENCH_PG_SYSTEM_USER)) == NULL) {
		bench_why_alloc(cause, "no user %s (PostgreSQL's package makes "
		    "it), whom a root benchmark runs the server as",
		    BENCH_PG_SYSTEM_USER);
		return -1;
	}
	pg->become = true;
	pg->uid = pw->pw_uid;
	pg->gid = pw->pw_gid;
	snprintf(pg->super, sizeof pg->super, "%s", BENCH_PG_SYSTEM_USER);
	return 0;
}

struct bench_pg *
bench_pg_start(const char *parent, char **cause)
{
	struct bench_pg *pg;
	char sql[128], *ignored = NULL;
	PGresult *res;

	*cause = NULL;
	if ((pg = calloc(1, sizeof *pg)) == NULL) {
		*cause = strdup("out of memory");
		return NULL;
	}
	if (!bench_pg_bindir(pg->bindir, sizeof pg->bindir)) {
		*cause = strdup("PostgreSQL is not installed (no initdb and "
		    "postgres in /usr/lib/postgresql/*/bin): make deps");
		free(pg);
		return NULL;
	}
	if (bench_pg_users(pg, cause) == -1) {
		free(pg);
		return NULL;
	}
	if (bench_tmpdir_make(parent, "pg", pg->dir, sizeof pg->dir) == -1) {
		bench_why_alloc(cause, "cannot make a temp dir in %s: %s",
		    parent, strerror(errno));
		free(pg);
		return NULL;
	}
	snprintf(pg->data, sizeof pg->data, "%s/data", pg->dir);
	snprintf(pg->log, sizeof pg->log, "%s/log", pg->dir);
	/* The server's own dir, open to all for the socket; initdb closes
	 * data. */
	if ((pg->become && chown(pg->dir, pg->uid, pg->gid) == -1) ||
	    chmod(pg->dir, 0755) == -1) {
		bench_why_alloc(cause, "%s: %s", pg->dir, strerror(errno));
		goto fail;
	}
	if (bench_pg_initdb(pg, cause) == -1 ||
	    bench_pg_launch(pg, cause) == -1)
		goto fail;
	if (pg->become) {
		snprintf(sql, sizeof sql, "CREATE ROLE \"%s\" SUPERUSER LOGIN",
		    pg->us);
		if ((res = bench_pg_query(pg, "postgres", sql, cause)) == NULL)
			goto fail;
		PQclear(res);
	}
	return pg;

fail:
	(void)bench_pg_free(pg, &ignored);
	free(ignored);
	return NULL;
}

char *
bench_pg_createdb(struct bench_pg *pg, const char *name, char **cause)
{
	char sql[128], *conninfo;
	PGresult *res;

	*cause = NULL;
	if (name[0] == '\0' || strlen(name) > 63 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
	    strlen(name)) {
		bench_why_alloc(cause, "bad database name \"%s\"", name);
		return NULL;
	}
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
	if ((res = bench_pg_query(pg, "postgres", sql, cause)) == NULL)
		return NULL;
	PQclear(res);
	if (asprintf(&conninfo, "host=%s port=%d dbname=%s user=%s", pg->dir,
	    BENCH_PG_PORT, name, pg->us) == -1) {
		*cause = strdup("out of memory");
		return NULL;
	}
	return conninfo;
}

long long
bench_pg_xacts(struct bench_pg *pg, const char *name, char **cause)
{
	const char *params[1] = { name };
	char conninfo[512];
	PGresult *res;
	PGconn *conn;
	long long n = -1;

	*cause = NULL;
	bench_pg_conninfo(pg, "postgres", conninfo, sizeof conninfo);
	if ((conn = PQconnectdb(conninfo)) == NULL) {
		*cause = strdup("out of memory");
		return -1;
	}
	if (PQstatus(conn) != CONNECTION_OK) {
		bench_why_alloc(cause, "PostgreSQL: %s", PQerrorMessage(conn));
		PQfinish(conn);
		return -1;
	}
	res = PQexecParams(conn, "SELECT xact_commit + xact_rollback FROM "
	    "pg_stat_database WHERE datname = $1", 1, NULL, params, NULL,
	    NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bench_why_alloc(cause, "PostgreSQL: pg_stat_database: %s",
		    PQerrorMessage(conn));
	else if (PQntuples(res) != 1)
		bench_why_alloc(cause, "pg_stat_database has no database %s",
		    name);
	else
		n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	PQfinish(conn);
	return n;
}

int
bench_pg_free(struct bench_pg *pg, char **cause)
{
	int waited = 0, status = 0, rc = 0;

	*cause = NULL;
	if (pg == NULL)
		return 0;
	if (pg->pid > 0) {
		if (kill(pg->pid, SIGINT) == -1) {
			bench_why_alloc(cause, "cannot stop postgres: %s",
			    strerror(errno));
			rc = -1;
		}
		while (rc == 0 && !bench_pg_exited(pg->pid)) {
			if ((waited += BENCH_PG_POLL_MS) > BENCH_PG_TIMEOUT_MS) {
				bench_why_alloc(cause, "postgres did not stop "
				    "within %d s of SIGINT",
				    BENCH_PG_TIMEOUT_MS / 1000);
				rc = -1;
			}
			bench_daemon_sleep_ms(BENCH_PG_POLL_MS);
		}
		bench_daemon_kill_other(pg->pid);
		while (waitpid(pg->pid, &status, 0) == -1 && errno == EINTR)
			continue;
		if (rc == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		    && bench_daemon_interrupted() == 0) {
			bench_why_alloc(cause, "postgres stopped with status "
			    "%#x", (unsigned)status);
			rc = -1;
		}
		if (rc == -1 && bench_daemon_interrupted() == 0)
			bench_pg_dump_log(pg);
	}
	if (bench_tmpdir_remove(pg->dir) == -1)
		fprintf(stderr, "bench: cannot remove %s: %s\n", pg->dir,
		    strerror(errno));
	free(pg);
	return rc;
}
