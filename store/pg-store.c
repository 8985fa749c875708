/* pg-store.c - the store in the cluster's PostgreSQL: the changes of a loop
 * turn go out as one transaction without blocking the loop, each update
 * fenced by the version of the row it read. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "job.h"
#include "jobcols.h"
#include "jobrow.h"
#include "pg-schema.h"
#include "pg-util.h"
#include "pg-conn.h"
#include "pg-row.h"
#include "store.h"
#include "pg-private.h"
#include "timefmt.h"

/* How long a failed commit waits before the next try of what it could not
 * write (the connection itself comes back on its own backoff). */
#define PG_STORE_RETRY_MS 1000
/* How long a stopping daemon waits for its last writes. */
#define PG_STORE_FLUSH_MS 10000
/* Ids asked for at a time, ahead of the jobs that take them. */
#define PG_STORE_IDS 256
/*
 * Changed and removed jobs written by one commit at most: a bulk cancel of
 * 100,000 jobs goes out as many commits, each built and settled in a few
 * milliseconds, so that the loop serves others between them.
 */
#define PG_STORE_COMMIT_ROWS 500

/* The statements, prepared on every connection. */
static const struct {
	const char *name;
	const char *sql;
} pg_store_stmts[] = {
	/* ins, upd and claim come first: pg_store_prepare_rows. */
	{ "sync_jobs", PG_STORE_SYNC_JOBS },
	{ "refetch", "SELECT version, " JOBCOLS_NAMES " FROM triage_jobs"
	    " WHERE id = ANY($1::bigint[])" },
	{ "sync_removed", PG_STORE_SYNC_REMOVED },
	{ "del", "WITH d AS (DELETE FROM triage_jobs WHERE id = $1"
	    " RETURNING id), o AS (DELETE FROM triage_output WHERE job = $1)"
	    " INSERT INTO triage_removed (id, removed_at)"
	    " SELECT id, $2 FROM d ON CONFLICT DO NOTHING" },
	{ "paused_clear", "DELETE FROM triage_paused" },
	{ "paused_set", "INSERT INTO triage_paused"
	    " SELECT unnest($1::text[])" },
	/* Whether a commit whose answer was lost happened (see pg_commit),
	 * and the node's lease renewed: a claim holds it at once. */
	{ "mark", "UPDATE triage_nodes SET commit_gen = $3,"
	    " commit_xid = pg_current_xact_id(),"
	    " lease_until = now() + $4::interval, busy = $5, grace_ms = $6"
	    " WHERE name = $1 AND boot = $2" },
	{ "lease", pg_store_lease_sql },
	{ "takeover", pg_store_takeover_sql },
	{ "cancel", pg_store_cancel_sql },
	{ "sync_cancels", PG_STORE_SYNC_CANCELS },
	/* Trusted only once the session the commit went out on has ended:
	 * one the daemon let go of (silent, dropped) may still be reading
	 * it, and commit after this read. It is ended first (5 s at most),
	 * then the third column says whether it is gone. */
	{ "end_session", "SELECT pg_terminate_backend(pid, 5000)"
	    " FROM pg_stat_activity WHERE pid = $1::integer"
	    " AND backend_start::text = $2" },
	{ "marked", "SELECT commit_gen, commit_xid::text, NOT EXISTS"
	    " (SELECT 1 FROM pg_stat_activity WHERE pid = $3::integer"
	    " AND backend_start::text = $4) FROM triage_nodes"
	    " WHERE name = $1 AND boot = $2" },
	{ "versions", "SELECT id, version FROM triage_jobs"
	    " WHERE id = ANY($1::bigint[]) AND txid = $2::xid8" },
	{ "notify", "SELECT pg_notify('" PG_STORE_CHANNEL "', $1)" },
	{ "ids", "SELECT nextval('triage_job_id') FROM"
	    " generate_series(1, $1::integer)" },
};
#define PG_STORE_NSTMTS (sizeof pg_store_stmts / sizeof pg_store_stmts[0])

/* A commit on its way: what it wrote, to settle once it is answered. */
struct pg_commit {
	struct pg_store *s;
	uint64_t gen;
	uint64_t start_us;
	struct vec staged;		/* struct store_staged, ids given */
	struct vec syncs;		/* struct store_sync */
	struct vec updated;		/* struct pg_store_mark, one UPDATE
					 * each, in id order */
	struct vec removed;		/* struct pg_store_mark */
	uint64_t durable;		/* written with it: every generation
					 * up to this one */
	/* The server session it went out on (pid 0: not known). */
	int sess_pid;
	char sess_start[48];
	bool paused;			/* it wrote the paused list */
	bool claims;			/* it held claims: tell written_cb */
	size_t first_update;		/* index of the first UPDATE result */
	/* Each UPDATE's kind, and the job's count of replacements then. */
	struct {
		bool claim;
		uint16_t replaced;
	} *sent;
	size_t ids_at;			/* of the refill of ids; 0: none */
};

static const struct store_ops pg_store_ops;
static void pg_store_commit_cb(evutil_socket_t, short, void *);
static void pg_store_locks_check(struct pg_store *);
static void pg_store_note_sessions(struct pg_store *);
static void pg_store_commit_free(struct pg_commit *);
static void pg_store_ask_doubt(struct pg_store *);
static void pg_store_synced(struct pg_store *);
static void pg_store_settle(struct pg_commit *, PGresult *const *, size_t,
    const char *);

static const struct pg_store *
pg_store_const(const struct store *st)
{
	return (const struct pg_store *)st;
}

/* A commit at the end of this turn of the loop, unless one is on its way:
 * its end schedules the next. */
static void
pg_store_schedule(struct pg_store *s)
{
	static const struct timeval now = { 0, 0 };

	if (s->flight == NULL)
		evtimer_add(s->commit_ev, &now);
}

static void
pg_store_status(struct pg_store *s, bool up, const char *cause)
{
	if (s->st.status_cb != NULL)
		s->st.status_cb(up, cause, s->st.status_arg);
}

/* The versions our commit in doubt gave the rows it updated: those whose
 * last writer is its transaction. Then it is settled as done. */
static void
pg_store_versions_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	struct pg_commit *c = arg;
	struct job *job;
	int i;

	(void)n;
	if (cause != NULL || PQresultStatus(res[0]) != PGRES_TUPLES_OK) {
		c->s->doubt = true;
		return;
	}
	for (i = 0; i < PQntuples(res[0]); i++)
		if ((job = store_get(&c->s->st, strtoull(PQgetvalue(res[0],
		    i, 0), NULL, 10))) != NULL)
			job->store.version = (uint32_t)strtoul(
			    PQgetvalue(res[0], i, 1), NULL, 10);
	pg_store_settle(c, NULL, 0, NULL);
}

static char *
pg_store_marks_array(const struct vec *marks)
{
	return pg_util_array(marks->v, marks->n,
	    sizeof(struct pg_store_mark));
}

/*
 * The answer to "did the commit in doubt happen?": it did when the node's
 * mark holds its generation. Then the rows it updated are asked for their
 * versions (its xid tells ours from another daemon's later write).
 */
static void
pg_store_marked_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	struct pg_commit *c = arg;
	struct pg_conn_stmt q = { "versions", NULL, 2, NULL, NULL, NULL };
	const char *values[2];
	char *ids;
	uint64_t gen = 0;

	if (cause != NULL || n != 2 ||
	    PQresultStatus(res[1]) != PGRES_TUPLES_OK) {
		/* Down again: ask again when it is back. */
		c->s->doubt = true;
		return;
	}
	if (PQntuples(res[1]) == 1 &&
	    strcmp(PQgetvalue(res[1], 0, 2), "t") != 0) {
		/* Its session lives on (pg_terminate_backend's 5 s were not
		 * enough): it could still commit. Ask again. */
		pg_store_ask_doubt(c->s);
		return;
	}
	if (PQntuples(res[1]) == 1)
		gen = strtoull(PQgetvalue(res[1], 0, 0), NULL, 10);
	if (gen < c->gen) {
		pg_store_settle(c, NULL, 0, "the connection to PostgreSQL was "
		    "lost before the commit");
		return;
	}
	if (c->updated.n == 0) {
		pg_store_settle(c, NULL, 0, NULL);
		return;
	}
	if ((ids = pg_store_marks_array(&c->updated)) == NULL) {
		c->s->doubt = true;
		return;
	}
	values[0] = ids;
	values[1] = PQgetvalue(res[1], 0, 1);
	q.values = values;
	if (pg_conn_batch(c->s->conn, &q, 1, pg_store_versions_cb, c) != 0)
		c->s->doubt = true;
	free(ids);
}

static void
pg_store_ask_doubt(struct pg_store *s)
{
	const struct pg_commit *c = s->flight;
	char pid[16];
	const char *values[4] = { s->node, s->boot, pid, c->sess_start };
	struct pg_conn_stmt q[2] = {
		{ "end_session", NULL, 2, values + 2, NULL, NULL },
		{ "marked", NULL, 4, values, NULL, NULL },
	};

	snprintf(pid, sizeof pid, "%d", c->sess_pid);
	s->doubt = false;
	if (s->conn == NULL ||
	    pg_conn_batch(s->conn, q, 2, pg_store_marked_cb, s->flight) != 0)
		s->doubt = true;
}

static void
pg_store_conn_state_cb(bool up, const char *cause, void *arg)
{
	struct pg_store *s = arg;

	s->up = up;
	if (!up) {
		free(s->down_cause);
		s->down_cause = strdup(cause != NULL ? cause : "?");
	}
	/* The first connection is no news: the start connected already. */
	if (s->ever_up || !up)
		pg_store_status(s, up, cause);
	if (!up)
		return;
	/* The server may have restarted, and its locks gone with it: the
	 * node's name is its own again, and it is up to the others. */
	if (s->ever_up)
		pg_store_locks_check(s);
	else
		pg_store_note_sessions(s);
	s->ever_up = true;
	/* Nobody could renew while the server was away: ours first. */
	s->up_since_us = timefmt_mono_us();
	pg_cluster_renew_lease(&s->st);
	if (s->doubt && s->flight != NULL)
		pg_store_ask_doubt(s);
	/* What was missed while down. */
	pg_sync_changes(s);
	pg_store_schedule(s);
}

static void
pg_store_notify_cb(const char *channel, const char *payload, void *arg)
{
	struct pg_store *s = arg;

	(void)channel;
	if (strcmp(payload, s->self) != 0)
		pg_sync_changes(s);
}

/* The first ids, so that the first commit need not wait for them. */
static int
pg_store_load_ids(struct pg_store *s, PGconn *pg, char **cause)
{
	PGresult *res;
	int64_t id;
	int i;

	if ((res = pg_util_query(pg, "SELECT nextval('triage_job_id') FROM"
	    " generate_series(1, 64)", cause)) == NULL)
		return -1;
	for (i = 0; i < PQntuples(res); i++) {
		id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
		if (vec_push(&s->ids, sizeof id, &id) != 0) {
			PQclear(res);
			return cause_fail(cause, "out of memory");
		}
	}
	PQclear(res);
	return 0;
}

/* The length of the "; "-separated item at s. */
static size_t
pg_store_item_len(const char *s)
{
	const char *end = strstr(s, "; ");

	return end != NULL ? (size_t)(end - s) : strlen(s);
}

/* The first item where the texts differ, in a message of *cause. */
static int
pg_store_priorities_differ(const char *mine, const char *theirs, char **cause)
{
	size_t a, b;

	for (;;) {
		a = pg_store_item_len(mine);
		b = pg_store_item_len(theirs);
		if (a != b || strncmp(mine, theirs, a) != 0)
			break;
		mine += a + (mine[a] != '\0' ? 2 : 0);
		theirs += b + (theirs[b] != '\0' ? 2 : 0);
	}
	if (a == 0) {
		mine = "nothing";
		a = strlen(mine);
	}
	if (b == 0) {
		theirs = "nothing";
		b = strlen(theirs);
	}
	return cause_fail(cause,
	    "this daemon's priorities are not those of the "
	    "nodes running: here \"%.*s\", in the cluster \"%.*s\" (every "
	    "node of a cluster has the same policy and [priority.*] ranks, "
	    "weights, max_queued and max_running; to change them, stop every "
	    "node, then start them with the new config)", (int)a, mine,
	    (int)b, theirs);
}

/*
 * Writes the cluster's priorities when this daemon, holding the cluster's
 * lock shared, can take it alone too: no other daemon runs. 1 when it
 * wrote them, 0 when others run, -1 with *cause.
 */
static int
pg_store_write_priorities(PGconn *pg, const char *text, char **cause)
{
	const char *values[1] = { text };
	PGresult *res;
	bool alone;
	int rc = 1;

	if ((res = pg_util_query(pg, "SELECT pg_try_advisory_lock("
	    PG_STORE_LOCK_CLUSTER ")", cause)) == NULL)
		return -1;
	alone = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (!alone)
		return 0;
	res = pg_util_query_params(pg, "INSERT INTO triage_meta"
	    " VALUES ('priorities', $1) ON CONFLICT (key) DO UPDATE"
	    " SET value = $1 RETURNING value", 1, values, cause);
	if (res == NULL || pg_util_exec(pg, "SELECT pg_advisory_unlock("
	    PG_STORE_LOCK_CLUSTER ")", cause) != 0)
		rc = -1;
	PQclear(res);
	return rc;
}

/*
 * The cluster's priorities are one set. Every daemon holds the shared lock
 * of the cluster while it runs; one that can also take it alone is the
 * only one, and its priorities become the cluster's. Else they must be the
 * ones the cluster has, or it says which differ.
 */
static int
pg_store_check_priorities(PGconn *pg, const char *mine, char **cause)
{
	PGresult *res;
	int rc;

	if (pg_util_exec(pg, "SELECT pg_advisory_lock_shared("
	    PG_STORE_LOCK_CLUSTER ")", cause) != 0 ||
	    (rc = pg_store_write_priorities(pg, mine, cause)) == -1)
		return -1;
	if (rc == 1)
		return 0;
	if ((res = pg_util_query(pg, "SELECT value FROM triage_meta"
	    " WHERE key = 'priorities'", cause)) == NULL)
		return -1;
	rc = 0;
	if (PQntuples(res) < 1)
		rc = cause_fail(cause,
		    "the cluster's priorities cannot be read");
	else if (strcmp(PQgetvalue(res, 0, 0), mine) != 0)
		rc = pg_store_priorities_differ(mine, PQgetvalue(res, 0, 0),
		    cause);
	PQclear(res);
	return rc;
}

/* One daemon per node name: it holds the name's lock while it runs. */
static int
pg_store_claim_node(PGconn *pg, const char *node, char **cause)
{
	const char *values[1] = { node };
	PGresult *res;
	int rc = 0;

	if ((res = pg_util_query_params(pg, "SELECT pg_try_advisory_lock("
	    PG_STORE_LOCK_CLUSTER ", hashtext($1))", 1, values, cause))
	    == NULL)
		return -1;
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
		rc = cause_fail(cause, "node %s is running already: another "
		    "daemon of the cluster has that name (set [cluster] node)",
		    node);
	PQclear(res);
	return rc;
}

static int
pg_store_register(struct pg_store *s, PGconn *pg, unsigned slots,
    char **cause)
{
	char nslots[16], now[24], grace[24];
	const char *values[5] = { s->node, s->boot, nslots, now, grace };
	PGresult *res;

	snprintf(nslots, sizeof nslots, "%u", slots);
	snprintf(now, sizeof now, "%" PRId64, timefmt_now());
	snprintf(grace, sizeof grace, "%" PRIu64, s->grace_ms);
	res = pg_util_query_params(pg, "INSERT INTO triage_nodes (name, boot,"
	    " slots, started_at, grace_ms) VALUES ($1, $2, $3, $4, $5)"
	    " ON CONFLICT (name) DO UPDATE SET boot = $2, slots = $3,"
	    " started_at = $4, grace_ms = $5, commit_gen = 0 RETURNING name",
	    5, values, cause);
	if (res == NULL)
		return -1;
	PQclear(res);
	/* The others hear of a new node (submit's node names it). */
	values[0] = s->self;
	if ((res = pg_util_query_params(pg, "SELECT pg_notify('"
	    PG_STORE_CHANNEL
	    "', $1)", 1, values, cause)) == NULL)
		return -1;
	PQclear(res);
	return 0;
}

/*
 * Every job, and the snapshot they were read in: the next read of changes
 * starts from it. In one REPEATABLE READ transaction, so that the rows and
 * the snapshot agree.
 */
static int
pg_store_load(struct pg_store *s, PGconn *pg, char **cause)
{
	PGresult *res;
	struct job *job;
	int i;

	if (pg_util_exec(pg, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
	    cause) != 0)
		return -1;
	if ((res = pg_util_query(pg, "SELECT pg_current_snapshot()::text",
	    cause)) == NULL)
		goto fail;
	s->snapshot = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	if (s->snapshot == NULL) {
		cause_fail(cause, "out of memory");
		goto fail;
	}
	if ((res = pg_util_query(pg, "SELECT version, " JOBCOLS_NAMES
	    " FROM triage_jobs ORDER BY id", cause)) == NULL)
		goto fail;
	for (i = 0; i < PQntuples(res); i++) {
		if ((job = pg_row_read(res, i, 1, &s->cache, cause)) == NULL)
			break;
		job->store.version = (uint32_t)strtoul(PQgetvalue(res, i, 0),
		    NULL, 10);
		if (jobtable_add(&s->st.jobs, job) != 0) {
			job_free(job);
			cause_fail(cause, "out of memory");
			break;
		}
	}
	if (i < PQntuples(res)) {
		PQclear(res);
		goto fail;
	}
	PQclear(res);
	if ((res = pg_util_query(pg, "SELECT priority FROM triage_paused",
	    cause)) == NULL)
		goto fail;
	for (i = 0; i < PQntuples(res); i++)
		store_load_paused(&s->st, PQgetvalue(res, i, 0));
	PQclear(res);
	if ((res = pg_util_query(pg, PG_STORE_NODES, cause)) == NULL)
		goto fail;
	pg_sync_read_nodes(s, res);
	PQclear(res);
	return pg_util_exec(pg, "COMMIT", cause);
fail:
	(void)pg_util_exec(pg, "ROLLBACK", NULL);
	return -1;
}

/*
 * What a daemon does once, blocking, as it starts. The connection stays
 * open, idle, for the daemon's life: it holds the locks of the node's name
 * and of the cluster's priorities.
 */
static int
pg_store_start(struct pg_store *s, const struct store_pg_options *o,
    char **cause)
{
	PGconn *pg = pg_util_connect(o->conninfo, false);

	s->locks = pg;
	if (pg == NULL || PQstatus(pg) != CONNECTION_OK)
		return cause_fail(cause, "cannot connect to PostgreSQL: %s",
		    pg_util_message(pg, NULL));
	if (pg_schema_setup(pg, cause) != 0 ||
	    pg_store_claim_node(pg, s->node, cause) != 0 ||
	    pg_store_check_priorities(pg, o->priorities, cause) != 0 ||
	    pg_store_register(s, pg, o->slots, cause) != 0 ||
	    pg_store_load(s, pg, cause) != 0 ||
	    pg_store_load_ids(s, pg, cause) != 0)
		return -1;
	return 0;
}

/* Prepares name, the SQL that fmt makes: 0, or -1 out of memory. */
static int pg_store_preparef(struct pg_conn *c, const char *name,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int
pg_store_preparef(struct pg_conn *c, const char *name, const char *fmt, ...)
{
	va_list ap;
	char *sql;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&sql, fmt, ap);
	va_end(ap);
	if (rc == -1)
		return -1;
	rc = pg_conn_prepare(c, name, sql);
	free(sql);
	return rc;
}

/*
 * The statements that write a job's row, made from its columns (jobcols.h):
 * ins, every column; upd and claim, what a job's life changes, fenced by
 * the version the update read, its last parameter: another daemon's write
 * since refuses it. A claim does not wait for a row another daemon holds:
 * that one is taking the job. 0, or -1 out of memory.
 */
static int
pg_store_prepare_rows(struct pg_conn *c)
{
	char *values = jobcols_values('$', 1), *set = jobcols_set('$', false);
	int rc = -1;

	if (values != NULL && set != NULL &&
	    pg_store_preparef(c, "ins", "INSERT INTO triage_jobs ("
	    JOBCOLS_NAMES ") VALUES (%s)", values) == 0 &&
	    pg_store_preparef(c, "upd", "UPDATE triage_jobs SET %s,"
	    " version = version + 1 WHERE id = $1 AND version = $%d"
	    " RETURNING version", set, PG_ROW_NUPDATE) == 0 &&
	    pg_store_preparef(c, "claim", "UPDATE triage_jobs SET %s,"
	    " version = version + 1 WHERE id = (SELECT id FROM triage_jobs"
	    " WHERE id = $1 AND version = $%d FOR UPDATE SKIP LOCKED)"
	    " RETURNING version", set, PG_ROW_NUPDATE) == 0)
		rc = 0;
	free(values);
	free(set);
	return rc;
}

static int
pg_store_connect(struct pg_store *s, const char *conninfo, char **cause)
{
	size_t i;

	if ((s->conn = pg_conn_new(s->base, conninfo, pg_store_conn_state_cb,
	    pg_store_notify_cb, s, cause)) == NULL)
		return -1;
	if (pg_store_prepare_rows(s->conn) != 0)
		return cause_fail(cause, "out of memory");
	for (i = 0; i < PG_STORE_NSTMTS; i++)
		if (pg_conn_prepare(s->conn, pg_store_stmts[i].name,
		    pg_store_stmts[i].sql) != 0)
			return cause_fail(cause, "out of memory");
	if (pg_output_prepare(s->conn) != 0)
		return cause_fail(cause, "out of memory");
	/* Back within a quarter of a lease: the others wait a lease after
	 * their own return before they take anybody's jobs. */
	pg_conn_set_backoff_max(s->conn, (int)(s->lease_ms / 4));
	if (pg_conn_listen(s->conn, PG_STORE_CHANNEL) != 0 ||
	    pg_conn_start(s->conn) != 0)
		return cause_fail(cause, "cannot start the connection to "
		    "PostgreSQL: %s", strerror(errno));
	return 0;
}

struct store *
store_open_pg(struct event_base *base, const struct store_pg_options *o,
    char **cause)
{
	struct pg_store *s;
	struct timespec ts;

	if ((s = calloc(1, sizeof *s)) == NULL ||
	    (s->node = strdup(o->node)) == NULL ||
	    (s->commit_ev = evtimer_new(base, pg_store_commit_cb, s))
	    == NULL) {
		if (s != NULL)
			free(s->node);
		free(s);
		*cause = strdup("out of memory");
		return NULL;
	}
	store_init(&s->st, &pg_store_ops);
	/* The nodes' ids come in blocks: list follows submission. */
	s->st.jobs.by_submission = true;
	s->base = base;
	s->synced = pg_store_synced;
	s->lease_ms = o->lease_ms;
	s->grace_ms = o->grace_ms;
	/* A new number each start: the wall clock in us, and the pid. */
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(s->boot, sizeof s->boot, "%" PRId64,
	    ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000) * 64 +
	    (getpid() & 63));
	snprintf(s->self, sizeof s->self, "%s %s", s->node, s->boot);
	if (pg_store_start(s, o, cause) != 0 ||
	    pg_store_connect(s, o->conninfo, cause) != 0) {
		store_close(&s->st);
		return NULL;
	}
	return &s->st;
}

static void
pg_store_close(struct store *st)
{
	struct pg_store *s = pg_store(st);
	struct store_staged *staged = s->staged.v;
	struct pg_conn *conn = s->conn;
	size_t i;

	/* The answers that will never come are nobody's: the daemon that
	 * asked is gone (its last writes are behind store_flush). */
	s->conn = NULL;
	s->up = false;
	pg_conn_free(conn);
	if (s->flight != NULL) {
		staged = s->flight->staged.v;
		for (i = 0; i < s->flight->staged.n; i++)
			job_free(staged[i].job);
		pg_store_commit_free(s->flight);
		s->flight = NULL;
	}
	staged = s->staged.v;
	for (i = 0; i < s->staged.n; i++)
		job_free(staged[i].job);
	store_fini(st);
	vec_free(&s->staged);
	vec_free(&s->dirty);
	vec_free(&s->claims);
	vec_free(&s->removed);
	vec_free(&s->syncs);
	vec_free(&s->ids);
	jobrow_cache_clear(&s->cache);
	if (s->locks != NULL)
		PQfinish(s->locks);
	free(s->snapshot);
	free(s->down_cause);
	free(s->node);
	if (s->commit_ev != NULL)
		event_free(s->commit_ev);
	free(s);
}

/* One transaction at a time, always. */
static void
pg_store_set_grouping(struct store *st, bool grouping)
{
	(void)st;
	(void)grouping;
}

static int
pg_store_add(struct store *st, struct job *job, store_added_cb cb, void *arg)
{
	struct pg_store *s = pg_store(st);
	struct store_staged staged = { job, cb, arg };

	/* Its id comes with the commit, from the cluster's sequence. */
	job->id = 0;
	if (vec_push(&s->staged, sizeof staged, &staged) != 0)
		return -1;
	pg_store_schedule(s);
	return 0;
}

static void
pg_store_mark(struct store *st, struct job *job, enum store_mark how)
{
	struct pg_store *s = pg_store(st);
	struct pg_store_mark m = { job->id, s->commits + 1,
	    job->store.replaced };

	/* A claim: written only if no other daemon holds the row. Out of
	 * memory, it is written as any change, waiting for the row. */
	if (how == STORE_MARK_CLAIM)
		(void)vec_push(&s->claims, sizeof m, &m);
	if (vec_push(&s->dirty, sizeof m, &m) != 0)
		return;
	pg_store_schedule(s);
}

/* Every commit is written as it commits. */
static uint64_t
pg_store_write_generation(const struct store *st)
{
	return pg_store_const(st)->commits + 1;
}

static void
pg_store_paused_changed(struct store *st)
{
	struct pg_store *s = pg_store(st);

	s->paused_dirty = true;
	pg_store_schedule(s);
}

static bool
pg_store_has_changes(const struct pg_store *s)
{
	return s->staged.n > 0 || s->dirty.n > 0 || s->removed.n > 0 ||
	    s->paused_dirty;
}

static bool
pg_store_pending(const struct store *st)
{
	const struct pg_store *s = pg_store_const(st);

	return pg_store_has_changes(s) || s->flight != NULL;
}

/* The commit after which everything done so far is written: the one on
 * its way when nothing waits behind it. */
static uint64_t
pg_store_generation(const struct store *st)
{
	const struct pg_store *s = pg_store_const(st);

	if (!pg_store_has_changes(s) && s->flight != NULL)
		return s->commits;
	return s->commits + 1;
}

static int
pg_store_sync(struct store *st, store_synced_cb cb, void *arg)
{
	struct pg_store *s = pg_store(st);
	struct store_sync sync = { cb, arg };

	if (vec_push(&s->syncs, sizeof sync, &sync) != 0)
		return -1;
	pg_store_schedule(s);
	return 0;
}

/*
 * Ends the server sessions this daemon had before (blocking, on the
 * connection of the locks): a connection it gave up on, the server may
 * not know is gone yet (a network split), and such a session of the
 * connection of the locks holds the node's name. A session is known by its
 * pid and start, so that another's reusing the pid is left alone; each is
 * waited for (5 s at most), so that its locks are free when this returns.
 */
static void
pg_store_end_sessions(struct pg_store *s)
{
	char pid[16];
	const char *values[2] = { pid, NULL };
	PGresult *res;
	int i, mine[2] = { PQbackendPID(s->locks),
	    pg_conn_backend_pid(s->conn) };

	for (i = 0; i < 2; i++) {
		if (s->sess[i].pid == 0 || s->sess[i].pid == mine[0] ||
		    s->sess[i].pid == mine[1])
			continue;
		snprintf(pid, sizeof pid, "%d", s->sess[i].pid);
		values[1] = s->sess[i].start;
		if ((res = pg_util_query_params(s->locks, "SELECT"
		    " pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
		    " WHERE pid = $1 AND backend_start::text = $2", 2, values,
		    NULL)) != NULL)
			PQclear(res);
	}
}

/* Notes the sessions of both connections (blocking), for
 * pg_store_end_sessions. */
static void
pg_store_note_sessions(struct pg_store *s)
{
	char pid[2][16];
	const char *values[2] = { pid[0], pid[1] };
	PGresult *res;
	int i, k;

	memset(s->sess, 0, sizeof s->sess);
	snprintf(pid[0], sizeof pid[0], "%d", PQbackendPID(s->locks));
	snprintf(pid[1], sizeof pid[1], "%d", pg_conn_backend_pid(s->conn));
	if ((res = pg_util_query_params(s->locks,
	    "SELECT pid, backend_start::text"
	    " FROM pg_stat_activity WHERE pid IN ($1, $2)", 2, values,
	    NULL)) == NULL)
		return;
	for (k = 0; k < PQntuples(res); k++)
		for (i = 0; i < 2; i++)
			if (strcmp(PQgetvalue(res, k, 0), pid[i]) == 0) {
				s->sess[i].pid = atoi(pid[i]);
				snprintf(s->sess[i].start,
				    sizeof s->sess[i].start, "%s",
				    PQgetvalue(res, k, 1));
			}
	PQclear(res);
}

/* The connection of the locks, lost with a restart of the server, say,
 * or given up on (store_lease_lost), made again, this daemon's old
 * sessions ended, and its locks taken again (blocking: the server has just
 * answered). A name another daemon took meanwhile is said. */
static void
pg_store_locks_check(struct pg_store *s)
{
	char *cause = NULL;

	if (!s->locks_stale && PQstatus(s->locks) == CONNECTION_OK &&
	    pg_util_exec(s->locks, "SELECT 1", NULL) == 0) {
		pg_store_end_sessions(s);
		pg_store_note_sessions(s);
		return;
	}
	s->locks_stale = false;
	PQreset(s->locks);
	pg_store_end_sessions(s);
	if (pg_store_claim_node(s->locks, s->node, &cause) != 0 ||
	    pg_util_exec(s->locks, "SELECT pg_advisory_lock_shared("
	    PG_STORE_LOCK_CLUSTER ")", &cause) != 0) {
		pg_store_status(s, true, cause != NULL ? cause :
		    "out of memory");
		free(cause);
		return;
	}
	pg_store_note_sessions(s);
}

/* No renewal has been answered for a whole lease: the connections are
 * taken for dead (the loop's, up for that long, reconnects now; the
 * locks' is made again once the loop's is back). */
static void
pg_store_lease_lost(struct store *st)
{
	struct pg_store *s = pg_store(st);

	s->locks_stale = true;
	/* One that came back within the lease has its renewal on the way:
	 * the outage was the server's, and this connection is new. */
	if (s->up && timefmt_mono_us() - s->up_since_us >= s->lease_ms * 1000)
		pg_conn_drop(s->conn, "no answer to the renewals of the lease "
		    "for a whole lease");
}

/* For a reload: blocking, on the connection of the locks, as a reload is
 * an operator's act. */
static int
pg_store_set_priorities(struct store *st, const char *text, char **cause)
{
	struct pg_store *s = pg_store(st);

	pg_store_locks_check(s);
	switch (pg_store_write_priorities(s->locks, text, cause)) {
	case 1:
		return 0;
	case 0:
		return cause_fail(cause,
		    "other nodes of the cluster run with its "
		    "priorities: to change them, stop every node, then start "
		    "them with the new config");
	default:
		return -1;
	}
}

/*
 * An ended job's environment, for a retry: read on the connection that
 * holds the locks, blocking, as store_env is. A retry is an operator's
 * act, rare, and a database that does not answer fails it.
 */
static int
pg_store_env(struct store *st, struct job *job, char **cause)
{
	struct pg_store *s = pg_store(st);
	char id[24], **env = NULL;
	const char *values[1] = { id };
	PGresult *res;
	int rc;

	snprintf(id, sizeof id, "%" PRIu64, job->id);
	pg_store_locks_check(s);
	if ((res = pg_util_query_params(s->locks, "SELECT env FROM triage_jobs"
	    " WHERE id = $1", 1, values, cause)) == NULL)
		return -1;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return cause_fail(cause, "job %" PRIu64
		    " is not in the cluster's "
		    "database", job->id);
	}
	rc = pg_row_env(res, 0, 0, job->id, &env, cause);
	PQclear(res);
	if (rc != 0)
		return -1;
	if (job_set_env(job, env) != 0)
		return cause_fail(cause, "out of memory");
	return 0;
}

/* Ended jobs keep theirs in the database, as with SQLite. */
static void
pg_store_forget_env(struct store *st, struct job *job)
{
	(void)st;
	job_drop_env(job);
}

static int
pg_store_remove(struct store *st, uint64_t id)
{
	struct pg_store *s = pg_store(st);
	struct pg_store_mark m = { id, s->commits + 1, 0 };

	if (store_get(st, id) == NULL) {
		errno = ENOENT;
		return -1;
	}
	if (vec_push(&s->removed, sizeof m, &m) != 0)
		return -1;
	job_free(jobtable_remove(&st->jobs, id));
	pg_store_schedule(s);
	return 0;
}

/* A terminal job's end, to sort the expired by. */
struct pg_store_end {
	int64_t at;
	uint64_t id;
};

static int
pg_store_cmp_end(const void *a, const void *b)
{
	const struct pg_store_end *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* From memory, which holds every job of the cluster. */
static int
pg_store_expired(struct store *st, int64_t before_ms, uint64_t *ids,
    size_t max, size_t *n, char **cause)
{
	struct vec ends = { 0 };
	struct pg_store_end e, *v;
	struct job *job;
	size_t pos = 0, i;

	*n = 0;
	while ((job = store_iter(st, &pos)) != NULL) {
		if (!job_state_terminal(job->state) ||
		    job->run->finished_at < 0 ||
		    job->run->finished_at >= before_ms)
			continue;
		e.at = job->run->finished_at;
		e.id = job->id;
		if (vec_push(&ends, sizeof e, &e) != 0) {
			vec_free(&ends);
			return cause_fail(cause, "out of memory");
		}
	}
	v = ends.v;
	if (ends.n > 1)
		qsort(v, ends.n, sizeof *v, pg_store_cmp_end);
	for (i = 0; i < ends.n && i < max; i++)
		ids[(*n)++] = v[i].id;
	vec_free(&ends);
	return 0;
}

/* Whether a mark is the job's still: made since its row was last read
 * from another daemon's write (which undoes every change made before). */
static bool
pg_store_mark_live(const struct pg_store *s, const struct pg_store_mark *m)
{
	const struct job *job = store_get(&s->st, m->id);

	return job != NULL && job->store.replaced == m->replaced;
}

static bool
pg_store_is_claim(const struct pg_store *s, uint64_t id)
{
	const struct pg_store_mark *m = s->claims.v;
	size_t i;

	for (i = 0; i < s->claims.n; i++)
		if (m[i].id == id && pg_store_mark_live(s, &m[i]))
			return true;
	return false;
}

/* Everything a commit's statements point into, until they are sent. */
struct pg_store_batch {
	struct pg_conn_stmt *stmts;
	size_t n;
	struct pg_row *rows;
	size_t nrows;
	char (*nums)[24];
	size_t nnums;
	char *paused;
	char lease[48];
	const char **values;		/* the short statements' values */
	size_t nvalues;
};

static void
pg_store_batch_free(struct pg_store_batch *b)
{
	size_t i;

	for (i = 0; i < b->nrows; i++)
		pg_row_clear(&b->rows[i]);
	free(b->rows);
	free(b->stmts);
	free(b->nums);
	free(b->paused);
	free(b->values);
}

static const char *
pg_store_num(struct pg_store_batch *b, int64_t v)
{
	snprintf(b->nums[b->nnums], sizeof b->nums[0], "%" PRId64, v);
	return b->nums[b->nnums++];
}

static void
pg_store_stmt(struct pg_store_batch *b, const char *name, const char *sql,
    int nparams, const char *const *values)
{
	b->stmts[b->n++] = (struct pg_conn_stmt){ name, sql, nparams,
	    values, NULL, NULL };
}

/* Short statements' values, kept in b. */
static const char **
pg_store_values(struct pg_store_batch *b, size_t n)
{
	const char **v = &b->values[b->nvalues];

	b->nvalues += n;
	return v;
}

/* The paused priorities as a text[] literal: their names need no quotes
 * ([a-z0-9_-]). */
static char *
pg_store_paused_array(const struct store *st)
{
	char **names = st->paused.v;
	size_t i, len = 3;
	char *a;

	for (i = 0; i < st->paused.n; i++)
		len += strlen(names[i]) + 1;
	if ((a = malloc(len)) == NULL)
		return NULL;
	strcpy(a, "{");
	for (i = 0; i < st->paused.n; i++) {
		if (i > 0)
			strcat(a, ",");
		strcat(a, names[i]);
	}
	strcat(a, "}");
	return a;
}

/*
 * The statements of commit c: new jobs, then each changed job fenced by
 * its version (a claim also skips a row another daemon holds), removals,
 * the paused list, the node's mark, the NOTIFY, and more ids when few
 * are left. 0, or -1 with *cause (nothing sent).
 */
static int
pg_store_build(struct pg_store *s, struct pg_commit *c,
    struct pg_store_batch *b, char **cause)
{
	struct store_staged *staged = c->staged.v;
	const struct pg_store_mark *m = c->updated.v, *gone = c->removed.v;
	size_t i, nst = c->staged.n + c->updated.n + c->removed.n + 8;
	const char **v;
	struct job *job;

	if ((b->stmts = calloc(nst, sizeof *b->stmts)) == NULL ||
	    (b->rows = calloc(c->staged.n + c->updated.n + 1,
	    sizeof *b->rows)) == NULL ||
	    (b->nums = calloc(c->updated.n + 2 * c->removed.n + 8,
	    sizeof *b->nums)) == NULL ||
	    (b->values = calloc(2 * c->removed.n + 16,
	    sizeof *b->values)) == NULL)
		return cause_fail(cause, "out of memory");
	pg_store_stmt(b, NULL, "BEGIN", 0, NULL);
	for (i = 0; i < c->staged.n; i++) {
		if (pg_row_params(&b->rows[b->nrows], staged[i].job, true,
		    cause) != 0)
			return -1;
		pg_store_stmt(b, "ins", NULL, JOBROW_NCOLUMNS,
		    b->rows[b->nrows++].values);
	}
	c->first_update = b->n;
	if (c->updated.n > 0 && (c->sent = calloc(c->updated.n,
	    sizeof *c->sent)) == NULL)
		return cause_fail(cause, "out of memory");
	for (i = 0; i < c->updated.n; i++) {
		job = store_get(&s->st, m[i].id);
		if (pg_row_params(&b->rows[b->nrows], job, false, cause) != 0)
			return -1;
		b->rows[b->nrows].changes[PG_ROW_NUPDATE - 1] =
		    pg_store_num(b, job->store.version);
		c->sent[i].claim = pg_store_is_claim(s, m[i].id);
		c->sent[i].replaced = job->store.replaced;
		pg_store_stmt(b, c->sent[i].claim ? "claim" : "upd",
		    NULL, PG_ROW_NUPDATE,
		    b->rows[b->nrows++].changes);
	}
	for (i = 0; i < c->removed.n; i++) {
		v = pg_store_values(b, 2);
		v[0] = pg_store_num(b, (int64_t)gone[i].id);
		v[1] = pg_store_num(b, timefmt_now());
		pg_store_stmt(b, "del", NULL, 2, v);
	}
	if (c->paused) {
		if ((b->paused = pg_store_paused_array(&s->st)) == NULL)
			return cause_fail(cause, "out of memory");
		pg_store_stmt(b, "paused_clear", NULL, 0, NULL);
		v = pg_store_values(b, 1);
		v[0] = b->paused;
		pg_store_stmt(b, "paused_set", NULL, 1, v);
	}
	v = pg_store_values(b, 6);
	v[0] = s->node;
	v[1] = s->boot;
	v[2] = pg_store_num(b, (int64_t)c->gen);
	pg_cluster_lease_text(s, b->lease, sizeof b->lease);
	v[3] = b->lease;
	v[4] = pg_store_num(b, s->busy);
	v[5] = pg_store_num(b, (int64_t)s->grace_ms);
	pg_store_stmt(b, "mark", NULL, 6, v);
	v = pg_store_values(b, 1);
	v[0] = s->self;
	pg_store_stmt(b, "notify", NULL, 1, v);
	pg_store_stmt(b, NULL, "COMMIT", 0, NULL);
	if (s->ids.n < PG_STORE_IDS / 2 && !s->ids_asked) {
		c->ids_at = b->n;
		v = pg_store_values(b, 1);
		v[0] = pg_store_num(b, PG_STORE_IDS);
		pg_store_stmt(b, "ids", NULL, 1, v);
		s->ids_asked = true;
	}
	return 0;
}

static void
pg_store_commit_free(struct pg_commit *c)
{
	vec_free(&c->staged);
	vec_free(&c->syncs);
	vec_free(&c->updated);
	vec_free(&c->removed);
	free(c->sent);
	free(c);
}

/* More ids, from the refill at the end of a commit's batch. */
static void
pg_store_take_ids(struct pg_store *s, const PGresult *res)
{
	int64_t id;
	int i;

	s->ids_asked = false;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		return;
	for (i = 0; i < PQntuples(res); i++) {
		id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
		(void)vec_push(&s->ids, sizeof id, &id);
	}
}

/* Gives every new job an id: the caller made sure there are enough, so
 * that every staged job goes with this commit (store_generation). */
static void
pg_store_take_staged(struct pg_store *s, struct pg_commit *c)
{
	struct store_staged *staged;
	int64_t *ids = s->ids.v;
	size_t i, n = s->staged.n;

	c->staged = vec_take(&s->staged);
	/* Down, the commit fails at once: no ids spent. */
	if (!s->up)
		return;
	staged = c->staged.v;
	for (i = 0; i < n; i++)
		staged[i].job->id = (uint64_t)ids[i];
	memmove(ids, &ids[n], (s->ids.n - n) * sizeof *ids);
	s->ids.n -= n;
}

static void
pg_store_ids_cb(PGresult *const *res, size_t n, const char *cause, void *arg)
{
	struct pg_store *s = arg;

	s->ids_asked = false;
	if (cause == NULL && n == 1)
		pg_store_take_ids(s, res[0]);
	pg_store_schedule(s);
}

/* More ids than there are new jobs waiting, ahead of their commit. */
static void
pg_store_ask_ids(struct pg_store *s)
{
	struct pg_conn_stmt q = { "ids", NULL, 1, NULL, NULL, NULL };
	const char *values[1];
	char num[24];

	snprintf(num, sizeof num, "%zu", s->staged.n + PG_STORE_IDS);
	values[0] = num;
	q.values = values;
	s->ids_asked = true;
	if (pg_conn_batch(s->conn, &q, 1, pg_store_ids_cb, s) != 0)
		s->ids_asked = false;
}

/* Marks by id, then by the generation they were made for. */
static int
pg_store_cmp_mark(const void *a, const void *b)
{
	const struct pg_store_mark *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/*
 * The changed jobs still in the table whose changes still stand, each
 * once, under the first generation it changed for, in id order: room of
 * them at most, the oldest first, and every claim (a launch waits for its
 * claim alone). The others wait in the marks for the next commits, unsorted:
 * a backlog of 100,000 is not sorted again for each commit of a few hundred.
 * A mark of a job also taken may stay behind: its write is one more.
 */
static void
pg_store_take_dirty(struct pg_store *s, struct pg_commit *c, size_t room)
{
	struct pg_store_mark *m = s->dirty.v;
	size_t i, k = 0, n = s->dirty.n;

	if (n <= room ||
	    vec_reserve(&c->updated, sizeof *m, room + s->claims.n) != 0)
		c->updated = vec_take(&s->dirty);
	else {
		memcpy(c->updated.v, m, room * sizeof *m);
		if (s->claims.n > 0)
			memcpy((struct pg_store_mark *)c->updated.v + room,
			    s->claims.v, s->claims.n * sizeof *m);
		c->updated.n = room + s->claims.n;
		memmove(m, &m[room], (n - room) * sizeof *m);
		s->dirty.n = n - room;
	}
	m = c->updated.v;
	if (c->updated.n > 1)
		qsort(m, c->updated.n, sizeof *m, pg_store_cmp_mark);
	for (i = 0; i < c->updated.n; i++)
		if ((k == 0 || m[i].id != m[k - 1].id) &&
		    pg_store_mark_live(s, &m[i]))
			m[k++] = m[i];
	c->updated.n = k;
}

/* The removals that fit in room, the oldest first; the others wait. */
static void
pg_store_take_removed(struct pg_store *s, struct pg_commit *c, size_t room)
{
	struct pg_store_mark *m = s->removed.v;
	size_t n = s->removed.n < room ? s->removed.n : room;

	if (n == s->removed.n) {
		c->removed = vec_take(&s->removed);
		return;
	}
	if (vec_reserve(&c->removed, sizeof *m, n) != 0)
		return;
	memcpy(c->removed.v, m, n * sizeof *m);
	c->removed.n = n;
	memmove(m, &m[n], (s->removed.n - n) * sizeof *m);
	s->removed.n -= n;
}

/* Every generation up to the commit's is written with it, but for the
 * changes left to the next commits. */
static uint64_t
pg_store_durable_with(const struct pg_store *s, const struct pg_commit *c)
{
	const struct pg_store_mark *m = s->dirty.v, *r = s->removed.v;
	uint64_t durable = c->gen;
	size_t i;

	for (i = 0; i < s->dirty.n; i++)
		if (m[i].gen <= durable)
			durable = m[i].gen - 1;
	for (i = 0; i < s->removed.n; i++)
		if (r[i].gen <= durable)
			durable = r[i].gen - 1;
	return durable;
}

static void
pg_store_batch_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	struct pg_commit *c = arg;

	/* Closing: pg_store_close frees it. */
	if (c->s->conn == NULL)
		return;
	if (cause != NULL) {
		/* Lost on the way: whether it happened is asked once the
		 * connection is back. */
		c->s->doubt = true;
		if (c->s->up)
			pg_store_ask_doubt(c->s);
		return;
	}
	pg_store_settle(c, res, n, cause);
}

static void
pg_store_synced(struct pg_store *s)
{
	if (s->claims.n > 0)
		pg_store_commit_cb(-1, 0, s);
}

static void
pg_store_commit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_store *s = arg;
	struct pg_store_batch b = { 0 };
	struct pg_commit *c;
	char *cause = NULL;

	(void)fd;
	(void)what;
	if (s->flight != NULL || (!pg_store_has_changes(s) && s->syncs.n == 0))
		return;
	/* Other daemons' changes are being read: a claim waits for them,
	 * lest it take a job one of them took already (the read's end
	 * commits). */
	if (s->syncing && s->claims.n > 0)
		return;
	/* The first connection is on its way: its coming up commits. */
	if (!s->up && !s->ever_up && s->down_cause == NULL)
		return;
	/* More new jobs than ids (a burst): the ids first, then the commit
	 * (from the answer). */
	if (s->up && s->staged.n > s->ids.n) {
		if (!s->ids_asked)
			pg_store_ask_ids(s);
		return;
	}
	if ((c = calloc(1, sizeof *c)) == NULL)
		return;		/* the next change schedules it again */
	c->s = s;
	c->gen = ++s->commits;
	c->start_us = timefmt_mono_us();
	s->st.stats.commits++;
	pg_store_take_staged(s, c);
	pg_store_take_dirty(s, c, PG_STORE_COMMIT_ROWS);
	pg_store_take_removed(s, c, c->updated.n < PG_STORE_COMMIT_ROWS ?
	    PG_STORE_COMMIT_ROWS - c->updated.n : 0);
	c->durable = pg_store_durable_with(s, c);
	/* A sync waits for everything done before it. */
	if (c->durable == c->gen)
		c->syncs = vec_take(&s->syncs);
	/* Noted as the connection came up (pg_store_note_sessions). */
	if (s->sess[1].pid != 0 &&
	    s->sess[1].pid == pg_conn_backend_pid(s->conn)) {
		c->sess_pid = s->sess[1].pid;
		memcpy(c->sess_start, s->sess[1].start, sizeof c->sess_start);
	}
	c->paused = s->paused_dirty;
	s->flight_paused = c->paused;
	s->paused_dirty = false;
	c->claims = s->claims.n > 0;
	s->flight = c;
	if (!s->up) {
		/* Down: new jobs are refused at once, changes wait. */
		s->claims.n = 0;
		if (asprintf(&cause, "PostgreSQL is unreachable: %s",
		    s->down_cause != NULL ? s->down_cause : "?") < 0)
			cause = NULL;
		pg_store_settle(c, NULL, 0, cause != NULL ? cause :
		    "out of memory");
		free(cause);
		return;
	}
	if (pg_store_build(s, c, &b, &cause) != 0 ||
	    pg_conn_batch(s->conn, b.stmts, b.n, pg_store_batch_cb, c) != 0) {
		pg_store_batch_free(&b);
		s->claims.n = 0;
		pg_store_settle(c, NULL, 0, cause != NULL ? cause :
		    "out of memory");
		free(cause);
		return;
	}
	s->claims.n = 0;
	pg_store_batch_free(&b);
}

/* The first error among a commit's results, or NULL when it committed. */
static const char *
pg_store_error(PGresult *const *res, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		switch (PQresultStatus(res[i])) {
		case PGRES_COMMAND_OK:
		case PGRES_TUPLES_OK:
		case PGRES_PIPELINE_ABORTED:
			break;
		default:
			return pg_util_message(NULL, res[i]);
		}
	}
	return NULL;
}

/* The changes of a failed commit wait for the next one; its new jobs are
 * told (their ids are spent). */
static void
pg_store_requeue(struct pg_store *s, struct pg_commit *c)
{
	struct pg_store_mark *m = c->updated.v;
	struct job *job;
	size_t i;

	for (i = 0; i < c->updated.n; i++)
		if ((job = store_get(&s->st, m[i].id)) != NULL) {
			m[i].replaced = job->store.replaced;
			(void)vec_push(&s->dirty, sizeof m[i], &m[i]);
		}
	m = c->removed.v;
	for (i = 0; i < c->removed.n; i++)
		(void)vec_push(&s->removed, sizeof m[i], &m[i]);
	if (c->paused)
		s->paused_dirty = true;
}

/*
 * The updates' answers: a row is ours at its new version; none means
 * another daemon changed the job first (or holds the row, for a claim):
 * the job is told, and its id goes in refused, for its row to be read back
 * and replace ours. Without answers (a commit in doubt that happened: the
 * versions are set), none is.
 */
static void
pg_store_settle_updates(struct pg_store *s, struct pg_commit *c,
    PGresult *const *res, struct vec *refused)
{
	const struct pg_store_mark *m = c->updated.v;
	struct job *job;
	const PGresult *r;
	size_t i;

	if (res == NULL)
		return;
	for (i = 0; i < c->updated.n; i++) {
		if ((job = store_get(&s->st, m[i].id)) == NULL)
			continue;
		r = res[c->first_update + i];
		if (PQntuples(r) == 1) {
			job->store.version = (uint32_t)strtoul(
			    PQgetvalue(r, 0, 0), NULL, 10);
			continue;
		}
		/* Another daemon's row has replaced the job since: the
		 * job follows it already, and what was done since stands. */
		if (c->sent[i].replaced != job->store.replaced)
			continue;
		if (s->st.changed_cb != NULL)
			s->st.changed_cb(job, c->sent[i].claim ?
			    STORE_CHANGE_CLAIM_REFUSED : STORE_CHANGE_REFUSED,
			    NULL, s->st.changed_arg);
		/* Out of memory, the next read of changes brings it. */
		(void)vec_push(refused, sizeof m[i].id, &m[i].id);
	}
}

/* The end of commit c (err: why it failed): its new jobs, syncs and
 * waiters are told, and the next commit is on its way. */
static void
pg_store_settle_end(struct pg_commit *c, const char *err)
{
	struct pg_store *s = c->s;
	struct store *st = &s->st;
	struct store_staged *sj = c->staged.v;
	struct store_sync *y = c->syncs.v;
	size_t i;

	s->flight = NULL;
	s->flight_paused = false;
	for (i = 0; i < c->staged.n; i++) {
		if (err != NULL)
			sj[i].job->id = 0;
		sj[i].cb(sj[i].job, err == NULL, err, sj[i].arg);
	}
	for (i = 0; i < c->syncs.n; i++)
		y[i].cb(err, y[i].arg);
	/* What the commit left to the next ones holds back their waiters. */
	if (err == NULL && c->durable > s->durable)
		s->durable = c->durable;
	if (st->committed_cb != NULL)
		st->committed_cb(err == NULL ? s->durable : c->gen, err,
		    st->committed_arg);
	if (err == NULL && c->claims && st->written_cb != NULL)
		st->written_cb(c->gen, st->written_arg);
	if (err != NULL && pg_store_has_changes(s)) {
		static const struct timeval retry = { PG_STORE_RETRY_MS / 1000,
		    (PG_STORE_RETRY_MS % 1000) * 1000 };

		evtimer_add(s->commit_ev, &retry);
	} else if (pg_store_has_changes(s) || s->syncs.n > 0)
		pg_store_schedule(s);
	pg_store_commit_free(c);
}

static void
pg_store_refetched_cb(void *arg)
{
	pg_store_settle_end(arg, NULL);
}

static void
pg_store_settle(struct pg_commit *c, PGresult *const *res, size_t n,
    const char *cause)
{
	struct pg_store *s = c->s;
	struct store *st = &s->st;
	struct store_staged *sj = c->staged.v;
	struct vec refused = { 0 };
	const char *err = cause;
	size_t i;

	if (err == NULL && res != NULL)
		err = pg_store_error(res, n);
	if (c->ids_at != 0)
		s->ids_asked = false;
	if (c->ids_at != 0 && res != NULL && c->ids_at < n)
		pg_store_take_ids(s, res[c->ids_at]);
	hist_observe(&st->stats.seconds, &hist_commit_seconds,
	    (double)(timefmt_mono_us() - c->start_us) / 1e6);
	if (err != NULL) {
		st->stats.failures++;
		pg_store_requeue(s, c);
	} else {
		/* Its mark renewed the lease. */
		pg_cluster_lease_acked(s, c->start_us);
		for (i = 0; i < c->staged.n; i++) {
			sj[i].job->store.version = 1;
			(void)jobtable_add(&st->jobs, sj[i].job);
		}
		pg_store_settle_updates(s, c, res, &refused);
	}
	if (refused.n > 0) {
		/* Their rows first: whoever waits for this commit (the
		 * answer to an edit the refusal undid) finds them. */
		pg_sync_refetch(s, &refused, pg_store_refetched_cb, c);
		vec_free(&refused);
		return;
	}
	pg_store_settle_end(c, err);
}

/*
 * Writes are the loop's: a daemon that has left its loop (stopping, after
 * event_base_loopexit) runs it here until they are done, or PostgreSQL
 * cannot be reached, or for PG_STORE_FLUSH_MS at most. Inside the loop,
 * there is nothing to do but say what waits.
 */
static int
pg_store_flush(struct store *st, char **cause)
{
	struct pg_store *s = pg_store(st);
	uint64_t deadline = timefmt_mono_us() + PG_STORE_FLUSH_MS * 1000;

	if (event_base_got_exit(s->base))
		while (pg_store_pending(st) && s->up &&
		    timefmt_mono_us() < deadline)
			if (event_base_loop(s->base, EVLOOP_ONCE) == -1)
				break;
	if (!pg_store_pending(st))
		return 0;
	return cause_fail(cause, "%zu new jobs and %zu changes are not written "
	    "to PostgreSQL%s", s->staged.n + (s->flight != NULL ?
	    s->flight->staged.n : 0), s->dirty.n + (s->flight != NULL ?
	    s->flight->updated.n : 0), s->up ? "" : " (unreachable): the "
	    "next start finds the jobs that ran here as they were");
}

static const struct store_ops pg_store_ops = {
	.close = pg_store_close,
	.set_grouping = pg_store_set_grouping,
	.add = pg_store_add,
	.mark = pg_store_mark,
	.write_generation = pg_store_write_generation,
	.paused_changed = pg_store_paused_changed,
	.pending = pg_store_pending,
	.generation = pg_store_generation,
	.sync = pg_store_sync,
	.env = pg_store_env,
	.forget_env = pg_store_forget_env,
	.set_priorities = pg_store_set_priorities,
	.renew_lease = pg_cluster_renew_lease,
	.lease_until_us = pg_cluster_lease_until_us,
	.lease_lost = pg_store_lease_lost,
	.take_over = pg_cluster_take_over,
	.cancel_elsewhere = pg_cluster_cancel_elsewhere,
	.set_busy = pg_cluster_set_busy,
	.set_grace = pg_cluster_set_grace,
	.remove = pg_store_remove,
	.expired = pg_store_expired,
	.flush = pg_store_flush,
	.output_append = pg_output_append,
	.output_read = pg_output_read,
};
