/* pg-sync.c - what other daemons changed, read on their NOTIFY: every
 * row written by a transaction the last read could not see, in one
 * REPEATABLE READ transaction whose snapshot the next read starts from. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "job.h"
#include "jobtable.h"
#include "pg-util.h"
#include "pg-conn.h"
#include "pg-row.h"
#include "store.h"
#include "pg-private.h"
#include "timefmt.h"

/* Whether the nodes are up (PG_STORE_NODES, a look through pg_locks, the
 * read's most costly statement) is read with the changes at most this
 * often: their rows (PG_STORE_NODES_ROWS) every time. It is for stats and
 * timers, and the takeover reads it afresh. */
#define PG_SYNC_NODES_MS 1000

/*
 * Another daemon's NOTIFY is read after this long, so that the commits of
 * every node in that time are read at once: busy nodes commit hundreds of
 * times a second, and each read costs the server a transaction whatever
 * it brings.
 */
#define PG_SYNC_COALESCE_MS 5
/*
 * While any job is queued or running anywhere, changes are read at least
 * this often, NOTIFY or not: a notification lost (a listener's connection
 * is where it is delivered) delays nothing longer. With none, nothing.
 */
#define PG_SYNC_POLL_MS 1000

/* Its statements. */
enum pg_sync_result {
	PG_SYNC_BEGIN,
	PG_SYNC_SNAPSHOT,
	PG_SYNC_JOBS,
	PG_SYNC_REMOVED,
	PG_SYNC_PAUSED,
	PG_SYNC_CANCELS,
	PG_SYNC_NODES,
	PG_SYNC_COMMIT,
	PG_SYNC_NRESULTS,
};

static void pg_sync_at(struct pg_store *, uint64_t);

static void
pg_sync_changed(struct pg_store *s, struct job *job, enum store_change what,
    const struct job_status *before)
{
	if (s->st.changed_cb != NULL)
		s->st.changed_cb(job, what, before, s->st.changed_arg);
}

/*
 * A row read from the database: a new job joins the table; a known one
 * takes the row's fields, unless the row is no newer than what it has
 * (our own writes come back this way). Takes row.
 */
static void
pg_sync_apply(struct pg_store *s, struct job *row, uint32_t version,
    bool always)
{
	struct job *job = store_get(&s->st, row->id);
	struct job_status before;

	if (job == NULL) {
		row->store.version = version;
		if (jobtable_add(&s->st.jobs, row) != 0) {
			/* Out of memory: the next read brings it again. */
			job_free(row);
			return;
		}
		pg_sync_changed(s, row, STORE_CHANGE_NEW, NULL);
		return;
	}
	job_status_get(job, &before);
	if (version <= job->store.version) {
		job_free(row);
		if (always)
			pg_sync_changed(s, job, STORE_CHANGE_UPDATED, &before);
		return;
	}
	job_take_stored(job, row);
	job_free(row);
	job->store.version = version;
	pg_sync_changed(s, job, STORE_CHANGE_UPDATED, &before);
}

static void
pg_sync_gone(struct pg_store *s, uint64_t id)
{
	struct job *job = store_get(&s->st, id);

	if (job == NULL)
		return;
	pg_sync_changed(s, job, STORE_CHANGE_GONE, NULL);
	job_free(jobtable_remove(&s->st.jobs, id));
}

/* The cluster's paused priorities, as another node may have changed them;
 * not while a change of ours waits to be written, which would undo it. */
static void
pg_sync_paused(struct pg_store *s, const PGresult *res)
{
	char **names;
	int i, n = PQntuples(res);

	if (s->paused_dirty || (s->flight != NULL && s->flight_paused))
		return;
	if ((names = calloc((size_t)n + 1, sizeof *names)) == NULL)
		return;
	for (i = 0; i < n; i++)
		names[i] = PQgetvalue(res, i, 0);
	store_load_paused_set(&s->st, names, (size_t)n);
	free(names);
}

/* Cancels other nodes asked of jobs: only the node that runs the attempt
 * acts on it. */
static void
pg_sync_read_cancels(struct pg_store *s, const PGresult *res)
{
	struct job *job;
	int i;

	for (i = 0; i < PQntuples(res); i++) {
		job = store_get(&s->st, strtoull(PQgetvalue(res, i, 0), NULL,
		    10));
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

static void
pg_sync_read(struct pg_store *s, PGresult *const *res)
{
	const PGresult *r = res[PG_SYNC_JOBS];
	struct job *row;
	char *cause = NULL, *snap;
	int i;

	if ((snap = strdup(PQgetvalue(res[PG_SYNC_SNAPSHOT], 0, 0))) == NULL)
		return;		/* read again from the old one */
	for (i = 0; i < PQntuples(r); i++) {
		if ((row = pg_row_read(r, i, 1, &s->cache, &cause)) == NULL) {
			if (s->st.status_cb != NULL)
				s->st.status_cb(true, cause, s->st.status_arg);
			free(cause);
			cause = NULL;
			continue;
		}
		pg_sync_apply(s, row, (uint32_t)strtoul(PQgetvalue(r, i, 0),
		    NULL, 10), false);
	}
	r = res[PG_SYNC_REMOVED];
	for (i = 0; i < PQntuples(r); i++)
		pg_sync_gone(s, strtoull(PQgetvalue(r, i, 0), NULL, 10));
	pg_sync_paused(s, res[PG_SYNC_PAUSED]);
	pg_sync_read_nodes(s, res[PG_SYNC_NODES]);
	pg_sync_read_cancels(s, res[PG_SYNC_CANCELS]);
	free(s->snapshot);
	s->snapshot = snap;
}

static void
pg_sync_cb(PGresult *const *res, size_t n, const char *cause, void *arg)
{
	struct pg_store *s = arg;
	size_t i;

	s->syncing = false;
	/* The fallback for a NOTIFY that never comes. */
	if (cause == NULL && s->conn != NULL)
		pg_sync_at(s, PG_SYNC_POLL_MS);
	if (cause == NULL && n == PG_SYNC_NRESULTS) {
		for (i = 0; i < n; i++)
			if (PQresultStatus(res[i]) != PGRES_COMMAND_OK &&
			    PQresultStatus(res[i]) != PGRES_TUPLES_OK)
				break;
		if (i == n)
			pg_sync_read(s, res);
		else if (s->st.status_cb != NULL)
			s->st.status_cb(true, pg_util_message(NULL, res[i]),
			    s->st.status_arg);
	}
	s->synced(s);
	/* Lost: the connection's return reads again. */
	if (s->sync_again && cause == NULL) {
		s->sync_again = false;
		pg_sync_changes(s);
	}
}

/* Whether a job is queued or running, here or on another node, as last
 * read. */
static bool
pg_sync_active(const struct pg_store *s)
{
	const struct job *job;
	size_t pos;

	for (pos = 0; (job = store_iter(&s->st, &pos)) != NULL;)
		if (job->state == JOB_QUEUED || job->state == JOB_RUNNING)
			return true;
	return false;
}

/* The read at most ms from now (sooner if it was due sooner). */
static void
pg_sync_at(struct pg_store *s, uint64_t ms)
{
	uint64_t at = timefmt_mono_us() + ms * 1000;
	struct timeval tv = timefmt_tv(ms);

	if (evtimer_pending(s->sync_ev, NULL) && s->sync_at_us <= at)
		return;
	s->sync_at_us = at;
	evtimer_del(s->sync_ev);
	evtimer_add(s->sync_ev, &tv);
}

void
pg_sync_soon(struct pg_store *s)
{
	s->sync_notified = true;
	pg_sync_at(s, PG_SYNC_COALESCE_MS);
}

void
pg_sync_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_store *s = arg;

	(void)fd;
	(void)what;
	s->sync_at_us = 0;
	/* The poll's turn with nothing left to wait for: it stops. */
	if (!s->sync_notified && !pg_sync_active(s))
		return;
	s->sync_notified = false;
	pg_sync_changes(s);
}

void
pg_sync_changes(struct pg_store *s)
{
	const char *values[1] = { s->snapshot };
	struct pg_conn_stmt q[PG_SYNC_NRESULTS] = {
		[PG_SYNC_BEGIN] = { NULL, "BEGIN ISOLATION LEVEL REPEATABLE"
		    " READ READ ONLY", 0, NULL, NULL, NULL },
		[PG_SYNC_SNAPSHOT] = { NULL,
		    "SELECT pg_current_snapshot()::text",
		    0, NULL, NULL, NULL },
		[PG_SYNC_JOBS] = { "sync_jobs", NULL, 1, values, NULL, NULL },
		[PG_SYNC_REMOVED] = { "sync_removed", NULL, 1, values, NULL,
		    NULL },
		[PG_SYNC_PAUSED] = { NULL, "SELECT priority FROM triage_paused",
		    0, NULL, NULL, NULL },
		[PG_SYNC_NODES] = { NULL, PG_STORE_NODES, 0, NULL, NULL, NULL },
		[PG_SYNC_CANCELS] = { "sync_cancels", NULL, 1, values, NULL,
		    NULL },
		[PG_SYNC_COMMIT] = { NULL, "COMMIT", 0, NULL, NULL, NULL },
	};

	if (s->syncing) {
		s->sync_again = true;
		return;
	}
	if (!s->up || s->conn == NULL)
		return;
	if (timefmt_mono_us() - s->nodes_read_us < PG_SYNC_NODES_MS * 1000)
		q[PG_SYNC_NODES].sql = PG_STORE_NODES_ROWS;
	s->syncing = true;
	if (pg_conn_batch(s->conn, q, PG_SYNC_NRESULTS, pg_sync_cb, s) != 0)
		s->syncing = false;
}


void
pg_sync_read_nodes(struct pg_store *s, const PGresult *res)
{
	const struct store_node *old;
	struct store_node *nodes;
	uint64_t now = timefmt_mono_us();
	int64_t left;
	int i, n = PQntuples(res);
	size_t k, nold;
	bool looked = n == 0 || !PQgetisnull(res, 0, 4);

	old = store_nodes(&s->st, &nold);

	if ((nodes = calloc((size_t)n + 1, sizeof *nodes)) == NULL)
		return;		/* the old ones until the next read */
	if (looked)
		s->nodes_read_us = now;
	for (i = 0; i < n; i++) {
		nodes[i].name = PQgetvalue(res, i, 0);
		nodes[i].slots = (unsigned)strtoul(PQgetvalue(res, i, 1), NULL,
		    10);
		nodes[i].started_at = strtoll(PQgetvalue(res, i, 2), NULL, 10);
		nodes[i].busy = (unsigned)strtoul(PQgetvalue(res, i, 3), NULL,
		    10);
		nodes[i].up = strcmp(PQgetvalue(res, i, 4), "t") == 0;
		/* Not looked at: as the last look said; a node new since
		 * holds its name (it registers holding it). */
		for (k = 0; !looked && k < nold; k++)
			if (strcmp(old[k].name, nodes[i].name) == 0)
				break;
		if (!looked)
			nodes[i].up = k == nold || old[k].up;
		nodes[i].grace_ms = strtoull(PQgetvalue(res, i, 5), NULL, 10);
		if (!PQgetisnull(res, i, 6)) {
			left = strtoll(PQgetvalue(res, i, 6), NULL, 10) * 1000;
			/* Already over: 1, the earliest instant. */
			nodes[i].lease_end_us = (int64_t)now + left > 1 ?
			    (uint64_t)((int64_t)now + left) : 1;
		}
	}
	(void)store_load_nodes(&s->st, nodes, (size_t)n);
	free(nodes);
}

/* The ids asked for, for their answer. */
struct pg_sync_refetch {
	struct pg_store *s;
	struct vec ids;
	void (*done)(void *);
	void *arg;
};

static void
pg_sync_refetch_free(struct pg_sync_refetch *rf)
{
	void (*done)(void *) = rf->done;
	void *arg = rf->arg;

	vec_free(&rf->ids);
	free(rf);
	if (done != NULL)
		done(arg);
}

static void
pg_sync_refetch_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	struct pg_sync_refetch *rf = arg;
	struct pg_store *s = rf->s;
	const uint64_t *ids = rf->ids.v;
	struct job *row;
	char *why = NULL;
	size_t i;
	int k;

	/* Closing: nobody waits. */
	if (s->conn == NULL) {
		rf->done = NULL;
		pg_sync_refetch_free(rf);
		return;
	}
	if (cause == NULL && n == 1 &&
	    PQresultStatus(res[0]) == PGRES_TUPLES_OK) {
		for (k = 0; k < PQntuples(res[0]); k++) {
			if ((row = pg_row_read(res[0], k, 1, &s->cache, &why))
			    == NULL) {
				free(why);
				why = NULL;
				continue;
			}
			pg_sync_apply(s, row, (uint32_t)strtoul(
			    PQgetvalue(res[0], k, 0), NULL, 10), true);
		}
		/* Those it did not find are gone. */
		for (i = 0; i < rf->ids.n; i++) {
			for (k = 0; k < PQntuples(res[0]); k++)
				if (strtoull(PQgetvalue(res[0], k, 1), NULL,
				    10) == ids[i])
					break;
			if (k == PQntuples(res[0]))
				pg_sync_gone(s, ids[i]);
		}
	} else
		/* Lost: the connection's return reads every change. */
		pg_sync_changes(s);
	pg_sync_refetch_free(rf);
}

void
pg_sync_refetch(struct pg_store *s, const struct vec *ids,
    void (*done)(void *), void *arg)
{
	struct pg_conn_stmt q = { "refetch", NULL, 1, NULL, NULL, NULL };
	struct pg_sync_refetch *rf;
	const char *values[1];
	char *array = NULL;

	if (s->conn == NULL) {
		done(arg);
		return;
	}
	if ((rf = calloc(1, sizeof *rf)) == NULL) {
		pg_sync_changes(s);
		done(arg);
		return;
	}
	rf->s = s;
	rf->done = done;
	rf->arg = arg;
	if (vec_reserve(&rf->ids, sizeof(uint64_t), ids->n) != 0 ||
	    (array = pg_util_ids_array(ids)) == NULL) {
		/* Out of memory: the next read of changes brings them. */
		pg_sync_changes(s);
		pg_sync_refetch_free(rf);
		return;
	}
	memcpy(rf->ids.v, ids->v, ids->n * sizeof(uint64_t));
	rf->ids.n = ids->n;
	values[0] = array;
	q.values = values;
	if (pg_conn_batch(s->conn, &q, 1, pg_sync_refetch_cb, rf) != 0) {
		pg_sync_changes(s);
		pg_sync_refetch_free(rf);
	}
	free(array);
}
