/* store-pg-cluster.c - what daemons sharing PostgreSQL do for each other: a
 * node's lease on its running jobs, the takeover of a silent node's jobs,
 * and a cancel asked of the node that runs a job. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "job.h"
#include "pgconn.h"
#include "store.h"
#include "store-pg-private.h"
#include "timefmt.h"

/* Its statements, prepared on every connection (store-pg.c). */
const char pgstore_lease_sql[] =
    "UPDATE triage_nodes SET lease_until = now() + $3::interval, busy = $4"
    " WHERE name = $1 AND boot = $2";
/*
 * The jobs of every other node whose lease has run out go back to their
 * queues as new attempts, at their place (seq kept: they had their turn),
 * with what their run left cleared, as job_new_attempt does. The dead
 * nodes' rows are locked, so that two daemons taking over at once take
 * each job once; their NOTIFY goes out only when a job was taken.
 */
const char pgstore_takeover_sql[] =
    "WITH dead AS (SELECT name FROM triage_nodes"
    " WHERE name <> $1 AND lease_until < now() FOR UPDATE SKIP LOCKED),"
    " taken AS (UPDATE triage_jobs j SET state = 'queued',"
    " attempt = j.attempt + 1, begun = 0, started_at = NULL,"
    " finished_at = NULL, pid = NULL, exit_code = NULL, signal = NULL,"
    " user_time = NULL, system_time = NULL, max_rss_kb = NULL,"
    " start_ticks = NULL, stdout_truncated = 0, stderr_truncated = 0,"
    " stdout_dropped = 0, stderr_dropped = 0,"
    " reason = 'node ' || j.node || ' stopped renewing its lease while"
    " attempt ' || j.attempt || ' ran', version = j.version + 1"
    " FROM dead WHERE j.node = dead.name AND (j.state = 'running'"
    " OR (j.state = 'queued' AND j.begun = 1)) RETURNING j.id),"
    " n AS (SELECT count(*) AS c FROM taken)"
    " SELECT c, (SELECT pg_notify('" PGSTORE_CHANNEL "', $2) WHERE c > 0)"
    " IS NULL FROM n";
const char pgstore_cancel_sql[] =
    "WITH i AS (INSERT INTO triage_cancels (job, attempt, signal, by_uid)"
    " VALUES ($1, $2, $3, $4) ON CONFLICT (job, attempt) DO UPDATE"
    " SET signal = EXCLUDED.signal, by_uid = EXCLUDED.by_uid,"
    " txid = pg_current_xact_id() RETURNING 1)"
    " SELECT pg_notify('" PGSTORE_CHANNEL "', $5) FROM i";

/* The lease as an interval PostgreSQL reads. */
void
pgstore_lease_text(const struct pgstore *s, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64 " milliseconds", s->lease_ms);
}

/* Whatever the answer: a lost one is renewed by the next tick or commit. */
static void
pgstore_ignore_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	(void)res;
	(void)n;
	(void)cause;
	(void)arg;
}

void
pgstore_renew_lease(struct store *st)
{
	struct pgstore *s = pgstore(st);
	struct pgconn_stmt q = { "lease", NULL, 4, NULL, NULL, NULL };
	const char *values[4];
	char lease[48], busy[16];

	if (!s->up)
		return;
	pgstore_lease_text(s, lease, sizeof lease);
	snprintf(busy, sizeof busy, "%u", s->busy);
	values[0] = s->node;
	values[1] = s->boot;
	values[2] = lease;
	values[3] = busy;
	q.values = values;
	(void)pgconn_batch(s->conn, &q, 1, pgstore_ignore_cb, s);
}

/* Jobs were taken: our own NOTIFY is not for us, so read them now. */
static void
pgstore_took_cb(PGresult *const *res, size_t n, const char *cause, void *arg)
{
	struct pgstore *s = arg;

	if (cause == NULL && n == 1 &&
	    PQresultStatus(res[0]) == PGRES_TUPLES_OK &&
	    PQntuples(res[0]) == 1 && strcmp(PQgetvalue(res[0], 0, 0), "0") != 0)
		pgstore_sync_changes(s);
}

/*
 * Only once connected for a whole lease: after the server was away (or as
 * this daemon starts), every other node has had its lease's time to renew
 * on its own connection, and a lease that ran out meanwhile is one nobody
 * could renew.
 */
void
pgstore_take_over(struct store *st)
{
	struct pgstore *s = pgstore(st);
	struct pgconn_stmt q = { "takeover", NULL, 2, NULL, NULL, NULL };
	const char *values[2] = { s->node, s->self };

	if (!s->up || timefmt_mono_us() - s->up_since_us < s->lease_ms * 1000)
		return;
	q.values = values;
	(void)pgconn_batch(s->conn, &q, 1, pgstore_took_cb, s);
}

int
pgstore_cancel_elsewhere(struct store *st, const struct job *job, int sig,
    unsigned by)
{
	struct pgstore *s = pgstore(st);
	struct pgconn_stmt q = { "cancel", NULL, 5, NULL, NULL, NULL };
	char id[24], attempt[16], signo[16], uid[16];
	const char *values[5] = { id, attempt, signo, uid, s->self };

	snprintf(id, sizeof id, "%" PRIu64, job->id);
	snprintf(attempt, sizeof attempt, "%u", job->attempt);
	snprintf(signo, sizeof signo, "%d", sig);
	snprintf(uid, sizeof uid, "%u", by);
	q.values = values;
	return pgconn_batch(s->conn, &q, 1, pgstore_ignore_cb, s);
}

void
pgstore_read_cancels(struct pgstore *s, const PGresult *res)
{
	struct job *job;
	int i;

	for (i = 0; i < PQntuples(res); i++) {
		job = store_get(&s->st, strtoull(PQgetvalue(res, i, 0), NULL,
		    10));
		/* Only the node that runs the attempt acts on it. */
		if (job == NULL || job->node == NULL ||
		    strcmp(job->node, s->node) != 0 ||
		    job->attempt != strtoul(PQgetvalue(res, i, 1), NULL, 10) ||
		    s->st.cancel_cb == NULL)
			continue;
		s->st.cancel_cb(job, atoi(PQgetvalue(res, i, 2)),
		    (unsigned)strtoul(PQgetvalue(res, i, 3), NULL, 10),
		    s->st.cancel_arg);
	}
}

void
pgstore_set_busy(struct store *st, unsigned busy)
{
	pgstore(st)->busy = busy;
}
