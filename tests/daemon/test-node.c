/* test-node.c - a job's node on a daemon without a cluster, which is its
 * only node: submit's node param, where jobs run, over the socket and CLI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"

/* What triage.conf(5) says a daemon without [cluster] is called: the host
 * name up to its first '.', or localhost when that is no node name. */
static const char *
own_node(void)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_.-";
	static char node[256];
	size_t len;

	/* A one-node cluster of make test-onenode is named by the harness. */
	if (tcluster())
		return TCLUSTER_NODE;
	assert_int_equal(gethostname(node, sizeof node - 1), 0);
	node[strcspn(node, ".")] = '\0';
	len = strlen(node);
	if (len == 0 || len > 64 || strspn(node, chars) != len)
		strcpy(node, "localhost");
	return node;
}

static void
test_own_node_runs_and_is_reported(void **state)
{
	struct triage_client *c = tconnect(tcli_daemon);
	const char *me = own_node();
	int64_t id;
	json_t *job;

	(void)state;
	id = tsubmit(c, "{s[s] ss}", "argv", "true", "node", me);
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_string_equal(tjstr(job, "node"), me);
	assert_string_equal(tjstr(job, "pinned_node"), me);
	json_decref(job);
	triage_client_free(c);
}

/* Queued it has run nowhere; from its start it is this daemon's, and
 * stays so once ended. Without the param, any node may run it. */
static void
test_a_running_job_is_the_daemons(void **state)
{
	struct triage_client *c = tconnect(tcli_daemon);
	const char *me = own_node();
	int64_t held, id;
	json_t *job;

	(void)state;
	held = tsubmit(c, "{s[s] sb}", "argv", "true", "hold", 1);
	job = tget(c, held);
	assert_true(json_is_null(json_object_get(job, "node")));
	assert_true(json_is_null(json_object_get(job, "pinned_node")));
	json_decref(job);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)held));

	id = tsubmit_gated(c, tcli_daemon, "node-gate", false);
	(void)trunning_pid(c, id);
	job = tget(c, id);
	assert_string_equal(tstate(job), "running");
	assert_string_equal(tjstr(job, "node"), me);
	assert_true(json_is_null(json_object_get(job, "pinned_node")));
	json_decref(job);
	topen_gate(tcli_daemon, "node-gate");
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_string_equal(tjstr(job, "node"), me);
	json_decref(job);
	triage_client_free(c);
}

static void
test_other_nodes_and_bad_names_are_refused(void **state)
{
	struct triage_client *c = tconnect(tcli_daemon);
	struct triage_error e;
	char want[256];

	(void)state;
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s] ss}", "argv",
	    "true", "node", "no-such-node"), -32602);
	assert_string_equal(e.field, "node");
	snprintf(want, sizeof want, "no node no-such-node in this cluster "
	    "(this daemon is %s)", own_node());
	assert_string_equal(e.message, want);

	assert_int_equal(tcall_error(c, "submit", &e, "{s[s] ss}", "argv",
	    "true", "node", "a b"), -32602);
	assert_string_equal(e.field, "node");
	assert_string_equal(e.message, "\"node\" must be a node name: 1 to 64 "
	    "of A-Z, a-z, 0-9, _, . and -");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s] ss}", "argv",
	    "true", "node", ""), -32602);
	assert_string_equal(e.field, "node");
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s] si}", "argv",
	    "true", "node", 7), -32602);
	assert_string_equal(e.field, "node");
	triage_client_free(c);
}

/* triage submit --node, and status showing where. */
static void
test_cli_node(void **state)
{
	char *out, *err, id[32], want[128];
	const char *me = own_node();

	(void)state;
	tcli_submitted(cli(&out, &err, "submit", "--node", me, "--wait", "--",
	    "true", NULL), &out, &err, id);
	assert_int_equal(cli(&out, &err, "status", id, NULL), 0);
	snprintf(want, sizeof want, "\nnode:         %s\npinned_node:  %s\n",
	    me, me);
	if (strstr(out, want) == NULL)
		fail_msg("status does not show \"%s\" in:\n%s", want, out);
	free(out);
	free(err);

	assert_int_equal(cli(&out, &err, "submit", "--node", "no-such-node",
	    "--", "true", NULL), 1);
	assert_string_equal(out, "");
	if (strstr(err, "no node no-such-node in this cluster") == NULL)
		fail_msg("submit --node no-such-node says \"%s\"", err);
	free(out);
	free(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_node_runs_and_is_reported),
		cmocka_unit_test(test_a_running_job_is_the_daemons),
		cmocka_unit_test(test_other_nodes_and_bad_names_are_refused),
		cmocka_unit_test(test_cli_node),
	};

	return cmocka_run_group_tests_name("node", tests, tcli_setup,
	    tdaemon_group_teardown);
}
