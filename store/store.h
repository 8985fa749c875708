/* store.h - where jobs live: every job the daemon knows, by id, in memory and
 * in the database, written in one transaction per turn of the event loop. */
#ifndef TRIAGE_STORE_H
#define TRIAGE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hist.h"

struct event_base;
struct job;
struct job_status;
struct store;

/*
 * The commit that held a new job is over. ok: the job is stored, and the
 * store owns it. Else cause says why not, and the job is the caller's again.
 */
typedef void (*store_added_cb)(struct job *job, bool ok, const char *cause,
    void *arg);
/*
 * The cause a new job with an idempotency key is refused with when a job
 * of the same uid and key was stored first, by another daemon of a shared
 * store (this one's own memory knew of none): its row arrives with the
 * next store_sync. Compared by address.
 */
extern const char store_key_taken[];
/* A commit is over; cause is NULL when it succeeded. */
typedef void (*store_synced_cb)(const char *cause, void *arg);
/* Commit number generation is over (cause NULL: it succeeded, and with it
 * every change made while store_generation() was at most generation). */
typedef void (*store_committed_cb)(uint64_t generation, const char *cause,
    void *arg);

/*
 * Opens the database at path and loads every job into memory. Commits run
 * on base. Returns the store, or NULL with *cause set (allocated, naming
 * path).
 */
struct store *store_open(struct event_base *base, const char *path,
    char **cause);
/* Writes what is pending (its failure is only logged by the caller, who
 * gets nothing back) and frees the store and every job. */
void store_close(struct store *st);

/* A store in the cluster's PostgreSQL, shared with other daemons. */
struct store_pg_options {
	const char *conninfo;	/* libpq's; never put in a message */
	const char *node;	/* this daemon's name in the cluster */
	unsigned slots;		/* its slots, for the others to see */
	/* The config's priorities as text (config_priorities_text): the
	 * cluster's must be the same. */
	const char *priorities;
	uint64_t lease_ms;	/* how long its running jobs stay its own */
	/* How long past its lease the others wait before they take its
	 * jobs: what it gives them to die when it stops them itself. */
	uint64_t grace_ms;
};
/*
 * Connects (blocking: for a daemon's start), makes or checks the tables,
 * checks the priorities, registers the node, and loads every job of the
 * cluster. Then works on base without blocking. NULL with *cause set.
 */
struct store *store_open_pg(struct event_base *base,
    const struct store_pg_options *o, char **cause);

/* Whether the database can be reached, on each change (cause: why not).
 * A SQLite store never calls it. */
typedef void (*store_status_cb)(bool up, const char *cause, void *arg);
void store_set_status_cb(struct store *st, store_status_cb cb, void *arg);

/*
 * A job changed in the database by someone else (a daemon sharing it):
 * their row is in the job now, changed in place, and wins over any change
 * of ours not yet written (whose write the database then refuses); before
 * is the job's status until then. REFUSED comes first when the database
 * refused a write of ours (another daemon changed the job, or holds its
 * row): the job is as we made it; CLAIM_REFUSED instead when that write
 * held our claim (store_claim), whose launch is off; UPDATED follows with the database's row (before is the job as it is when
 * that row is no newer: it must be looked at afresh all the same). GONE
 * comes before the job is freed; NEW after it joined the table (before is
 * NULL for both, and for REFUSED). A SQLite store never calls it.
 */
enum store_change {
	STORE_CHANGE_NEW,
	STORE_CHANGE_REFUSED,
	STORE_CHANGE_CLAIM_REFUSED,
	STORE_CHANGE_UPDATED,
	STORE_CHANGE_GONE,
};
typedef void (*store_changed_cb)(struct job *job, enum store_change what,
    const struct job_status *before, void *arg);
void store_set_changed_cb(struct store *st, store_changed_cb cb, void *arg);

/*
 * The priorities every daemon sharing the store must have become text (as
 * store_pg_options' priorities), for a reload that changes them: only
 * while no other daemon runs, or they would differ. 0, or -1 with *cause.
 * A SQLite store has no one to agree with.
 */
int store_set_priorities(struct store *st, const char *text, char **cause);

/*
 * A cluster's duties, which a SQLite store has none of (it does nothing,
 * and never calls back). store_renew_lease keeps this daemon's running
 * jobs its own for lease_ms more (each commit renews it too).
 * store_take_over puts the jobs of daemons whose lease ran out back in
 * their queues as new attempts, at their place, the reason naming the
 * node, as a crash here would; the store then reads the change.
 * store_cancel_elsewhere asks the daemon running job's attempt to cancel
 * it with sig, for uid by: 0, or -1 out of memory. That daemon's store
 * calls its cancel_cb with the job.
 */
void store_renew_lease(struct store *st);
void store_take_over(struct store *st);
/*
 * Until when (CLOCK_MONOTONIC, in us) this daemon's running jobs are its
 * own: lease_ms past the sending of the newest renewal the database
 * acknowledged, so never later than the others think, whatever their
 * clocks say (as long as their rates agree). 0 before any renewal, and
 * for a store that shares nothing.
 */
uint64_t store_lease_until_us(const struct store *st);
/* That time has passed: the connections are taken for dead and made
 * again. */
void store_lease_lost(struct store *st);
/* store_lease_until_us moved on (a renewal was acknowledged). A SQLite
 * store never calls it. */
typedef void (*store_lease_cb)(uint64_t until_us, void *arg);
void store_set_lease_cb(struct store *st, store_lease_cb cb, void *arg);
int store_cancel_elsewhere(struct store *st, const struct job *job, int sig,
    unsigned by);
typedef void (*store_cancel_cb)(struct job *job, int sig, unsigned by,
    void *arg);
void store_set_cancel_cb(struct store *st, store_cancel_cb cb, void *arg);
/* This daemon took over the running jobs of node, whose lease ran out at
 * until_ms (ms since the epoch): n of them, their ids space-separated in
 * ids. A SQLite store never calls it. */
typedef void (*store_takeover_cb)(const char *node, int64_t until_ms,
    unsigned n, const char *ids, void *arg);
void store_set_takeover_cb(struct store *st, store_takeover_cb cb, void *arg);

/* Another daemon paused (or resumed) the priority called name: the store
 * keeps it so already (store_paused). A SQLite store never calls it. */
typedef void (*store_paused_cb)(const char *name, bool paused, void *arg);
void store_set_paused_cb(struct store *st, store_paused_cb cb, void *arg);

/* A counter every daemon sharing the store shares ([resource.NAME] scope =
 * cluster): its name and how many units the cluster has. */
struct store_resource {
	const char *name;
	uint64_t count;
};
#define STORE_SHARED_MAX 64
/*
 * The shared counters, as this daemon's config has them (copied, n at
 * most STORE_SHARED_MAX): a claim (store_claim) of a job that names one is refused, as
 * a row another daemon holds is, when the jobs begun or running on every
 * node hold so much of it that the job's amount would take them past its
 * count. Checked in the claim's transaction, one claim of a counter at a
 * time. 0, or -1 with errno (ENOMEM, EINVAL for too many) keeping the
 * ones before. A SQLite store shares nothing: it keeps none.
 */
int store_set_shared_resources(struct store *st,
    const struct store_resource *r, size_t n);

/* A daemon sharing the store (store_nodes). */
struct store_node {
	char *name;
	unsigned slots;
	unsigned busy;		/* slots held, as it last wrote */
	int64_t started_at;	/* ms since the epoch */
	bool up;		/* connected: its daemon runs */
	/* While it holds slots: when its lease ends as last read
	 * (CLOCK_MONOTONIC, us; a lease already over is 1), else 0; and how
	 * long past it the others wait before they take its jobs. */
	uint64_t lease_end_us;
	uint64_t grace_ms;
};
/* Whether node is up now: connected, and its lease not run out while it
 * holds slots. */
bool store_node_up(const struct store_node *node);
/*
 * This daemon's slots held, for the others to see: cb says how many as
 * each of its commits and lease statements is written. Once it holds none
 * but last wrote some, 0 is written within a second (with a NOTIFY), lest
 * the others count a lease it no longer renews and take it for dead. A
 * NULL cb (as the daemon stops) writes 0 from then on.
 */
typedef unsigned (*store_busy_cb)(void *arg);
void store_set_busy_cb(struct store *st, store_busy_cb cb, void *arg);
/* How long past this daemon's lease the others wait before they take its
 * jobs (a reload's new kill_grace): written with its next commit or
 * lease, as it holds from then on. */
void store_set_grace(struct store *st, uint64_t grace_ms);
/* The daemons sharing the store as last read (this one among them):
 * borrowed, *n of them, valid until the store reads again. A SQLite store
 * has none. */
const struct store_node *store_nodes(const struct store *st, size_t *n);

/* The job's environment is not needed in memory any more (it ended): the
 * store may drop it, and store_env brings it back. */
void store_forget_env(struct store *st, struct job *job);

/* false: a transaction (and fsync) for each new job, for comparison. */
void store_set_grouping(struct store *st, bool grouping);

/*
 * Stages a new job: gives it the next id and writes it with this turn's
 * commit, after which cb(job, ok, cause, arg) runs. Until then the job is
 * not in the store. Returns 0, or -1 with errno ENOMEM (nothing staged).
 */
int store_add(struct store *st, struct job *job, store_added_cb cb,
    void *arg);

/* Marks job changed: it is written with the next commit, which then
 * waits for the disk (it survives a power loss). */
void store_update(struct store *st, struct job *job);
/* The same for a change that need only survive a crash of the process: a
 * commit holding nothing else does not wait for the disk. */
void store_update_nosync(struct store *st, struct job *job);

/*
 * A claim: this daemon begins the job's attempt (the job is begun, its
 * slots held here), and its worker gets it once the claim is written.
 * Written, not synced: when the next commit would wait for the disk for
 * other changes, the claim goes ahead of it, in a transaction of its own.
 * Returns the number of the write that holds it: written_cb is called
 * with it, or a larger one, once it is written. The SQLite store, one
 * host's own, grants every claim. The PostgreSQL store writes it only if
 * no other daemon changed the job's row or holds it: a refused claim is
 * told as STORE_CHANGE_CLAIM_REFUSED before that written_cb, and its
 * launch must not happen.
 */
uint64_t store_claim(struct store *st, struct job *job);
typedef void (*store_written_cb)(uint64_t write, void *arg);
void store_set_written_cb(struct store *st, store_written_cb cb, void *arg);

/*
 * A claim another daemon beat goes to another job instead, in the same
 * statement, when the daemon names jobs alike (the same slots and needs):
 * the first of them still queued and not held by another daemon, in the
 * order given, is claimed in its place (its row made begun on this node).
 * alternates_cb names up to max of them for claimed job, into out, and
 * returns how many; moved_cb is then told that the claim of from went to
 * to, whose version is the claim's, before from is told
 * STORE_CHANGE_CLAIM_REFUSED: to takes from's launch, or, when it can no
 * longer start here, its row is written again as it is (store_update).
 * The SQLite store, which grants every claim, calls neither.
 */
typedef size_t (*store_alternates_cb)(const struct job *job, struct job **out,
    size_t max, void *arg);
typedef void (*store_moved_cb)(struct job *from, struct job *to, void *arg);
void store_set_claim_alternates(struct store *st, store_alternates_cb
    alternates_cb, store_moved_cb moved_cb, void *arg);

/* Whether the priority called name is paused, as the store keeps it
 * across restarts. */
bool store_paused(const struct store *st, const char *name);
/* Records it, written with the next commit. 0, or -1 out of memory. */
int store_set_paused(struct store *st, const char *name, bool paused);

/* True when changes wait for a commit. */
bool store_pending(const struct store *st);
/* The number of the commit that will write a change made now. */
uint64_t store_generation(const struct store *st);
/* cb runs after every commit, once its own callbacks have run. */
void store_set_committed_cb(struct store *st, store_committed_cb cb,
    void *arg);

/* What the commits so far cost: every commit (of store_commit's kind, which
 * store_generation numbers), those that failed, and how long each took to
 * write, in seconds (hist_commit_seconds); and the claims written
 * (store_claim), those another daemon's claim or write of the job beat and
 * that found no alternate, and those that went to an alternate. */
struct store_commit_stats {
	uint64_t commits;
	uint64_t failures;
	uint64_t claims;
	uint64_t claims_refused;
	uint64_t claims_moved;		/* those that went to another job */
	struct hist seconds;
};
/* Borrowed, valid as long as st. */
const struct store_commit_stats *store_commit_stats(const struct store *st);

/* Runs cb once the next commit is over (at once in spirit: this turn's). */
int store_sync(struct store *st, store_synced_cb cb, void *arg);

/* Reads job's environment back from disk when it is not in memory (see
 * job_drop_env). 0, or -1 with *cause set. */
int store_env(struct store *st, struct job *job, char **cause);

/* Forgets the job: from memory now (it is freed), from disk with the next
 * commit. -1 with ENOENT when there is no such job. */
int store_remove(struct store *st, uint64_t id);

/* The job with this id, borrowed; NULL when there is none. */
struct job *store_get(const struct store *st, uint64_t id);
/* The stored job of uid with this idempotency key, borrowed; NULL when
 * there is none (a new job is found once its commit is over). */
struct job *store_by_key(const struct store *st, uid_t uid, const char *key);
/* The job with the smallest id above after_id, borrowed; NULL at the end. */
struct job *store_next(const struct store *st, uint64_t after_id);
/* The job after the one with id after_id in submission order
 * (jobtable_next_submitted), borrowed; NULL at the end. */
struct job *store_next_submitted(const struct store *st, uint64_t after_id);
/*
 * Every job in id order, in O(1) a step: start with *pos = 0; returns the
 * next job (borrowed) and moves *pos past it, NULL at the end. Valid while
 * no job is added or removed.
 */
struct job *store_iter(const struct store *st, size_t *pos);
/* The job with the largest id, borrowed; NULL when there is none. */
struct job *store_last(const struct store *st);
size_t store_count(const struct store *st);

/* Ids of terminal jobs finished before before_ms, oldest first, at most
 * max. 0, or -1 with *cause set. */
int store_expired(struct store *st, int64_t before_ms, uint64_t *ids,
    size_t max, size_t *n, char **cause);

/*
 * Captured output kept in the store, for the daemons that share it: each
 * stream of each attempt of a job, by absolute offset (the stream's bytes
 * from its start, those dropped under output_keep = tail included). A
 * SQLite store keeps none: its daemon's capture files are the output.
 */
bool store_keeps_output(const struct store *st);

/* A job's stream, as the store keeps it (stream 0: stdout, 1: stderr). */
struct store_output_key {
	uint64_t job;
	unsigned attempt;
	int stream;
};

/* An append or a drop is over; cause is NULL when it was written. */
typedef void (*store_output_done_cb)(const char *cause, void *arg);

/*
 * Writes len bytes of data (copied) at the stream's absolute offset, in
 * chunks of at most 64 KiB; drop_before > 0 also forgets what lies before
 * it, in the same transaction (output_keep = tail). Sent at once on the
 * store's connection, ahead of every commit staged later: a daemon that
 * sees a commit made after this call sees these bytes. Writing the same
 * bytes again is harmless. cb runs once, from the loop. 0, or -1 with
 * errno (ENOTSUP: the store keeps no output; ENOMEM), cb never called.
 */
int store_output_append(struct store *st, const struct store_output_key *k,
    uint64_t offset, const void *data, size_t len, uint64_t drop_before,
    store_output_done_cb cb, void *arg);
/* Forgets the stream's bytes before the absolute offset before, as
 * store_output_append with no data. */
int store_output_drop(struct store *st, const struct store_output_key *k,
    uint64_t before, store_output_done_cb cb, void *arg);

/*
 * A page of a stream as read (store_output_read): offset counts from the
 * first byte still kept, as the `output` method does; size is the count
 * of bytes kept, dropped the count before them no longer kept.
 */
struct store_output_page {
	uint64_t offset;
	const unsigned char *data;	/* borrowed for the callback */
	size_t len;
	uint64_t size;
	uint64_t dropped;
};
/* The page, or page NULL and cause saying why it could not be read. */
typedef void (*store_output_read_cb)(const struct store_output_page *page,
    const char *cause, void *arg);
/*
 * Reads up to limit bytes of the stream from offset (counted from the
 * first byte kept; a negative one back from the end, from 0 when the
 * stream is shorter), without blocking: cb runs once, from the loop (a
 * stream never written is empty). 0, or -1 with errno (ENOTSUP, ENOMEM),
 * cb never called.
 */
int store_output_read(struct store *st, const struct store_output_key *k,
    int64_t offset, size_t limit, store_output_read_cb cb, void *arg);

/* Writes everything pending now. 0, or -1 with *cause set (the changes
 * stay pending). */
int store_flush(struct store *st, char **cause);

#endif
