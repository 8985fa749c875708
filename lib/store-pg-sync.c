/* store-pg-sync.c - what other daemons changed, read on their NOTIFY: every
 * row written by a transaction the last read could not see, in one
 * REPEATABLE READ transaction whose snapshot the next read starts from. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "job.h"
#include "jobtable.h"
#include "pg-util.h"
#include "pgconn.h"
#include "pgrow.h"
#include "store.h"
#include "store-pg-private.h"
#include "timefmt.h"

enum pgsync_result {
	PGSYNC_BEGIN,
	PGSYNC_SNAPSHOT,
	PGSYNC_JOBS,
	PGSYNC_REMOVED,
	PGSYNC_PAUSED,
	PGSYNC_NODES,
	PGSYNC_CANCELS,
	PGSYNC_COMMIT,
	PGSYNC_NRESULTS,
};

static void
pgsync_changed(struct pgstore *s, struct job *job, enum store_change what,
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
pgsync_apply(struct pgstore *s, struct job *row, uint32_t version,
    bool always)
{
	struct job *job = store_get(&s->st, row->id);
	struct job_status before;

	if (job == NULL) {
		row->version = version;
		if (jobtable_add(&s->st.jobs, row) != 0) {
			/* Out of memory: the next read brings it again. */
			job_free(row);
			return;
		}
		pgsync_changed(s, row, STORE_CHANGE_NEW, NULL);
		return;
	}
	job_status_get(job, &before);
	if (version <= job->version) {
		job_free(row);
		if (always)
			pgsync_changed(s, job, STORE_CHANGE_UPDATED, &before);
		return;
	}
	job_take_stored(job, row);
	job_free(row);
	job->version = version;
	pgsync_changed(s, job, STORE_CHANGE_UPDATED, &before);
}

static void
pgsync_gone(struct pgstore *s, uint64_t id)
{
	struct job *job = store_get(&s->st, id);

	if (job == NULL)
		return;
	pgsync_changed(s, job, STORE_CHANGE_GONE, NULL);
	job_free(jobtable_remove(&s->st.jobs, id));
}

/* The cluster's paused priorities, as another node may have changed them;
 * not while a change of ours waits to be written, which would undo it. */
static void
pgsync_paused(struct pgstore *s, const PGresult *res)
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

static void
pgsync_read(struct pgstore *s, PGresult *const *res)
{
	const PGresult *r = res[PGSYNC_JOBS];
	struct job *row;
	char *cause = NULL, *snap;
	int i;

	if ((snap = strdup(PQgetvalue(res[PGSYNC_SNAPSHOT], 0, 0))) == NULL)
		return;		/* read again from the old one */
	for (i = 0; i < PQntuples(r); i++) {
		if ((row = pgrow_read(r, i, 1, &s->cache, &cause)) == NULL) {
			if (s->st.status_cb != NULL)
				s->st.status_cb(true, cause, s->st.status_arg);
			free(cause);
			cause = NULL;
			continue;
		}
		pgsync_apply(s, row, (uint32_t)strtoul(PQgetvalue(r, i, 0),
		    NULL, 10), false);
	}
	r = res[PGSYNC_REMOVED];
	for (i = 0; i < PQntuples(r); i++)
		pgsync_gone(s, strtoull(PQgetvalue(r, i, 0), NULL, 10));
	pgsync_paused(s, res[PGSYNC_PAUSED]);
	pgstore_read_nodes(s, res[PGSYNC_NODES]);
	pgstore_read_cancels(s, res[PGSYNC_CANCELS]);
	free(s->snapshot);
	s->snapshot = snap;
}

static void
pgsync_cb(PGresult *const *res, size_t n, const char *cause, void *arg)
{
	struct pgstore *s = arg;
	size_t i;

	s->syncing = false;
	if (cause == NULL && n == PGSYNC_NRESULTS) {
		for (i = 0; i < n; i++)
			if (PQresultStatus(res[i]) != PGRES_COMMAND_OK &&
			    PQresultStatus(res[i]) != PGRES_TUPLES_OK)
				break;
		if (i == n)
			pgsync_read(s, res);
		else if (s->st.status_cb != NULL)
			s->st.status_cb(true, pg_message(NULL, res[i]),
			    s->st.status_arg);
	}
	pgstore_synced(s);
	/* Lost: the connection's return reads again. */
	if (s->sync_again && cause == NULL) {
		s->sync_again = false;
		pgstore_sync_changes(s);
	}
}

void
pgstore_sync_changes(struct pgstore *s)
{
	const char *values[1] = { s->snapshot };
	struct pgconn_stmt q[PGSYNC_NRESULTS] = {
		[PGSYNC_BEGIN] = { NULL, "BEGIN ISOLATION LEVEL REPEATABLE"
		    " READ READ ONLY", 0, NULL, NULL, NULL },
		[PGSYNC_SNAPSHOT] = { NULL, "SELECT pg_current_snapshot()::text",
		    0, NULL, NULL, NULL },
		[PGSYNC_JOBS] = { "sync_jobs", NULL, 1, values, NULL, NULL },
		[PGSYNC_REMOVED] = { "sync_removed", NULL, 1, values, NULL,
		    NULL },
		[PGSYNC_PAUSED] = { NULL, "SELECT priority FROM triage_paused",
		    0, NULL, NULL, NULL },
		[PGSYNC_NODES] = { NULL, PGSTORE_NODES, 0, NULL, NULL, NULL },
		[PGSYNC_CANCELS] = { "sync_cancels", NULL, 1, values, NULL,
		    NULL },
		[PGSYNC_COMMIT] = { NULL, "COMMIT", 0, NULL, NULL, NULL },
	};

	if (s->syncing) {
		s->sync_again = true;
		return;
	}
	if (!s->up || s->conn == NULL)
		return;
	s->syncing = true;
	if (pgconn_batch(s->conn, q, PGSYNC_NRESULTS, pgsync_cb, s) != 0)
		s->syncing = false;
}


void
pgstore_read_nodes(struct pgstore *s, const PGresult *res)
{
	struct store_node *nodes;
	uint64_t now = timefmt_mono_us();
	int64_t left;
	int i, n = PQntuples(res);

	if ((nodes = calloc((size_t)n + 1, sizeof *nodes)) == NULL)
		return;		/* the old ones until the next read */
	for (i = 0; i < n; i++) {
		nodes[i].name = PQgetvalue(res, i, 0);
		nodes[i].slots = (unsigned)strtoul(PQgetvalue(res, i, 1), NULL,
		    10);
		nodes[i].started_at = strtoll(PQgetvalue(res, i, 2), NULL, 10);
		nodes[i].busy = (unsigned)strtoul(PQgetvalue(res, i, 3), NULL,
		    10);
		nodes[i].up = strcmp(PQgetvalue(res, i, 4), "t") == 0;
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
struct pgsync_refetch {
	struct pgstore *s;
	struct vec ids;
	void (*done)(void *);
	void *arg;
};

static void
pgsync_refetch_free(struct pgsync_refetch *rf)
{
	void (*done)(void *) = rf->done;
	void *arg = rf->arg;

	vec_free(&rf->ids);
	free(rf);
	if (done != NULL)
		done(arg);
}

static void
pgsync_refetch_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	struct pgsync_refetch *rf = arg;
	struct pgstore *s = rf->s;
	const uint64_t *ids = rf->ids.v;
	struct job *row;
	char *why = NULL;
	size_t i;
	int k;

	/* Closing: nobody waits. */
	if (s->conn == NULL) {
		rf->done = NULL;
		pgsync_refetch_free(rf);
		return;
	}
	if (cause == NULL && n == 1 &&
	    PQresultStatus(res[0]) == PGRES_TUPLES_OK) {
		for (k = 0; k < PQntuples(res[0]); k++) {
			if ((row = pgrow_read(res[0], k, 1, &s->cache, &why))
			    == NULL) {
				free(why);
				why = NULL;
				continue;
			}
			pgsync_apply(s, row, (uint32_t)strtoul(
			    PQgetvalue(res[0], k, 0), NULL, 10), true);
		}
		/* Those it did not find are gone. */
		for (i = 0; i < rf->ids.n; i++) {
			for (k = 0; k < PQntuples(res[0]); k++)
				if (strtoull(PQgetvalue(res[0], k, 1), NULL,
				    10) == ids[i])
					break;
			if (k == PQntuples(res[0]))
				pgsync_gone(s, ids[i]);
		}
	} else
		/* Lost: the connection's return reads every change. */
		pgstore_sync_changes(s);
	pgsync_refetch_free(rf);
}

void
pgstore_refetch(struct pgstore *s, const struct vec *ids,
    void (*done)(void *), void *arg)
{
	struct pgconn_stmt q = { "refetch", NULL, 1, NULL, NULL, NULL };
	struct pgsync_refetch *rf;
	const char *values[1];
	char *array = NULL;

	if (s->conn == NULL) {
		done(arg);
		return;
	}
	if ((rf = calloc(1, sizeof *rf)) == NULL) {
		pgstore_sync_changes(s);
		done(arg);
		return;
	}
	rf->s = s;
	rf->done = done;
	rf->arg = arg;
	if (vec_reserve(&rf->ids, sizeof(uint64_t), ids->n) != 0 ||
	    (array = pgstore_ids_array(ids)) == NULL) {
		/* Out of memory: the next read of changes brings them. */
		pgstore_sync_changes(s);
		pgsync_refetch_free(rf);
		return;
	}
	memcpy(rf->ids.v, ids->v, ids->n * sizeof(uint64_t));
	rf->ids.n = ids->n;
	values[0] = array;
	q.values = values;
	if (pgconn_batch(s->conn, &q, 1, pgsync_refetch_cb, rf) != 0) {
		pgstore_sync_changes(s);
		pgsync_refetch_free(rf);
	}
	free(array);
}
