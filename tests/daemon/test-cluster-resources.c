/* test-cluster-resources.c - a counter with scope = cluster across two real
 * triaged on one real PostgreSQL: one count for both, never overrun. */
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

#include "harness.h"
#include "tnodes.h"
#include "tpg.h"

/* A licence counter the two nodes share, count N. */
#define LIC(n) "[resource.lic]\ncount = " #n "\nscope = cluster\n"

/* A job of node via's that runs until gate opens, holding lic units of
 * the licence, pinned to node pin ('a' + i) when pin >= 0. */
static int64_t
submit_lic(const struct tnodes *cl, unsigned via, const char *gate, int lic,
    int pin)
{
	char node[2] = { (char)('a' + pin), '\0' };

	if (pin < 0)
		return tsubmit_gated_with(cl->c[via], cl->d[0], gate, "{s{si}}",
		    "resources", "lic", lic);
	return tsubmit_gated_with(cl->c[via], cl->d[0], gate, "{s{si}ss}",
	    "resources", "lic", lic, "node", node);
}

/* Node i's view of job id: queued at attempt 1, waiting for the
 * licence. */
static void
assert_waits_for_lic(const struct tnodes *cl, unsigned i, int64_t id)
{
	json_t *job = tget(cl->c[i], id);
	const char *why = tjstr(job, "pending_reason");

	assert_string_equal(tstate(job), "queued");
	assert_int_equal(tjint(job, "attempt"), 1);
	if (why == NULL || strcmp(why, "resource:lic") != 0)
		fail_msg("job %lld waits for %s at node %c, not resource:lic",
		    (long long)id, why != NULL ? why : "nothing", 'a' + i);
	json_decref(job);
}

/* stats' resources.lic at node i: its units and used. */
static void
lic_stats(const struct tnodes *cl, unsigned i, json_int_t *units,
    json_int_t *used)
{
	json_t *stats = tcall(cl->c[i], "stats", "{}"), *lic;

	lic = json_object_get(json_object_get(stats, "resources"), "lic");
	assert_non_null(lic);
	assert_string_equal(tjstr(lic, "scope"), "cluster");
	*units = tjint(lic, "units");
	*used = tjint(lic, "used");
	json_decref(stats);
}

/* Polls node i until stats say used units of the licence are held. */
static void
wait_lic_used(const struct tnodes *cl, unsigned i, json_int_t want)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_int_t units, used;

	for (;;) {
		lic_stats(cl, i, &units, &used);
		if (used == want)
			return;
		tcheck_deadline(deadline, "%lld of lic used at node %c, not "
		    "%lld", (long long)want, 'a' + i, (long long)used);
		usleep(10000);
	}
}

/*
 * The one licence held by a job on node a: a job asking for it through
 * node b waits for it on both nodes' view, b's stats count a's use, and
 * once a's job ends the waiting job runs.
 */
static void
test_a_licence_held_on_one_node_is_not_free_on_the_other(void **state)
{
	struct tnodes *cl = tnodes_start(2, 2, LIC(1));
	json_int_t units, used;
	int64_t held, waits;
	json_t *job;

	(void)state;
	held = submit_lic(cl, 0, "held", 1, 0);
	tnodes_wait_state(cl, 0, held, "running", 1);
	tnodes_wait_state(cl, 1, held, "running", 1);
	waits = tsubmit(cl->c[1], "{s[s]s{si}}", "argv", "true",
	    "resources", "lic", 1);
	tnodes_wait_state(cl, 0, waits, "queued", 1);
	assert_waits_for_lic(cl, 1, waits);
	assert_waits_for_lic(cl, 0, waits);
	lic_stats(cl, 1, &units, &used);
	assert_int_equal(units, 1);
	assert_int_equal(used, 1);
	lic_stats(cl, 0, &units, &used);
	assert_int_equal(used, 1);

	topen_gate(cl->d[0], "held");
	job = twait(cl->c[1], waits);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	tassert_ends(cl->c[0], held, "succeeded");
	wait_lic_used(cl, 0, 0);
	wait_lic_used(cl, 1, 0);
	tnodes_end(cl);
}

#define RACE_JOBS 12

/* How many jobs node i says run on itself (what a node says of its own
 * jobs is never behind the database: a job runs once its claim is
 * written, and ends here before its end is); their ids into ids. */
static unsigned
running_here(const struct tnodes *cl, unsigned i, int64_t *ids)
{
	json_t *res = tcall(cl->c[i], "list", "{s[s]}", "state", "running");
	json_t *job;
	char node[2] = { (char)('a' + i), '\0' };
	unsigned n = 0;
	size_t k;

	json_array_foreach(json_object_get(res, "jobs"), k, job)
		if (strcmp(tjstr(job, "node"), node) == 0)
			ids[n++] = tjint(job, "id");
	json_decref(res);
	return n;
}

/*
 * The race: two licences, twelve jobs of one each, half pinned to each
 * node, with slots for all: each node grants its own as soon as it sees a
 * licence free, at once at the start and whenever a job ends, and only
 * the database stops the second. At no moment do more than two run in
 * the cluster; each time two run whose gates are shut, one gate opens;
 * every job succeeds.
 */
static void
test_two_nodes_never_run_more_than_the_count(void **state)
{
	struct tnodes *cl = tnodes_start(2, RACE_JOBS, LIC(2));
	int64_t id[RACE_JOBS], run[2 * RACE_JOBS], deadline;
	bool opened[RACE_JOBS] = { false };
	unsigned i, n, k, shut, left = RACE_JOBS, polls = 0;
	char gate[16];
	json_t *job;

	(void)state;
	for (i = 0; i < RACE_JOBS; i++) {
		snprintf(gate, sizeof gate, "g%u", i);
		id[i] = submit_lic(cl, i % 2, gate, 1, (int)(i % 2));
	}
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	while (left > 0) {
		n = running_here(cl, 0, run);
		n += running_here(cl, 1, run + n);
		polls++;
		if (n > 2)
			fail_msg("%u jobs hold the 2 licences at once", n);
		/* The running jobs whose gates are shut, the last first. */
		for (shut = 0, i = 0; i < n; i++)
			for (k = 0; k < RACE_JOBS; k++)
				if (id[k] == run[i] && !opened[k]) {
					shut++;
					run[0] = (int64_t)k;
				}
		if (shut == (left < 2 ? left : 2)) {
			k = (unsigned)run[0];
			snprintf(gate, sizeof gate, "g%u", k);
			topen_gate(cl->d[0], gate);
			opened[k] = true;
			left--;
			continue;
		}
		tcheck_deadline(deadline, "the jobs to run, two at a time "
		    "(%u of %u gates opened)", RACE_JOBS - left, RACE_JOBS);
		usleep(5000);
	}
	for (i = 0; i < RACE_JOBS; i++) {
		job = twait(cl->c[i % 2], id[i]);
		assert_string_equal(tstate(job), "succeeded");
		assert_int_equal(tjint(job, "attempt"), 1);
		json_decref(job);
	}
	print_message("%u polls; claims refused by the database: %s\n",
	    polls, tlog_has(cl->d[0], "a write of it was refused") ||
	    tlog_has(cl->d[1], "a write of it was refused") ? "some" : "none");
	tnodes_end(cl);
}

/*
 * kill -9 of node a while its job holds the one licence: b's job waits
 * for it until a's lease has run out and a's job is taken back to its
 * queue (pinned to a, it waits for a there); then b's runs.
 */
static void
test_a_dead_nodes_licence_is_free_once_its_job_is_taken(void **state)
{
	struct tnodes *cl = tnodes_new(2);
	int64_t held, waits;
	char why[64];

	(void)state;
	cl->lease = "3s";
	tnodes_start_nodes(cl, 2, LIC(1));
	held = submit_lic(cl, 0, "held", 1, 0);
	tnodes_wait_state(cl, 1, held, "running", 1);
	waits = submit_lic(cl, 1, "waits", 1, -1);
	tnodes_wait_state(cl, 0, waits, "queued", 1);
	assert_waits_for_lic(cl, 1, waits);

	tdaemon_crash(cl->d[0]);
	triage_client_free(cl->c[0]);
	cl->c[0] = NULL;
	tnodes_wait_state(cl, 1, waits, "running", 1);
	tnodes_wait_state(cl, 1, held, "queued", 2);
	tnodes_job_str(cl, 1, held, "pending_reason", why, sizeof why);
	assert_string_equal(why, "node:a");
	wait_lic_used(cl, 1, 1);
	topen_gate(cl->d[0], "waits");
	tassert_ends(cl->c[1], waits, "succeeded");
	wait_lic_used(cl, 1, 0);
	tdaemon_free(cl->d[0]);
	cl->d[0] = NULL;
	tnodes_end(cl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_a_licence_held_on_one_node_is_not_free_on_the_other),
		cmocka_unit_test(test_two_nodes_never_run_more_than_the_count),
		cmocka_unit_test(
		    test_a_dead_nodes_licence_is_free_once_its_job_is_taken),
	};

	return cmocka_run_group_tests_name("cluster-resources", tests,
	    tpg_group_setup, tpg_group_teardown);
}
