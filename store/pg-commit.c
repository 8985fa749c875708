/* pg-commit.c - the store's changes written to PostgreSQL: each loop turn's
 * as one transaction built without blocking the loop, each update fenced by
 * the version of the row it read, then settled; a commit whose answer was
 * lost is asked after, and the ids of new jobs come in blocks ahead. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "job.h"
#include "pg-util.h"
#include "pg-conn.h"
#include "pg-row.h"
#include "store.h"
#include "pg-private.h"
#include "timefmt.h"

/* How long a failed commit waits before the next try of what it could not
 * write (the connection itself comes back on its own backoff). */
#define PG_COMMIT_RETRY_MS 1000
/* How long a stopping daemon waits for its last writes. */
#define PG_COMMIT_FLUSH_MS 10000
/*
 * Changed and removed jobs written by one commit at most: a bulk cancel of
 * 100,000 jobs goes out as many commits, each built and settled in a few
 * milliseconds, so that the loop serves others between them.
 */
#define PG_COMMIT_ROWS 500
/*
 * The alternates a claim names at most (store_set_claim_alternates): past
 * the jobs the other nodes' claims of the same moment take, a few slots'
 * worth each.
 */
#define PG_COMMIT_ALTERNATES 64

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
	/* The jobs its claims did not get, to read back: nothing of the
	 * commit waits for them (a launch waits for its own claim alone). */
	struct vec beaten;
	size_t first_update;		/* index of the first UPDATE result */
	/* Each new job's INSERT result; for a job with a key, the next
	 * result is the id of the job that has its uid and key (key_owner),
	 * another node's when the INSERT did nothing. */
	size_t *ins_at;
	/* Each UPDATE's kind (a claim, of a job naming shared counters),
	 * and the job's count of replacements then. */
	struct {
		bool claim;
		bool shared;
		uint16_t replaced;
	} *sent;
	size_t ids_at;			/* of the refill of ids; 0: none */
};

/* Everything a commit's statements point into, until they are sent. */
struct pg_commit_batch {
	struct pg_conn_stmt *stmts;
	size_t n;
	struct pg_row *rows;
	size_t nrows;
	char (*nums)[24];
	size_t nnums;
	char *paused;
	char *shared;			/* the counters the claims lock */
	char **alts;			/* the claims' alternates: ids and
					 * versions, two a claim */
	size_t nalts;
	char lease[48];
	const char **values;		/* the short statements' values */
	size_t nvalues;
};

static void pg_commit_settle(struct pg_commit *, PGresult *const *, size_t,
    const char *, const PGresult *);

/* A commit at the end of this turn of the loop, unless one is on its way:
 * its end schedules the next. */
void
pg_commit_schedule(struct pg_store *s)
{
	static const struct timeval now = { 0, 0 };

	if (s->flight == NULL)
		evtimer_add(s->commit_ev, &now);
}

/* The versions our commit in doubt gave the rows it updated: those whose
 * last writer is its transaction. Then it is settled as done. */
static void
pg_commit_versions_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	struct pg_commit *c = arg;

	(void)n;
	if (cause != NULL || PQresultStatus(res[0]) != PGRES_TUPLES_OK) {
		c->s->doubt = true;
		return;
	}
	pg_commit_settle(c, NULL, 0, NULL, res[0]);
}

/*
 * The answer to "did the commit in doubt happen?": it did when the node's
 * mark holds its generation. Then the rows its transaction was the last to
 * write are asked for, with their versions (its xid tells ours from
 * another daemon's later write, and which rows its claims went to).
 */
static void
pg_commit_marked_cb(PGresult *const *res, size_t n, const char *cause,
    void *arg)
{
	struct pg_commit *c = arg;
	struct pg_conn_stmt q = { "versions", NULL, 1, NULL, NULL, NULL };
	const char *values[1];
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
		pg_commit_ask_doubt(c->s);
		return;
	}
	if (PQntuples(res[1]) == 1)
		gen = strtoull(PQgetvalue(res[1], 0, 0), NULL, 10);
	if (gen < c->gen) {
		pg_commit_settle(c, NULL, 0, "the connection to PostgreSQL was "
		    "lost before the commit", NULL);
		return;
	}
	if (c->updated.n == 0) {
		pg_commit_settle(c, NULL, 0, NULL, NULL);
		return;
	}
	values[0] = PQgetvalue(res[1], 0, 1);
	q.values = values;
	if (pg_conn_batch(c->s->conn, &q, 1, pg_commit_versions_cb, c) != 0)
		c->s->doubt = true;
}

void
pg_commit_ask_doubt(struct pg_store *s)
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
	    pg_conn_batch(s->conn, q, 2, pg_commit_marked_cb, s->flight) != 0)
		s->doubt = true;
}

bool
pg_commit_has_changes(const struct pg_store *s)
{
	return s->staged.n > 0 || s->dirty.n > 0 || s->removed.n > 0 ||
	    s->paused_dirty;
}

/* Whether a mark is the job's still: made since its row was last read
 * from another daemon's write (which undoes every change made before). */
static bool
pg_commit_mark_live(const struct pg_store *s, const struct pg_store_mark *m)
{
	const struct job *job = store_get(&s->st, m->id);

	return job != NULL && job->store.replaced == m->replaced;
}

static bool
pg_commit_is_claim(const struct pg_store *s, uint64_t id)
{
	const struct pg_store_mark *m = s->claims.v;
	size_t i;

	for (i = 0; i < s->claims.n; i++)
		if (m[i].id == id && pg_commit_mark_live(s, &m[i]))
			return true;
	return false;
}

/* The shared counters job's claim must lock and check: none unless the
 * mark is a claim. */
static uint64_t
pg_commit_shared_of(const struct pg_store *s, const struct pg_store_mark *m)
{
	const struct job *job;

	if (s->nshared == 0 || !pg_commit_is_claim(s, m->id) ||
	    (job = store_get(&s->st, m->id)) == NULL)
		return 0;
	return pg_cluster_shared_of(s, job);
}

static void
pg_commit_batch_free(struct pg_commit_batch *b)
{
	size_t i;

	for (i = 0; i < b->nrows; i++)
		pg_row_clear(&b->rows[i]);
	free(b->rows);
	free(b->stmts);
	free(b->nums);
	free(b->paused);
	free(b->shared);
	free(b->values);
	for (i = 0; i < b->nalts; i++)
		free(b->alts[i]);
	free(b->alts);
}

static const char *
pg_commit_num(struct pg_commit_batch *b, int64_t v)
{
	snprintf(b->nums[b->nnums], sizeof b->nums[0], "%" PRId64, v);
	return b->nums[b->nnums++];
}

static void
pg_commit_stmt(struct pg_commit_batch *b, const char *name, const char *sql,
    int nparams, const char *const *values)
{
	b->stmts[b->n++] = (struct pg_conn_stmt){ name, sql, nparams,
	    values, NULL, NULL };
}

/* Short statements' values, kept in b. */
static const char **
pg_commit_values(struct pg_commit_batch *b, size_t n)
{
	const char **v = &b->values[b->nvalues];

	b->nvalues += n;
	return v;
}

/*
 * The jobs claim of job may go to instead (alternates_cb's), as the two
 * arrays of its last parameters: their ids and the versions this daemon
 * read, kept in b. Out of memory, or with no alternates_cb, none. 0, or
 * -1 out of memory.
 */
static int
pg_commit_alternates(struct pg_store *s, struct pg_commit_batch *b,
    const struct job *job, const char **ids, const char **versions)
{
	struct job *alt[PG_COMMIT_ALTERNATES];
	uint64_t pairs[PG_COMMIT_ALTERNATES][2];
	size_t i, n = 0;

	if (s->st.alternates_cb != NULL)
		n = s->st.alternates_cb(job, alt, PG_COMMIT_ALTERNATES,
		    s->st.alternates_arg);
	for (i = 0; i < n; i++) {
		pairs[i][0] = alt[i]->id;
		pairs[i][1] = alt[i]->store.version;
	}
	if ((b->alts[b->nalts] = pg_util_array(pairs, n, sizeof pairs[0]))
	    == NULL || (b->alts[b->nalts + 1] = pg_util_array(&pairs[0][1],
	    n, sizeof pairs[0])) == NULL) {
		free(b->alts[b->nalts]);
		return -1;
	}
	*ids = b->alts[b->nalts++];
	*versions = b->alts[b->nalts++];
	return 0;
}

/* The paused priorities as a text[] literal: their names need no quotes
 * ([a-z0-9_-]). */
static char *
pg_commit_paused_array(const struct store *st)
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
 * The statements of commit c: the locks of the shared counters its claims
 * name, new jobs, then each changed job fenced by its version (a claim
 * also skips a row another daemon holds, and one of shared counters
 * checks them), removals, the paused list, the node's mark, the NOTIFY,
 * and more ids when few are left. 0, or -1 with *cause (nothing sent).
 */
static int
pg_commit_build(struct pg_store *s, struct pg_commit *c,
    struct pg_commit_batch *b, char **cause)
{
	struct store_staged *staged = c->staged.v;
	const struct pg_store_mark *m = c->updated.v, *gone = c->removed.v;
	size_t i, nst = 2 * c->staged.n + c->updated.n + c->removed.n + 10;
	uint64_t shared = 0, mine;
	const char **v;
	struct job *job;

	if ((b->stmts = calloc(nst, sizeof *b->stmts)) == NULL ||
	    (b->rows = calloc(c->staged.n + c->updated.n + 1,
	    sizeof *b->rows)) == NULL ||
	    (b->nums = calloc(c->updated.n + 2 * c->removed.n + 8,
	    sizeof *b->nums)) == NULL ||
	    (b->values = calloc(2 * c->removed.n + 2 * c->staged.n + 16,
	    sizeof *b->values)) == NULL ||
	    (b->alts = calloc(2 * c->updated.n + 1, sizeof *b->alts)) == NULL)
		return cause_fail(cause, "out of memory");
	if (c->staged.n > 0 && (c->ins_at = calloc(c->staged.n,
	    sizeof *c->ins_at)) == NULL)
		return cause_fail(cause, "out of memory");
	if (c->updated.n > 0 && (c->sent = calloc(c->updated.n,
	    sizeof *c->sent)) == NULL)
		return cause_fail(cause, "out of memory");
	for (i = 0; i < c->updated.n; i++) {
		c->sent[i].claim = pg_commit_is_claim(s, m[i].id);
		mine = pg_commit_shared_of(s, &m[i]);
		c->sent[i].shared = mine != 0;
		shared |= mine;
	}
	pg_commit_stmt(b, NULL, "BEGIN", 0, NULL);
	/* First, holding nothing yet: a commit waiting here for another
	 * never holds what that one waits for. */
	if (shared != 0) {
		if ((b->shared = pg_cluster_shared_array(s, shared)) == NULL)
			return cause_fail(cause, "out of memory");
		v = pg_commit_values(b, 1);
		v[0] = b->shared;
		pg_commit_stmt(b, "shared_add", NULL, 1, v);
		pg_commit_stmt(b, "shared_lock", NULL, 1, v);
	}
	for (i = 0; i < c->staged.n; i++) {
		if (pg_row_params(&b->rows[b->nrows], staged[i].job, true,
		    cause) != 0)
			return -1;
		c->ins_at[i] = b->n;
		pg_commit_stmt(b, "ins", NULL, JOBROW_NCOLUMNS,
		    b->rows[b->nrows].values);
		if (staged[i].job->extra->key != NULL) {
			v = pg_commit_values(b, 2);
			v[0] = b->rows[b->nrows].values[JOBROW_UID];
			v[1] = b->rows[b->nrows].values[JOBROW_KEY];
			pg_commit_stmt(b, "key_owner", NULL, 2, v);
		}
		b->nrows++;
	}
	c->first_update = b->n;
	for (i = 0; i < c->updated.n; i++) {
		job = store_get(&s->st, m[i].id);
		if (pg_row_params(&b->rows[b->nrows], job, false, cause) != 0)
			return -1;
		b->rows[b->nrows].changes[PG_ROW_NUPDATE - 1] =
		    pg_commit_num(b, job->store.version);
		c->sent[i].replaced = job->store.replaced;
		if (c->sent[i].shared) {
			b->rows[b->nrows].changes[PG_ROW_NSHARED - 1] =
			    s->shared_counts;
			pg_commit_stmt(b, "claim_shared", NULL, PG_ROW_NSHARED,
			    b->rows[b->nrows++].changes);
			continue;
		}
		if (c->sent[i].claim) {
			if (pg_commit_alternates(s, b, job,
			    &b->rows[b->nrows].changes[PG_ROW_NUPDATE],
			    &b->rows[b->nrows].changes[PG_ROW_NCLAIM - 1]) != 0)
				return cause_fail(cause, "out of memory");
			pg_commit_stmt(b, "claim", NULL, PG_ROW_NCLAIM,
			    b->rows[b->nrows++].changes);
			continue;
		}
		pg_commit_stmt(b, "upd", NULL, PG_ROW_NUPDATE,
		    b->rows[b->nrows++].changes);
	}
	for (i = 0; i < c->removed.n; i++) {
		v = pg_commit_values(b, 2);
		v[0] = pg_commit_num(b, (int64_t)gone[i].id);
		v[1] = pg_commit_num(b, timefmt_now());
		pg_commit_stmt(b, "del", NULL, 2, v);
	}
	if (c->paused) {
		if ((b->paused = pg_commit_paused_array(&s->st)) == NULL)
			return cause_fail(cause, "out of memory");
		pg_commit_stmt(b, "paused_clear", NULL, 0, NULL);
		v = pg_commit_values(b, 1);
		v[0] = b->paused;
		pg_commit_stmt(b, "paused_set", NULL, 1, v);
	}
	v = pg_commit_values(b, 6);
	v[0] = s->node;
	v[1] = s->boot;
	v[2] = pg_commit_num(b, (int64_t)c->gen);
	pg_cluster_lease_text(s, b->lease, sizeof b->lease);
	v[3] = b->lease;
	v[4] = pg_commit_num(b, pg_cluster_busy(s));
	v[5] = pg_commit_num(b, (int64_t)s->grace_ms);
	pg_commit_stmt(b, "mark", NULL, 6, v);
	v = pg_commit_values(b, 1);
	v[0] = s->self;
	pg_commit_stmt(b, "notify", NULL, 1, v);
	pg_commit_stmt(b, NULL, "COMMIT", 0, NULL);
	if (s->ids.n < PG_STORE_IDS / 2 && !s->ids_asked) {
		c->ids_at = b->n;
		v = pg_commit_values(b, 1);
		v[0] = pg_commit_num(b, PG_STORE_IDS);
		pg_commit_stmt(b, "ids", NULL, 1, v);
		s->ids_asked = true;
	}
	return 0;
}

static void
pg_commit_free(struct pg_commit *c)
{
	vec_free(&c->staged);
	vec_free(&c->syncs);
	vec_free(&c->updated);
	vec_free(&c->removed);
	vec_free(&c->beaten);
	free(c->sent);
	free(c->ins_at);
	free(c);
}

void
pg_commit_abandon(struct pg_commit *c)
{
	struct store_staged *staged = c->staged.v;
	size_t i;

	for (i = 0; i < c->staged.n; i++)
		job_free(staged[i].job);
	pg_commit_free(c);
}

/* More ids, from the refill at the end of a commit's batch. */
static void
pg_commit_take_ids(struct pg_store *s, const PGresult *res)
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
pg_commit_take_staged(struct pg_store *s, struct pg_commit *c)
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
pg_commit_ids_cb(PGresult *const *res, size_t n, const char *cause, void *arg)
{
	struct pg_store *s = arg;

	s->ids_asked = false;
	if (cause == NULL && n == 1)
		pg_commit_take_ids(s, res[0]);
	pg_commit_schedule(s);
}

/* More ids than there are new jobs waiting, ahead of their commit. */
static void
pg_commit_ask_ids(struct pg_store *s)
{
	struct pg_conn_stmt q = { "ids", NULL, 1, NULL, NULL, NULL };
	const char *values[1];
	char num[24];

	snprintf(num, sizeof num, "%zu", s->staged.n + PG_STORE_IDS);
	values[0] = num;
	q.values = values;
	s->ids_asked = true;
	if (pg_conn_batch(s->conn, &q, 1, pg_commit_ids_cb, s) != 0)
		s->ids_asked = false;
}

/* Marks by id, then by the generation they were made for. */
static int
pg_commit_cmp_mark(const void *a, const void *b)
{
	const struct pg_store_mark *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/*
 * The claims of shared counters after the other changes, in id order still:
 * each then sees the ends and requeues this commit writes, which free
 * units, as the daemon that granted it saw them. A claim waits for no
 * row (SKIP LOCKED), so it needs no place in the order of the rows'
 * locks. Out of memory, the order stays: a claim refused is tried again.
 */
static void
pg_commit_shared_last(const struct pg_store *s, struct pg_commit *c)
{
	struct pg_store_mark *m = c->updated.v, *sorted;
	size_t i, k = 0, n = c->updated.n;
	bool *last;

	if (s->nshared == 0 || n < 2 ||
	    (last = calloc(n, sizeof *last)) == NULL)
		return;
	if ((sorted = malloc(n * sizeof *sorted)) == NULL) {
		free(last);
		return;
	}
	for (i = 0; i < n; i++)
		if (!(last[i] = pg_commit_shared_of(s, &m[i]) != 0))
			sorted[k++] = m[i];
	for (i = 0; i < n; i++)
		if (last[i])
			sorted[k++] = m[i];
	memcpy(m, sorted, n * sizeof *m);
	free(sorted);
	free(last);
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
pg_commit_take_dirty(struct pg_store *s, struct pg_commit *c, size_t room)
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
		qsort(m, c->updated.n, sizeof *m, pg_commit_cmp_mark);
	for (i = 0; i < c->updated.n; i++)
		if ((k == 0 || m[i].id != m[k - 1].id) &&
		    pg_commit_mark_live(s, &m[i]))
			m[k++] = m[i];
	c->updated.n = k;
	pg_commit_shared_last(s, c);
}

/* The removals that fit in room, the oldest first; the others wait. */
static void
pg_commit_take_removed(struct pg_store *s, struct pg_commit *c, size_t room)
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
pg_commit_durable_with(const struct pg_store *s, const struct pg_commit *c)
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
pg_commit_batch_cb(PGresult *const *res, size_t n, const char *cause,
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
			pg_commit_ask_doubt(c->s);
		return;
	}
	pg_commit_settle(c, res, n, cause, NULL);
}

void
pg_commit_synced(struct pg_store *s)
{
	if (s->claims.n > 0)
		pg_commit_cb(-1, 0, s);
}

void
pg_commit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_store *s = arg;
	struct pg_commit_batch b = { 0 };
	struct pg_commit *c;
	char *cause = NULL;

	(void)fd;
	(void)what;
	if (s->flight != NULL || (!pg_commit_has_changes(s) && s->syncs.n == 0))
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
			pg_commit_ask_ids(s);
		return;
	}
	if ((c = calloc(1, sizeof *c)) == NULL)
		return;		/* the next change schedules it again */
	c->s = s;
	c->gen = ++s->commits;
	c->start_us = timefmt_mono_us();
	s->st.stats.commits++;
	pg_commit_take_staged(s, c);
	pg_commit_take_dirty(s, c, PG_COMMIT_ROWS);
	pg_commit_take_removed(s, c, c->updated.n < PG_COMMIT_ROWS ?
	    PG_COMMIT_ROWS - c->updated.n : 0);
	c->durable = pg_commit_durable_with(s, c);
	/* A sync waits for everything done before it. */
	if (c->durable == c->gen)
		c->syncs = vec_take(&s->syncs);
	/* Noted as the connection came up (pg_open_note_sessions). */
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
		pg_commit_settle(c, NULL, 0, cause != NULL ? cause :
		    "out of memory", NULL);
		free(cause);
		return;
	}
	if (pg_commit_build(s, c, &b, &cause) != 0 ||
	    pg_conn_batch(s->conn, b.stmts, b.n, pg_commit_batch_cb, c) != 0) {
		pg_commit_batch_free(&b);
		s->claims.n = 0;
		pg_commit_settle(c, NULL, 0, cause != NULL ? cause :
		    "out of memory", NULL);
		free(cause);
		return;
	}
	s->claims.n = 0;
	pg_commit_batch_free(&b);
}

/* The first error among a commit's results, or NULL when it committed. */
static const char *
pg_commit_error(PGresult *const *res, size_t n)
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
pg_commit_requeue(struct pg_store *s, struct pg_commit *c)
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
 * What became of the commit's update i, of job: its row is ours at version
 * (to is job); a claim went to another job alike, to, made begun here at
 * version; or (to NULL) another daemon changed the job first, or holds the
 * row, for a claim: the job is told, and its id goes in refused (a
 * claim's in the commit's beaten), for its row to be read back and
 * replace ours.
 */
static void
pg_commit_settle_one(struct pg_store *s, struct pg_commit *c, size_t i,
    struct job *job, struct job *to, uint32_t version, struct vec *refused)
{
	const struct pg_store_mark *m = c->updated.v;

	s->st.stats.claims += c->sent[i].claim;
	if (to == job) {
		job->store.version = version;
		return;
	}
	if (to != NULL) {
		/* Made begun here by this very commit: its version is the
		 * claim's; then the job it replaced is refused, as any claim
		 * another node beat. */
		s->st.stats.claims_moved++;
		to->store.version = version;
		if (s->st.moved_cb != NULL)
			s->st.moved_cb(job, to, s->st.alternates_arg);
	} else if (c->sent[i].claim)
		s->st.stats.claims_refused++;
	/* Another daemon's row has replaced the job since: the job follows
	 * it already, and what was done since stands. */
	if (c->sent[i].replaced != job->store.replaced)
		return;
	if (s->st.changed_cb != NULL)
		s->st.changed_cb(job, c->sent[i].claim ?
		    STORE_CHANGE_CLAIM_REFUSED : STORE_CHANGE_REFUSED, NULL,
		    s->st.changed_arg);
	/* Another daemon's claim of the job, or of the units of a shared
	 * counter it wanted, and none alike left to move to: what they
	 * claimed is read before this daemon claims again (a claim waits for
	 * the read), so that it does not claim what it cannot have, again
	 * and again, until their NOTIFY comes. A claim that moved got a job:
	 * the read is their NOTIFY's, as ever (a read after each would be
	 * most of the cluster's reads when nodes share one queue). */
	if (c->sent[i].claim && to == NULL)
		pg_sync_changes(s);
	/* Out of memory, the next read of changes brings it. */
	(void)vec_push(c->sent[i].claim ? &c->beaten : refused,
	    sizeof m[i].id, &m[i].id);
}

/* The updates' answers: each row that came back (a claim's may be an
 * alternate's), or none. */
static void
pg_commit_settle_updates(struct pg_store *s, struct pg_commit *c,
    PGresult *const *res, struct vec *refused)
{
	const struct pg_store_mark *m = c->updated.v;
	struct job *job, *to;
	const PGresult *r;
	size_t i;

	for (i = 0; i < c->updated.n; i++) {
		if ((job = store_get(&s->st, m[i].id)) == NULL)
			continue;
		r = res[c->first_update + i];
		to = NULL;
		if (PQntuples(r) == 1)
			to = PQnfields(r) > 1 ? store_get(&s->st, strtoull(
			    PQgetvalue(r, 0, 1), NULL, 10)) : job;
		pg_commit_settle_one(s, c, i, job, to, to == NULL ? 0 :
		    (uint32_t)strtoul(PQgetvalue(r, 0, 0), NULL, 10),
		    refused);
	}
}

/* Row k of ours if it is job id's (ours: the rows the commit's transaction
 * was the last to write, id and version), else -1. */
static int
pg_commit_ours_find(const PGresult *ours, uint64_t id)
{
	int k;

	for (k = 0; k < PQntuples(ours); k++)
		if (strtoull(PQgetvalue(ours, k, 0), NULL, 10) == id)
			return k;
	return -1;
}

/* Whether id is one of the commit's updates or new jobs. */
static bool
pg_commit_sent_id(const struct pg_commit *c, uint64_t id)
{
	const struct pg_store_mark *m = c->updated.v;
	const struct store_staged *sj = c->staged.v;
	size_t i;

	for (i = 0; i < c->updated.n; i++)
		if (m[i].id == id)
			return true;
	for (i = 0; i < c->staged.n; i++)
		if (sj[i].job->id == id)
			return true;
	return false;
}

/*
 * The updates of a commit in doubt that happened, from the rows its
 * transaction was the last to write: an update's row among them is ours;
 * a claim's that is not went to one of the rows that are and that no
 * update names (an alternate: any claim that missed may be paired with
 * any, the daemon checking they are alike), or was refused, and its launch
 * is off. Any other update whose row is not ours is refused too: it may
 * never have matched (another node took the job over first), and what it
 * said (an end) must not be told; written and changed since, the row read
 * back says what it is now.
 */
static void
pg_commit_settle_doubt(struct pg_store *s, struct pg_commit *c,
    const PGresult *ours, struct vec *refused)
{
	const struct pg_store_mark *m = c->updated.v;
	struct job *job, *to;
	uint64_t id;
	size_t i;
	int k, next = 0;

	for (i = 0; i < c->updated.n; i++) {
		if ((job = store_get(&s->st, m[i].id)) == NULL)
			continue;
		to = NULL;
		if ((k = pg_commit_ours_find(ours, m[i].id)) >= 0)
			to = job;
		else if (c->sent[i].claim) {
			for (; next < PQntuples(ours) && to == NULL; next++) {
				id = strtoull(PQgetvalue(ours, next, 0), NULL,
				    10);
				if (!pg_commit_sent_id(c, id) &&
				    (to = store_get(&s->st, id)) != NULL)
					k = next;
			}
		}
		pg_commit_settle_one(s, c, i, job, to, to == NULL ? 0 :
		    (uint32_t)strtoul(PQgetvalue(ours, k, 1), NULL, 10),
		    refused);
	}
}

/* The end of commit c (err: why it failed): its new jobs, syncs and
 * waiters are told, and the next commit is on its way. */
static void
pg_commit_settle_end(struct pg_commit *c, const char *err)
{
	struct pg_store *s = c->s;
	struct store *st = &s->st;
	struct store_staged *sj = c->staged.v;
	struct store_sync *y = c->syncs.v;
	struct job *job;
	size_t i;
	bool ok;

	s->flight = NULL;
	s->flight_paused = false;
	st->claimed_write = c->gen;
	for (i = 0; i < c->staged.n; i++) {
		if (err != NULL)
			sj[i].job->id = 0;
		/* No id after a commit that went through: its key was
		 * taken (pg_commit_settle). */
		if (err == NULL && sj[i].job->id == 0) {
			sj[i].cb(sj[i].job, false, store_key_taken, sj[i].arg);
			continue;
		}
		/* Inserted begun here (the daemon saw it would start at
		 * once): its claim is this commit, and no other node could
		 * have had the row before it. */
		if (err == NULL && sj[i].job->run->begun &&
		    sj[i].job->node != NULL &&
		    strcmp(sj[i].job->node, s->node) == 0) {
			sj[i].job->store.claimed = true;
			st->stats.claims++;
			c->claims = true;
		}
		job = sj[i].job;
		ok = err == NULL;
		sj[i].cb(job, ok, err, sj[i].arg);
		/* Told: it is the table's now (or freed, refused). */
		if (ok)
			job->store.claimed = false;
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
	if (err != NULL && pg_commit_has_changes(s)) {
		static const struct timeval retry = { PG_COMMIT_RETRY_MS / 1000,
		    (PG_COMMIT_RETRY_MS % 1000) * 1000 };

		evtimer_add(s->commit_ev, &retry);
	} else if (pg_commit_has_changes(s) || s->syncs.n > 0)
		pg_commit_schedule(s);
	pg_commit_free(c);
}

static void
pg_commit_refetched_cb(void *arg)
{
	pg_commit_settle_end(arg, NULL);
}

/*
 * Whether new job i's INSERT did nothing, its key being another node's
 * job's: that job's row is then read (its id goes in refetch) before the
 * job is refused with store_key_taken (pg_commit_settle_end), so that the
 * submitter is answered with it.
 */
static bool
pg_commit_key_taken(const struct pg_commit *c, PGresult *const *res,
    size_t i, struct vec *refetch)
{
	const PGresult *owner;
	uint64_t id;

	if (strcmp(PQcmdTuples(res[c->ins_at[i]]), "0") != 0)
		return false;
	owner = res[c->ins_at[i] + 1];
	if (PQntuples(owner) == 1) {
		id = strtoull(PQgetvalue(owner, 0, 0), NULL, 10);
		/* Out of memory, the next read of changes brings it. */
		(void)vec_push(refetch, sizeof id, &id);
	}
	return true;
}

static void
pg_commit_settle(struct pg_commit *c, PGresult *const *res, size_t n,
    const char *cause, const PGresult *ours)
{
	struct pg_store *s = c->s;
	struct store *st = &s->st;
	struct store_staged *sj = c->staged.v;
	struct vec refused = { 0 };
	const char *err = cause;
	size_t i;

	if (err == NULL && res != NULL)
		err = pg_commit_error(res, n);
	if (c->ids_at != 0)
		s->ids_asked = false;
	if (c->ids_at != 0 && res != NULL && c->ids_at < n)
		pg_commit_take_ids(s, res[c->ids_at]);
	hist_observe(&st->stats.seconds, &hist_commit_seconds,
	    (double)(timefmt_mono_us() - c->start_us) / 1e6);
	if (err != NULL) {
		st->stats.failures++;
		pg_commit_requeue(s, c);
	} else {
		/* Its mark renewed the lease. */
		pg_cluster_lease_acked(s, c->start_us);
		for (i = 0; i < c->staged.n; i++) {
			if (res != NULL && pg_commit_key_taken(c, res, i,
			    &refused)) {
				sj[i].job->id = 0;
				continue;
			}
			sj[i].job->store.version = 1;
			(void)jobtable_add(&st->jobs, sj[i].job);
		}
		if (res != NULL)
			pg_commit_settle_updates(s, c, res, &refused);
		else if (ours != NULL)
			pg_commit_settle_doubt(s, c, ours, &refused);
	}
	if (c->beaten.n > 0)
		pg_sync_refetch(s, &c->beaten, NULL, NULL);
	if (refused.n > 0) {
		/* Their rows first: whoever waits for this commit (the
		 * answer to an edit the refusal undid) finds them. */
		pg_sync_refetch(s, &refused, pg_commit_refetched_cb, c);
		vec_free(&refused);
		return;
	}
	pg_commit_settle_end(c, err);
}

bool
pg_commit_pending(const struct store *st)
{
	const struct pg_store *s = (const struct pg_store *)st;

	return pg_commit_has_changes(s) || s->flight != NULL;
}

/*
 * Writes are the loop's: a daemon that has left its loop (stopping, after
 * event_base_loopexit) runs it here until they are done, or PostgreSQL
 * cannot be reached, or for PG_COMMIT_FLUSH_MS at most. Inside the loop,
 * there is nothing to do but say what waits.
 */
int
pg_commit_flush(struct store *st, char **cause)
{
	struct pg_store *s = pg_store(st);
	uint64_t deadline = timefmt_mono_us() + PG_COMMIT_FLUSH_MS * 1000;

	if (event_base_got_exit(s->base))
		while (pg_commit_pending(st) && s->up &&
		    timefmt_mono_us() < deadline)
			if (event_base_loop(s->base, EVLOOP_ONCE) == -1)
				break;
	if (!pg_commit_pending(st))
		return 0;
	return cause_fail(cause, "%zu new jobs and %zu changes are not written "
	    "to PostgreSQL%s", s->staged.n + (s->flight != NULL ?
	    s->flight->staged.n : 0), s->dirty.n + (s->flight != NULL ?
	    s->flight->updated.n : 0), s->up ? "" : " (unreachable): the "
	    "next start finds the jobs that ran here as they were");
}
