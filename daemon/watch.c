/* watch.c - the `watch` method's subscriptions: which jobs a connection
 * follows, and the notification sent on each of their state changes. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <jansson.h>

#include "compat.h"
#include "conn.h"
#include "envelope.h"
#include "jobs.h"
#include "triaged.h"
#include "watch.h"

struct watch {
	TAILQ_ENTRY(watch) entry;	/* in td->watchers, once set */
	struct triaged *td;		/* NULL until set on a connection */
	struct conn *conn;
	struct conn_hook *hook;		/* frees it when conn closes */
	uint64_t *ids;		/* sorted */
	size_t nids;
	char *priority;
};

/* The connections that watch: notifications go through these only, not
 * through every client. Allocated while there is one. */
struct watchers {
	TAILQ_HEAD(, watch) list;
};

static int
watch_cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct watch *
watch_new(const uint64_t *ids, size_t n, const char *priority)
{
	struct watch *w;

	if ((w = calloc(1, sizeof *w)) == NULL)
		return NULL;
	if (n > 0) {
		if ((w->ids = calloc(n, sizeof *ids)) == NULL)
			goto fail;
		memcpy(w->ids, ids, n * sizeof *ids);
		qsort(w->ids, n, sizeof *ids, watch_cmp_id);
		w->nids = n;
	}
	if (priority != NULL && (w->priority = strdup(priority)) == NULL)
		goto fail;
	return w;
fail:
	watch_free(w);
	return NULL;
}

void
watch_free(struct watch *w)
{
	struct triaged *td;

	if (w == NULL)
		return;
	if ((td = w->td) != NULL) {
		TAILQ_REMOVE(&td->watchers->list, w, entry);
		if (TAILQ_EMPTY(&td->watchers->list)) {
			free(td->watchers);
			td->watchers = NULL;
		}
		if (w->hook != NULL)
			conn_hook_remove(w->conn, w->hook);
	}
	free(w->ids);
	free(w->priority);
	free(w);
}

static void
watch_closed_cb(struct conn *conn, void *arg)
{
	struct watch *w = arg;

	(void)conn;
	w->hook = NULL;		/* the connection frees it */
	watch_free(w);
}

int
watch_add(struct conn *conn, struct watch *w, unsigned max)
{
	struct triaged *td = conn_daemon(conn);
	struct watch *last = NULL, *old;
	unsigned n = 0;

	/* A connection's watches stay side by side in the list, so that a
	 * job that several of them match is sent to it once. */
	if (td->watchers != NULL)
		TAILQ_FOREACH(old, &td->watchers->list, entry)
			if (old->conn == conn) {
				last = old;
				n++;
			}
	if (n >= max)
		return -2;
	if (td->watchers == NULL) {
		if ((td->watchers = calloc(1, sizeof *td->watchers)) == NULL)
			return -1;
		TAILQ_INIT(&td->watchers->list);
	}
	if ((w->hook = conn_on_close(conn, watch_closed_cb, w)) == NULL) {
		if (TAILQ_EMPTY(&td->watchers->list)) {
			free(td->watchers);
			td->watchers = NULL;
		}
		return -1;
	}
	w->td = td;
	w->conn = conn;
	if (last != NULL)
		TAILQ_INSERT_AFTER(&td->watchers->list, last, w, entry);
	else
		TAILQ_INSERT_TAIL(&td->watchers->list, w, entry);
	return 0;
}

static bool
watch_matches(const struct watch *w, const struct job *job)
{
	if (w->priority != NULL && strcmp(w->priority, job->priority) != 0)
		return false;
	return w->nids == 0 || bsearch(&job->id, w->ids, w->nids,
	    sizeof *w->ids, watch_cmp_id) != NULL;
}

void
watch_notify(struct triaged *td, const struct job *job)
{
	struct watch *w, *next;
	struct conn *sent = NULL;	/* the last one sent to */
	json_t *msg = NULL;

	if (td->watchers == NULL)
		return;
	/* A connection too far behind is dropped later, not under us; the
	 * safe walk is for whatever else sending may do. */
	TAILQ_FOREACH_SAFE(w, &td->watchers->list, entry, next) {
		if (w->conn == sent || !watch_matches(w, job))
			continue;
		if (msg == NULL && (msg = envelope_notification("job",
		    jobs_json(td, job))) == NULL)
			return;
		conn_send(w->conn, msg);
		sent = w->conn;
	}
	json_decref(msg);
}
