/* watch.c - the `watch` method's subscriptions: which jobs a connection
 * follows, and the notification sent on each of their state changes. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conn.h"
#include "jobs.h"
#include "watch.h"

struct watch {
	uint64_t *ids;		/* sorted */
	size_t nids;
	char *priority;
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
	if (w == NULL)
		return;
	free(w->ids);
	free(w->priority);
	free(w);
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
	struct conn *conn, *next;
	json_t *msg = NULL;

	for (conn = conn_first(); conn != NULL; conn = next) {
		/* Sending may drop a connection that stopped reading. */
		next = conn_next(conn);
		if (conn_watch(conn) == NULL ||
		    !watch_matches(conn_watch(conn), job))
			continue;
		if (msg == NULL && (msg = json_pack("{ss ss so}",
		    "jsonrpc", "2.0", "method", "job",
		    "params", jobs_json(td, job))) == NULL)
			return;
		conn_send(conn, msg);
	}
	json_decref(msg);
}
