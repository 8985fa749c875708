/* bench-pg.c - for the cluster benchmark: a PostgreSQL server of its own in a
 * temp dir, on a Unix socket only, never left running or on disk. */
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "bench-daemon.h"
#include "bench-pg.h"
#include "bench-why.h"
#include "tsupport-clock.h"
#include "tsupport-pg.h"

/* initdb, a start and a fast shutdown take seconds; this is a stuck one. */
#define BENCH_PG_TIMEOUT_MS	60000
/* How long the sessions of stopped daemons may take to go. */
#define BENCH_PG_GONE_MS	10000

/* Its failure, *cause set (allocated) from err, with the server's log
 * printed when it has something to say. -1. */
static int
bench_pg_fail(const struct tsupport_pg *pg, const struct tsupport_err *err,
    char **cause)
{
	if (bench_daemon_interrupted() != 0) {
		*cause = strdup("interrupted");
		return -1;
	}
	bench_daemon_dump_file("postgres", pg->log);
	bench_why_alloc(cause, "%s (its log is above)", err->msg);
	return -1;
}

/* Runs sql in the database postgres. 0, or -1 with *cause set
 * (allocated). */
static int
bench_pg_exec(struct tsupport_pg *pg, const char *sql, char **cause)
{
	struct tsupport_err err;
	PGresult *res;
	PGconn *conn;
	int rc = 0;

	if ((conn = tsupport_pg_connect(pg, "postgres", &err)) == NULL) {
		*cause = strdup(err.msg);
		return -1;
	}
	res = PQexec(conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		bench_why_alloc(cause, "PostgreSQL: %s: %s", sql,
		    PQerrorMessage(conn));
		rc = -1;
	}
	PQclear(res);
	PQfinish(conn);
	return rc;
}

struct tsupport_pg *
bench_pg_start(const char *parent, bool statements, char **cause)
{
	/* fsync stays on: a commit is what a submit's reply waits for, and
	 * its cost is part of the figure. No autovacuum: its workers'
	 * transactions would count as the daemons' in the idle figure (a
	 * run's tables stay small). */
	static const char *const settings[] = {
		"max_connections=64", "autovacuum=off", NULL
	};
	static const char *const profiled[] = {
		"max_connections=64", "autovacuum=off",
		"shared_preload_libraries=pg_stat_statements", NULL
	};
	const struct tsupport_pg_opts opts = {
		.parent = parent, .name = "triage-bench-pg",
		.settings = statements ? profiled : settings,
		.timeout_ms = BENCH_PG_TIMEOUT_MS,
		.interrupted = bench_daemon_interrupted,
	};
	struct tsupport_err err;
	struct tsupport_pg *pg;
	char *ignored = NULL;

	*cause = NULL;
	if ((pg = tsupport_pg_new(&opts, &err)) == NULL) {
		bench_why_alloc(cause, "%s%s", err.msg, errno == ENOENT ?
		    ": make deps" : "");
		return NULL;
	}
	if (tsupport_pg_initdb(pg, pg->data, pg->log, &err) == -1 ||
	    tsupport_pg_spawn(pg, &err) == -1) {
		bench_pg_fail(pg, &err, cause);
		goto fail;
	}
	/* The guard kills it on Ctrl-C, while it starts too. */
	bench_daemon_guard_group(pg->pid);
	if (tsupport_pg_ready(pg, &err) == -1 ||
	    tsupport_pg_add_us(pg, &err) == -1) {
		bench_pg_fail(pg, &err, cause);
		goto fail;
	}
	if (statements && bench_pg_exec(pg, "CREATE EXTENSION "
	    "pg_stat_statements", cause) != 0)
		goto fail;
	return pg;

fail:
	(void)bench_pg_free(pg, &ignored);
	free(ignored);
	return NULL;
}

char *
bench_pg_createdb(struct tsupport_pg *pg, const char *name, char **cause)
{
	struct tsupport_err err;
	char *conninfo, *with_us;

	*cause = NULL;
	if ((conninfo = tsupport_pg_createdb(pg, name, &err)) == NULL) {
		*cause = strdup(err.msg);
		return NULL;
	}
	if (asprintf(&with_us, "%s user=%s", conninfo, pg->us) == -1) {
		*cause = strdup("out of memory");
		with_us = NULL;
	}
	free(conninfo);
	return with_us;
}

long long
bench_pg_xacts(struct tsupport_pg *pg, const char *name, char **cause)
{
	const char *params[1] = { name };
	struct tsupport_err err;
	PGresult *res;
	PGconn *conn;
	long long n = -1;

	*cause = NULL;
	if ((conn = tsupport_pg_connect(pg, "postgres", &err)) == NULL) {
		*cause = strdup(err.msg);
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
bench_pg_statements(struct tsupport_pg *pg, const char *name, double jobs,
    int top, FILE *out, char **cause)
{
	char limit[16];
	const char *params[2] = { name, limit };
	struct tsupport_err err;
	PGresult *res;
	PGconn *conn;
	int i, rc = -1;

	*cause = NULL;
	snprintf(limit, sizeof limit, "%d", top);
	if ((conn = tsupport_pg_connect(pg, "postgres", &err)) == NULL) {
		*cause = strdup(err.msg);
		return -1;
	}
	/* The server's own time a statement; what each costs besides
	 * (its round of the protocol, parse and bind) is in the calls. */
	res = PQexecParams(conn, "SELECT calls, total_exec_time, rows,"
	    " regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements"
	    " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)"
	    " ORDER BY total_exec_time DESC LIMIT $2::integer", 2, NULL,
	    params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		bench_why_alloc(cause, "PostgreSQL: pg_stat_statements: %s",
		    PQerrorMessage(conn));
		goto out;
	}
	fprintf(out, "%10s %10s %9s %9s  %s\n", "calls/job", "ms/job",
	    "us/call", "rows/call", "statement");
	for (i = 0; i < PQntuples(res); i++) {
		double calls = strtod(PQgetvalue(res, i, 0), NULL);
		double ms = strtod(PQgetvalue(res, i, 1), NULL);
		double rows = strtod(PQgetvalue(res, i, 2), NULL);

		fprintf(out, "%10.2f %10.3f %9.1f %9.1f  %.90s\n",
		    calls / jobs, ms / jobs, calls > 0 ? 1000 * ms / calls : 0,
		    calls > 0 ? rows / calls : 0, PQgetvalue(res, i, 3));
	}
	rc = 0;
out:
	PQclear(res);
	PQfinish(conn);
	return rc;
}

int
bench_pg_gone(struct tsupport_pg *pg, const char *name, char **cause)
{
	const char *params[1] = { name };
	int64_t deadline = tsupport_clock_ms() + BENCH_PG_GONE_MS;
	struct tsupport_err err;
	PGresult *res;
	PGconn *conn;
	int rc = -1;

	*cause = NULL;
	if ((conn = tsupport_pg_connect(pg, "postgres", &err)) == NULL) {
		*cause = strdup(err.msg);
		return -1;
	}
	for (;;) {
		res = PQexecParams(conn, "SELECT count(*) FROM "
		    "pg_stat_activity WHERE datname = $1", 1, NULL, params,
		    NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK) {
			bench_why_alloc(cause, "PostgreSQL: pg_stat_activity: "
			    "%s", PQerrorMessage(conn));
			break;
		}
		if (strcmp(PQgetvalue(res, 0, 0), "0") == 0) {
			rc = 0;
			break;
		}
		PQclear(res);
		res = NULL;
		if (tsupport_clock_ms() > deadline) {
			bench_why_alloc(cause, "sessions of %s still there after "
			    "%d s", name, BENCH_PG_GONE_MS / 1000);
			break;
		}
		tsupport_clock_sleep_ms(10);
	}
	PQclear(res);
	PQfinish(conn);
	return rc;
}

long long
bench_pg_cpu(const struct tsupport_pg *pg, char **cause)
{
	unsigned long long cutime, cstime;
	char path[64];
	FILE *f;
	int n;

	*cause = NULL;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pg->pid);
	if ((f = fopen(path, "r")) == NULL) {
		bench_why_alloc(cause, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* After the command's closing parenthesis: fields 3 to 17. */
	n = fscanf(f, "%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
	    "%*u %*u %llu %llu", &cutime, &cstime);
	fclose(f);
	if (n != 2) {
		bench_why_alloc(cause, "%s: not as expected", path);
		return -1;
	}
	return (long long)(cutime + cstime);
}

int
bench_pg_free(struct tsupport_pg *pg, char **cause)
{
	struct tsupport_err err;
	int status = 0, rc = 0;

	*cause = NULL;
	if (pg == NULL)
		return 0;
	if (pg->pid > 0) {
		rc = tsupport_pg_stop(pg, &err);
		/* Forgotten by the guard before it is reaped: the guard
		 * never kills a group whose id may be reused. */
		bench_daemon_kill_other(pg->pid);
		(void)tsupport_pg_reap(pg, &status);
		if (rc == 0 && bench_daemon_interrupted() == 0 &&
		    (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
			rc = tsupport_err_set(&err, "postgres stopped with "
			    "status %#x", (unsigned)status);
		if (rc == -1)
			bench_pg_fail(pg, &err, cause);
	}
	if (tsupport_pg_free(pg, &err) == -1)
		fprintf(stderr, "bench: %s\n", err.msg);
	return rc;
}
