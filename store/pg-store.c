/* pg-store.c - the store in the cluster's PostgreSQL: its operations (the
 * contract of store-private.h), opened on pg-open.c, written through
 * pg-commit.c, and the connection's comings and goings and others' NOTIFY. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "job.h"
#include "jobrow.h"
#include "pg-util.h"
#include "pg-conn.h"
#include "pg-row.h"
#include "store.h"
#include "pg-private.h"
#include "timefmt.h"

static const struct store_ops pg_store_ops;

static const struct pg_store *
pg_store_const(const struct store *st)
{
	return (const struct pg_store *)st;
}

static void
pg_store_conn_state_cb(bool up, const char *cause, void *arg)
{
	struct pg_store *s = arg;

	s->up = up;
	if (!up) {
		free(s->down_cause);
		s->down_cause = strdup(cause != NULL ? cause : "?");
		/* The connection of the locks went the same way: when the
		 * loop's is back, it is made again rather than asked (a
		 * blocking "SELECT 1" on one a split left open and silent
		 * would hang the daemon for ever). */
		s->locks_stale = true;
	}
	/* The first connection is no news: the start connected already. */
	if (s->ever_up || !up)
		pg_open_status(s, up, cause);
	if (!up)
		return;
	/* The server may have restarted, and its locks gone with it: the
	 * node's name is its own again, and it is up to the others. */
	if (s->ever_up)
		pg_open_locks_check(s);
	else
		pg_open_note_sessions(s);
	s->ever_up = true;
	/* Nobody could renew while the server was away: ours first. */
	s->up_since_us = timefmt_mono_us();
	pg_cluster_renew_lease(&s->st);
	if (s->doubt && s->flight != NULL)
		pg_commit_ask_doubt(s);
	/* What was missed while down. */
	pg_sync_changes(s);
	pg_commit_schedule(s);
}

static void
pg_store_notify_cb(const char *channel, const char *payload, void *arg)
{
	struct pg_store *s = arg;

	(void)channel;
	if (strcmp(payload, s->self) != 0)
		pg_sync_soon(s);
}

struct store *
store_open_pg(struct event_base *base, const struct store_pg_options *o,
    char **cause)
{
	struct pg_store *s;
	struct timespec ts;

	if ((s = calloc(1, sizeof *s)) == NULL ||
	    (s->node = strdup(o->node)) == NULL ||
	    (s->commit_ev = evtimer_new(base, pg_commit_cb, s))
	    == NULL ||
	    (s->sync_ev = evtimer_new(base, pg_sync_timer_cb, s)) == NULL ||
	    (s->idle_ev = evtimer_new(base, pg_cluster_idle_cb, s)) == NULL) {
		if (s != NULL && s->commit_ev != NULL)
			event_free(s->commit_ev);
		if (s != NULL && s->sync_ev != NULL)
			event_free(s->sync_ev);
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
	s->synced = pg_commit_synced;
	s->lease_ms = o->lease_ms;
	s->grace_ms = o->grace_ms;
	/* A new number each start: the wall clock in us, and the pid. */
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(s->boot, sizeof s->boot, "%" PRId64,
	    ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000) * 64 +
	    (getpid() & 63));
	snprintf(s->self, sizeof s->self, "%s %s", s->node, s->boot);
	if (pg_open_start(s, o, cause) != 0 ||
	    pg_open_connect(s, o->conninfo, pg_store_conn_state_cb,
	    pg_store_notify_cb, cause) != 0) {
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
		pg_commit_abandon(s->flight);
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
	pg_cluster_shared_free(s);
	free(s->snapshot);
	free(s->down_cause);
	free(s->node);
	if (s->commit_ev != NULL)
		event_free(s->commit_ev);
	if (s->sync_ev != NULL)
		event_free(s->sync_ev);
	if (s->idle_ev != NULL)
		event_free(s->idle_ev);
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
	pg_commit_schedule(s);
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
	pg_commit_schedule(s);
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
	pg_commit_schedule(s);
}

/* The commit after which everything done so far is written: the one on
 * its way when nothing waits behind it. */
static uint64_t
pg_store_generation(const struct store *st)
{
	const struct pg_store *s = pg_store_const(st);

	if (!pg_commit_has_changes(s) && s->flight != NULL)
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
	pg_commit_schedule(s);
	return 0;
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

	pg_open_locks_check(s);
	switch (pg_open_write_priorities(s->locks, text, cause)) {
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
	pg_open_locks_check(s);
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
	pg_commit_schedule(s);
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

static const struct store_ops pg_store_ops = {
	.close = pg_store_close,
	.set_grouping = pg_store_set_grouping,
	.add = pg_store_add,
	.mark = pg_store_mark,
	.write_generation = pg_store_write_generation,
	.paused_changed = pg_store_paused_changed,
	.pending = pg_commit_pending,
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
	.set_busy_cb = pg_cluster_set_busy_cb,
	.set_grace = pg_cluster_set_grace,
	.set_shared_resources = pg_cluster_set_shared,
	.remove = pg_store_remove,
	.expired = pg_store_expired,
	.flush = pg_commit_flush,
	.output_append = pg_output_append,
	.output_read = pg_output_read,
};
