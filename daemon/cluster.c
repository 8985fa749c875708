/* cluster.c - this daemon as a node of a cluster: the store it shares with
 * the other nodes through PostgreSQL, and what it says of it in the log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "config.h"
#include "log.h"
#include "store.h"
#include "triaged.h"

char *
cluster_priorities_text(const struct config *cfg)
{
	const struct config_priority *p;
	char *text, *more;
	unsigned i;

	if (asprintf(&text, "policy %s", cfg->policy) < 0)
		return NULL;
	for (i = 0; i < cfg->npriorities; i++) {
		p = &cfg->priorities[i];
		if (asprintf(&more, "%s; %s rank=%u weight=%u max_queued=%u "
		    "max_running=%u", text, p->name, p->rank, p->weight,
		    p->max_queued, p->max_running) < 0) {
			free(text);
			return NULL;
		}
		free(text);
		text = more;
	}
	return text;
}

/* The database went away or came back: said once each time, with why. */
static void
cluster_status_cb(bool up, const char *cause, void *arg)
{
	(void)arg;
	if (up && cause == NULL)
		log_notice("cluster: connected to PostgreSQL");
	else if (up)
		log_warnx("cluster: %s", cause);
	else
		log_warnx("cluster: PostgreSQL is unreachable: %s; new jobs "
		    "are refused, running ones go on, and their ends are "
		    "written once it is back (reconnecting)", cause);
}

int
cluster_open_store(struct triaged *td, char **cause)
{
	const struct config *cfg = td->cfg;
	struct store_pg_options o = {
		.conninfo = cfg->cluster.postgresql,
		.node = cfg->cluster.node,
		.slots = cfg->slots,
		.lease_ms = cfg->cluster.lease_ms,
		.grace_ms = cfg->kill_grace_ms + CLUSTER_SLACK_MS,
	};
	char *prios;

	if ((prios = cluster_priorities_text(cfg)) == NULL) {
		*cause = strdup("out of memory");
		return -1;
	}
	o.priorities = prios;
	td->store = store_open_pg(td->base, &o, cause);
	free(prios);
	if (td->store == NULL)
		return -1;
	store_set_status_cb(td->store, cluster_status_cb, td);
	log_notice("cluster: node %s, %zu jobs in the cluster's database",
	    cfg->cluster.node, store_count(td->store));
	return 0;
}

int
cluster_reload_check(struct triaged *td, const struct config *new,
    char **cause)
{
	char *old_text, *new_text;
	int rc = 0;

	if (!td->cfg->cluster.enabled)
		return 0;
	old_text = cluster_priorities_text(td->cfg);
	new_text = cluster_priorities_text(new);
	if (old_text == NULL || new_text == NULL) {
		*cause = strdup("out of memory");
		rc = -1;
	} else if (strcmp(old_text, new_text) != 0)
		rc = store_set_priorities(td->store, new_text, cause);
	free(old_text);
	free(new_text);
	return rc;
}

/* Another node of that name, as last read; NULL when there is none. */
static const struct store_node *
cluster_node_find(struct triaged *td, const char *name)
{
	const struct store_node *nodes;
	size_t i, n;

	nodes = store_nodes(td->store, &n);
	for (i = 0; i < n; i++)
		if (strcmp(nodes[i].name, name) == 0)
			return &nodes[i];
	return NULL;
}

bool
cluster_has_node(struct triaged *td, const char *name)
{
	return strcmp(name, td->cfg->cluster.node) == 0 ||
	    cluster_node_find(td, name) != NULL;
}

bool
cluster_node_up(struct triaged *td, const char *name)
{
	const struct store_node *node;

	if (strcmp(name, td->cfg->cluster.node) == 0)
		return true;
	node = cluster_node_find(td, name);
	return node != NULL && store_node_up(node);
}

json_t *
cluster_nodes_json(struct triaged *td)
{
	const struct store_node *nodes;
	json_t *a;
	size_t i, n;

	if (!td->cfg->cluster.enabled)
		return NULL;
	nodes = store_nodes(td->store, &n);
	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{ss sI sI sb}",
		    "node", nodes[i].name,
		    "slots", (json_int_t)nodes[i].slots,
		    "slots_busy", (json_int_t)nodes[i].busy,
		    "up", strcmp(nodes[i].name, td->cfg->cluster.node) == 0 ?
		    nodes[i].up : store_node_up(&nodes[i])));
	return a;
}
