/* config-load.c - triage.conf read into a struct config: the file through
 * config-parse.c, then the checks and defaults that need the whole file. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caller-env.h"
#include "config.h"
#include "config-parse.h"
#include "config-table.h"
#include "cpus.h"
#include "listenaddr.h"
#include "nodename.h"
#include "resenv.h"

/* Where the file set a [daemon] key; 0 if it did not. */
static unsigned
config_daemon_line(const struct config_parse *ps, const char *name)
{
	int i;

	i = config_table_find(config_table_daemon, CONFIG_TABLE_DAEMON_KEYS,
	    name);
	return i == -1 ? 0 : ps->daemon_lines[i];
}

static int
config_priority_cmp(const void *a, const void *b)
{
	const struct config_priority *pa = a, *pb = b;

	if (pa->rank != pb->rank)
		return pa->rank < pb->rank ? -1 : 1;
	return pa->line < pb->line ? -1 : pa->line > pb->line;
}

/* The computed default of state_dir (config.md): root keeps its state in
 * /var/lib, anyone else under the XDG state directory. */
static void
config_default_state_dir(struct config_parse *ps, struct config *cfg,
    const struct caller_env *env)
{
	const char *xdg = env->xdg_state_home, *home = env->home;

	if (env->euid == 0)
		cfg->state_dir = strdup("/var/lib/triage");
	else if (xdg != NULL && xdg[0] == '/') {
		/* The XDG spec ignores relative paths, and so do we. */
		if (asprintf(&cfg->state_dir, "%s/triage", xdg) == -1)
			cfg->state_dir = NULL;
	} else {
		if (home == NULL || home[0] != '/') {
			config_parse_error(ps, 0, "state_dir: not set, and "
			    "there is no home directory to put it in");
			return;
		}
		if (asprintf(&cfg->state_dir, "%s/.local/state/triage",
		    home) == -1)
			cfg->state_dir = NULL;
	}
	if (cfg->state_dir == NULL)
		ps->oom = true;
}

/* Every [priority.*] has a rank, and no two the same. */
static void
config_check_ranks(struct config_parse *ps)
{
	struct config_parse_priority *pp, *first;
	unsigned i, j;
	int rank;

	rank = config_table_find(config_table_priority,
	    CONFIG_TABLE_PRIORITY_KEYS, "rank");

	for (i = 0; i < ps->npriorities; i++) {
		pp = &ps->priorities[i];
		if (pp->lines[rank] == 0) {
			config_parse_error(ps, pp->p.line, "rank: missing from "
			    "[priority.%s]", pp->p.name);
			continue;
		}
		if (!pp->ok[rank])
			continue;
		/* Quadratic, but there are at most 64 of them. */
		for (j = 0; j < i; j++) {
			first = &ps->priorities[j];
			if (!first->ok[rank] ||
			    first->p.rank != pp->p.rank)
				continue;
			config_parse_error(ps, pp->lines[rank], "rank: "
			    "priority \"%s\" has rank %u, like priority \"%s\" "
			    "on line %u; ranks must be unique", pp->p.name,
			    pp->p.rank, first->p.name,
			    first->lines[rank]);
			break;
		}
	}
}

/* default_priority names a priority of the file, or a built-in one when
 * the file has none; checked even when other things are wrong. */
static void
config_check_default(struct config_parse *ps)
{
	const char *name = ps->default_priority;
	unsigned i;

	if (name == NULL)
		return;
	for (i = 0; i < ps->npriorities; i++) {
		if (strcmp(ps->priorities[i].p.name, name) == 0)
			return;
	}
	for (i = 0; ps->npriorities == 0 && i < CONFIG_TABLE_BUILTINS; i++) {
		if (strcmp(config_table_builtins[i].name, name) == 0)
			return;
	}
	config_parse_error(ps, config_daemon_line(ps, "default_priority"),
	    "default_priority: no priority called \"%s\"", name);
}

/* The priorities sorted by rank: the file's, or the built-in three when
 * it has none; an output_keep they do not set is the daemon's. */
static void
config_priorities(struct config_parse *ps, struct config *cfg)
{
	const struct config_table_builtin *b;
	struct config_priority *p;
	unsigned i, n;
	int keep;

	keep = config_table_find(config_table_priority,
	    CONFIG_TABLE_PRIORITY_KEYS, "output_keep");
	n = ps->npriorities > 0 ? ps->npriorities : CONFIG_TABLE_BUILTINS;
	cfg->priorities = calloc(n, sizeof *cfg->priorities);
	if (cfg->priorities == NULL) {
		ps->oom = true;
		return;
	}
	cfg->npriorities = n;
	for (i = 0; i < n; i++) {
		p = &cfg->priorities[i];
		if (ps->npriorities > 0) {
			*p = ps->priorities[i].p;
			if (ps->priorities[i].lines[keep] == 0)
				p->output_keep = cfg->output_keep;
			continue;
		}
		b = &config_table_builtins[i];
		config_parse_defaults(ps, config_table_priority,
		    CONFIG_TABLE_PRIORITY_KEYS, p);
		strcpy(p->name, b->name);
		p->rank = b->rank;
		p->output_keep = cfg->output_keep;
	}
	qsort(cfg->priorities, n, sizeof *cfg->priorities,
	    config_priority_cmp);
}

/* Where the file set an [http] key; 0 if it did not. */
static unsigned
config_http_line(const struct config_parse *ps, const char *name)
{
	int i;

	i = config_table_find(config_table_http, CONFIG_TABLE_HTTP_KEYS, name);
	return i == -1 ? 0 : ps->http_lines[i];
}

/* An [http] section listens somewhere, and what it lets in without a
 * token can only be reached from this host. */
static void
config_check_http(struct config_parse *ps, struct config *cfg)
{
	const struct config_http *h = &cfg->http;
	struct listenaddr addr;
	const char *why;

	if (ps->http_line == 0)
		return;
	if (h->listen == NULL) {
		if (config_http_line(ps, "listen") == 0)
			config_parse_error(ps, ps->http_line, "listen: missing "
			    "from [http] (HOST:PORT or a Unix socket path)");
		return;
	}
	if (h->auth == CONFIG_HTTP_AUTH_TOKEN && h->token_file == NULL) {
		config_parse_error(ps, ps->http_line, "token_file: missing "
		    "from [http]: auth = token (the default) needs it; "
		    "auth = none is for a Unix socket or a loopback address");
	}
	if (h->auth == CONFIG_HTTP_AUTH_NONE &&
	    listenaddr_parse(h->listen, &addr, &why) == 0 && !addr.is_local) {
		config_parse_error(ps, config_http_line(ps, "auth"), "auth: "
		    "none lets anyone who can connect act on every job, and "
		    "%s is reachable from other hosts: listen on a loopback "
		    "address or a Unix socket, or use auth = token",
		    h->listen);
	}
}

/* What a daemon calls itself when [cluster] does not say: its host's
 * name up to the first '.'. Without the section nobody else sees the
 * name, so a host name that gives none is no reason to refuse to start. */
static void
config_default_node(struct config_parse *ps, struct config *cfg,
    const struct caller_env *env)
{
	char host[256], node[NODENAME_MAX + 1];
	const char *name = env->hostname;

	if (name == NULL) {
		if (gethostname(host, sizeof host) == -1)
			host[0] = '\0';
		host[sizeof host - 1] = '\0';
		name = host;
	}
	if (nodename_from_host(name, node) == -1) {
		if (ps->cluster_line != 0) {
			config_parse_error(ps, ps->cluster_line, "node: not set, "
			    "and the host name \"%s\" does not make a node "
			    "name (%s, up to the first .): set node in "
			    "[cluster]", name, NODENAME_FORM);
			return;
		}
		strcpy(node, "localhost");
	}
	if ((cfg->cluster.node = strdup(node)) == NULL)
		ps->oom = true;
}

/* A [cluster] section names its database; every config names its node. */
static void
config_check_cluster(struct config_parse *ps, struct config *cfg,
    const struct caller_env *env)
{
	int node = config_table_find(config_table_cluster,
	    CONFIG_TABLE_CLUSTER_KEYS, "node");
	int pg = config_table_find(config_table_cluster,
	    CONFIG_TABLE_CLUSTER_KEYS, "postgresql");

	cfg->cluster.enabled = ps->cluster_line != 0;
	if (cfg->cluster.enabled && ps->cluster_lines[pg] == 0) {
		config_parse_error(ps, ps->cluster_line, "postgresql: missing "
		    "from [cluster] (a libpq connection string such as "
		    "\"host=db1 dbname=triage user=triage\")");
	}
	/* A bad node given is reported already; no default hides it. */
	if (ps->cluster_lines[node] == 0)
		config_default_node(ps, cfg, env);
}

/* Where a resource set key; 0 if it did not. */
static unsigned
config_resource_line(const struct config_parse_resource *pr,
    const char *name)
{
	int i;

	i = config_table_find(config_table_resource,
	    CONFIG_TABLE_RESOURCE_KEYS, name);
	return i == -1 ? 0 : pr->lines[i];
}

/* The variables triage gives every job, or reads in a job's environment
 * (the triage command run by a job): no resource's may be one. */
static const char *const config_resource_reserved[] = {
	"TRIAGE_JOB_ID", "TRIAGE_PRIORITY", "TRIAGE_ATTEMPT",
	"TRIAGE_SOCKET", "TRIAGE_CONFIG", NULL,
};

/* The variables resource i gives a job clash with none triage sets and
 * none of an earlier resource. */
static void
config_check_resource_vars(struct config_parse *ps, unsigned i)
{
	const struct config_parse_resource *pr = &ps->resources[i], *other;
	char var[RESENV_VAR_MAX], ovar[RESENV_VAR_MAX];
	const char *const *r;
	unsigned j;

	resenv_var(pr->r.name, var);
	for (r = config_resource_reserved; *r != NULL; r++)
		if (strcmp(var, *r) == 0)
			config_parse_error(ps, pr->r.line, "[resource.%s]: its "
			    "units would be given in %s, which is triage's "
			    "own: choose another name", pr->r.name, var);
	for (j = 0; j < i; j++) {
		other = &ps->resources[j];
		resenv_var(other->r.name, ovar);
		if (strcmp(var, ovar) == 0)
			config_parse_error(ps, pr->r.line, "[resource.%s]: its "
			    "units would be given in %s, as those of "
			    "[resource.%s] on line %u: choose another name",
			    pr->r.name, var, other->r.name, other->r.line);
		if (pr->r.env != NULL && other->r.env != NULL &&
		    strcmp(pr->r.env, other->r.env) == 0)
			config_parse_error(ps, config_resource_line(pr, "env"),
			    "env: %s is already [resource.%s]'s (line %u)",
			    pr->r.env, other->r.name,
			    config_resource_line(other, "env"));
	}
}

/* Each [resource.*] has units or a count, not both, and only the keys
 * that make sense for its kind. */
static void
config_check_resources(struct config_parse *ps)
{
	struct config_parse_resource *pr;
	unsigned i, units, count, line;

	for (i = 0; i < ps->nresources; i++) {
		pr = &ps->resources[i];
		units = config_resource_line(pr, "units");
		count = config_resource_line(pr, "count");
		if (units == 0 && count == 0)
			config_parse_error(ps, pr->r.line, "[resource.%s]: "
			    "neither units nor count: give its units' names "
			    "(units = 0,1) or how many there are (count = 4)",
			    pr->r.name);
		else if (units != 0 && count != 0)
			config_parse_error(ps, units > count ? units : count,
			    "[resource.%s]: both units (line %u) and count "
			    "(line %u): give one", pr->r.name, units, count);
		else if (count != 0) {
			if ((line = config_resource_line(pr, "share")) != 0)
				config_parse_error(ps, line, "share: only for "
				    "a resource of named units; [resource.%s] "
				    "is counted", pr->r.name);
			if ((line = config_resource_line(pr, "env")) != 0)
				config_parse_error(ps, line, "env: only for a "
				    "resource of named units; [resource.%s] is "
				    "counted, and no job is told which of its "
				    "units it has", pr->r.name);
		} else if (pr->r.cluster)
			config_parse_error(ps, config_resource_line(pr,
			    "scope"), "scope: cluster is only for a counted "
			    "resource; [resource.%s] has named units, which "
			    "are this node's", pr->r.name);
		config_check_resource_vars(ps, i);
	}
}

/* The resources, in file order, moved out of the parse: a unit-named one
 * counts its units. */
static void
config_resources(struct config_parse *ps, struct config *cfg)
{
	struct config_resource *r;
	unsigned i;

	if (ps->nresources == 0)
		return;
	cfg->resources = calloc(ps->nresources, sizeof *cfg->resources);
	if (cfg->resources == NULL) {
		ps->oom = true;
		return;
	}
	for (i = 0; i < ps->nresources; i++) {
		r = &cfg->resources[i];
		*r = ps->resources[i].r;
		ps->resources[i].r.units = NULL;
		ps->resources[i].r.env = NULL;
		if (r->units != NULL)
			r->count = r->nunits;
	}
	cfg->nresources = ps->nresources;
}

/* What can only be decided once the whole file is read. */
static void
config_finish(struct config_parse *ps, struct config *cfg,
    const struct config_opts *opts)
{
	const struct config_key *slots;
	int i;

	config_check_ranks(ps);
	config_check_default(ps);
	config_check_http(ps, cfg);
	config_check_cluster(ps, cfg, opts->env);
	config_check_resources(ps);
	if (ps->nerrors > 0 || ps->oom)
		return;

	config_priorities(ps, cfg);
	config_resources(ps, cfg);
	if (ps->oom)
		return;
	i = config_priority_find(cfg, ps->default_priority);
	cfg->default_priority = i != -1 ? (unsigned)i : cfg->npriorities / 2;

	if (cfg->slots_auto) {
		/* No more than a number given may be: the table's bound. */
		slots = &config_table_daemon[config_table_find(
		    config_table_daemon, CONFIG_TABLE_DAEMON_KEYS, "slots")];
		cfg->slots = cpus_usable(opts->cpu_max);
		if (cfg->slots > slots->max)
			cfg->slots = (unsigned)slots->max;
	}
	if (cfg->workers_auto || cfg->workers < cfg->slots)
		cfg->workers = cfg->slots;

	if (cfg->state_dir == NULL)
		config_default_state_dir(ps, cfg, opts->env);

	/* Only root can run a job as someone else. */
	if (opts->env->euid != 0)
		cfg->run_as_submitter = false;
	else if (config_daemon_line(ps, "run_as_submitter") == 0)
		cfg->run_as_submitter = true;
}

/* Reads opts->path into cfg. A missing optional file is no problem: cfg
 * keeps the built-in defaults and a NULL path. */
static void
config_read(struct config_parse *ps, struct config *cfg,
    const struct config_opts *opts, int *open_errno)
{
	FILE *f;

	f = fopen(opts->path, "re");
	if (f == NULL) {
		if (errno == ENOENT && opts->optional)
			return;
		*open_errno = errno;
		config_parse_error(ps, 0, "cannot open: %s", strerror(errno));
		return;
	}
	cfg->path = strdup(opts->path);
	if (cfg->path == NULL)
		ps->oom = true;
	else
		config_parse_file(ps, f);
	fclose(f);
}

struct config *
config_load(const struct config_opts *opts, char **cause)
{
	struct config_parse ps;
	struct config *cfg;
	int open_errno = 0;
	char *text;

	if (cause != NULL)
		*cause = NULL;
	cfg = calloc(1, sizeof *cfg);
	if (cfg == NULL || config_parse_init(&ps, opts->path, cfg) == -1) {
		free(cfg);
		if (cause != NULL)
			*cause = strdup("out of memory");
		errno = ENOMEM;
		return NULL;
	}

	config_parse_defaults(&ps, config_table_daemon,
	    CONFIG_TABLE_DAEMON_KEYS, cfg);
	config_parse_defaults(&ps, config_table_http, CONFIG_TABLE_HTTP_KEYS,
	    cfg);
	config_parse_defaults(&ps, config_table_cluster,
	    CONFIG_TABLE_CLUSTER_KEYS, cfg);
	if (opts->path != NULL)
		config_read(&ps, cfg, opts, &open_errno);
	if (cfg->path == NULL && ps.nerrors == 0)
		ps.path = NULL;	/* built-in defaults: no file to name */
	if (!ps.oom)
		config_finish(&ps, cfg, opts);

	if (ps.nerrors == 0 && !ps.oom) {
		config_parse_clear(&ps);
		return cfg;
	}
	text = ps.oom ? NULL : config_parse_cause(&ps);
	if (text == NULL) {
		if (ps.path != NULL && asprintf(&text, "%s: out of memory",
		    ps.path) == -1)
			text = NULL;
		if (text == NULL)
			text = strdup("out of memory");
		errno = ENOMEM;
	} else
		errno = open_errno != 0 ? open_errno : EINVAL;
	config_parse_clear(&ps);
	config_free(cfg);
	if (cause != NULL)
		*cause = text;
	else
		free(text);
	return NULL;
}

void
config_free(struct config *cfg)
{
	unsigned i;

	if (cfg == NULL)
		return;
	free(cfg->path);
	free(cfg->socket);
	free(cfg->state_dir);
	free(cfg->http.listen);
	free(cfg->http.token_file);
	free(cfg->http.dashboard_dir);
	free(cfg->cluster.postgresql);
	free(cfg->cluster.node);
	free(cfg->priorities);
	for (i = 0; i < cfg->nresources; i++)
		config_parse_resource_clear(&cfg->resources[i]);
	free(cfg->resources);
	free(cfg);
}

const char *
config_path(const char *flag, const struct caller_env *env, bool *optional)
{
	bool opt = false;

	if (flag == NULL) {
		if (env->triage_config != NULL && env->triage_config[0] != '\0')
			flag = env->triage_config;
		else {
			flag = CONFIG_DEFAULT_PATH;
			opt = true;
		}
	}
	if (optional != NULL)
		*optional = opt;
	return flag;
}

int
config_resource_find(const struct config *cfg, const char *name)
{
	unsigned i;

	if (name == NULL)
		return -1;
	for (i = 0; i < cfg->nresources; i++) {
		if (strcmp(cfg->resources[i].name, name) == 0)
			return (int)i;
	}
	return -1;
}

int
config_priority_find(const struct config *cfg, const char *name)
{
	unsigned i;

	if (name == NULL)
		return -1;
	for (i = 0; i < cfg->npriorities; i++) {
		if (strcmp(cfg->priorities[i].name, name) == 0)
			return (int)i;
	}
	return -1;
}
