/* store.c - every job in memory, sorted by id (the order they arrive in), and
 * in the database, where the changes of one loop turn share one commit. */
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "db.h"
#include "job.h"
#include "store.h"
#include "timefmt.h"

/* How long a failed commit (disk full, say) waits before the next try of
 * the changes it could not write; new jobs do not wait for it. */
#define STORE_RETRY_MS 1000

struct store_staged {
	struct job *job;
	store_added_cb cb;
	void *arg;
};

struct store_sync {
	store_synced_cb cb;
	void *arg;
};

/* A growable array of elements of one size. */
struct store_vec {
	void *v;
	size_t n;
	size_t cap;
};

struct store {
	struct db *db;
	struct event *commit_ev;
	bool grouping;
	bool need_fsync;		/* a pending change must survive power loss */
	uint64_t commits;		/* commits begun so far */
	store_committed_cb committed_cb;
	void *committed_arg;
	uint64_t writes;		/* transactions that wrote soon */
	bool wrote;			/* one did: tell written_cb */
	store_written_cb written_cb;
	void *written_arg;
	struct store_vec soon;		/* uint64_t ids, store_update_soon */
	/* By id: a job's pointer, or where one was removed a tombstone,
	 * (id << 1) | 1, so that a removal moves nothing. Tombstones go in
	 * one sweep once they are a quarter of the entries. */
	struct store_vec jobs;		/* uintptr_t */
	size_t dead;			/* tombstones among them */
	uint64_t next_id;
	struct store_vec staged;	/* struct store_staged */
	struct store_vec dirty;		/* uint64_t ids, maybe repeated */
	struct store_vec removed;	/* uint64_t ids */
	struct store_vec syncs;		/* struct store_sync */
	struct store_vec paused;	/* char *, the paused priorities */
	bool paused_dirty;		/* paused changed since the commit */
	struct store_commit_stats stats;
};

static void store_commit_cb(evutil_socket_t, short, void *);

/* Appends the size bytes at elem; 0, or -1 with ENOMEM. */
static int
store_push(struct store_vec *vec, size_t size, const void *elem)
{
	size_t cap;
	void *v;

	if (vec->n == vec->cap) {
		cap = vec->cap ? vec->cap * 2 : 16;
		if ((v = reallocarray(vec->v, cap, size)) == NULL)
			return -1;
		vec->v = v;
		vec->cap = cap;
	}
	memcpy((char *)vec->v + vec->n * size, elem, size);
	vec->n++;
	return 0;
}

/* Room for n more elements; 0, or -1 with ENOMEM. */
static int
store_reserve(struct store_vec *vec, size_t size, size_t n)
{
	size_t cap = vec->cap ? vec->cap : 16;
	void *v;

	while (cap < vec->n + n)
		cap *= 2;
	if (cap == vec->cap)
		return 0;
	if ((v = reallocarray(vec->v, cap, size)) == NULL)
		return -1;
	vec->v = v;
	vec->cap = cap;
	return 0;
}

/* Takes the vector's contents away, leaving it empty: callbacks run over
 * what was taken may fill it again. */
static struct store_vec
store_take(struct store_vec *vec)
{
	struct store_vec taken = *vec;

	memset(vec, 0, sizeof *vec);
	return taken;
}

static uintptr_t *
store_entries(const struct store *st)
{
	return st->jobs.v;
}

/* The job of an entry, NULL for a tombstone. */
static struct job *
store_entry_job(uintptr_t e)
{
	return (e & 1) ? NULL : (struct job *)e;
}

static uint64_t
store_entry_id(uintptr_t e)
{
	return (e & 1) ? (uint64_t)(e >> 1) : ((struct job *)e)->id;
}

/* The index of the first entry whose id is >= id. */
static size_t
store_lower_bound(const struct store *st, uint64_t id)
{
	uintptr_t *e = store_entries(st);
	size_t lo = 0, hi = st->jobs.n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (store_entry_id(e[mid]) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first job at index i or after; NULL at the end. */
static struct job *
store_live_from(const struct store *st, size_t i)
{
	uintptr_t *e = store_entries(st);

	for (; i < st->jobs.n; i++)
		if (!(e[i] & 1))
			return (struct job *)e[i];
	return NULL;
}

/* Drops the tombstones, keeping the order. */
static void
store_sweep(struct store *st)
{
	uintptr_t *e = store_entries(st);
	size_t i, k = 0;

	for (i = 0; i < st->jobs.n; i++)
		if (!(e[i] & 1))
			e[k++] = e[i];
	st->jobs.n = k;
	st->dead = 0;
}

/* Appends job; 0, or -1 with ENOMEM. */
static int
store_push_job(struct store *st, struct job *job)
{
	uintptr_t e = (uintptr_t)job;

	return store_push(&st->jobs, sizeof e, &e);
}

static void
store_load_paused_cb(const char *name, void *arg)
{
	struct store *st = arg;
	char *copy = strdup(name);

	/* Out of memory, it starts unpaused: a warning's worth, not more. */
	if (copy != NULL && store_push(&st->paused, sizeof copy, &copy) != 0)
		free(copy);
}

static int
store_load_cb(struct job *job, void *arg)
{
	struct store *st = arg;

	if (store_push_job(st, job) != 0) {
		job_free(job);
		return -1;
	}
	return 0;
}

struct store *
store_open(struct event_base *base, const char *path, char **cause)
{
	struct store *st;
	struct job *last;
	uint64_t max_id = 0;

	if ((st = calloc(1, sizeof *st)) == NULL ||
	    (st->commit_ev = evtimer_new(base, store_commit_cb, st)) == NULL) {
		free(st);
		*cause = strdup("out of memory");
		return NULL;
	}
	st->grouping = true;
	if ((st->db = db_open(path, cause)) == NULL ||
	    db_load(st->db, store_load_cb, st, cause) != 0 ||
	    db_paused(st->db, store_load_paused_cb, st, cause) != 0 ||
	    db_max_id(st->db, &max_id, cause) != 0) {
		store_close(st);
		return NULL;
	}
	if ((last = store_last(st)) != NULL && last->id > max_id)
		max_id = last->id;
	st->next_id = max_id + 1;
	return st;
}

void
store_close(struct store *st)
{
	struct store_staged *staged;
	char *cause = NULL;
	size_t i;

	if (st == NULL)
		return;
	if (st->db != NULL && (st->dirty.n > 0 || st->removed.n > 0 ||
	    st->paused_dirty))
		(void)store_flush(st, &cause);
	free(cause);
	staged = st->staged.v;
	for (i = 0; i < st->staged.n; i++)
		job_free(staged[i].job);
	for (i = 0; i < st->jobs.n; i++)
		job_free(store_entry_job(store_entries(st)[i]));
	for (i = 0; i < st->paused.n; i++)
		free(((char **)st->paused.v)[i]);
	free(st->paused.v);
	free(st->jobs.v);
	free(st->staged.v);
	free(st->dirty.v);
	free(st->removed.v);
	free(st->soon.v);
	free(st->syncs.v);
	if (st->commit_ev != NULL)
		event_free(st->commit_ev);
	db_close(st->db);
	free(st);
}

void
store_set_grouping(struct store *st, bool grouping)
{
	st->grouping = grouping;
}

/* A commit at the end of this turn of the loop. */
static void
store_schedule(struct store *st)
{
	static const struct timeval now = { 0, 0 };

	evtimer_add(st->commit_ev, &now);
}

int
store_add(struct store *st, struct job *job, store_added_cb cb, void *arg)
{
	struct store_staged s = { job, cb, arg };

	job->id = st->next_id;
	if (store_push(&st->staged, sizeof s, &s) != 0)
		return -1;
	st->next_id++;
	st->need_fsync = true;
	store_schedule(st);
	return 0;
}

static void
store_mark(struct store *st, struct job *job, bool fsync)
{
	/* Out of memory, the change waits for the job's next one. */
	if (store_push(&st->dirty, sizeof job->id, &job->id) != 0)
		return;
	if (fsync)
		st->need_fsync = true;
	if (!evtimer_pending(st->commit_ev, NULL))
		store_schedule(st);
}

void
store_update(struct store *st, struct job *job)
{
	store_mark(st, job, true);
}

void
store_update_nosync(struct store *st, struct job *job)
{
	store_mark(st, job, false);
}

void
store_update_soon(struct store *st, struct job *job)
{
	/* Out of memory, it waits for the commit, as any change does. */
	(void)store_push(&st->soon, sizeof job->id, &job->id);
	store_mark(st, job, false);
}

uint64_t
store_write_generation(const struct store *st)
{
	return st->writes + 1;
}

void
store_set_written_cb(struct store *st, store_written_cb cb, void *arg)
{
	st->written_cb = cb;
	st->written_arg = arg;
}

bool
store_pending(const struct store *st)
{
	return st->staged.n > 0 || st->dirty.n > 0 || st->removed.n > 0 ||
	    st->paused_dirty;
}

static ssize_t
store_paused_index(const struct store *st, const char *name)
{
	char **names = st->paused.v;
	size_t i;

	for (i = 0; i < st->paused.n; i++)
		if (strcmp(names[i], name) == 0)
			return (ssize_t)i;
	return -1;
}

bool
store_paused(const struct store *st, const char *name)
{
	return store_paused_index(st, name) >= 0;
}

int
store_set_paused(struct store *st, const char *name, bool paused)
{
	ssize_t i = store_paused_index(st, name);
	char **names, *copy;

	if (paused == (i >= 0))
		return 0;
	if (paused) {
		if ((copy = strdup(name)) == NULL)
			return -1;
		if (store_push(&st->paused, sizeof copy, &copy) != 0) {
			free(copy);
			return -1;
		}
	} else {
		names = st->paused.v;
		free(names[i]);
		names[i] = names[--st->paused.n];
	}
	st->paused_dirty = true;
	st->need_fsync = true;
	store_schedule(st);
	return 0;
}

uint64_t
store_generation(const struct store *st)
{
	return st->commits + 1;
}

void
store_set_committed_cb(struct store *st, store_committed_cb cb, void *arg)
{
	st->committed_cb = cb;
	st->committed_arg = arg;
}

const struct store_commit_stats *
store_commit_stats(const struct store *st)
{
	return &st->stats;
}

int
store_sync(struct store *st, store_synced_cb cb, void *arg)
{
	struct store_sync s = { cb, arg };

	if (store_push(&st->syncs, sizeof s, &s) != 0)
		return -1;
	store_schedule(st);
	return 0;
}

static int
store_cmp_id(const void *a, const void *b)
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
store_txn(struct store *st, size_t first, size_t count, bool changes,
    char **cause)
{
	struct store_staged *staged = st->staged.v;
	uint64_t *ids = st->dirty.v, *gone = st->removed.v;
	const struct job *rows[DB_INSERT_ROWS];
	struct job *job;
	size_t i, k;

	/* Only what must survive a power loss waits for the disk. */
	if (db_set_sync(st->db, st->need_fsync || count > 0, cause) != 0 ||
	    db_begin(st->db, cause) != 0)
		return -1;
	/* New jobs by DB_INSERT_ROWS while there are as many, the rest one
	 * by one. */
	for (i = first; i < first + count; ) {
		if (first + count - i >= DB_INSERT_ROWS) {
			for (k = 0; k < DB_INSERT_ROWS; k++)
				rows[k] = staged[i + k].job;
			if (db_insert_rows(st->db, rows, cause) != 0)
				goto fail;
			i += DB_INSERT_ROWS;
		} else if (db_insert(st->db, staged[i++].job, cause) != 0)
			goto fail;
	}
	if (changes) {
		if (st->dirty.n > 1)
			qsort(ids, st->dirty.n, sizeof *ids, store_cmp_id);
		for (i = 0; i < st->dirty.n; i++) {
			if (i > 0 && ids[i] == ids[i - 1])
				continue;
			/* A job removed since its change has nothing to say. */
			if ((job = store_get(st, ids[i])) != NULL &&
			    db_update(st->db, job, cause) != 0)
				goto fail;
		}
		for (i = 0; i < st->removed.n; i++)
			if (db_delete(st->db, gone[i], cause) != 0)
				goto fail;
		if (st->paused_dirty && db_set_paused(st->db, st->paused.v,
		    st->paused.n, cause) != 0)
			goto fail;
	}
	if (db_commit(st->db, cause) != 0)
		goto fail;
	if (changes) {
		st->dirty.n = 0;
		st->removed.n = 0;
		st->paused_dirty = false;
		st->need_fsync = false;
		if (st->soon.n > 0) {
			st->soon.n = 0;
			st->writes++;
			st->wrote = true;
		}
	}
	return 0;
fail:
	db_rollback(st->db);
	return -1;
}

static void
store_tell_written(struct store *st)
{
	if (!st->wrote)
		return;
	st->wrote = false;
	if (st->written_cb != NULL)
		st->written_cb(st->writes, st->written_arg);
}

/*
 * The rows of store_update_soon, in a transaction of their own that does
 * not wait for the disk: the commit after it may wait (fsync) for others'
 * changes, and the loop with it, while a granted job could already be on
 * its way to a worker. 0, or -1 with nothing written (the commit writes
 * them then).
 */
static int
store_write_soon(struct store *st)
{
	uint64_t *ids = st->soon.v;
	struct job *job;
	char *cause = NULL;
	size_t i;

	if (db_set_sync(st->db, false, &cause) != 0 ||
	    db_begin(st->db, &cause) != 0)
		goto fail;
	for (i = 0; i < st->soon.n; i++)
		if ((job = store_get(st, ids[i])) != NULL &&
		    db_update(st->db, job, &cause) != 0) {
			db_rollback(st->db);
			goto fail;
		}
	if (db_commit(st->db, &cause) != 0) {
		db_rollback(st->db);
		goto fail;
	}
	/* They stay dirty: the commit writes them again, at no cost to
	 * speak of, rather than the store telling apart who needs what. */
	st->soon.n = 0;
	st->writes++;
	st->wrote = true;
	store_tell_written(st);
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
store_commit(struct store *st, char **cause)
{
	struct store_vec staged, syncs;
	struct store_staged *s;
	struct store_sync *y;
	bool *ok;
	size_t i, n = st->staged.n;
	uint64_t generation = ++st->commits, start = timefmt_mono_us();
	int rc = 0;
	char *err = NULL;

	st->stats.commits++;
	/* The table has room for every new job before any is written: a job
	 * on disk is a job in memory. */
	if ((ok = calloc(n + 1, sizeof *ok)) == NULL ||
	    store_reserve(&st->jobs, sizeof(uintptr_t), n) != 0) {
		free(ok);
		st->stats.failures++;
		*cause = strdup("out of memory");
		return -1;
	}
	if (st->grouping || n == 0) {
		rc = store_txn(st, 0, n, true, &err);
		for (i = 0; i < n; i++)
			ok[i] = rc == 0;
	} else {
		/* Each new job in a transaction of its own. */
		for (i = 0; i < n; i++) {
			free(err);
			err = NULL;
			ok[i] = store_txn(st, i, 1, i == 0, &err) == 0;
			if (!ok[i])
				rc = -1;
		}
	}
	/* The write, not what its callbacks then do. */
	hist_observe(&st->stats.seconds, &hist_commit_seconds,
	    (double)(timefmt_mono_us() - start) / 1e6);
	if (rc != 0)
		st->stats.failures++;
	staged = store_take(&st->staged);
	syncs = store_take(&st->syncs);
	s = staged.v;
	for (i = 0; i < n; i++)
		if (ok[i])
			(void)store_push_job(st, s[i].job);
	for (i = 0; i < n; i++)
		s[i].cb(s[i].job, ok[i], ok[i] ? NULL : err ? err :
		    "out of memory", s[i].arg);
	y = syncs.v;
	for (i = 0; i < syncs.n; i++)
		y[i].cb(rc == 0 ? NULL : err, y[i].arg);
	if (st->committed_cb != NULL)
		st->committed_cb(generation, rc == 0 ? NULL : err,
		    st->committed_arg);
	store_tell_written(st);
	free(staged.v);
	free(syncs.v);
	free(ok);
	if (rc != 0)
		*cause = err ? err : strdup("out of memory");
	else
		free(err);
	return rc;
}

static void
store_commit_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval retry = { STORE_RETRY_MS / 1000,
	    (STORE_RETRY_MS % 1000) * 1000 };
	struct store *st = arg;
	char *cause = NULL;

	(void)fd;
	(void)what;
	/* Rows wanted soon go first when the commit will wait for the disk;
	 * the commit follows in the next turn, once the loop has sent what
	 * they allowed (a job to its worker). */
	if (st->soon.n > 0 && (st->need_fsync || st->staged.n > 0) &&
	    store_write_soon(st) == 0) {
		store_schedule(st);
		return;
	}
	if (store_commit(st, &cause) != 0 &&
	    (st->dirty.n > 0 || st->removed.n > 0 || st->paused_dirty) &&
	    !evtimer_pending(st->commit_ev, NULL))
		evtimer_add(st->commit_ev, &retry);
	free(cause);
}

int
store_flush(struct store *st, char **cause)
{
	evtimer_del(st->commit_ev);
	return store_commit(st, cause);
}

int
store_remove(struct store *st, uint64_t id)
{
	size_t i = store_lower_bound(st, id);
	uintptr_t *e = store_entries(st);
	struct job *job;

	if (i >= st->jobs.n || (job = store_entry_job(e[i])) == NULL ||
	    job->id != id) {
		errno = ENOENT;
		return -1;
	}
	if (store_push(&st->removed, sizeof id, &id) != 0)
		return -1;
	st->need_fsync = true;
	job_free(job);
	/* Ids fit: SQLite's are at most INT64_MAX. */
	e[i] = ((uintptr_t)id << 1) | 1;
	/* The sweep costs the whole array, once per so many removals. */
	if (++st->dead > st->jobs.n / 4)
		store_sweep(st);
	store_schedule(st);
	return 0;
}

struct job *
store_get(const struct store *st, uint64_t id)
{
	size_t i = store_lower_bound(st, id);
	struct job *job;

	if (i < st->jobs.n && (job = store_entry_job(store_entries(st)[i]))
	    != NULL && job->id == id)
		return job;
	return NULL;
}

struct job *
store_next(const struct store *st, uint64_t after_id)
{
	if (after_id == UINT64_MAX)
		return NULL;
	return store_live_from(st, store_lower_bound(st, after_id + 1));
}

struct job *
store_iter(const struct store *st, size_t *pos)
{
	uintptr_t *e = store_entries(st);

	for (; *pos < st->jobs.n; (*pos)++)
		if (!(e[*pos] & 1))
			return (struct job *)e[(*pos)++];
	return NULL;
}

struct job *
store_last(const struct store *st)
{
	uintptr_t *e = store_entries(st);
	size_t i;

	for (i = st->jobs.n; i > 0; i--)
		if (!(e[i - 1] & 1))
			return (struct job *)e[i - 1];
	return NULL;
}

size_t
store_count(const struct store *st)
{
	return st->jobs.n - st->dead;
}

int
store_env(struct store *st, struct job *job, char **cause)
{
	char **env = NULL;

	if (job->env != NULL)
		return 0;
	if (db_env(st->db, job->id, &env, cause) != 0)
		return -1;
	if (job_set_env(job, env) != 0) {
		*cause = strdup("out of memory");
		return -1;
	}
	return 0;
}

int
store_expired(struct store *st, int64_t before_ms, uint64_t *ids, size_t max,
    size_t *n, char **cause)
{
	return db_expired(st->db, before_ms, ids, max, n, cause);
}
