/* pg-cluster.c - what daemons sharing PostgreSQL do for each other: a
 * node's lease on its running jobs, the takeover of a silent node's jobs,
 * a cancel asked of the node that runs a job, and the counters they share. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "job.h"
#include "pg-conn.h"
#include "store.h"
#include "pg-private.h"
#include "timefmt.h"

/* How long a node holds no slots before it writes so (pg_cluster_idle_cb),
 * at most. */
#define PG_CLUSTER_IDLE_WRITE_MS 1000

/* Its statements, prepared on every connection (pg-store.c). */
const char pg_store_lease_sql[] =
    "UPDATE triage_nodes SET lease_until = now() + $3::interval, busy = $4,"
    " grace_ms = $5 WHERE name = $1 AND boot = $2";
/*
 * The jobs of every other node whose lease has run out go back to their
 * queues as new attempts, at their place (seq kept: they had their turn),
 * with what their run left cleared, as job_new_attempt does. The dead
 * nodes' rows are locked, so that two daemons taking over at once take
 * each job once; their NOTIFY goes out only when a job was taken.
 */
const char pg_store_takeover_sql[] =
    "WITH dead AS (SELECT name, lease_until FROM triage_nodes"
    " WHERE name <> $1 AND lease_until + grace_ms * interval '1 ms' < now()"
    " FOR UPDATE SKIP LOCKED),"
    " taken AS (UPDATE triage_jobs j SET state = 'queued',"
    " attempt = j.attempt + 1, begun = 0, started_at = NULL,"
    " finished_at = NULL, pid = NULL, exit_code = NULL, signal = NULL,"
    " user_time = NULL, system_time = NULL, max_rss_kb = NULL,"
    " start_ticks = NULL, stdout_truncated = 0, stderr_truncated = 0,"
    " stdout_dropped = 0, stderr_dropped = 0, result = NULL,"
    " result_truncated = 0,"
    " reason = 'node ' || j.node || ' stopped renewing its lease while"
    " attempt ' || j.attempt || ' ran', version = j.version + 1"
    " FROM dead WHERE j.node = dead.name AND (j.state = 'running'"
    " OR (j.state = 'queued' AND j.begun = 1)) RETURNING j.id, j.node),"
    " told AS (SELECT pg_notify('" PG_STORE_CHANNEL "', $2) AS x"
    " WHERE EXISTS (SELECT 1 FROM taken))"
    " SELECT d.name, (extract(epoch FROM d.lease_until) * 1000)::bigint,"
    " count(*), string_agg(t.id::text, ' ' ORDER BY t.id),"
    " (SELECT count(*) FROM told)"
    " FROM dead d JOIN taken t ON t.node = d.name"
    " GROUP BY d.name, d.lease_until ORDER BY d.name";
const char pg_store_cancel_sql[] =
    "WITH i AS (INSERT INTO triage_cancels (job, attempt, signal, by_uid)"
    " VALUES ($1, $2, $3, $4) ON CONFLICT (job, attempt) DO UPDATE"
    " SET signal = EXCLUDED.signal, by_uid = EXCLUDED.by_uid,"
    " txid = pg_current_xact_id() RETURNING 1)"
    " SELECT pg_notify('" PG_STORE_CHANNEL "', $5) FROM i";

/* The lease as an interval PostgreSQL reads. */
void
pg_cluster_lease_text(const struct pg_store *s, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64 " milliseconds", s->lease_ms);
}

/* A renewal on its way, and when it was sent. */
struct pg_store_renewal {
	struct pg_store *s;
	uint64_t sent_us;
};

/* A renewal the server made holds from when it was sent (the server's
 * lease runs from later): the node's own deadline never outlasts the
 * others' idea of it, whatever their clocks say. A lost one is renewed by
 * the next tick or commit. */
static void
pg_cluster_renewed_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	struct pg_store_renewal *r = arg;

	if (cause == NULL && n >= 1 &&
	    PQresultStatus(res[0]) == PGRES_COMMAND_OK)
		pg_cluster_lease_acked(r->s, r->sent_us);
	free(r);
}

void
pg_cluster_lease_acked(struct pg_store *s, uint64_t sent_us)
{
	if (sent_us <= s->lease_sent_us)
		return;
	s->lease_sent_us = sent_us;
	if (s->st.lease_cb != NULL)
		s->st.lease_cb(pg_cluster_lease_until_us(&s->st),
		    s->st.lease_arg);
}

uint64_t
pg_cluster_lease_until_us(const struct store *st)
{
	const struct pg_store *s = (const struct pg_store *)st;

	return s->lease_sent_us == 0 ? 0 : s->lease_sent_us +
	    s->lease_ms * 1000;
}

/* Whatever the answer. */
static void
pg_cluster_ignore_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	(void)res;
	(void)n;
	(void)cause;
	(void)arg;
}

/* A lease statement: the lease renewed and the slots held written; told
 * (a NOTIFY), the others read it now, as a renewal tells nobody. */
static void
pg_cluster_send_lease(struct pg_store *s, bool tell)
{
	struct pg_conn_stmt q[2] = {
		{ "lease", NULL, 5, NULL, NULL, NULL },
		{ "notify", NULL, 1, NULL, NULL, NULL },
	};
	struct pg_store_renewal *r;
	const char *values[5], *self[1];
	char lease[48], busy[16], grace[24];

	if (!s->up || (r = malloc(sizeof *r)) == NULL)
		return;
	r->s = s;
	r->sent_us = timefmt_mono_us();
	pg_cluster_lease_text(s, lease, sizeof lease);
	snprintf(busy, sizeof busy, "%u", pg_cluster_busy(s));
	snprintf(grace, sizeof grace, "%" PRIu64, s->grace_ms);
	values[0] = s->node;
	values[1] = s->boot;
	values[2] = lease;
	values[3] = busy;
	values[4] = grace;
	self[0] = s->self;
	q[0].values = values;
	q[1].values = self;
	if (pg_conn_batch(s->conn, q, tell ? 2 : 1, pg_cluster_renewed_cb,
	    r) != 0)
		free(r);
}

void
pg_cluster_renew_lease(struct store *st)
{
	pg_cluster_send_lease(pg_store(st), false);
}

/* The nodes, read afresh (their leases: renewals tell nobody), and, when
 * it was asked, what the takeover took: our own NOTIFY is not for us, so
 * the jobs taken are read now. */
static void
pg_cluster_took_cb(PGresult *const *res, size_t n, const char *cause, void *arg)
{
	struct pg_store *s = arg;
	const PGresult *r;
	int i;

	if (cause != NULL || n < 1 || PQresultStatus(res[0]) != PGRES_TUPLES_OK)
		return;
	pg_sync_read_nodes(s, res[0]);
	if (n < 2 || PQresultStatus(res[1]) != PGRES_TUPLES_OK ||
	    PQntuples(res[1]) == 0)
		return;
	r = res[1];
	for (i = 0; i < PQntuples(r) && s->st.takeover_cb != NULL; i++)
		s->st.takeover_cb(PQgetvalue(r, i, 0),
		    strtoll(PQgetvalue(r, i, 1), NULL, 10),
		    (unsigned)strtoul(PQgetvalue(r, i, 2), NULL, 10),
		    PQgetvalue(r, i, 3), s->st.takeover_arg);
	pg_sync_changes(s);
}

/*
 * The nodes are read each time; the takeover only once connected for a
 * whole lease: after the server was away (or as
 * this daemon starts), every other node has had its lease's time to renew
 * on its own connection, and a lease that ran out meanwhile is one nobody
 * could renew.
 */
void
pg_cluster_take_over(struct store *st)
{
	struct pg_store *s = pg_store(st);
	const char *values[2] = { s->node, s->self };
	struct pg_conn_stmt q[2] = {
		{ NULL, PG_STORE_NODES, 0, NULL, NULL, NULL },
		{ "takeover", NULL, 2, values, NULL, NULL },
	};

	if (!s->up)
		return;
	(void)pg_conn_batch(s->conn, q, timefmt_mono_us() - s->up_since_us <
	    s->lease_ms * 1000 ? 1 : 2, pg_cluster_took_cb, s);
}

int
pg_cluster_cancel_elsewhere(struct store *st, const struct job *job, int sig,
    unsigned by)
{
	struct pg_store *s = pg_store(st);
	struct pg_conn_stmt q = { "cancel", NULL, 5, NULL, NULL, NULL };
	char id[24], attempt[16], signo[16], uid[16];
	const char *values[5] = { id, attempt, signo, uid, s->self };

	snprintf(id, sizeof id, "%" PRIu64, job->id);
	snprintf(attempt, sizeof attempt, "%u", job->attempt);
	snprintf(signo, sizeof signo, "%d", sig);
	snprintf(uid, sizeof uid, "%u", by);
	q.values = values;
	return pg_conn_batch(s->conn, &q, 1, pg_cluster_ignore_cb, s);
}

void
pg_cluster_set_busy_cb(struct store *st, store_busy_cb cb, void *arg)
{
	struct pg_store *s = pg_store(st);

	s->busy_cb = cb;
	s->busy_arg = arg;
}

/* Arms the look for a node gone idle, a second (or a third of the lease)
 * on. */
static void
pg_cluster_arm_idle(struct pg_store *s)
{
	uint64_t ms = s->lease_ms / 3 < PG_CLUSTER_IDLE_WRITE_MS ?
	    s->lease_ms / 3 : PG_CLUSTER_IDLE_WRITE_MS;
	struct timeval tv = { (time_t)(ms / 1000),
	    (suseconds_t)(ms % 1000 * 1000) };

	evtimer_add(s->idle_ev, &tv);
}

/* Our slots held now, as the commit or lease statement being built writes
 * them. */
unsigned
pg_cluster_busy(struct pg_store *s)
{
	s->busy_written = s->busy_cb != NULL ? s->busy_cb(s->busy_arg) : 0;
	if (s->busy_written != 0 && !evtimer_pending(s->idle_ev, NULL))
		pg_cluster_arm_idle(s);
	return s->busy_written;
}

/*
 * The others count our lease only while the last we wrote says we hold
 * slots, and we renew it only while we run jobs. Most often the commit of
 * the last end writes 0; when it did not (its slots went after it, as a
 * refused claim's do), a lease statement writes it, and a NOTIFY has the
 * others read it. While we hold slots, the look comes again.
 */
void
pg_cluster_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_store *s = arg;

	(void)fd;
	(void)what;
	if (s->busy_written == 0 || s->busy_cb == NULL)
		return;
	if (s->busy_cb(s->busy_arg) != 0 || !s->up) {
		pg_cluster_arm_idle(s);
		return;
	}
	pg_cluster_send_lease(s, true);
}

void
pg_cluster_set_grace(struct store *st, uint64_t grace_ms)
{
	pg_store(st)->grace_ms = grace_ms;
}

static int
pg_cluster_cmp_shared(const void *a, const void *b)
{
	const struct pg_shared *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static void
pg_cluster_shared_clear(struct pg_shared *shared, size_t n, char *counts)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(shared[i].name);
	free(shared);
	free(counts);
}

void
pg_cluster_shared_free(struct pg_store *s)
{
	pg_cluster_shared_clear(s->shared, s->nshared, s->shared_counts);
	s->shared = NULL;
	s->nshared = 0;
	s->shared_counts = NULL;
}

/*
 * Kept by name: the claims of a commit lock the counters' rows in that
 * order, every daemon's the same, so that two commits never wait for each
 * other in a circle. Names are [a-z0-9_-]: JSON and a text[] literal take
 * them as they are.
 */
int
pg_cluster_set_shared(struct store *st, const struct store_resource *r,
    size_t n)
{
	struct pg_store *s = pg_store(st);
	struct pg_shared *shared;
	size_t i, len = 3;
	char *counts;

	if (n > STORE_SHARED_MAX) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		len += strlen(r[i].name) + 28;
	if ((shared = calloc(n + 1, sizeof *shared)) == NULL ||
	    (counts = malloc(len)) == NULL) {
		free(shared);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++) {
		shared[i].count = r[i].count;
		if ((shared[i].name = strdup(r[i].name)) == NULL) {
			pg_cluster_shared_clear(shared, i, counts);
			errno = ENOMEM;
			return -1;
		}
	}
	qsort(shared, n, sizeof *shared, pg_cluster_cmp_shared);
	len = (size_t)sprintf(counts, "{");
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(counts + len, "%s\"%s\":%" PRIu64,
		    i > 0 ? "," : "", shared[i].name, shared[i].count);
	strcpy(counts + len, "}");
	pg_cluster_shared_free(s);
	s->shared = shared;
	s->nshared = n;
	s->shared_counts = counts;
	return 0;
}

uint64_t
pg_cluster_shared_of(const struct pg_store *s, const struct job *job)
{
	uint64_t mask = 0;
	size_t i;

	for (i = 0; i < s->nshared; i++)
		if (json_object_get(job->extra->resources,
		    s->shared[i].name) != NULL)
			mask |= UINT64_C(1) << i;
	return mask;
}

char *
pg_cluster_shared_array(const struct pg_store *s, uint64_t mask)
{
	size_t i, len = 3;
	char *a;

	for (i = 0; i < s->nshared; i++)
		if (mask & (UINT64_C(1) << i))
			len += strlen(s->shared[i].name) + 1;
	if ((a = malloc(len)) == NULL)
		return NULL;
	strcpy(a, "{");
	for (i = 0; i < s->nshared; i++) {
		if (!(mask & (UINT64_C(1) << i)))
			continue;
		if (a[1] != '\0')
			strcat(a, ",");
		strcat(a, s->shared[i].name);
	}
	strcat(a, "}");
	return a;
}
