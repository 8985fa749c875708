/* pg-sync.c - what other daemons changed, read on their NOTIFY: every
 * row written by a transaction the last read could not see, in one
 * statement whose snapshot the next read starts from. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>
#include <libpq-fe.h>

#include "job.h"
#include "jobtable.h"
#include "pg-util.h"
#include "pg-conn.h"
#include "pg-row.h"
#include "store.h"
#include "pg-private.h"
#include "timefmt.h"

/* Whether the nodes are up (PG_STORE_NODE_UP, a look through pg_locks,
 * the read's most costly part) is read with the changes at most this
 * often ("sync_look"): their rows every time ("sync"). It is for stats and
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

/*
 * Rows of text values: a result's, or a JSON array of arrays of strings
 * (the read's aggregates, PG_STORE_SYNC); NULL where SQL had NULL. One
 * reader serves the nodes of both.
 */
struct pg_sync_rows {
	const PGresult *res;
	const json_t *json;	/* else */
};

static int
pg_sync_nrows(const struct pg_sync_rows *t)
{
	return t->res != NULL ? PQntuples(t->res) :
	    (int)json_array_size(t->json);
}

static const char *
pg_sync_value(const struct pg_sync_rows *t, int row, int col)
{
	if (t->res != NULL)
		return PQgetisnull(t->res, row, col) ? NULL :
		    PQgetvalue(t->res, row, col);
	return json_string_value(json_array_get(json_array_get(t->json,
	    (size_t)row), (size_t)col));
}

/* A value of rows as a number (0 when NULL). */
static uint64_t
pg_sync_u64(const struct pg_sync_rows *t, int row, int col)
{
	const char *v = pg_sync_value(t, row, col);

	return v != NULL ? strtoull(v, NULL, 10) : 0;
}

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
pg_sync_paused(struct pg_store *s, const struct pg_sync_rows *t)
{
	const char **names;
	int i, n = pg_sync_nrows(t);

	if (s->paused_dirty || (s->flight != NULL && s->flight_paused))
		return;
	if ((names = calloc((size_t)n + 1, sizeof *names)) == NULL)
		return;
	for (i = 0; i < n; i++)
		if ((names[i] = pg_sync_value(t, i, 0)) == NULL)
			names[i] = "";
	store_load_paused_set(&s->st, names, (size_t)n);
	free(names);
}

/* Cancels other nodes asked of jobs: only the node that runs the attempt
 * acts on it. */
static void
pg_sync_read_cancels(struct pg_store *s, const struct pg_sync_rows *t)
{
	struct job *job;
	int i;

	for (i = 0; i < pg_sync_nrows(t); i++) {
		job = store_get(&s->st, pg_sync_u64(t, i, 0));
		if (job == NULL || job->node == NULL ||
		    strcmp(job->node, s->node) != 0 ||
		    job->attempt != pg_sync_u64(t, i, 1) ||
		    s->st.cancel_cb == NULL)
			continue;
		s->st.cancel_cb(job, (int)pg_sync_u64(t, i, 2),
		    (unsigned)pg_sync_u64(t, i, 3), s->st.cancel_arg);
	}
}

static void pg_sync_nodes(struct pg_store *, const struct pg_sync_rows *);

/* The read's aggregates, from its row that has them: 0, or -1 with *why
 * set when they are not as the statement makes them. */
static int
pg_sync_read_meta(struct pg_store *s, const PGresult *r, int row,
    const char **why)
{
	static const char *const names[] = { "removed", "paused", "cancels",
	    "nodes" };
	json_t *v[4] = { NULL };
	struct pg_sync_rows t = { NULL, NULL };
	json_error_t err;
	size_t k;
	int col, i, rc = -1;

	for (k = 0; k < 4; k++) {
		col = PQfnumber(r, names[k]);
		if (col < 0) {
			*why = "a read of changes came without its aggregates";
			goto out;
		}
		if (PQgetisnull(r, row, col))
			v[k] = json_array();
		else
			v[k] = json_loads(PQgetvalue(r, row, col),
			    JSON_DECODE_ANY, &err);
		if (!json_is_array(v[k])) {
			*why = "a read of changes came with aggregates not "
			    "JSON arrays";
			goto out;
		}
	}
	t.json = v[0];
	for (i = 0; i < pg_sync_nrows(&t); i++)
		pg_sync_gone(s, pg_sync_u64(&t, i, 0));
	t.json = v[1];
	pg_sync_paused(s, &t);
	t.json = v[3];
	pg_sync_nodes(s, &t);
	t.json = v[2];
	pg_sync_read_cancels(s, &t);
	rc = 0;
out:
	for (k = 0; k < 4; k++)
		json_decref(v[k]);
	return rc;
}

/*
 * The rows of a read: each job's (its version not NULL), then the
 * aggregates of the one row whose snapshot is not NULL; that snapshot is
 * where the next read starts. Out of memory or askew, the old one stays,
 * and the next read brings it all again.
 */
static void
pg_sync_read(struct pg_store *s, const PGresult *r)
{
	int i, meta = -1, col = PQfnumber(r, "snap");
	const char *why = "a read of changes came without its snapshot";
	struct job *row;
	char *cause = NULL, *snap;

	for (i = 0; col >= 0 && i < PQntuples(r) && meta < 0; i++)
		if (!PQgetisnull(r, i, col))
			meta = i;
	if (meta < 0)
		goto askew;
	if ((snap = strdup(PQgetvalue(r, meta, col))) == NULL)
		return;
	for (i = 0; i < PQntuples(r); i++) {
		if (PQgetisnull(r, i, 0))
			continue;
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
	if (pg_sync_read_meta(s, r, meta, &why) != 0) {
		free(snap);
		goto askew;
	}
	free(s->snapshot);
	s->snapshot = snap;
	return;
askew:
	if (s->st.status_cb != NULL)
		s->st.status_cb(true, why, s->st.status_arg);
}

static void
pg_sync_cb(PGresult *const *res, size_t n, const char *cause, void *arg)
{
	struct pg_store *s = arg;

	s->syncing = false;
	/* The fallback for a NOTIFY that never comes. */
	if (cause == NULL && s->conn != NULL)
		pg_sync_at(s, PG_SYNC_POLL_MS);
	if (cause == NULL && n == 1) {
		if (PQresultStatus(res[0]) == PGRES_TUPLES_OK)
			pg_sync_read(s, res[0]);
		else if (s->st.status_cb != NULL)
			s->st.status_cb(true, pg_util_message(NULL, res[0]),
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
	struct pg_conn_stmt q = { "sync", NULL, 1, values, NULL, NULL };

	if (s->syncing) {
		s->sync_again = true;
		return;
	}
	if (!s->up || s->conn == NULL)
		return;
	if (timefmt_mono_us() - s->nodes_read_us >= PG_SYNC_NODES_MS * 1000)
		q.name = "sync_look";
	s->syncing = true;
	if (pg_conn_batch(s->conn, &q, 1, pg_sync_cb, s) != 0)
		s->syncing = false;
}

/* The nodes of t (as PG_STORE_NODES has them), for the store. Whether
 * each is up is NULL when not looked at: the last look's then, and a node
 * new since up (it registers holding its name). */
static void
pg_sync_nodes(struct pg_store *s, const struct pg_sync_rows *t)
{
	const struct store_node *old;
	struct store_node *nodes;
	uint64_t now = timefmt_mono_us();
	const char *up, *name;
	int64_t left;
	int i, n = pg_sync_nrows(t);
	size_t k, nold;
	bool looked = n == 0 || pg_sync_value(t, 0, 4) != NULL;

	old = store_nodes(&s->st, &nold);

	if ((nodes = calloc((size_t)n + 1, sizeof *nodes)) == NULL)
		return;		/* the old ones until the next read */
	if (looked)
		s->nodes_read_us = now;
	for (i = 0; i < n; i++) {
		/* Its own copy: store_load_nodes copies it again. */
		name = pg_sync_value(t, i, 0);
		if ((nodes[i].name = strdup(name != NULL ? name : "")) ==
		    NULL)
			goto out;
		nodes[i].slots = (unsigned)pg_sync_u64(t, i, 1);
		nodes[i].started_at = (int64_t)pg_sync_u64(t, i, 2);
		nodes[i].busy = (unsigned)pg_sync_u64(t, i, 3);
		/* "t" from a result, "true" from JSON. */
		up = pg_sync_value(t, i, 4);
		nodes[i].up = up != NULL && up[0] == 't';
		for (k = 0; !looked && k < nold; k++)
			if (strcmp(old[k].name, nodes[i].name) == 0)
				break;
		if (!looked)
			nodes[i].up = k == nold || old[k].up;
		nodes[i].grace_ms = pg_sync_u64(t, i, 5);
		if (pg_sync_value(t, i, 6) != NULL) {
			left = strtoll(pg_sync_value(t, i, 6), NULL, 10) * 1000;
			/* Already over: 1, the earliest instant. */
			nodes[i].lease_end_us = (int64_t)now + left > 1 ?
			    (uint64_t)((int64_t)now + left) : 1;
		}
	}
	(void)store_load_nodes(&s->st, nodes, (size_t)n);
out:
	for (i = 0; i < n; i++)
		free(nodes[i].name);
	free(nodes);
}

void
pg_sync_read_nodes(struct pg_store *s, const PGresult *res)
{
	const struct pg_sync_rows t = { res, NULL };

	pg_sync_nodes(s, &t);
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
		if (done != NULL)
			done(arg);
		return;
	}
	if ((rf = calloc(1, sizeof *rf)) == NULL) {
		pg_sync_changes(s);
		if (done != NULL)
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
