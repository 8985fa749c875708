/* tsupport-pg.h - for tests and benchmarks: a real PostgreSQL server of their
 * own in a temp dir, reached on a Unix socket there only. */
#ifndef TRIAGE_TSUPPORT_PG_H
#define TRIAGE_TSUPPORT_PG_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include <libpq-fe.h>

#include "tsupport-child.h"
#include "tsupport-err.h"

/* The socket is DIR/.s.PGSQL.PORT in a dir of the server's own: any port
 * does, no TCP port is opened. This one unless the opts say another. */
#define TSUPPORT_PG_PORT 5432

/* What a server is for; all but settings and interrupted must be set. */
struct tsupport_pg_opts {
	const char		*parent;	/* its temp dir is made here, */
	const char		*name;		/* named PARENT/NAME-XXXXXX */
	const char *const	*settings;	/* postgres -c NAME=VALUE,
						 * NULL-ended; NULL: none */
	int			 timeout_ms;	/* for initdb, a start, a stop */
	int			(*interrupted)(void);	/* when not NULL and
						 * it says so, waits give up */
	int			 port;		/* its socket's; 0:
						 * TSUPPORT_PG_PORT */
};

/* A server; its fields are for reading. */
struct tsupport_pg {
	pid_t				pid;	/* the postmaster, leader of
						 * its group; 0: not running */
	char				dir[256];	/* its socket's, and
							 * everything else's */
	char				data[300];	/* DIR/data */
	char				log[300];	/* DIR/log */
	char				super[64];	/* bootstrap superuser */
	char				us[64];		/* our own role */
	char				bindir[PATH_MAX];
	int				port;	/* its socket's */
	bool				become;	/* runs as user, not as us */
	struct tsupport_child_user	user;
	struct tsupport_pg_opts		opts;
};

/*
 * A server of the newest /usr/lib/postgresql/VERSION/bin, not started: its
 * dir made (the server's, open to all for the socket). It runs as the
 * postgres user when we are root (it refuses root), else as us; then our
 * role is not its superuser (tsupport_pg_add_us). Returns it, or NULL with
 * err, and errno ENOENT when PostgreSQL is not installed.
 */
struct tsupport_pg *tsupport_pg_new(const struct tsupport_pg_opts *opts,
    struct tsupport_err *err);
/*
 * Runs argv (argv[0] a path) in pg's dir as the server's user, its output
 * appended to log, and waits for it (killed past the timeout). 0, or -1
 * with err when it does not succeed.
 */
int tsupport_pg_run(struct tsupport_pg *pg, const char *log,
    const char *const argv[], struct tsupport_err *err);
/* initdb of a new cluster in data (pg->data for its own), trust for all
 * on its socket; its output appended to log. 0, or -1 with err. */
int tsupport_pg_initdb(struct tsupport_pg *pg, const char *data,
    const char *log, struct tsupport_err *err);
/* Gives path to the server's user, when it is not us. 0, or -1 with err. */
int tsupport_pg_chown(const struct tsupport_pg *pg, const char *path,
    struct tsupport_err *err);
/* Starts postgres on pg->data (in pg->pid); tsupport_pg_ready next. It
 * shuts down at once when we die. 0, or -1 with err. */
int tsupport_pg_spawn(struct tsupport_pg *pg, struct tsupport_err *err);
/* Polls until the server accepts connections. 0, or -1 with err when it
 * exits first, past the timeout, or when interrupted ("interrupted"). */
int tsupport_pg_ready(struct tsupport_pg *pg, struct tsupport_err *err);
/* Our role, a superuser of our name, when the server is not ours: libpq's
 * default user then works. 0, or -1 with err. */
int tsupport_pg_add_us(struct tsupport_pg *pg, struct tsupport_err *err);
/* A connection to database dbname as the superuser: the caller's to
 * PQfinish. NULL with err. */
PGconn *tsupport_pg_connect(const struct tsupport_pg *pg, const char *dbname,
    struct tsupport_err *err);
/* Runs one SQL statement on dbname as the superuser: its result, the
 * caller's to PQclear, or NULL with err. */
PGresult *tsupport_pg_query(const struct tsupport_pg *pg, const char *dbname,
    const char *sql, struct tsupport_err *err);
/* Creates the empty database name ([a-z0-9_]) and returns its conninfo,
 * "host=DIR port=PORT dbname=NAME", the caller's to free; NULL with err. */
char *tsupport_pg_createdb(struct tsupport_pg *pg, const char *name,
    struct tsupport_err *err);
/* Fast shutdown (SIGINT), and waits for the server to exit (left to
 * tsupport_pg_reap). 0, or -1 with err. */
int tsupport_pg_stop(struct tsupport_pg *pg, struct tsupport_err *err);
/* Kills what is left of the server's group, reaps the postmaster (its wait
 * status in *status when not NULL). 0 or -1. */
int tsupport_pg_reap(struct tsupport_pg *pg, int *status);
/* Ends the server if it runs (an immediate shutdown, SIGQUIT, waited for,
 * so that nothing writes in its dir any more), removes its dir, frees pg.
 * 0, or -1 with err when the dir could not all go. NULL is a no-op. */
int tsupport_pg_free(struct tsupport_pg *pg, struct tsupport_err *err);

#endif
