/* pg-conn.h - one PostgreSQL connection driven by a libevent loop: batches of
 * statements pipelined, LISTEN/NOTIFY, reconnection with backoff. */
#ifndef TRIAGE_PG_CONN_H
#define TRIAGE_PG_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

struct event_base;
struct pg_conn;

/*
 * The connection came up (up true, cause NULL) or was lost or could not be
 * made (up false, cause: libpq's message on one line, never the conninfo,
 * which may hold a password). Called on each change of state only, the
 * first outcome after pg_conn_start included, not on every failed attempt
 * while down.
 */
typedef void (*pg_conn_state_cb)(bool up, const char *cause, void *arg);
/* A NOTIFY on a channel this connection LISTENs to (payload "" when the
 * NOTIFY had none). */
typedef void (*pg_conn_notify_cb)(const char *channel, const char *payload,
    void *arg);
/*
 * A batch is over. results[i] is statement i's PGresult, borrowed for the
 * call: PGRES_COMMAND_OK or PGRES_TUPLES_OK, or an error result, after
 * which the rest of the batch are PGRES_PIPELINE_ABORTED; n the number of
 * statements, cause NULL. When the connection was lost before every result
 * came, or was down when the batch was given, or is being freed: results
 * NULL, n 0, cause says so, and whether the batch took effect is unknown.
 */
typedef void (*pg_conn_batch_cb)(PGresult *const *results, size_t n,
    const char *cause, void *arg);

/* One statement of a batch. */
struct pg_conn_stmt {
	const char *name;	/* a statement given to pg_conn_prepare, or NULL
	    */
	const char *sql;	/* when name is NULL */
	int nparams;
	const char *const *values;	/* text format; NULL = SQL NULL */
	const int *lengths;	/* NULL: every value text; else for bytea
				 * values given in binary (formats) */
	const int *formats;	/* NULL: all text */
};

/*
 * A connection to the server conninfo names (a libpq connection string or
 * URI; application_name is "triaged" unless it sets one), not yet started.
 * The callbacks run from base's loop; notify_cb may be NULL when nothing is
 * LISTENed to. Returns NULL with *cause set (allocated) when conninfo does
 * not parse, saying why without repeating it, or when out of memory.
 */
struct pg_conn *pg_conn_new(struct event_base *base, const char *conninfo,
    pg_conn_state_cb state_cb, pg_conn_notify_cb notify_cb, void *arg,
    char **cause);
/*
 * Before pg_conn_start: a statement prepared on every (re)connection before
 * anything else is sent, and a channel LISTENed to on every (re)connection.
 * A connection whose set-up fails counts as down, with the failing
 * statement's error as its cause. 0, or -1 with errno ENOMEM, or EBUSY
 * after pg_conn_start.
 */
int pg_conn_prepare(struct pg_conn *c, const char *name, const char *sql);
int pg_conn_listen(struct pg_conn *c, const char *channel);
/* The longest wait between attempts to reconnect: 5 s unless made
 * shorter (100 ms at least), for a user whose peers must not take it for
 * dead meanwhile (a cluster's lease). */
void pg_conn_set_backoff_max(struct pg_conn *c, int ms);
/* While batches are out, the longest the server may say nothing before
 * the connection is taken for dead (closed, its batches failed, made
 * again, as pg_conn_drop): a split that closes no connection is noticed
 * so. 0, the default: no bound. */
void pg_conn_set_silence_max(struct pg_conn *c, int ms);
/* Starts connecting, from the loop (never blocking it): state_cb tells the
 * outcome. 0, or -1 with errno (EBUSY when started already). */
int pg_conn_start(struct pg_conn *c);
/* Connected and set up: a batch given now is sent at once. */
bool pg_conn_up(const struct pg_conn *c);
/*
 * Sends the statements as one pipeline with one sync point after them
 * (wrap them in BEGIN/COMMIT for a transaction); batches are sent in order
 * and several may be in flight. The values are copied or sent before the
 * call returns. While the connection is down the batch fails at once with
 * cause "not connected to PostgreSQL: ...". cb is called once, from the
 * loop, never inside this call. 0, or -1 with errno ENOMEM (cb is never
 * called).
 */
int pg_conn_batch(struct pg_conn *c, const struct pg_conn_stmt *stmts,
    size_t n, pg_conn_batch_cb cb, void *arg);
/*
 * The connection is taken for dead (a peer's answer overdue): it is closed
 * as a lost one would be (state_cb says so, with why; its batches fail),
 * and made again after the backoff. Nothing when it is down already.
 */
void pg_conn_drop(struct pg_conn *c, const char *why);
/* The server process of the connection while it is up, else 0. */
int pg_conn_backend_pid(const struct pg_conn *c);
/*
 * Closes the connection; every batch still out gets cb(NULL, 0, "closing",
 * arg) first. May be called from inside any of c's callbacks (the memory
 * goes when the callback returns). NULL is a no-op.
 */
void pg_conn_free(struct pg_conn *c);

#endif
