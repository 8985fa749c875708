/* store.c - the store's front (store.h): the table of jobs and the
 * paused priorities every database keeps alike, and the calls it passes on. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "job.h"
#include "store.h"
#include "store-private.h"
#include "timefmt.h"

void
store_init(struct store *st, const struct store_ops *ops)
{
	memset(st, 0, sizeof *st);
	st->ops = ops;
}

static void
store_free_nodes(struct vec *nodes)
{
	struct store_node *v = nodes->v;
	size_t i;

	for (i = 0; i < nodes->n; i++)
		free(v[i].name);
	vec_free(nodes);
}

int
store_load_nodes(struct store *st, const struct store_node *nodes, size_t n)
{
	struct vec fresh = { 0 };
	struct store_node node;
	size_t i;

	for (i = 0; i < n; i++) {
		node = nodes[i];
		if ((node.name = strdup(nodes[i].name)) == NULL ||
		    vec_push(&fresh, sizeof node, &node) != 0) {
			free(node.name);
			store_free_nodes(&fresh);
			return -1;
		}
	}
	store_free_nodes(&st->nodes);
	st->nodes = fresh;
	return 0;
}

bool
store_node_up(const struct store_node *node)
{
	return node->up && (node->lease_end_us == 0 ||
	    timefmt_mono_us() < node->lease_end_us);
}

const struct store_node *
store_nodes(const struct store *st, size_t *n)
{
	*n = st->nodes.n;
	return st->nodes.v;
}

void
store_fini(struct store *st)
{
	size_t i;

	store_free_nodes(&st->nodes);
	jobtable_free(&st->jobs);
	for (i = 0; i < st->paused.n; i++)
		free(((char **)st->paused.v)[i]);
	vec_free(&st->paused);
}

void
store_load_paused(struct store *st, const char *name)
{
	char *copy = strdup(name);

	/* Out of memory, it starts unpaused: a warning's worth, not more. */
	if (copy != NULL && vec_push(&st->paused, sizeof copy, &copy) != 0)
		free(copy);
}

void
store_close(struct store *st)
{
	if (st != NULL)
		st->ops->close(st);
}

void
store_set_grouping(struct store *st, bool grouping)
{
	st->ops->set_grouping(st, grouping);
}

int
store_add(struct store *st, struct job *job, store_added_cb cb, void *arg)
{
	return st->ops->add(st, job, cb, arg);
}

void
store_update(struct store *st, struct job *job)
{
	st->ops->mark(st, job, STORE_MARK_SYNC);
}

void
store_update_nosync(struct store *st, struct job *job)
{
	st->ops->mark(st, job, STORE_MARK_NOSYNC);
}

uint64_t
store_claim(struct store *st, struct job *job)
{
	if (job->store.claimed)
		return st->claimed_write;
	st->ops->mark(st, job, STORE_MARK_CLAIM);
	return st->ops->write_generation(st);
}

void
store_set_written_cb(struct store *st, store_written_cb cb, void *arg)
{
	st->written_cb = cb;
	st->written_arg = arg;
}

void
store_set_claim_alternates(struct store *st, store_alternates_cb
    alternates_cb, store_moved_cb moved_cb, void *arg)
{
	st->alternates_cb = alternates_cb;
	st->moved_cb = moved_cb;
	st->alternates_arg = arg;
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
		if (vec_push(&st->paused, sizeof copy, &copy) != 0) {
			free(copy);
			return -1;
		}
	} else {
		names = st->paused.v;
		free(names[i]);
		names[i] = names[--st->paused.n];
	}
	st->ops->paused_changed(st);
	return 0;
}

bool
store_pending(const struct store *st)
{
	return st->ops->pending(st);
}

uint64_t
store_generation(const struct store *st)
{
	return st->ops->generation(st);
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
	return st->ops->sync(st, cb, arg);
}

int
store_env(struct store *st, struct job *job, char **cause)
{
	if (job->env != NULL)
		return 0;
	return st->ops->env(st, job, cause);
}

void
store_forget_env(struct store *st, struct job *job)
{
	st->ops->forget_env(st, job);
}

int
store_set_priorities(struct store *st, const char *text, char **cause)
{
	return st->ops->set_priorities(st, text, cause);
}

void
store_renew_lease(struct store *st)
{
	if (st->ops->renew_lease != NULL)
		st->ops->renew_lease(st);
}

uint64_t
store_lease_until_us(const struct store *st)
{
	return st->ops->lease_until_us != NULL ?
	    st->ops->lease_until_us(st) : 0;
}

void
store_lease_lost(struct store *st)
{
	if (st->ops->lease_lost != NULL)
		st->ops->lease_lost(st);
}

void
store_take_over(struct store *st)
{
	if (st->ops->take_over != NULL)
		st->ops->take_over(st);
}

int
store_cancel_elsewhere(struct store *st, const struct job *job, int sig,
    unsigned by)
{
	if (st->ops->cancel_elsewhere == NULL)
		return 0;
	return st->ops->cancel_elsewhere(st, job, sig, by);
}

void
store_set_busy_cb(struct store *st, store_busy_cb cb, void *arg)
{
	if (st->ops->set_busy_cb != NULL)
		st->ops->set_busy_cb(st, cb, arg);
}

void
store_set_grace(struct store *st, uint64_t grace_ms)
{
	if (st->ops->set_grace != NULL)
		st->ops->set_grace(st, grace_ms);
}

int
store_set_shared_resources(struct store *st, const struct store_resource *r,
    size_t n)
{
	if (st->ops->set_shared_resources == NULL)
		return 0;
	return st->ops->set_shared_resources(st, r, n);
}

void
store_set_lease_cb(struct store *st, store_lease_cb cb, void *arg)
{
	st->lease_cb = cb;
	st->lease_arg = arg;
}

void
store_set_takeover_cb(struct store *st, store_takeover_cb cb, void *arg)
{
	st->takeover_cb = cb;
	st->takeover_arg = arg;
}

void
store_set_cancel_cb(struct store *st, store_cancel_cb cb, void *arg)
{
	st->cancel_cb = cb;
	st->cancel_arg = arg;
}

void
store_set_paused_cb(struct store *st, store_paused_cb cb, void *arg)
{
	st->paused_cb = cb;
	st->paused_arg = arg;
}

static bool
store_name_in(const char *name, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

void
store_load_paused_set(struct store *st, const char *const *names, size_t n)
{
	char **mine = st->paused.v, *name;
	size_t i;

	for (i = 0; i < n; i++) {
		if (store_paused(st, names[i]))
			continue;
		store_load_paused(st, names[i]);
		if (st->paused_cb != NULL && store_paused(st, names[i]))
			st->paused_cb(names[i], true, st->paused_arg);
	}
	for (i = 0; i < st->paused.n; ) {
		mine = st->paused.v;
		if (store_name_in(mine[i], names, n)) {
			i++;
			continue;
		}
		name = mine[i];
		mine[i] = mine[--st->paused.n];
		if (st->paused_cb != NULL)
			st->paused_cb(name, false, st->paused_arg);
		free(name);
	}
}

void
store_set_status_cb(struct store *st, store_status_cb cb, void *arg)
{
	st->status_cb = cb;
	st->status_arg = arg;
}

void
store_set_changed_cb(struct store *st, store_changed_cb cb, void *arg)
{
	st->changed_cb = cb;
	st->changed_arg = arg;
}

int
store_remove(struct store *st, uint64_t id)
{
	return st->ops->remove(st, id);
}

const char store_key_taken[] = "a job with this key was stored first, by "
    "another node";

struct job *
store_get(const struct store *st, uint64_t id)
{
	return jobtable_get(&st->jobs, id);
}

struct job *
store_by_key(const struct store *st, uid_t uid, const char *key)
{
	return jobtable_by_key(&st->jobs, uid, key);
}

struct job *
store_next(const struct store *st, uint64_t after_id)
{
	return jobtable_next(&st->jobs, after_id);
}

struct job *
store_next_submitted(const struct store *st, uint64_t after_id)
{
	return jobtable_next_submitted(&st->jobs, after_id);
}

struct job *
store_iter(const struct store *st, size_t *pos)
{
	return jobtable_iter(&st->jobs, pos);
}

struct job *
store_last(const struct store *st)
{
	return jobtable_last(&st->jobs);
}

size_t
store_count(const struct store *st)
{
	return jobtable_count(&st->jobs);
}

int
store_expired(struct store *st, int64_t before_ms, uint64_t *ids, size_t max,
    size_t *n, char **cause)
{
	return st->ops->expired(st, before_ms, ids, max, n, cause);
}

int
store_flush(struct store *st, char **cause)
{
	return st->ops->flush(st, cause);
}

bool
store_keeps_output(const struct store *st)
{
	return st->ops->output_append != NULL;
}

int
store_output_append(struct store *st, const struct store_output_key *k,
    uint64_t offset, const void *data, size_t len, uint64_t drop_before,
    store_output_done_cb cb, void *arg)
{
	if (st->ops->output_append == NULL) {
		errno = ENOTSUP;
		return -1;
	}
	return st->ops->output_append(st, k, offset, data, len, drop_before,
	    cb, arg);
}

int
store_output_drop(struct store *st, const struct store_output_key *k,
    uint64_t before, store_output_done_cb cb, void *arg)
{
	return store_output_append(st, k, before, NULL, 0, before, cb, arg);
}

int
store_output_read(struct store *st, const struct store_output_key *k,
    int64_t offset, size_t limit, store_output_read_cb cb, void *arg)
{
	if (st->ops->output_read == NULL) {
		errno = ENOTSUP;
		return -1;
	}
	return st->ops->output_read(st, k, offset, limit, cb, arg);
}
