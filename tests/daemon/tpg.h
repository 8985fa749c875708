/* tpg.h - for the daemon tests: a real PostgreSQL server of the test's own,
 * in a temp dir, reached on a Unix socket there only. */
#ifndef TRIAGE_TEST_TPG_H
#define TRIAGE_TEST_TPG_H

#include <stdbool.h>

#include <libpq-fe.h>

struct tpg;

/*
 * Starts a server: initdb and postgres of the newest
 * /usr/lib/postgresql/VERSION/bin, run as the postgres user when the test
 * runs as root, else as the test's user, with trust authentication on its
 * socket for that user and for the test's (a role named like the test's
 * user, root included, a superuser: libpq's default user works). Returns
 * NULL, having printed a one-line reason, when PostgreSQL is not installed
 * (the caller skips); fails the test on any other error, with the server's
 * log. The server dies with the test, and a failed test's is killed and its
 * dir removed by the harness (tdaemon_adopt). initdb runs once per program:
 * each server starts on a copy of its files.
 */
struct tpg *tpg_start(void);
/* Creates the empty database name ([a-z0-9_]) and returns its conninfo,
 * "host=DIR port=PORT dbname=NAME", the caller's to free. */
char *tpg_createdb(struct tpg *pg, const char *name);
/* The socket dir and port, for conninfos of the test's making. */
const char *tpg_host(const struct tpg *pg);
int tpg_port(const struct tpg *pg);
/* Fast shutdown (SIGINT), waiting until the server has exited. */
void tpg_stop(struct tpg *pg);
/* Stops it if it runs, and starts it again on the same data, socket dir
 * and port; returns once it accepts connections. */
void tpg_restart(struct tpg *pg);
/* kill -9 of the postmaster and of every process it had forked, then a
 * start as tpg_restart's: the server recovers from its WAL. */
void tpg_crash_restart(struct tpg *pg);
/* kill -9 of the postmaster and of every process it had forked; returns
 * once they are all gone. It stays down. */
void tpg_kill(struct tpg *pg);
/* pg_ctl restart -m immediate: SIGQUIT (its children end at once, no
 * checkpoint), then a start as tpg_restart's, which recovers. */
void tpg_immediate_restart(struct tpg *pg);

/*
 * A streaming standby of primary (a server tpg_start made, or a promoted
 * standby): a base backup of it (pg_basebackup -R) in a dir, socket and
 * port of its own, started as tpg_start's. Synchronous when sync (the
 * primary's synchronous_standby_names names it; synchronous_commit is
 * on, the default), else asynchronous. Returns once the primary sees it
 * streaming in that mode. Freed with tpg_free.
 */
struct tpg *tpg_standby_start(struct tpg *primary, bool sync);
/* Promotes a standby (pg_promote); returns once it accepts writes. */
void tpg_promote(struct tpg *pg);
/* A server tpg_kill left down made a standby of primary, as
 * tpg_standby_start's, on the same dir, socket and port: the old
 * primary after a failover, its data replaced. */
void tpg_rejoin(struct tpg *pg, struct tpg *primary, bool sync);
/* Whether it runs and accepts writes (not a standby). */
bool tpg_is_primary(struct tpg *pg);
/* A libpq multi-host conninfo of both, the writable one chosen at each
 * connection: "host=DIR1,DIR2 port=P1,P2 dbname=dbname
 * target_session_attrs=read-write", the caller's to free. */
char *tpg_multihost(const struct tpg *a, const struct tpg *b,
    const char *dbname);
/* Runs one SQL statement as the server's superuser on database dbname;
 * fails the test on error. The result is the caller's to PQclear. */
PGresult *tpg_query(struct tpg *pg, const char *dbname, const char *sql);
/* The server of a group of tests (NULL when PostgreSQL is not
 * installed: its tests skip), for cmocka's group setup and teardown. */
extern struct tpg *tpg_group;
int tpg_group_setup(void **state);
int tpg_group_teardown(void **state);
/* The server outlives the test that started it (the harness reaps it
 * at exit): one server for a whole program's tests. */
void tpg_keep(struct tpg *pg);
/* Stops the server (an immediate shutdown, waited for), removes its dir,
 * frees pg. NULL is a no-op. */
void tpg_free(struct tpg *pg);

#endif
