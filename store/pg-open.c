/* pg-open.c - a node's place in the cluster's PostgreSQL: its connection
 * made and its statements prepared, its name claimed and registered, every
 * job loaded, the priorities agreed, and its old server sessions ended. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "job.h"
#include "jobcols.h"
#include "pg-schema.h"
#include "pg-util.h"
#include "pg-conn.h"
#include "pg-row.h"
#include "store.h"
#include "pg-private.h"
#include "timefmt.h"

/* The statements, prepared on every connection. */
static const struct {
	const char *name;
	const char *sql;
} pg_open_stmts[] = {
	/* ins, upd and claim come first: pg_open_prepare_rows. */
	/* What other daemons changed, the nodes' rows as they are, and
	 * with a look at whether each is up (pg-sync.c). */
	{ "sync", PG_STORE_SYNC("NULL::boolean") },
	{ "sync_look", PG_STORE_SYNC(PG_STORE_NODE_UP) },
	{ "refetch", "SELECT version, " JOBCOLS_NAMES " FROM triage_jobs"
	    " WHERE id = ANY($1::bigint[])" },
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
	/* Trusted only once the session the commit went out on has ended:
	 * one the daemon let go of (silent, dropped) may still be reading
	 * it, and commit after this read. It is ended first (5 s at most),
	 * then the third column says whether it is gone. */
	{ "end_session", PG_STORE_END_SESSION },
	{ "marked", "SELECT commit_gen, commit_xid::text, NOT EXISTS"
	    " (SELECT 1 FROM pg_stat_activity WHERE pid = $3::integer"
	    " AND backend_start::text = $4) FROM triage_nodes"
	    " WHERE name = $1 AND boot = $2" },
	{ "versions", "SELECT id, version FROM triage_jobs"
	    " WHERE txid = $1::xid8 ORDER BY id" },
	{ "notify", "SELECT pg_notify('" PG_STORE_CHANNEL "', $1)" },
	/* The shared counters a commit's claims name ($1, a text[] by
	 * name), before anything else of it: each one's row made if it is
	 * new, then locked until the commit. Two statements: the lock's
	 * snapshot must see a row another claim made meanwhile, which the
	 * INSERT waited for. */
	{ "shared_add", "INSERT INTO triage_resources (name)"
	    " SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT DO NOTHING" },
	{ "shared_lock", "SELECT name FROM triage_resources"
	    " WHERE name = ANY($1::text[]) ORDER BY name FOR UPDATE" },
	{ "ids", "SELECT nextval('triage_job_id') FROM"
	    " generate_series(1, $1::integer)" },
};
#define PG_OPEN_NSTMTS (sizeof pg_open_stmts / sizeof pg_open_stmts[0])

void
pg_open_status(struct pg_store *s, bool up, const char *cause)
{
	if (s->st.status_cb != NULL)
		s->st.status_cb(up, cause, s->st.status_arg);
}

/* The first ids, so that the first commit need not wait for them. */
static int
pg_open_load_ids(struct pg_store *s, PGconn *pg, char **cause)
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
pg_open_item_len(const char *s)
{
	const char *end = strstr(s, "; ");

	return end != NULL ? (size_t)(end - s) : strlen(s);
}

/* The first item where the texts differ, in a message of *cause. */
static int
pg_open_priorities_differ(const char *mine, const char *theirs, char **cause)
{
	size_t a, b;

	for (;;) {
		a = pg_open_item_len(mine);
		b = pg_open_item_len(theirs);
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
int
pg_open_write_priorities(PGconn *pg, const char *text, char **cause)
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
pg_open_check_priorities(PGconn *pg, const char *mine, char **cause)
{
	PGresult *res;
	int rc;

	if (pg_util_exec(pg, "SELECT pg_advisory_lock_shared("
	    PG_STORE_LOCK_CLUSTER ")", cause) != 0 ||
	    (rc = pg_open_write_priorities(pg, mine, cause)) == -1)
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
		rc = pg_open_priorities_differ(mine, PQgetvalue(res, 0, 0),
		    cause);
	PQclear(res);
	return rc;
}

/* One daemon per node name: it holds the name's lock while it runs. */
static int
pg_open_claim_node(PGconn *pg, const char *node, char **cause)
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
pg_open_register(struct pg_store *s, PGconn *pg, unsigned slots,
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
pg_open_load(struct pg_store *s, PGconn *pg, char **cause)
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
int
pg_open_start(struct pg_store *s, const struct store_pg_options *o,
    char **cause)
{
	PGconn *pg = pg_util_connect(o->conninfo, false);

	s->locks = pg;
	if (pg == NULL || PQstatus(pg) != CONNECTION_OK)
		return cause_fail(cause, "cannot connect to PostgreSQL: %s",
		    pg_util_message(pg, NULL));
	if (pg_schema_setup(pg, cause) != 0 ||
	    pg_open_claim_node(pg, s->node, cause) != 0 ||
	    pg_open_check_priorities(pg, o->priorities, cause) != 0 ||
	    pg_open_register(s, pg, o->slots, cause) != 0 ||
	    pg_open_load(s, pg, cause) != 0 ||
	    pg_open_load_ids(s, pg, cause) != 0)
		return -1;
	return 0;
}

/* Prepares name, the SQL that fmt makes: 0, or -1 out of memory. */
static int pg_open_preparef(struct pg_conn *c, const char *name,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int
pg_open_preparef(struct pg_conn *c, const char *name, const char *fmt, ...)
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

/* The parameter of column col in an UPDATE's (jobcols_set's). */
static int
pg_open_set_param(enum jobrow_column col)
{
	int i;

	for (i = 0; i < JOBCOLS_NCHANGES; i++)
		if (jobcols_set_order[i] == col)
			break;
	return i + 2;
}

/*
 * The statements that write a job's row, made from its columns (jobcols.h):
 * ins, every column; upd and claim, what a job's life changes, fenced by
 * the version the update read: another daemon's write since refuses it. A
 * claim does not wait for a row another daemon holds: that one is taking
 * the job. Refused, it goes to the first of its alternates (ids and
 * versions in its last two parameters) still queued, unchanged since, and
 * not held: that row is made begun on this node (store.h's
 * store_set_claim_alternates); either row's version and id come back.
 * Each alternate is one look by id, in their order, up to the first that
 * can be had: its state is compared in another collation so that the
 * queued jobs' index (whose predicate that does not imply) is never the
 * plan, a walk of every queued job for each alternate.
 * claim_shared, the claim of a job naming
 * shared counters (their counts, a JSON object, in its last parameter), is
 * refused too when the job's amount of one and what jobs begun or running
 * anywhere hold of it (this one aside) come to more than its count: under
 * the counters' locks (shared_lock), taken before, it sees every claim of
 * them that committed. 0, or -1 out of memory.
 */
static int
pg_open_prepare_rows(struct pg_conn *c)
{
	char *values = jobcols_values('$', 1), *set = jobcols_set('$', false);
	int rc = -1, res = pg_open_set_param(JOBROW_RESOURCES);

	if (values != NULL && set != NULL &&
	    pg_open_preparef(c, "ins", "INSERT INTO triage_jobs ("
	    JOBCOLS_NAMES ") VALUES (%s) ON CONFLICT (uid, \"key\")"
	    " WHERE \"key\" IS NOT NULL DO NOTHING", values) == 0 &&
	    pg_open_preparef(c, "key_owner", "SELECT id FROM triage_jobs"
	    " WHERE uid = $1 AND \"key\" = $2") == 0 &&
	    pg_open_preparef(c, "upd", "UPDATE triage_jobs SET %s,"
	    " version = version + 1 WHERE id = $1 AND version = $%d"
	    " RETURNING version", set, PG_ROW_NUPDATE) == 0 &&
	    pg_open_preparef(c, "claim", "WITH mine AS (UPDATE triage_jobs"
	    " SET %s, version = version + 1 WHERE id = (SELECT id FROM"
	    " triage_jobs WHERE id = $1 AND version = $%d"
	    " FOR UPDATE SKIP LOCKED) RETURNING version, id),"
	    " alt AS (SELECT l.id FROM unnest($%d::bigint[],"
	    " $%d::bigint[]) AS a (id, version), LATERAL (SELECT j.id"
	    " FROM triage_jobs j WHERE j.id = a.id AND j.version = a.version"
	    " AND j.state COLLATE \"C\" = 'queued' AND j.begun = 0"
	    " FOR UPDATE SKIP LOCKED) l"
	    " WHERE NOT EXISTS (SELECT 1 FROM mine) LIMIT 1),"
	    " moved AS (UPDATE triage_jobs j SET begun = 1, node = $%d,"
	    " version = j.version + 1 FROM alt WHERE j.id = alt.id"
	    " RETURNING j.version, j.id)"
	    " SELECT version, id FROM mine UNION ALL"
	    " SELECT version, id FROM moved", set, PG_ROW_NUPDATE,
	    PG_ROW_NUPDATE + 1, PG_ROW_NCLAIM, pg_open_set_param(JOBROW_NODE))
	    == 0 &&
	    pg_open_preparef(c, "claim_shared", "UPDATE triage_jobs SET %s,"
	    " version = version + 1 WHERE id = (SELECT id FROM triage_jobs"
	    " WHERE id = $1 AND version = $%d FOR UPDATE SKIP LOCKED)"
	    " AND NOT EXISTS (SELECT 1 FROM"
	    " jsonb_each_text($%d::text::jsonb) AS c (name, count)"
	    " WHERE ($%d::text::jsonb ->> c.name)::bigint +"
	    " (SELECT coalesce(sum((o.resources::jsonb ->> c.name)::bigint),"
	    " 0) FROM triage_jobs o WHERE (o.state = 'running'"
	    " OR (o.state = 'queued' AND o.begun = 1)) AND o.id <> $1"
	    " AND o.resources::jsonb ? c.name) > c.count::bigint)"
	    " RETURNING version", set, PG_ROW_NUPDATE, PG_ROW_NSHARED,
	    res) == 0)
		rc = 0;
	free(values);
	free(set);
	return rc;
}

int
pg_open_connect(struct pg_store *s, const char *conninfo,
    pg_conn_state_cb state_cb, pg_conn_notify_cb notify_cb, char **cause)
{
	size_t i;

	if ((s->conn = pg_conn_new(s->base, conninfo, state_cb, notify_cb, s,
	    cause)) == NULL)
		return -1;
	if (pg_open_prepare_rows(s->conn) != 0)
		return cause_fail(cause, "out of memory");
	for (i = 0; i < PG_OPEN_NSTMTS; i++)
		if (pg_conn_prepare(s->conn, pg_open_stmts[i].name,
		    pg_open_stmts[i].sql) != 0)
			return cause_fail(cause, "out of memory");
	if (pg_output_prepare(s->conn) != 0)
		return cause_fail(cause, "out of memory");
	/* Back within a quarter of a lease: the others wait a lease after
	 * their own return before they take anybody's jobs. */
	pg_conn_set_backoff_max(s->conn, (int)(s->lease_ms / 4));
	/* Unanswered for a whole lease, the lease is lost anyway: a split
	 * that closes nothing is otherwise noticed only by the fence, which
	 * runs only while jobs run here, and a node whose jobs had ended
	 * would wait on the dead connection for ever, refusing every
	 * submission. */
	pg_conn_set_silence_max(s->conn, (int)s->lease_ms);
	if (pg_conn_listen(s->conn, PG_STORE_CHANNEL) != 0 ||
	    pg_conn_start(s->conn) != 0)
		return cause_fail(cause, "cannot start the connection to "
		    "PostgreSQL: %s", strerror(errno));
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
pg_open_end_sessions(struct pg_store *s)
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
		if ((res = pg_util_query_params(s->locks,
		    PG_STORE_END_SESSION, 2, values, NULL)) != NULL)
			PQclear(res);
	}
}

/* Notes the sessions of both connections (blocking), for
 * pg_open_end_sessions. */
void
pg_open_note_sessions(struct pg_store *s)
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
void
pg_open_locks_check(struct pg_store *s)
{
	char *cause = NULL;

	if (!s->locks_stale && PQstatus(s->locks) == CONNECTION_OK &&
	    pg_util_exec(s->locks, "SELECT 1", NULL) == 0) {
		pg_open_end_sessions(s);
		pg_open_note_sessions(s);
		return;
	}
	s->locks_stale = false;
	PQreset(s->locks);
	pg_open_end_sessions(s);
	if (pg_open_claim_node(s->locks, s->node, &cause) != 0 ||
	    pg_util_exec(s->locks, "SELECT pg_advisory_lock_shared("
	    PG_STORE_LOCK_CLUSTER ")", &cause) != 0) {
		pg_open_status(s, true, cause != NULL ? cause :
		    "out of memory");
		free(cause);
		return;
	}
	pg_open_note_sessions(s);
}
