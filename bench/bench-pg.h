/* bench-pg.h - for the cluster benchmark: a PostgreSQL server of its own in a
 * temp dir, on a Unix socket only, never left running or on disk. */
#ifndef TRIAGE_BENCH_PG_H
#define TRIAGE_BENCH_PG_H

#include <stdbool.h>
#include <stdio.h>

struct tsupport_pg;

/*
 * Runs initdb and postgres (tests/support/tsupport-pg.h) on a new temp dir
 * under parent and waits until the server accepts connections. Our user
 * gets a superuser role of its name, so that a daemon of ours logs in with
 * "user=NAME". The guard (bench_daemon_guard_group) kills the server on
 * Ctrl-C. With statements, it loads pg_stat_statements
 * (bench_pg_statements). Returns the server, or NULL with *cause set
 * (allocated) and nothing left behind.
 */
struct tsupport_pg *bench_pg_start(const char *parent, bool statements,
    char **cause);
/*
 * Creates the empty database name ([a-z0-9_]) and returns the conninfo a
 * daemon of ours uses for it ("host=DIR port=PORT dbname=NAME user=US"),
 * the caller's to free; NULL with *cause set (allocated).
 */
char *bench_pg_createdb(struct tsupport_pg *pg, const char *name,
    char **cause);
/*
 * The transactions database name has committed and rolled back, as
 * pg_stat_database counts them, read on a connection to another database
 * (so that the read is not counted). -1 with *cause set (allocated).
 */
long long bench_pg_xacts(struct tsupport_pg *pg, const char *name,
    char **cause);
/*
 * Prints to out the top statements of database name by the server's time
 * in them, each one's calls and time per job of jobs (a profile: where a
 * cluster's cost goes). Needs a server started with statements. 0, or -1
 * with *cause set (allocated).
 */
int bench_pg_statements(struct tsupport_pg *pg, const char *name,
    double jobs, int top, FILE *out, char **cause);
/*
 * Waits until no session of database name is left (the daemons that used
 * it have stopped, and their backends exited, their counts and CPU time
 * reported), 10 s at most. 0, or -1 with *cause set (allocated).
 */
int bench_pg_gone(struct tsupport_pg *pg, const char *name, char **cause);
/*
 * The CPU time the server's exited backends used, in clock ticks (the
 * postmaster's cutime + cstime: what its children reaped used). -1 with
 * *cause set (allocated).
 */
long long bench_pg_cpu(const struct tsupport_pg *pg, char **cause);
/*
 * Fast shutdown (SIGINT), waits for the server to exit, removes its dir
 * and frees pg. Returns 0, or -1 with *cause set (allocated) when it did
 * not stop cleanly (it is killed and removed all the same). NULL is a
 * no-op.
 */
int bench_pg_free(struct tsupport_pg *pg, char **cause);

#endif
