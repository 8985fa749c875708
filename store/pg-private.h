/* pg-private.h - what pg-store.c (commits) and pg-sync.c (reading
 * what other daemons changed) share, and nothing else includes. */
#ifndef TRIAGE_PG_PRIVATE_H
#define TRIAGE_PG_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/util.h>
#include <libpq-fe.h>

#include "jobcols.h"
#include "jobrow.h"
#include "pg-conn.h"
#include "pg-row.h"
#include "store-private.h"
#include "vec.h"

/*
 * Rows written since snapshot $1: by a transaction it saw in progress or
 * that began after it. pg_snapshot_xmin bounds the index scan; the upper
 * bound, true of every row the statement can see, is there for the
 * planner: a range between two unknowns it takes as narrow, where one
 * bound alone it takes as a third of the table, and the generic plan
 * scanned every job (finished ones too) on every read.
 */
#define PG_STORE_SINCE(table)						\
	" FROM " table " WHERE txid >= pg_snapshot_xmin($1::pg_snapshot)" \
	" AND txid < pg_snapshot_xmax(pg_current_snapshot())"		\
	" AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)"
/* The advisory lock every node holds shared while it runs (and, with a
 * node's name hashed as the second key, its name). */
#define PG_STORE_LOCK_CLUSTER "1953653089"
/* Whether node n is up: its daemon holds its name's lock (one look at the
 * server's lock table for them all: it takes the lock manager's locks). */
#define PG_STORE_NODE_UP						\
	"(hashtext(n.name)::bigint & 4294967295)::oid IN (SELECT l.objid"	\
	" FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted"	\
	" AND l.database = (SELECT oid FROM pg_database"			\
	" WHERE datname = current_database())"				\
	" AND l.classid = " PG_STORE_LOCK_CLUSTER " AND l.objsubid = 2)"
/* While node n holds slots, what is left of its lease in ms. */
#define PG_STORE_NODE_LEASE_LEFT					\
	"CASE WHEN busy > 0 THEN (extract(epoch FROM"			\
	" lease_until - now()) * 1000)::bigint END"
/* The nodes, their columns in the order pg_sync_read_nodes reads. */
#define PG_STORE_NODES							\
	"SELECT name, slots, started_at, busy, " PG_STORE_NODE_UP ","	\
	" grace_ms, " PG_STORE_NODE_LEASE_LEFT				\
	" FROM triage_nodes n ORDER BY name"
/*
 * A read of what other daemons changed since snapshot $1, in one statement
 * (so one snapshot, which it returns): the rows of the jobs written since
 * (version and columns), and on one row of them (or a row of its own) the
 * snapshot and, as JSON arrays of arrays of text, the removals and cancels
 * since, the paused priorities and the nodes as PG_STORE_NODES has them,
 * up as up says (NULL: not looked at).
 */
#define PG_STORE_SYNC(up)						\
	"WITH m AS (SELECT 1 AS one, pg_current_snapshot()::text AS snap,"	\
	" (SELECT json_agg(json_build_array(id::text))"			\
	PG_STORE_SINCE("triage_removed") ") AS removed,"			\
	" (SELECT json_agg(json_build_array(priority))"			\
	" FROM triage_paused) AS paused,"					\
	" (SELECT json_agg(json_build_array(job::text, attempt::text,"	\
	" signal::text, by_uid::text))" PG_STORE_SINCE("triage_cancels")	\
	") AS cancels,"							\
	" (SELECT json_agg(json_build_array(name, slots::text,"		\
	" started_at::text, busy::text, (" up ")::text, grace_ms::text,"	\
	" (" PG_STORE_NODE_LEASE_LEFT ")::text) ORDER BY name)"		\
	" FROM triage_nodes n) AS nodes),"					\
	" j AS (SELECT version, " JOBCOLS_NAMES ", row_number() OVER ()"	\
	" AS rn" PG_STORE_SINCE("triage_jobs") ")"				\
	" SELECT version, " JOBCOLS_NAMES ", snap, removed, paused,"	\
	" cancels, nodes FROM j FULL JOIN m ON j.rn = m.one"


struct event;
struct pg_conn;
struct pg_commit;

/* The channel every writing transaction NOTIFYs, its payload the writer
 * ("node boot"), so that a daemon can skip its own. */
#define PG_STORE_CHANNEL "triage"

/* A counter the daemons share (store_set_shared_resources). */
struct pg_shared {
	char *name;
	uint64_t count;
};

/* A change to write: the job, the commit it was made for (its waiters
 * wait for that one's generation), and its count of replacements when it
 * changed (a row of another daemon's since undoes the change). */
struct pg_store_mark {
	uint64_t id;
	uint64_t gen;
	uint16_t replaced;
};

struct pg_store {
	struct store st;		/* first: a struct store * is one */
	struct event_base *base;
	struct pg_conn *conn;
	PGconn *locks;			/* idle: it holds the node's locks */
	char *node;
	uint64_t lease_ms;
	/* Our slots held (store_set_busy_cb), as our last commit or lease
	 * statement wrote them, and the timer that looks, while that was
	 * more than 0, whether 0 is to be written (pg_cluster_busy). */
	store_busy_cb busy_cb;
	void *busy_arg;
	unsigned busy_written;
	struct event *idle_ev;
	char boot[24];			/* this run of the daemon, as text */
	char self[96];			/* "node boot": our NOTIFY payload */
	bool up;
	bool ever_up;			/* the loop's connection came up once */
	uint64_t up_since_us;		/* monotonic: since it is up */
	/* Monotonic: when the newest renewal of the lease (a commit or a
	 * lease statement) that the server answered was sent. */
	uint64_t lease_sent_us;
	uint64_t grace_ms;		/* others wait this past the lease */
	/* store_set_shared_resources': by name; and their counts as a JSON
	 * object, a claim's parameter. */
	struct pg_shared *shared;
	size_t nshared;
	char *shared_counts;
	/* The server sessions of the connection of the locks (0) and of
	 * the loop's (1), as last seen: once the daemon has let go of them
	 * (lost, silent), they may live on in the server, holding the
	 * node's name; the next connection ends them. */
	struct {
		int pid;
		char start[48];		/* its backend_start, as text */
	} sess[2];
	bool locks_stale;		/* the locks' connection is not to be
					 * trusted: make it again */
	char *down_cause;		/* why it is down, when it is */
	struct event *commit_ev;
	/* pg-store.c's, called at the end of each read of changes: the
	 * claims that waited for it go now (pg-sync.c is below pg-store.c,
	 * so it calls up through this). */
	void (*synced)(struct pg_store *s);
	uint64_t commits;		/* commits begun */
	struct pg_commit *flight;	/* the commit under way, or NULL */
	bool doubt;			/* its outcome is unknown: ask */
	struct vec staged;		/* struct store_staged */
	struct vec dirty;		/* struct pg_store_mark, maybe repeated
	    */
	struct vec claims;		/* the same: store_claim's */
	struct vec removed;		/* struct pg_store_mark */
	struct vec syncs;		/* struct store_sync */
	uint64_t durable;		/* the generation last told written */
	bool paused_dirty;
	bool flight_paused;		/* the commit under way writes them */
	struct vec ids;			/* int64_t: ids to give new jobs */
	bool ids_asked;
	/* Reading what changed: the snapshot of the last read, and whether
	 * another read is wanted once this one is over. */
	char *snapshot;
	bool syncing;
	bool sync_again;
	uint64_t nodes_read_us;		/* monotonic: the nodes' last read */
	/* The next read, a NOTIFY's (coalesced) or the poll's, and when. */
	struct event *sync_ev;
	uint64_t sync_at_us;
	bool sync_notified;		/* a NOTIFY's: it reads whatever */
	struct jobrow_cache cache;
};

static inline struct pg_store *
pg_store(struct store *st)
{
	return (struct pg_store *)st;
}

/* pg-sync.c: reads every change since the last read, now or once
 * the read under way is over; or soon, with whatever else other nodes
 * NOTIFY meanwhile (pg_sync_soon). Each read arms the poll
 * (s->sync_ev, pg_sync_timer_cb), which reads again a while later if
 * a job is queued or running anywhere, NOTIFY or not. */
void pg_sync_changes(struct pg_store *s);
void pg_sync_soon(struct pg_store *s);
void pg_sync_timer_cb(evutil_socket_t fd, short what, void *arg);
/* Reads back the rows of ids (uint64_t), whose writes were refused: each
 * job is told of its row (STORE_CHANGE_UPDATED) even when it is no newer,
 * and of its end when it is gone. Then done(arg), read or not (never when
 * the store is closing). */
void pg_sync_refetch(struct pg_store *s, const struct vec *ids,
    void (*done)(void *), void *arg);
/* pg-cluster.c: the lease, the takeover, cancels of other nodes'
 * jobs; their statements, and the lease as an interval's text. */
extern const char pg_store_lease_sql[];
extern const char pg_store_takeover_sql[];
extern const char pg_store_cancel_sql[];
void pg_cluster_lease_text(const struct pg_store *s, char *buf, size_t size);
void pg_cluster_renew_lease(struct store *st);
uint64_t pg_cluster_lease_until_us(const struct store *st);
/* A renewal sent at sent_us was acknowledged. */
void pg_cluster_lease_acked(struct pg_store *s, uint64_t sent_us);
void pg_cluster_take_over(struct store *st);
int pg_cluster_cancel_elsewhere(struct store *st, const struct job *job,
    int sig, unsigned by);
void pg_cluster_set_busy_cb(struct store *st, store_busy_cb cb, void *arg);
unsigned pg_cluster_busy(struct pg_store *s);
void pg_cluster_idle_cb(evutil_socket_t fd, short what, void *arg);
int pg_cluster_set_shared(struct store *st, const struct store_resource *r,
    size_t n);
void pg_cluster_shared_free(struct pg_store *s);
/* Bit i for each shared counter (s->shared[i]) that job names. */
uint64_t pg_cluster_shared_of(const struct pg_store *s, const struct job *job);
/* The shared counters of mask as a text[] literal; NULL out of memory. */
char *pg_cluster_shared_array(const struct pg_store *s, uint64_t mask);
void pg_cluster_set_grace(struct store *st, uint64_t grace_ms);
/* The nodes of a result of PG_STORE_NODES. */
void pg_sync_read_nodes(struct pg_store *s, const PGresult *res);

/* pg-output.c: the statements of captured output, prepared on c
 * (0, or -1 out of memory), and the store's ops of it. */
int pg_output_prepare(struct pg_conn *c);
int pg_output_append(struct store *st, const struct store_output_key *k,
    uint64_t offset, const void *data, size_t len, uint64_t drop_before,
    store_output_done_cb cb, void *arg);
int pg_output_read(struct store *st, const struct store_output_key *k,
    int64_t offset, size_t limit, store_output_read_cb cb, void *arg);

/* Ends a server session of ours, known by its pid ($1) and start ($2),
 * and waits for it (5 s at most): pg_open_end_sessions' (blocking) and
 * the doubt's before it reads the mark (pg-commit.c). */
#define PG_STORE_END_SESSION						\
	"SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"	\
	" WHERE pid = $1::integer AND backend_start::text = $2"

/* Ids asked for at a time, ahead of the jobs that take them. */
#define PG_STORE_IDS 256

/* pg-open.c: the node's place in the cluster, made as the daemon starts
 * and kept on the connection of the locks (blocking). pg_open_start
 * connects that one, sets the schema up, claims the node's name, agrees
 * on the priorities, registers the node and loads every job and the first
 * ids; pg_open_connect makes the loop's connection, its statements
 * prepared; pg_open_locks_check takes the node's locks again once the
 * server is back, ending this daemon's old sessions; pg_open_status tells
 * the daemon whether the database is up. */
int pg_open_start(struct pg_store *s, const struct store_pg_options *o,
    char **cause);
int pg_open_connect(struct pg_store *s, const char *conninfo,
    pg_conn_state_cb state_cb, pg_conn_notify_cb notify_cb, char **cause);
void pg_open_note_sessions(struct pg_store *s);
void pg_open_locks_check(struct pg_store *s);
int pg_open_write_priorities(PGconn *pg, const char *text, char **cause);
void pg_open_status(struct pg_store *s, bool up, const char *cause);

/* pg-commit.c: the changes written, a commit at a time, at the end of a
 * turn of the loop (pg_commit_schedule, pg_commit_cb); a commit in doubt
 * asked after once the connection is back (pg_commit_ask_doubt). */
struct pg_commit;
void pg_commit_schedule(struct pg_store *s);
void pg_commit_cb(evutil_socket_t fd, short what, void *arg);
bool pg_commit_has_changes(const struct pg_store *s);
bool pg_commit_pending(const struct store *st);
int pg_commit_flush(struct store *st, char **cause);
void pg_commit_ask_doubt(struct pg_store *s);
void pg_commit_synced(struct pg_store *s);
/* A commit whose answer will never come (the store is closing): its new
 * jobs are freed with it. */
void pg_commit_abandon(struct pg_commit *c);

#endif
