/* store-private.h - what the store's front (store.c) and its two databases
 * (sqlite-store.c, pg-store.c) share, and nothing else includes. */
#ifndef TRIAGE_STORE_PRIVATE_H
#define TRIAGE_STORE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobtable.h"
#include "store.h"
#include "vec.h"

/* How a change must be written (store_update and its kin). */
enum store_mark {
	STORE_MARK_SYNC,	/* store_update */
	STORE_MARK_NOSYNC,	/* store_update_nosync */
	STORE_MARK_CLAIM,	/* store_claim */
};

/* A new job waiting for its commit, and whom to tell. */
struct store_staged {
	struct job *job;
	store_added_cb cb;
	void *arg;
};

/* A store_sync waiting for its commit. */
struct store_sync {
	store_synced_cb cb;
	void *arg;
};

/* What each database does its own way; the rest of store.h is the front's,
 * on the table and lists below. */
struct store_ops {
	void (*close)(struct store *st);
	void (*set_grouping)(struct store *st, bool grouping);
	int (*add)(struct store *st, struct job *job, store_added_cb cb,
	    void *arg);
	void (*mark)(struct store *st, struct job *job, enum store_mark how);
	uint64_t (*write_generation)(const struct store *st);
	/* The paused list changed: write it with the next commit. */
	void (*paused_changed)(struct store *st);
	bool (*pending)(const struct store *st);
	uint64_t (*generation)(const struct store *st);
	int (*sync)(struct store *st, store_synced_cb cb, void *arg);
	int (*env)(struct store *st, struct job *job, char **cause);
	void (*forget_env)(struct store *st, struct job *job);
	int (*set_priorities)(struct store *st, const char *text,
	    char **cause);
	/* NULL for a store that shares nothing. */
	void (*renew_lease)(struct store *st);
	uint64_t (*lease_until_us)(const struct store *st);
	void (*lease_lost)(struct store *st);
	void (*take_over)(struct store *st);
	int (*cancel_elsewhere)(struct store *st, const struct job *job,
	    int sig, unsigned by);
	void (*set_busy_cb)(struct store *st, store_busy_cb cb, void *arg);
	void (*set_grace)(struct store *st, uint64_t grace_ms);
	int (*set_shared_resources)(struct store *st,
	    const struct store_resource *r, size_t n);
	int (*remove)(struct store *st, uint64_t id);
	int (*expired)(struct store *st, int64_t before_ms, uint64_t *ids,
	    size_t max, size_t *n, char **cause);
	int (*flush)(struct store *st, char **cause);
	/* Captured output (store_keeps_output): NULL for a store that
	 * keeps none. */
	int (*output_append)(struct store *st,
	    const struct store_output_key *k, uint64_t offset,
	    const void *data, size_t len, uint64_t drop_before,
	    store_output_done_cb cb, void *arg);
	int (*output_read)(struct store *st,
	    const struct store_output_key *k, int64_t offset, size_t limit,
	    store_output_read_cb cb, void *arg);
};

/* The first member of each database's own store. */
struct store {
	const struct store_ops *ops;
	struct jobtable jobs;
	struct vec paused;		/* char *, the paused priorities */
	struct vec nodes;		/* struct store_node, by name */
	store_committed_cb committed_cb;
	void *committed_arg;
	store_written_cb written_cb;
	void *written_arg;
	store_alternates_cb alternates_cb;
	store_moved_cb moved_cb;
	void *alternates_arg;
	store_status_cb status_cb;
	void *status_arg;
	store_changed_cb changed_cb;
	void *changed_arg;
	store_cancel_cb cancel_cb;
	void *cancel_arg;
	store_takeover_cb takeover_cb;
	void *takeover_arg;
	store_lease_cb lease_cb;
	void *lease_arg;
	store_paused_cb paused_cb;
	void *paused_arg;
	struct store_commit_stats stats;
	/* The write that holds the claims made by inserts (job's
	 * store.claimed), while their callbacks run. */
	uint64_t claimed_write;
};

/* For a database's open: the front's part set up (ops, empty lists). */
void store_init(struct store *st, const struct store_ops *ops);
/* For a database's close: the front's part freed, every job with it. */
void store_fini(struct store *st);
/* For loading: a paused priority read from the database. */
void store_load_paused(struct store *st, const char *name);
/* For reading changes: the paused priorities become names[0..n); each
 * that changes is told to paused_cb. */
void store_load_paused_set(struct store *st, const char *const *names,
    size_t n);
/* For loading: the nodes become the n read (names copied). 0, or -1 out
 * of memory with the old ones kept. */
int store_load_nodes(struct store *st, const struct store_node *nodes,
    size_t n);

#endif
