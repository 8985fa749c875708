/* sqlite-store.c - the store on SQLite, one host's own: the changes of one
 * loop turn share one commit, written before the loop goes on. */
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "sqlite-db.h"
#include "job.h"
#include "store.h"
#include "store-private.h"
#include "timefmt.h"

/* How long a failed commit (disk full, say) waits before the next try of
 * the changes it could not write; new jobs do not wait for it. */
#define SQLITE_STORE_RETRY_MS 1000

struct sqlite_store {
	struct store st;		/* first: a struct store * is one */
	struct sqlite_db *db;
	struct event *commit_ev;
	bool grouping;
	bool need_fsync;		/* a pending change must survive power
	    loss */
	uint64_t commits;		/* commits begun so far */
	uint64_t writes;		/* transactions that wrote soon */
	bool wrote;			/* one did: tell written_cb */
	struct vec soon;		/* uint64_t ids, store_claim */
	uint64_t next_id;
	struct vec staged;		/* struct store_staged */
	struct vec dirty;		/* uint64_t ids, maybe repeated */
	struct vec removed;		/* uint64_t ids */
	struct vec syncs;		/* struct store_sync */
	bool paused_dirty;		/* paused changed since the commit */
};

static const struct store_ops sqlite_store_ops;
static void sqlite_store_commit_cb(evutil_socket_t, short, void *);

static struct sqlite_store *
sqlite_store(struct store *st)
{
	return (struct sqlite_store *)st;
}

static const struct sqlite_store *
sqlite_store_const(const struct store *st)
{
	return (const struct sqlite_store *)st;
}

static void
sqlite_store_load_paused_cb(const char *name, void *arg)
{
	store_load_paused(arg, name);
}

static int
sqlite_store_load_cb(struct job *job, void *arg)
{
	struct store *st = arg;

	if (jobtable_add(&st->jobs, job) != 0) {
		job_free(job);
		return -1;
	}
	return 0;
}

struct store *
store_open(struct event_base *base, const char *path, char **cause)
{
	struct sqlite_store *s;
	struct job *last;
	uint64_t max_id = 0;

	if ((s = calloc(1, sizeof *s)) == NULL ||
	    (s->commit_ev = evtimer_new(base, sqlite_store_commit_cb, s))
	    == NULL) {
		free(s);
		*cause = strdup("out of memory");
		return NULL;
	}
	store_init(&s->st, &sqlite_store_ops);
	s->grouping = true;
	if ((s->db = sqlite_db_open(path, cause)) == NULL ||
	    sqlite_db_load(s->db, sqlite_store_load_cb, &s->st, cause) != 0 ||
	    sqlite_db_paused(s->db, sqlite_store_load_paused_cb, &s->st, cause)
	        != 0 ||
	    sqlite_db_max_id(s->db, &max_id, cause) != 0) {
		store_close(&s->st);
		return NULL;
	}
	if ((last = store_last(&s->st)) != NULL && last->id > max_id)
		max_id = last->id;
	s->next_id = max_id + 1;
	return &s->st;
}

static void
sqlite_store_close(struct store *st)
{
	struct sqlite_store *s = sqlite_store(st);
	struct store_staged *staged;
	char *cause = NULL;
	size_t i;

	if (s->db != NULL && (s->dirty.n > 0 || s->removed.n > 0 ||
	    s->paused_dirty))
		(void)store_flush(st, &cause);
	free(cause);
	staged = s->staged.v;
	for (i = 0; i < s->staged.n; i++)
		job_free(staged[i].job);
	store_fini(st);
	vec_free(&s->staged);
	vec_free(&s->dirty);
	vec_free(&s->removed);
	vec_free(&s->soon);
	vec_free(&s->syncs);
	if (s->commit_ev != NULL)
		event_free(s->commit_ev);
	sqlite_db_close(s->db);
	free(s);
}

static void
sqlite_store_set_grouping(struct store *st, bool grouping)
{
	sqlite_store(st)->grouping = grouping;
}

/* A commit at the end of this turn of the loop. */
static void
sqlite_store_schedule(struct sqlite_store *s)
{
	static const struct timeval now = { 0, 0 };

	evtimer_add(s->commit_ev, &now);
}

static int
sqlite_store_add(struct store *st, struct job *job, store_added_cb cb,
    void *arg)
{
	struct sqlite_store *s = sqlite_store(st);
	struct store_staged staged = { job, cb, arg };

	job->id = s->next_id;
	if (vec_push(&s->staged, sizeof staged, &staged) != 0)
		return -1;
	s->next_id++;
	s->need_fsync = true;
	sqlite_store_schedule(s);
	return 0;
}

static void
sqlite_store_mark(struct store *st, struct job *job, enum store_mark how)
{
	struct sqlite_store *s = sqlite_store(st);

	/* Out of memory, it waits for the commit, as any change does. */
	if (how == STORE_MARK_CLAIM) {
		s->st.stats.claims++;
		(void)vec_push(&s->soon, sizeof job->id, &job->id);
	}
	/* Out of memory, the change waits for the job's next one. */
	if (vec_push(&s->dirty, sizeof job->id, &job->id) != 0)
		return;
	if (how == STORE_MARK_SYNC)
		s->need_fsync = true;
	if (!evtimer_pending(s->commit_ev, NULL))
		sqlite_store_schedule(s);
}

static uint64_t
sqlite_store_write_generation(const struct store *st)
{
	return sqlite_store_const(st)->writes + 1;
}

static void
sqlite_store_paused_changed(struct store *st)
{
	struct sqlite_store *s = sqlite_store(st);

	s->paused_dirty = true;
	s->need_fsync = true;
	sqlite_store_schedule(s);
}

static bool
sqlite_store_pending(const struct store *st)
{
	const struct sqlite_store *s = sqlite_store_const(st);

	return s->staged.n > 0 || s->dirty.n > 0 || s->removed.n > 0 ||
	    s->paused_dirty;
}

static uint64_t
sqlite_store_generation(const struct store *st)
{
	return sqlite_store_const(st)->commits + 1;
}

static int
sqlite_store_sync(struct store *st, store_synced_cb cb, void *arg)
{
	struct sqlite_store *s = sqlite_store(st);
	struct store_sync sync = { cb, arg };

	if (vec_push(&s->syncs, sizeof sync, &sync) != 0)
		return -1;
	sqlite_store_schedule(s);
	return 0;
}

static int
sqlite_store_cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One transaction: the staged jobs [first, first + count), and, when
 * changes is set, every dirty and removed job. 0, or -1 with *cause set
 * and nothing written.
 */
static int
sqlite_store_txn(struct sqlite_store *s, size_t first, size_t count, bool
    changes,
    char **cause)
{
	struct store_staged *staged = s->staged.v;
	uint64_t *ids = s->dirty.v, *gone = s->removed.v;
	const struct job *rows[SQLITE_DB_INSERT_ROWS];
	struct job *job;
	size_t i, k;

	/* Only what must survive a power loss waits for the disk. */
	if (sqlite_db_set_sync(s->db, s->need_fsync || count > 0, cause) != 0 ||
	    sqlite_db_begin(s->db, cause) != 0)
		return -1;
	/* New jobs by SQLITE_DB_INSERT_ROWS while there are as many, the rest
	 * one by one. */
	for (i = first; i < first + count; ) {
		if (first + count - i >= SQLITE_DB_INSERT_ROWS) {
			for (k = 0; k < SQLITE_DB_INSERT_ROWS; k++)
				rows[k] = staged[i + k].job;
			if (sqlite_db_insert_rows(s->db, rows, cause) != 0)
				goto fail;
			i += SQLITE_DB_INSERT_ROWS;
		} else if (sqlite_db_insert(s->db, staged[i++].job, cause) != 0)
			goto fail;
	}
	if (changes) {
		if (s->dirty.n > 1)
			qsort(ids, s->dirty.n, sizeof *ids,
			    sqlite_store_cmp_id);
		for (i = 0; i < s->dirty.n; i++) {
			if (i > 0 && ids[i] == ids[i - 1])
				continue;
			/* A job removed since its change has nothing to say. */
			if ((job = store_get(&s->st, ids[i])) != NULL &&
			    sqlite_db_update(s->db, job, cause) != 0)
				goto fail;
		}
		for (i = 0; i < s->removed.n; i++)
			if (sqlite_db_delete(s->db, gone[i], cause) != 0)
				goto fail;
		if (s->paused_dirty && sqlite_db_set_paused(s->db,
		    s->st.paused.v,
		    s->st.paused.n, cause) != 0)
			goto fail;
	}
	if (sqlite_db_commit(s->db, cause) != 0)
		goto fail;
	if (changes) {
		s->dirty.n = 0;
		s->removed.n = 0;
		s->paused_dirty = false;
		s->need_fsync = false;
		if (s->soon.n > 0) {
			s->soon.n = 0;
			s->writes++;
			s->wrote = true;
		}
	}
	return 0;
fail:
	sqlite_db_rollback(s->db);
	return -1;
}

static void
sqlite_store_tell_written(struct sqlite_store *s)
{
	if (!s->wrote)
		return;
	s->wrote = false;
	if (s->st.written_cb != NULL)
		s->st.written_cb(s->writes, s->st.written_arg);
}

/*
 * The rows just written soon are not dirty for the commit that follows,
 * which would write them again as they are: a row is the job's whole state,
 * and what changes it later marks it again. The commit's fsync covers the
 * WAL's earlier frames too, theirs with them, as long as it has a row to
 * write: when nothing else is left and a change must survive a power loss,
 * one of them stays.
 */
static void
sqlite_store_written_soon(struct sqlite_store *s)
{
	uint64_t *ids = s->dirty.v, *soon = s->soon.v;
	size_t i, j = 0, kept = 0;

	qsort(soon, s->soon.n, sizeof *soon, sqlite_store_cmp_id);
	qsort(ids, s->dirty.n, sizeof *ids, sqlite_store_cmp_id);
	for (i = 0; i < s->dirty.n; i++) {
		while (j < s->soon.n && soon[j] < ids[i])
			j++;
		if (j == s->soon.n || soon[j] != ids[i])
			ids[kept++] = ids[i];
	}
	if (kept == 0 && s->dirty.n > 0 && s->need_fsync &&
	    s->staged.n == 0 && s->removed.n == 0 && !s->paused_dirty)
		kept = 1;
	s->dirty.n = kept;
}

/*
 * The rows of store_claim, in a transaction of their own that does
 * not wait for the disk: the commit after it may wait (fsync) for others'
 * changes, and the loop with it, while a granted job could already be on
 * its way to a worker. 0, or -1 with nothing written (the commit writes
 * them then).
 */
static int
sqlite_store_write_soon(struct sqlite_store *s)
{
	uint64_t *ids = s->soon.v;
	struct job *job;
	char *cause = NULL;
	size_t i;

	if (sqlite_db_set_sync(s->db, false, &cause) != 0 ||
	    sqlite_db_begin(s->db, &cause) != 0)
		goto fail;
	for (i = 0; i < s->soon.n; i++)
		if ((job = store_get(&s->st, ids[i])) != NULL &&
		    sqlite_db_update(s->db, job, &cause) != 0) {
			sqlite_db_rollback(s->db);
			goto fail;
		}
	if (sqlite_db_commit(s->db, &cause) != 0) {
		sqlite_db_rollback(s->db);
		goto fail;
	}
	sqlite_store_written_soon(s);
	s->soon.n = 0;
	s->writes++;
	s->wrote = true;
	sqlite_store_tell_written(s);
	return 0;
fail:
	free(cause);
	return -1;
}

/*
 * Writes everything pending. New jobs join the table or go back to their
 * callers; the callbacks run last, over lists taken from the store, since
 * they may add and change jobs themselves (for the next commit).
 */
static int
sqlite_store_commit(struct sqlite_store *s, char **cause)
{
	struct store *st = &s->st;
	struct vec staged, syncs;
	struct store_staged *sj;
	struct store_sync *y;
	bool *ok;
	size_t i, n = s->staged.n;
	uint64_t generation = ++s->commits, start = timefmt_mono_us();
	int rc = 0;
	char *err = NULL;

	st->stats.commits++;
	/* The table has room for every new job before any is written: a job
	 * on disk is a job in memory. */
	if ((ok = calloc(n + 1, sizeof *ok)) == NULL ||
	    jobtable_reserve(&st->jobs, n) != 0) {
		free(ok);
		st->stats.failures++;
		*cause = strdup("out of memory");
		return -1;
	}
	if (s->grouping || n == 0) {
		rc = sqlite_store_txn(s, 0, n, true, &err);
		for (i = 0; i < n; i++)
			ok[i] = rc == 0;
	} else {
		/* Each new job in a transaction of its own. */
		for (i = 0; i < n; i++) {
			free(err);
			err = NULL;
			ok[i] = sqlite_store_txn(s, i, 1, i == 0, &err) == 0;
			if (!ok[i])
				rc = -1;
		}
	}
	/* The write, not what its callbacks then do. */
	hist_observe(&st->stats.seconds, &hist_commit_seconds,
	    (double)(timefmt_mono_us() - start) / 1e6);
	if (rc != 0)
		st->stats.failures++;
	staged = vec_take(&s->staged);
	syncs = vec_take(&s->syncs);
	sj = staged.v;
	for (i = 0; i < n; i++)
		if (ok[i])
			(void)jobtable_add(&st->jobs, sj[i].job);
	for (i = 0; i < n; i++)
		sj[i].cb(sj[i].job, ok[i], ok[i] ? NULL : err ? err :
		    "out of memory", sj[i].arg);
	y = syncs.v;
	for (i = 0; i < syncs.n; i++)
		y[i].cb(rc == 0 ? NULL : err, y[i].arg);
	if (st->committed_cb != NULL)
		st->committed_cb(generation, rc == 0 ? NULL : err,
		    st->committed_arg);
	sqlite_store_tell_written(s);
	vec_free(&staged);
	vec_free(&syncs);
	free(ok);
	if (rc != 0)
		*cause = err ? err : strdup("out of memory");
	else
		free(err);
	return rc;
}

static void
sqlite_store_commit_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval retry = { SQLITE_STORE_RETRY_MS / 1000,
	    (SQLITE_STORE_RETRY_MS % 1000) * 1000 };
	struct sqlite_store *s = arg;
	char *cause = NULL;

	(void)fd;
	(void)what;
	/* Rows wanted soon go first when the commit will wait for the disk;
	 * the commit follows in the next turn, once the loop has sent what
	 * they allowed (a job to its worker). */
	if (s->soon.n > 0 && (s->need_fsync || s->staged.n > 0) &&
	    sqlite_store_write_soon(s) == 0) {
		sqlite_store_schedule(s);
		return;
	}
	if (sqlite_store_commit(s, &cause) != 0 &&
	    (s->dirty.n > 0 || s->removed.n > 0 || s->paused_dirty) &&
	    !evtimer_pending(s->commit_ev, NULL))
		evtimer_add(s->commit_ev, &retry);
	free(cause);
}

static int
sqlite_store_flush(struct store *st, char **cause)
{
	struct sqlite_store *s = sqlite_store(st);

	evtimer_del(s->commit_ev);
	return sqlite_store_commit(s, cause);
}

static int
sqlite_store_remove(struct store *st, uint64_t id)
{
	struct sqlite_store *s = sqlite_store(st);

	if (store_get(st, id) == NULL) {
		errno = ENOENT;
		return -1;
	}
	if (vec_push(&s->removed, sizeof id, &id) != 0)
		return -1;
	s->need_fsync = true;
	job_free(jobtable_remove(&st->jobs, id));
	sqlite_store_schedule(s);
	return 0;
}

static int
sqlite_store_env(struct store *st, struct job *job, char **cause)
{
	char **env = NULL;

	if (sqlite_db_env(sqlite_store(st)->db, job->id, &env, cause) != 0)
		return -1;
	if (job_set_env(job, env) != 0) {
		*cause = strdup("out of memory");
		return -1;
	}
	return 0;
}

/* The disk has it: a retry reads it back (store_env). */
static void
sqlite_store_forget_env(struct store *st, struct job *job)
{
	(void)st;
	job_drop_env(job);
}

/* One host: its config is the only one. */
static int
sqlite_store_set_priorities(struct store *st, const char *text, char **cause)
{
	(void)st;
	(void)text;
	(void)cause;
	return 0;
}

static int
sqlite_store_expired(struct store *st, int64_t before_ms, uint64_t *ids,
    size_t max, size_t *n, char **cause)
{
	return sqlite_db_expired(sqlite_store(st)->db, before_ms, ids, max, n,
	    cause);
}

static const struct store_ops sqlite_store_ops = {
	.close = sqlite_store_close,
	.set_grouping = sqlite_store_set_grouping,
	.add = sqlite_store_add,
	.mark = sqlite_store_mark,
	.write_generation = sqlite_store_write_generation,
	.paused_changed = sqlite_store_paused_changed,
	.pending = sqlite_store_pending,
	.generation = sqlite_store_generation,
	.sync = sqlite_store_sync,
	.env = sqlite_store_env,
	.forget_env = sqlite_store_forget_env,
	.set_priorities = sqlite_store_set_priorities,
	.remove = sqlite_store_remove,
	.expired = sqlite_store_expired,
	.flush = sqlite_store_flush,
};
