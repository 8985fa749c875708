/* store-pg-private.h - what store-pg.c (commits) and store-pg-sync.c (reading
 * what other daemons changed) share, and nothing else includes. */
#ifndef TRIAGE_STORE_PG_PRIVATE_H
#define TRIAGE_STORE_PG_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "jobrow.h"
#include "pgrow.h"
#include "store-private.h"
#include "vec.h"

/* Rows written since snapshot $1: by a transaction it saw in progress or
 * that began after it (pg_snapshot_xmin bounds the index scan). */
#define PGSTORE_SINCE(table)						\
	" FROM " table " WHERE txid >= pg_snapshot_xmin($1::pg_snapshot)" \
	" AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)"
#define PGSTORE_SYNC_JOBS						\
	"SELECT version, " PGROW_SELECT PGSTORE_SINCE("triage_jobs")
#define PGSTORE_SYNC_REMOVED "SELECT id" PGSTORE_SINCE("triage_removed")
/* The advisory lock every node holds shared while it runs (and, with a
 * node's name hashed as the second key, its name). */
#define PGSTORE_LOCK_CLUSTER "1953653089"
/* The nodes, each up when its daemon holds its name's lock, and while it
 * holds slots, what is left of its lease in ms. */
#define PGSTORE_NODES							\
	"SELECT name, slots, started_at, busy,"				\
	" EXISTS (SELECT 1 FROM pg_locks l"				\
	" WHERE l.locktype = 'advisory' AND l.granted AND l.database ="	\
	" (SELECT oid FROM pg_database WHERE datname = current_database())" \
	" AND l.classid = " PGSTORE_LOCK_CLUSTER " AND l.objsubid = 2"	\
	" AND l.objid = (hashtext(n.name)::bigint & 4294967295)::oid),"	\
	" grace_ms, CASE WHEN busy > 0 THEN (extract(epoch FROM"		\
	" lease_until - now()) * 1000)::bigint END"			\
	" FROM triage_nodes n ORDER BY name"


struct event;
struct pgconn;
struct pgcommit;

/* The channel every writing transaction NOTIFYs, its payload the writer
 * ("node boot"), so that a daemon can skip its own. */
#define PGSTORE_CHANNEL "triage"

/* A change to write: the job, the commit it was made for (its waiters
 * wait for that one's generation), and its count of replacements when it
 * changed (a row of another daemon's since undoes the change). */
struct pgstore_mark {
	uint64_t id;
	uint64_t gen;
	uint16_t replaced;
};

struct pgstore {
	struct store st;		/* first: a struct store * is one */
	struct event_base *base;
	struct pgconn *conn;
	PGconn *locks;			/* idle: it holds the node's locks */
	char *node;
	uint64_t lease_ms;
	unsigned busy;			/* our slots held: store_set_busy */
	char boot[24];			/* this run of the daemon, as text */
	char self[96];			/* "node boot": our NOTIFY payload */
	bool up;
	bool ever_up;			/* the loop's connection came up once */
	uint64_t up_since_us;		/* monotonic: since it is up */
	/* Monotonic: when the newest renewal of the lease (a commit or a
	 * lease statement) that the server answered was sent. */
	uint64_t lease_sent_us;
	uint64_t grace_ms;		/* others wait this past the lease */
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
	uint64_t commits;		/* commits begun */
	struct pgcommit *flight;	/* the commit under way, or NULL */
	bool doubt;			/* its outcome is unknown: ask */
	struct vec staged;		/* struct store_staged */
	struct vec dirty;		/* struct pgstore_mark, maybe repeated */
	struct vec claims;		/* the same: store_update_soon's */
	struct vec removed;		/* struct pgstore_mark */
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
	struct jobrow_cache cache;
};

static inline struct pgstore *
pgstore(struct store *st)
{
	return (struct pgstore *)st;
}

/* store-pg-sync.c: reads every change since the last read, now or once
 * the read under way is over. */
void pgstore_sync_changes(struct pgstore *s);
/* store-pg.c: the claims that waited for the read go now. */
void pgstore_synced(struct pgstore *s);
/* Reads back the rows of ids (uint64_t), whose writes were refused: each
 * job is told of its row (STORE_CHANGE_UPDATED) even when it is no newer,
 * and of its end when it is gone. Then done(arg), read or not (never when
 * the store is closing). */
void pgstore_refetch(struct pgstore *s, const struct vec *ids,
    void (*done)(void *), void *arg);
/* ids (uint64_t) as a bigint[] literal; NULL out of memory. */
char *pgstore_ids_array(const struct vec *ids);
/* store-pg-cluster.c: the lease, the takeover, cancels of other nodes'
 * jobs; their statements, and the lease as an interval's text. */
extern const char pgstore_lease_sql[];
extern const char pgstore_takeover_sql[];
extern const char pgstore_cancel_sql[];
#define PGSTORE_SYNC_CANCELS						\
	"SELECT job, attempt, signal, by_uid" PGSTORE_SINCE("triage_cancels")
void pgstore_lease_text(const struct pgstore *s, char *buf, size_t size);
void pgstore_renew_lease(struct store *st);
uint64_t pgstore_lease_until_us(const struct store *st);
/* A renewal sent at sent_us was acknowledged. */
void pgstore_lease_acked(struct pgstore *s, uint64_t sent_us);
void pgstore_take_over(struct store *st);
int pgstore_cancel_elsewhere(struct store *st, const struct job *job,
    int sig, unsigned by);
void pgstore_set_busy(struct store *st, unsigned busy);
void pgstore_set_grace(struct store *st, uint64_t grace_ms);
/* The cancels of a result of PGSTORE_SYNC_CANCELS: those of attempts that
 * run here go to the store's cancel_cb. */
void pgstore_read_cancels(struct pgstore *s, const PGresult *res);
/* The nodes of a result of PGSTORE_NODES, for the store. */
void pgstore_read_nodes(struct pgstore *s, const PGresult *res);

/* store-pg-output.c: the statements of captured output, prepared on c
 * (0, or -1 out of memory), and the store's ops of it. */
int pgstore_output_prepare(struct pgconn *c);
int pgstore_output_append(struct store *st, const struct store_output_key *k,
    uint64_t offset, const void *data, size_t len, uint64_t drop_before,
    store_output_done_cb cb, void *arg);
int pgstore_output_read(struct store *st, const struct store_output_key *k,
    int64_t offset, size_t limit, store_output_read_cb cb, void *arg);

#endif
