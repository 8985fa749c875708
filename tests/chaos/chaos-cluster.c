/* chaos-cluster.c - the chaos test's world: a PostgreSQL primary with a
 * streaming standby, and three real triaged, each through proxies of its own. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "triage/client.h"
#include "chaos-cluster.h"
#include "harness.h"
#include "tpg.h"
#include "tproxy.h"
#include "tsupport-dir.h"
#include "tsupport-proc.h"

/* Node i's conninfo: both servers through its own proxies, the writable
 * one chosen at each connection. */
static char *
chaos_cluster_conninfo(const struct chaos_cluster *cc, unsigned i,
    const char *db)
{
	char *conninfo;

	assert_int_not_equal(asprintf(&conninfo, "host=%s,%s port=%d,%d "
	    "dbname=%s target_session_attrs=read-write",
	    tproxy_dir(cc->px[i][0]), tproxy_dir(cc->px[i][1]),
	    tpg_port(cc->pg[0]), tpg_port(cc->pg[1]), db), -1);
	return conninfo;
}

struct chaos_cluster *
chaos_cluster_start(bool sync)
{
	struct chaos_cluster *cc;
	struct tsupport_err err;
	char conf[2048], daemon[128];
	unsigned i, k;

	assert_non_null(cc = calloc(1, sizeof *cc));
	if (tsupport_dir_make(cc->dir, sizeof cc->dir, "/tmp", "chaos",
	    &err) == -1)
		fail_msg("%s", err.msg);
	snprintf(cc->ledger, sizeof cc->ledger, "%s/ledger", cc->dir);
	if (tsupport_proc_beside("chaos-job", 0, cc->job, sizeof cc->job) ==
	    -1)
		fail_msg("readlink /proc/self/exe: %s", strerror(errno));
	if ((cc->pg[0] = tpg_start()) == NULL) {
		tremove_dir(cc->dir);
		free(cc);
		skip();
		return NULL;
	}
	cc->sync = sync;
	cc->pg[1] = tpg_standby_start(cc->pg[0], sync);
	for (i = 0; i < CHAOS_NODES; i++)
		for (k = 0; k < 2; k++)
			cc->px[i][k] = tproxy_start(tpg_host(cc->pg[k]),
			    tpg_port(cc->pg[k]));
	/* tnodes makes its database on the group's server: the primary. */
	tpg_group = cc->pg[0];
	cc->cl = tnodes_new(CHAOS_NODES);
	tpg_group = NULL;
	cc->cl->lease = CHAOS_LEASE;
	for (i = 0; i < CHAOS_NODES; i++)
		cc->cl->via[i] = chaos_cluster_conninfo(cc, i, cc->cl->db);
	/* As tnodes_start_nodes, but info logs (CHAOS_LOG=debug for
	 * more): a debug log of minutes of load would be most of the
	 * machine's writes (the harness adds debug unless the config
	 * begins with a log_level). */
	snprintf(daemon, sizeof daemon, "log_level = %s\nslots = %d\n"
	    "kill_grace = 1s\n", getenv("CHAOS_LOG") != NULL ?
	    getenv("CHAOS_LOG") : "info", CHAOS_SLOTS);
	for (i = 0; i < CHAOS_NODES; i++) {
		tnodes_conf(cc->cl, i, daemon, conf, sizeof conf);
		cc->cl->d[i] = tdaemon_start(conf);
		cc->cl->c[i] = tconnect(cc->cl->d[i]);
	}
	return cc;
}

/* Whether node i answers, and says every node is up; what it says of
 * them into view. */
static bool
chaos_cluster_up_at(struct chaos_cluster *cc, unsigned i, char *view,
    size_t size)
{
	struct triage_error e;
	json_t *stats, *node;
	size_t k, up = 0;
	int n = 0;

	if ((stats = triage_client_call(cc->cl->c[i], "stats", NULL,
	    HARNESS_TIMEOUT_MS, &e)) == NULL)
		fail_msg("stats at node %c: %s", 'a' + i, e.message);
	view[0] = '\0';
	json_array_foreach(json_object_get(stats, "nodes"), k, node) {
		up += json_is_true(json_object_get(node, "up"));
		if (n >= 0 && (size_t)n < size)
			n += snprintf(view + n, size - (size_t)n, " %s %s",
			    json_string_value(json_object_get(node, "node")),
			    json_is_true(json_object_get(node, "up")) ? "up" :
			    "down");
	}
	json_decref(stats);
	return up == CHAOS_NODES;
}

void
chaos_cluster_wait_up(struct chaos_cluster *cc, int timeout_ms)
{
	int64_t deadline = tdeadline(timeout_ms);
	char view[256];
	unsigned i;

	for (i = 0; i < CHAOS_NODES; i++)
		while (!chaos_cluster_up_at(cc, i, view, sizeof view)) {
			tcheck_deadline(deadline, "node %c to see every node "
			    "up (it says:%s)", 'a' + i, view);
			poll(NULL, 0, 50);
		}
}

void
chaos_cluster_reconnect(struct chaos_cluster *cc, unsigned i)
{
	triage_client_free(cc->cl->c[i]);
	cc->cl->c[i] = tconnect(cc->cl->d[i]);
}

/* A copy of the file from as to in cc->dir; what cannot be copied is
 * said and passed by. */
static void
chaos_cluster_copy(const struct chaos_cluster *cc, const char *from,
    const char *as)
{
	char path[sizeof cc->dir + 32], buf[65536];
	int in, out;
	ssize_t n;

	snprintf(path, sizeof path, "%s/%s", cc->dir, as);
	if ((in = open(from, O_RDONLY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "chaos: %s: %s\n", from, strerror(errno));
		return;
	}
	if ((out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1) {
		fprintf(stderr, "chaos: %s: %s\n", path, strerror(errno));
		close(in);
		return;
	}
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
}

static bool chaos_cluster_kept;

void
chaos_cluster_keep_logs(struct chaos_cluster *cc)
{
	char from[300], as[32];
	unsigned i;

	for (i = 0; i < CHAOS_NODES; i++) {
		snprintf(as, sizeof as, "node-%c.log", 'a' + i);
		chaos_cluster_copy(cc, cc->cl->d[i]->log, as);
	}
	for (i = 0; i < 2; i++) {
		snprintf(from, sizeof from, "%s/log", tpg_host(cc->pg[i]));
		snprintf(as, sizeof as, "postgres-%u.log", i);
		chaos_cluster_copy(cc, from, as);
	}
	chaos_cluster_kept = true;
	printf("chaos: the ledger and the logs are kept in %s\n", cc->dir);
}

void
chaos_cluster_end(struct chaos_cluster *cc)
{
	unsigned i;

	tnodes_end(cc->cl);
	for (i = 0; i < CHAOS_NODES; i++) {
		tproxy_free(cc->px[i][0]);
		tproxy_free(cc->px[i][1]);
	}
	tpg_free(cc->pg[0]);
	tpg_free(cc->pg[1]);
	if (!chaos_cluster_kept)
		tremove_dir(cc->dir);
	free(cc);
}
