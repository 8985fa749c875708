/* tnodes.c - for the daemon tests: a cluster of real triaged on one real
 * PostgreSQL, each node started, asked and waited on over its socket. */
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "triage/client.h"
#include "harness.h"
#include "tnodes.h"
#include "tpg.h"

void
tnodes_conf(const struct tnodes *cl, unsigned i, const char *extra,
    char *buf, size_t size)
{
	struct passwd *pw = getpwuid(getuid());

	snprintf(buf, size, "%s[cluster]\npostgresql = %s user=%s\n"
	    "node = %c\nlease = %s\n", extra,
	    cl->via[i] != NULL ? cl->via[i] : cl->conninfo,
	    pw != NULL ? pw->pw_name : "root", 'a' + i,
	    cl->lease != NULL ? cl->lease : TNODES_LEASE);
}

struct tnodes *
tnodes_new(unsigned n)
{
	static int ndb;
	struct tnodes *cl;

	if (tpg_group == NULL)
		skip();
	assert_in_range(n, 1, TNODES_MAX);
	assert_non_null(cl = calloc(1, sizeof *cl));
	cl->n = n;
	snprintf(cl->db, sizeof cl->db, "cl%d", ++ndb);
	cl->conninfo = tpg_createdb(tpg_group, cl->db);
	return cl;
}

void
tnodes_start_nodes(struct tnodes *cl, unsigned slots, const char *extra)
{
	char daemon[512], conf[2048];
	unsigned i;

	snprintf(daemon, sizeof daemon, "slots = %u\nkill_grace = 1s\n%s",
	    slots, extra);
	for (i = 0; i < cl->n; i++) {
		tnodes_conf(cl, i, daemon, conf, sizeof conf);
		cl->d[i] = tdaemon_start(conf);
		cl->c[i] = tconnect(cl->d[i]);
	}
}

struct tnodes *
tnodes_start(unsigned n, unsigned slots, const char *extra)
{
	struct tnodes *cl = tnodes_new(n);

	tnodes_start_nodes(cl, slots, extra);
	return cl;
}

void
tnodes_end(struct tnodes *cl)
{
	unsigned i;

	for (i = 0; i < cl->n; i++)
		if (cl->d[i] != NULL)
			tdaemon_end(cl->d[i], cl->c[i]);
	for (i = 0; i < cl->n; i++)
		free(cl->via[i]);
	free(cl->conninfo);
	free(cl);
}

json_t *
tnodes_job(const struct tnodes *cl, unsigned i, int64_t id)
{
	struct triage_error e;
	json_t *job;

	job = triage_client_call(cl->c[i], "get", json_pack("{sI}", "id",
	    (json_int_t)id), HARNESS_TIMEOUT_MS, &e);
	if (job == NULL && e.code != -32001)
		fail_msg("get %lld at node %c: %s", (long long)id, 'a' + i,
		    e.message);
	return job;
}

void
tnodes_job_str(const struct tnodes *cl, unsigned i, int64_t id,
    const char *key, char *buf, size_t size)
{
	json_t *job = tget(cl->c[i], id);
	const char *v = json_string_value(json_object_get(job, key));

	snprintf(buf, size, "%s", v != NULL ? v : "");
	json_decref(job);
}

void
tnodes_wait_state(const struct tnodes *cl, unsigned i, int64_t id,
    const char *state, json_int_t attempt)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *job;
	bool there;

	for (;;) {
		job = tnodes_job(cl, i, id);
		there = job != NULL && strcmp(tstate(job), state) == 0 &&
		    (attempt == 0 || tjint(job, "attempt") == attempt);
		json_decref(job);
		if (there)
			return;
		tcheck_deadline(deadline, "job %lld to be %s at node %c",
		    (long long)id, state, 'a' + i);
		usleep(10000);
	}
}
