/* test-cluster.c - three real triaged on one real PostgreSQL, each its own
 * node: shared queues, the order of starts, a node killed or stopped past
 * its lease, the database restarted, and every method across nodes. */
#include <errno.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "triage/client.h"
#include "harness.h"
#include "tnodes.h"
#include "tpg.h"
#include "tproxy.h"
#include "tsupport-clock.h"

/* The nodes of every test (tnodes.h). */
#define NODES 3

/* Whether node i's stats say every node is up. */
static bool
all_nodes_up(struct tnodes *cl, int i)
{
	json_t *stats = tcall(cl->c[i], "stats", "{}"), *node;
	size_t k, up = 0;

	json_array_foreach(json_object_get(stats, "nodes"), k, node)
		up += json_is_true(json_object_get(node, "up"));
	json_decref(stats);
	return up == NODES;
}

/* A job that writes "start ID ATTEMPT NODE" to the ledger, waits for its
 * gate, then writes "done ID ATTEMPT". */
static int64_t
submit_ledgered(struct tnodes *cl, int via, const char *gate,
    const char *prio)
{
	char sh[1500];

	snprintf(sh, sizeof sh, "echo start $TRIAGE_JOB_ID $TRIAGE_ATTEMPT "
	    ">> %s/ledger; %s; echo done $TRIAGE_JOB_ID $TRIAGE_ATTEMPT >> "
	    "%s/ledger", cl->d[0]->dir, tgate_sh(cl->d[0], gate),
	    cl->d[0]->dir);
	return tsubmit(cl->c[via], "{s[sss] ss}", "argv", "sh", "-c", sh,
	    "priority", prio);
}

/* How many lines of the ledger are word then id (and attempt, when not
 * 0). */
static int
ledger_count(struct tnodes *cl, const char *word, int64_t id,
    unsigned attempt)
{
	char path[400], line[128], w[16];
	long long lid;
	unsigned la;
	FILE *f;
	int n = 0;

	snprintf(path, sizeof path, "%s/ledger", cl->d[0]->dir);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "%15s %lld %u", w, &lid, &la) == 3 &&
		    strcmp(w, word) == 0 && lid == id &&
		    (attempt == 0 || la == attempt))
			n++;
	fclose(f);
	return n;
}

/* Jobs submitted through every node run on every node, and each node
 * sees every job's whole life. */
static void
test_jobs_run_on_every_node(void **state)
{
	struct tnodes *cl = tnodes_start(NODES, 2, "");
	int64_t id[2 * NODES];
	char node[32];
	bool ran[NODES] = { false };
	int i, k;

	(void)state;
	for (i = 0; i < 2 * NODES; i++)
		id[i] = submit_ledgered(cl, i % NODES, "open", "normal");
	/* Six slots in all: every job runs at once, so every node runs
	 * two. */
	for (i = 0; i < 2 * NODES; i++) {
		tnodes_wait_state(cl, 0, id[i], "running", 1);
		tnodes_job_str(cl, 0, id[i], "node", node, sizeof node);
		assert_int_equal(strlen(node), 1);
		ran[node[0] - 'a'] = true;
	}
	for (k = 0; k < NODES; k++)
		assert_true(ran[k]);
	topen_gate(cl->d[0], "open");
	for (i = 0; i < 2 * NODES; i++)
		for (k = 0; k < NODES; k++) {
			json_t *job = twait(cl->c[k], id[i]);

			assert_string_equal(tstate(job), "succeeded");
			json_decref(job);
		}
	tnodes_end(cl);
}

/*
 * Every slot of the cluster held; then jobs of three priorities, through
 * every node, each holding its slot until let go: the slots freed one at a
 * time, wherever they are, go to the most urgent job, then the oldest.
 */
static void
test_start_order_is_priority_then_submission(void **state)
{
	static const char *const prios[] = { "low", "normal", "high" };
	struct tnodes *cl = tnodes_start(NODES, 1, "");
	int64_t block[NODES], id[9], want[9];
	char gate[32];
	int i, k, n = 0;

	(void)state;
	for (i = 0; i < NODES; i++) {
		snprintf(gate, sizeof gate, "block%d", i);
		block[i] = submit_ledgered(cl, i, gate, "normal");
	}
	for (i = 0; i < NODES; i++)
		tnodes_wait_state(cl, 0, block[i], "running", 1);
	for (i = 0; i < 9; i++) {
		snprintf(gate, sizeof gate, "job%d", i);
		id[i] = submit_ledgered(cl, i % NODES, gate, prios[i % 3]);
	}
	/* high (2, 5, 8), normal (1, 4, 7), low (0, 3, 6). */
	for (k = 2; k >= 0; k--)
		for (i = k; i < 9; i += 3)
			want[n++] = i;
	/* Every node has heard of every job before a slot frees. */
	for (k = 0; k < NODES; k++)
		for (i = 0; i < 9; i++)
			tnodes_wait_state(cl, k, id[i], "queued", 1);
	snprintf(gate, sizeof gate, "block%d", 1);
	topen_gate(cl->d[0], gate);
	for (n = 0; n < 9; n++) {
		tnodes_wait_state(cl, 0, id[want[n]], "running", 1);
		/* The one freed slot went to it alone. */
		for (i = n + 1; i < 9; i++)
			tassert_state(cl->c[0], id[want[i]], "queued");
		snprintf(gate, sizeof gate, "job%d", (int)want[n]);
		topen_gate(cl->d[0], gate);
		tnodes_wait_state(cl, 0, id[want[n]], "succeeded", 1);
	}
	for (i = 0; i < NODES; i++) {
		snprintf(gate, sizeof gate, "block%d", i);
		topen_gate(cl->d[0], gate);
		json_decref(twait(cl->c[0], block[i]));
	}
	tnodes_end(cl);
}

/*
 * kill -9 of a node while it runs jobs: once its lease has run out, the
 * others take its jobs back to their queues and run them as attempt 2;
 * every job succeeds, and no attempt that was done ran again.
 */
static void
test_killed_node_jobs_run_again_elsewhere(void **state)
{
	struct tnodes *cl = tnodes_start(NODES, 2, "");
	int64_t id[2 * NODES];
	char node[32], reason[256];
	json_t *job;
	int i, lost = 0;

	(void)state;
	for (i = 0; i < 2 * NODES; i++)
		id[i] = submit_ledgered(cl, i % NODES, "open", "normal");
	for (i = 0; i < 2 * NODES; i++)
		tnodes_wait_state(cl, 0, id[i], "running", 1);
	tdaemon_crash(cl->d[1]);
	triage_client_free(cl->c[1]);
	cl->c[1] = NULL;
	/* Its two jobs come back as second attempts, queued (every other
	 * slot is held), saying whose lease ran out. */
	for (i = 0; i < 2 * NODES; i++) {
		tnodes_job_str(cl, 0, id[i], "node", node, sizeof node);
		if (strcmp(node, "b") != 0)
			continue;
		tnodes_wait_state(cl, 0, id[i], "queued", 2);
		tnodes_wait_state(cl, 2, id[i], "queued", 2);
		tnodes_job_str(cl, 2, id[i], "reason", reason, sizeof reason);
		assert_non_null(strstr(reason, "node b"));
		lost++;
	}
	assert_int_equal(lost, 2);
	topen_gate(cl->d[0], "open");
	for (i = 0; i < 2 * NODES; i++) {
		job = twait(cl->c[2], id[i]);
		assert_string_equal(tstate(job), "succeeded");
		assert_int_not_equal(strcmp(tjstr(job, "node"), "b"), 0);
		/* Done once: a killed attempt never wrote "done". */
		assert_int_equal(ledger_count(cl, "done", id[i], 0), 1);
		assert_int_equal(ledger_count(cl, "done", id[i],
		    (unsigned)tjint(job, "attempt")), 1);
		json_decref(job);
	}
	tdaemon_free(cl->d[1]);
	cl->d[1] = NULL;
	tnodes_end(cl);
}

/* A gated job pinned to node i. */
static int64_t
submit_pinned(struct tnodes *cl, int i, const char *gate)
{
	char node[2] = { (char)('a' + i), '\0' };

	return tsubmit_gated_with(cl->c[i], cl->d[0], gate, "{ss}", "node",
	    node);
}

/*
 * A job that, as it starts, notes its pid (its process group) in
 * DIR/pids.ID and notes in DIR/overlap any earlier attempt's process that
 * is still there (not a zombie); then is ledgered as submit_ledgered's.
 */
static int64_t
submit_watchful(struct tnodes *cl, int via, const char *gate)
{
	const char *dir = cl->d[0]->dir;
	char sh[2000];

	snprintf(sh, sizeof sh, "p=%s/pids.$TRIAGE_JOB_ID; "
	    "for q in $(cat $p 2>/dev/null); do "
	    "if [ -e /proc/$q/stat ] && ! grep -q ') Z' /proc/$q/stat; then "
	    "echo $TRIAGE_JOB_ID $TRIAGE_ATTEMPT $q >> %s/overlap; fi; done; "
	    "echo $$ >> $p; "
	    "echo start $TRIAGE_JOB_ID $TRIAGE_ATTEMPT >> %s/ledger; %s; "
	    "echo done $TRIAGE_JOB_ID $TRIAGE_ATTEMPT >> %s/ledger",
	    dir, dir, dir, tgate_sh(cl->d[0], gate), dir);
	return tsubmit(cl->c[via], "{s[sss]}", "argv", "sh", "-c", sh);
}

/* Whether DIR/overlap exists: two attempts of a job ran at once. */
static bool
overlapped(struct tnodes *cl)
{
	char path[400];

	snprintf(path, sizeof path, "%s/overlap", cl->d[0]->dir);
	return access(path, F_OK) == 0;
}

/* One slot a node: a's and c's held (gates hold-a and hold-c), a
 * ledgered job (gate job; watchful: submit_watchful's) running on b; its
 * id. */
static int64_t
run_on_b(struct tnodes *cl, int64_t *hold_a, int64_t *hold_c,
    bool watchful)
{
	char node[32];
	int64_t id;

	*hold_a = submit_pinned(cl, 0, "hold-a");
	*hold_c = submit_pinned(cl, 2, "hold-c");
	tnodes_wait_state(cl, 0, *hold_a, "running", 1);
	tnodes_wait_state(cl, 0, *hold_c, "running", 1);
	id = watchful ? submit_watchful(cl, 0, "job") :
	    submit_ledgered(cl, 0, "job", "normal");
	tnodes_wait_state(cl, 0, id, "running", 1);
	tnodes_job_str(cl, 0, id, "node", node, sizeof node);
	assert_string_equal(node, "b");
	return id;
}

/*
 * kill -9 of a node while it runs a job, and the node started again within
 * its lease: it takes its own job over as attempt 1 (its worker held it
 * meanwhile), renews that worker's lease from then on, so that the job
 * outlives the lease it had when the node died, and nobody else takes it.
 */
static void
test_restarted_node_keeps_its_running_job(void **state)
{
	struct tnodes *cl = tnodes_start(NODES, 1, "");
	int64_t hold_a, hold_c, id, until;
	json_t *job;

	(void)state;
	id = run_on_b(cl, &hold_a, &hold_c, false);
	triage_client_free(cl->c[1]);
	tdaemon_crash(cl->d[1]);
	tdaemon_restart(cl->d[1]);
	cl->c[1] = tconnect(cl->d[1]);
	assert_true(tlog_has(cl->d[1], "taken over from an earlier daemon"));
	/* Past the lease it had when it died, and the grace the others give
	 * it: still attempt 1, on b. */
	until = tdeadline((TNODES_LEASE_S + 3) * 1000);
	while (tleft_ms(until) > 0) {
		tnodes_wait_state(cl, 0, id, "running", 1);
		tnodes_wait_state(cl, 1, id, "running", 1);
		poll(NULL, 0, 200);
	}
	topen_gate(cl->d[0], "job");
	job = twait(cl->c[2], id);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "attempt"), 1);
	assert_string_equal(tjstr(job, "node"), "b");
	json_decref(job);
	assert_int_equal(ledger_count(cl, "start", id, 0), 1);
	assert_int_equal(ledger_count(cl, "done", id, 1), 1);
	topen_gate(cl->d[0], "hold-a");
	topen_gate(cl->d[0], "hold-c");
	tnodes_end(cl);
}

/*
 * A node stopped (SIGSTOP) past its lease, whose job is taken and done
 * elsewhere as attempt 2, then continued: its worker stopped attempt 1
 * before the takeover (never two at once), what the node then writes of
 * its own attempt is refused, and attempt 2's outcome stands everywhere.
 */
static void
test_stopped_node_cannot_overwrite_the_new_attempt(void **state)
{
	struct tnodes *cl = tnodes_start(NODES, 1, "");
	int64_t hold_a, hold_c, id, deadline;
	json_t *job;

	(void)state;
	id = run_on_b(cl, &hold_a, &hold_c, true);

	tstop(cl->d[1]->pid);
	tnodes_wait_state(cl, 0, id, "queued", 2);
	topen_gate(cl->d[0], "hold-a");
	tnodes_wait_state(cl, 0, id, "running", 2);
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	while (ledger_count(cl, "start", id, 2) == 0) {
		tcheck_deadline(deadline, "attempt 2 of job %lld to start",
		    (long long)id);
		usleep(20000);
	}
	/* b's worker stopped attempt 1 as the lease ran out, while its
	 * daemon slept: never two at once, and attempt 1 never ends. */
	assert_false(overlapped(cl));
	topen_gate(cl->d[0], "job");
	tnodes_wait_state(cl, 0, id, "succeeded", 2);
	assert_int_equal(ledger_count(cl, "done", id, 2), 1);
	assert_int_equal(ledger_count(cl, "done", id, 1), 0);

	assert_int_equal(kill(cl->d[1]->pid, SIGCONT), 0);
	/* b hears of attempt 2, having tried to write attempt 1's end... */
	tnodes_wait_state(cl, 1, id, "succeeded", 2);
	/* ...and whatever it wrote is behind a commit it makes now. */
	json_decref(twait(cl->c[1], tsubmit(cl->c[1], "{s[s]}", "argv",
	    "true")));
	job = tget(cl->c[2], id);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "attempt"), 2);
	assert_string_equal(tjstr(job, "node"), "a");
	json_decref(job);
	topen_gate(cl->d[0], "hold-c");
	json_decref(twait(cl->c[0], hold_c));
	tnodes_end(cl);
}

/*
 * Starts the nodes, one slot each and a 3 s lease, c reaching PostgreSQL
 * through a proxy of its own (returned), and holds a's and b's slot with a
 * pinned job each (*hold_a, *hold_b), running: the next job goes to c, and
 * a's slot is free for a takeover once hold-a is let go.
 */
static struct tproxy *
start_c_behind_a_proxy(struct tnodes *cl, int64_t *hold_a, int64_t *hold_b)
{
	struct tproxy *px;
	char conn[600];

	px = tproxy_start(tpg_host(tpg_group), tpg_port(tpg_group));
	snprintf(conn, sizeof conn, "host=%s port=%d dbname=%s",
	    tproxy_dir(px), tpg_port(tpg_group), cl->db);
	assert_non_null(cl->via[2] = strdup(conn));
	cl->lease = "3s";
	tnodes_start_nodes(cl, 1, "");
	*hold_a = submit_pinned(cl, 0, "hold-a");
	*hold_b = submit_pinned(cl, 1, "hold-b");
	tnodes_wait_state(cl, 0, *hold_a, "running", 1);
	tnodes_wait_state(cl, 0, *hold_b, "running", 1);
	return px;
}

/*
 * Node c cut off from PostgreSQL by a split (its connections stay open,
 * silent) while it runs a job: it kills the job itself once its lease has
 * run out, saying so, before node a takes it over and runs it again; no
 * instant has both attempts running, and c never tells an outcome of its
 * attempt. Healed, c connects again and takes its name back from its own
 * old session, which the server still holds.
 */
static void
test_cut_off_node_kills_its_jobs_before_takeover(void **state)
{
	struct tnodes *cl = tnodes_new(NODES);
	struct tproxy *px;
	char node[32];
	int64_t hold_a, hold_b, id, deadline;
	json_t *job;

	(void)state;
	px = start_c_behind_a_proxy(cl, &hold_a, &hold_b);
	id = submit_watchful(cl, 0, "job");
	tnodes_wait_state(cl, 0, id, "running", 1);
	tnodes_job_str(cl, 0, id, "node", node, sizeof node);
	assert_string_equal(node, "c");
	topen_gate(cl->d[0], "hold-a");
	json_decref(twait(cl->c[0], hold_a));

	tproxy_cut(px);
	/* c's daemon still answers its own clients: its job never ends
	 * there as an outcome, while a takes it over. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (;;) {
		job = tget(cl->c[2], id);
		assert_true(strcmp(tstate(job), "running") == 0 ||
		    strcmp(tstate(job), "queued") == 0);
		json_decref(job);
		job = tnodes_job(cl, 0, id);
		if (job != NULL && strcmp(tstate(job), "running") == 0 &&
		    tjint(job, "attempt") == 2) {
			json_decref(job);
			break;
		}
		json_decref(job);
		tcheck_deadline(deadline, "job %lld to run again on a",
		    (long long)id);
		usleep(20000);
	}
	tnodes_job_str(cl, 0, id, "node", node, sizeof node);
	assert_string_equal(node, "a");
	/* Attempt 2's own look at attempt 1's process is done. */
	while (ledger_count(cl, "start", id, 2) == 0) {
		tcheck_deadline(deadline, "attempt 2 of job %lld to start",
		    (long long)id);
		usleep(20000);
	}
	assert_false(overlapped(cl));
	assert_true(tlog_has(cl->d[2], "lease ran out"));

	tproxy_heal(px);
	/* Back: c hears of attempt 2, as its own name's holder again. */
	twait_log(cl->d[2], "cluster: connected to PostgreSQL");
	tnodes_wait_state(cl, 2, id, "running", 2);
	assert_false(tlog_has(cl->d[2], "is running already"));
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	while (!all_nodes_up(cl, 0)) {
		tcheck_deadline(deadline, "node c to be up again");
		usleep(20000);
	}
	/* And it runs jobs again. */
	json_decref(twait(cl->c[2], tsubmit(cl->c[2], "{s[s] ss}", "argv",
	    "true", "node", "c")));

	topen_gate(cl->d[0], "job");
	job = twait(cl->c[2], id);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	assert_int_equal(ledger_count(cl, "done", id, 1), 0);
	assert_int_equal(ledger_count(cl, "done", id, 2), 1);
	assert_false(overlapped(cl));
	topen_gate(cl->d[0], "hold-b");
	json_decref(twait(cl->c[0], hold_b));
	tnodes_end(cl);
	tproxy_free(px);
}

/*
 * Node c cut off from PostgreSQL while its job ends there (a success it
 * cannot write), and a wait on the job at c: c's view says succeeded
 * before the database does. Node a takes the job over once c's lease has
 * run out, and runs it again; healed, c's write of its end is refused.
 * The wait never answers attempt 1's end, which the database refused: it
 * answers attempt 2's.
 */
static void
test_wait_never_answers_an_end_the_database_refused(void **state)
{
	struct tnodes *cl = tnodes_new(NODES);
	struct triage_error e;
	struct tproxy *px;
	char node[32];
	int64_t hold_a, hold_b, id, wid, got;
	json_t *job;

	(void)state;
	px = start_c_behind_a_proxy(cl, &hold_a, &hold_b);
	id = submit_ledgered(cl, 0, "job", "normal");
	tnodes_wait_state(cl, 0, id, "running", 1);
	tnodes_job_str(cl, 0, id, "node", node, sizeof node);
	assert_string_equal(node, "c");

	tproxy_cut(px);
	topen_gate(cl->d[0], "job");
	/* Ended in c's view, not in the database's. */
	tnodes_wait_state(cl, 2, id, "succeeded", 1);
	assert_true((wid = triage_client_send(cl->c[2], "wait",
	    json_pack("{sI}", "id", (json_int_t)id), &e)) > 0);
	/* a takes it over as c's lease runs out, and runs it again. */
	topen_gate(cl->d[0], "hold-a");
	tnodes_wait_state(cl, 0, id, "succeeded", 2);
	tproxy_heal(px);
	job = triage_client_recv(cl->c[2], &got, HARNESS_TIMEOUT_MS, &e);
	if (job == NULL)
		fail_msg("wait at c: %s", e.message);
	assert_int_equal(got, wid);
	assert_string_equal(tstate(job), "succeeded");
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	tnodes_wait_state(cl, 2, id, "succeeded", 2);
	topen_gate(cl->d[0], "hold-b");
	json_decref(twait(cl->c[0], hold_b));
	tnodes_end(cl);
	tproxy_free(px);
}

/* The pending_reason of job id at node i ("" for null). */
static void
pending_at(struct tnodes *cl, int i, int64_t id, char *buf, size_t size)
{
	tnodes_job_str(cl, i, id, "pending_reason", buf, size);
}

/* Whether node i's stats say node name is up. */
static bool
node_up_at(struct tnodes *cl, int i, const char *name)
{
	json_t *stats = tcall(cl->c[i], "stats", "{}"), *node;
	bool up = false;
	size_t k;

	json_array_foreach(json_object_get(stats, "nodes"), k, node)
		if (strcmp(tjstr(node, "node"), name) == 0)
			up = json_is_true(json_object_get(node, "up"));
	json_decref(stats);
	return up;
}

/* Whether `triage list` at node i prints text. */
static bool
cli_list_has(struct tnodes *cl, int i, const char *text)
{
	char cmd[800], line[512];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof cmd, "%s --socket %s list", tbin("triage"),
	    cl->d[i]->sock);
	assert_non_null(f = popen(cmd, "r"));
	while (fgets(line, sizeof line, f) != NULL)
		found = found || strstr(line, text) != NULL;
	pclose(f);
	return found;
}

/*
 * kill -9 of node b while it runs a job and a job pinned to it waits:
 * the others' stats say b is down once its lease has run out at the
 * latest, the pinned job waits for "node:b" (the CLI says node b is
 * down), and the node that takes b's job over says so in its log.
 */
static void
test_dead_node_is_down_and_its_takeover_logged(void **state)
{
	struct tnodes *cl = tnodes_new(NODES);
	int64_t hold_a, hold_c, id, pinned, t0, deadline;
	char why[128];
	double down_s, taken_s;
	bool logged;

	(void)state;
	cl->lease = "3s";
	tnodes_start_nodes(cl, 1, "");
	id = run_on_b(cl, &hold_a, &hold_c, false);
	pinned = submit_pinned(cl, 1, "pinned");
	tnodes_wait_state(cl, 0, pinned, "queued", 1);
	pending_at(cl, 0, pinned, why, sizeof why);
	assert_string_equal(why, "slots");
	assert_true(node_up_at(cl, 0, "b"));

	t0 = (int64_t)tsupport_clock_ms_f();
	tdaemon_crash(cl->d[1]);
	triage_client_free(cl->c[1]);
	cl->c[1] = NULL;
	/* Down within its lease and a bit (a look every half lease). */
	deadline = tdeadline(3000 + 1500 + 1000);
	while (node_up_at(cl, 0, "b")) {
		tcheck_deadline(deadline, "node b to be down at node a");
		usleep(20000);
	}
	down_s = (tsupport_clock_ms_f() - (double)t0) / 1000;
	pending_at(cl, 0, pinned, why, sizeof why);
	assert_string_equal(why, "node:b");
	assert_true(cli_list_has(cl, 0, "node b is down"));
	/* The nodes that notice say so in their logs, once. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	while (!tlog_has(cl->d[0], "cluster: node b is down: it holds its "
	    "name no more") || !tlog_has(cl->d[2], "cluster: node b is down")) {
		tcheck_deadline(deadline, "node b's loss logged at a and c");
		usleep(20000);
	}
	/* Its job is taken over, and the taker says so. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (;;) {
		logged = tlog_has(cl->d[0], "node b's lease ran out") ||
		    tlog_has(cl->d[2], "node b's lease ran out");
		if (logged)
			break;
		tcheck_deadline(deadline, "a takeover of node b's job logged");
		usleep(20000);
	}
	taken_s = (tsupport_clock_ms_f() - (double)t0) / 1000;
	assert_true(tlog_has(cl->d[0], "taking over its 1 running jobs") ||
	    tlog_has(cl->d[2], "taking over its 1 running jobs"));
	tnodes_wait_state(cl, 0, id, "queued", 2);
	print_message("kill -9 of a node, lease 3 s, kill_grace 1 s: down in "
	    "stats after %.1f s, its job taken after %.1f s\n", down_s,
	    taken_s);
	topen_gate(cl->d[0], "job");
	topen_gate(cl->d[0], "hold-a");
	json_decref(twait(cl->c[0], id));
	topen_gate(cl->d[0], "hold-c");
	json_decref(twait(cl->c[0], hold_c));
	tdaemon_free(cl->d[1]);
	cl->d[1] = NULL;
	tnodes_end(cl);
}

/*
 * A node that ran a job and runs none now stays up in the others' stats
 * past its lease: it renews its lease only while it runs jobs, so the last
 * it wrote must say it holds no slots, or the others would take its quiet
 * for a death.
 */
static void
test_idle_node_stays_up_past_its_lease(void **state)
{
	struct tnodes *cl = tnodes_new(NODES);
	int64_t id, watch;
	json_t *job;

	(void)state;
	cl->lease = "3s";
	tnodes_start_nodes(cl, 1, "");
	id = tsubmit(cl->c[1], "{s[ss]}", "argv", "sleep", "0.3");
	job = twait(cl->c[1], id);
	assert_string_equal(json_string_value(json_object_get(job, "state")),
	    "succeeded");
	assert_string_equal(json_string_value(json_object_get(job, "node")),
	    "b");
	json_decref(job);
	tnodes_wait_state(cl, 0, id, "succeeded", 1);
	tnodes_wait_state(cl, 2, id, "succeeded", 1);
	/* Its lease, the half lease between the others' looks, and more. */
	watch = tdeadline(3000 + 1500 + 1500);
	while (tleft_ms(watch) > 0) {
		assert_true(node_up_at(cl, 0, "b"));
		assert_true(node_up_at(cl, 2, "b"));
		usleep(100000);
	}
	tnodes_end(cl);
}

/* Job id's row as "begun version". */
static char *
begun_row(struct tnodes *cl, int64_t id)
{
	char sql[128], *text;
	PGresult *res;

	snprintf(sql, sizeof sql, "SELECT begun || ' ' || version FROM"
	    " triage_jobs WHERE id = %lld", (long long)id);
	res = tpg_query(tpg_group, cl->db, sql);
	assert_int_equal(PQntuples(res), 1);
	assert_non_null(text = strdup(PQgetvalue(res, 0, 0)));
	PQclear(res);
	return text;
}

/*
 * A job submitted to a node with free slots and nothing waiting is
 * inserted claimed there (begun on that node, one commit before it runs);
 * when admission then does not start it (its priority paused meanwhile, a
 * guess the submit could not see), its row is written back unclaimed, for
 * any node to start once the priority is resumed.
 */
static void
test_job_inserted_claimed_but_not_started_is_unclaimed(void **state)
{
	struct tnodes *cl = tnodes_start(2, 1, "");
	int64_t id, deadline;
	json_t *job;
	char *row;

	(void)state;
	json_decref(tcall(cl->c[0], "pause", "{ss}", "priority", "normal"));
	id = tsubmit(cl->c[0], "{s[s]}", "argv", "true");
	/* Version 2: the insert's (begun) and the write back's. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (;;) {
		row = begun_row(cl, id);
		if (strcmp(row, "0 2") == 0)
			break;
		tcheck_deadline(deadline, "job %lld's row is %s, not \"0 2\"",
		    (long long)id, row);
		free(row);
		(void)poll(NULL, 0, 10);	/* a poll with a deadline */
	}
	free(row);
	/* Resumed and waited for where it was submitted (node b may not
	 * have read the pause, or the job, yet); either node may run it. */
	json_decref(tcall(cl->c[0], "resume", "{ss}", "priority", "normal"));
	job = twait(cl->c[0], id);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	tnodes_end(cl);
}

/* Node i's grace as the others read it (ms). */
static long
grace_in_db(struct tnodes *cl, int i)
{
	char sql[96];
	PGresult *res;
	long ms;

	snprintf(sql, sizeof sql, "SELECT grace_ms FROM triage_nodes"
	    " WHERE name = '%c'", 'a' + i);
	res = tpg_query(tpg_group, cl->db, sql);
	assert_int_equal(PQntuples(res), 1);
	ms = atol(PQgetvalue(res, 0, 0));
	PQclear(res);
	return ms;
}

/*
 * A reload that lengthens kill_grace lengthens the others' wait before a
 * takeover too: the node's row says so from its next commit on (a node
 * that took over on the old grace could run a job whose first attempt is
 * still being stopped).
 */
static void
test_reloaded_kill_grace_is_what_the_others_wait(void **state)
{
	struct tnodes *cl = tnodes_start(NODES, 1, "");
	char conf[2048];
	int64_t deadline;

	(void)state;
	assert_int_equal(grace_in_db(cl, 0), 1000 + 1000);
	tnodes_conf(cl, 0, "slots = 1\nkill_grace = 4s\n", conf,
	    sizeof conf);
	tdaemon_rewrite(cl->d[0], "%s", conf);
	json_decref(tcall(cl->c[0], "reload", "{}"));
	json_decref(twait(cl->c[0], tsubmit(cl->c[0], "{s[s]}", "argv",
	    "true")));
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	while (grace_in_db(cl, 0) != 4000 + 1000) {
		tcheck_deadline(deadline, "node a's new grace in its row");
		usleep(20000);
	}
	assert_int_equal(grace_in_db(cl, 1), 1000 + 1000);
	tnodes_end(cl);
}

/*
 * Jobs submitted alternately through nodes a and b, whose ids come from
 * blocks of their own: list (at either node) gives them in submission
 * order, and pages of 3 chained by after_id give each exactly once.
 */
static void
test_list_is_in_submission_order_across_nodes(void **state)
{
	enum { N = 10 };
	struct tnodes *cl = tnodes_start(NODES, 1, "");
	int64_t id[N], after;
	json_t *res, *job;
	size_t k;
	int i, n, node, seen[N];

	(void)state;
	for (i = 0; i < N; i++) {
		id[i] = tsubmit(cl->c[i % 2], "{s[s] sb}", "argv", "true",
		    "hold", 1);
		/* The clock's resolution, not an order: each submission a
		 * millisecond of its own. */
		usleep(2000);
	}
	/* The ids jump between blocks: id order is not submission order. */
	assert_true(id[1] > id[2]);
	for (node = 0; node < 2; node++) {
		for (i = 0; i < N; i++)
			tnodes_wait_state(cl, node, id[i], "queued", 1);
		res = tcall(cl->c[node], "list", "{}");
		assert_int_equal(json_array_size(json_object_get(res, "jobs")),
		    N);
		json_array_foreach(json_object_get(res, "jobs"), k, job)
			assert_int_equal(tjint(job, "id"), id[k]);
		json_decref(res);
		/* Pages of 3. */
		memset(seen, 0, sizeof seen);
		after = 0;
		for (n = 0;; n++) {
			assert_true(n <= N);
			res = tcall(cl->c[node], "list", "{sisI}", "limit", 3,
			    "after_id", (json_int_t)after);
			if (json_array_size(json_object_get(res, "jobs")) == 0) {
				json_decref(res);
				break;
			}
			json_array_foreach(json_object_get(res, "jobs"), k,
			    job) {
				for (i = 0; i < N && id[i] != tjint(job, "id");
				    i++)
					continue;
				assert_true(i < N);
				seen[i]++;
				after = tjint(job, "id");
			}
			json_decref(res);
		}
		for (i = 0; i < N; i++)
			assert_int_equal(seen[i], 1);
	}
	tnodes_end(cl);
}

/* One job on every node holding its one slot, until free_every_slot. */
static void
hold_every_slot(struct tnodes *cl, int64_t block[NODES])
{
	int i;

	for (i = 0; i < NODES; i++)
		block[i] = submit_ledgered(cl, i, "block", "normal");
	for (i = 0; i < NODES; i++)
		tnodes_wait_state(cl, 0, block[i], "running", 1);
}

static void
free_every_slot(struct tnodes *cl, const int64_t block[NODES])
{
	int i;

	topen_gate(cl->d[0], "block");
	for (i = 0; i < NODES; i++)
		json_decref(twait(cl->c[0], block[i]));
}

/* Moves job id's row on without a NOTIFY: a change another daemon made
 * that node a has not heard of, as a claim that comes first is for a
 * moment. */
static void
bump_version(struct tnodes *cl, int64_t id)
{
	char sql[128];

	snprintf(sql, sizeof sql, "UPDATE triage_jobs SET version = "
	    "version + 1 WHERE id = %lld", (long long)id);
	PQclear(tpg_query(tpg_group, cl->db, sql));
}

/*
 * A cancel whose write was refused, another daemon having changed the row
 * first (here a write no node heard of, as a claim that comes first is for
 * a moment), is done again on the row read back: the job ends canceled on
 * every node, and never runs.
 */
static void
test_cancel_undone_by_another_write_is_done_again(void **state)
{
	struct tnodes *cl = tnodes_start(NODES, 1, "");
	int64_t block[NODES], id;
	json_t *job;
	int i;

	(void)state;
	hold_every_slot(cl, block);
	id = submit_ledgered(cl, 0, "open", "normal");
	for (i = 0; i < NODES; i++)
		tnodes_wait_state(cl, i, id, "queued", 1);
	bump_version(cl, id);
	job = tcall(cl->c[0], "cancel", "{sI}", "id", (json_int_t)id);
	json_decref(job);
	for (i = 0; i < NODES; i++)
		tnodes_wait_state(cl, i, id, "canceled", 1);
	free_every_slot(cl, block);
	assert_int_equal(ledger_count(cl, "start", id, 0), 0);
	tnodes_end(cl);
}

/*
 * A hold, an update and a hold by filter whose writes were refused, another
 * daemon having changed the row first, are not answered as done: the id
 * form says -32005 and to try again, the filter form leaves the job out,
 * and the job is as the other change left it.
 */
static void
test_edit_undone_by_another_write_is_not_answered_done(void **state)
{
	struct tnodes *cl = tnodes_start(NODES, 1, "");
	struct triage_error e;
	int64_t block[NODES], id;
	json_t *res, *job;
	int i;

	(void)state;
	hold_every_slot(cl, block);
	id = tsubmit(cl->c[1], "{s[s] ss ss}", "argv", "true", "name",
	    "edited", "priority", "normal");
	tnodes_wait_state(cl, 0, id, "queued", 1);

	bump_version(cl, id);
	assert_int_equal(tcall_error(cl->c[0], "hold", &e, "{sI}", "id",
	    (json_int_t)id), -32005);
	assert_non_null(strstr(e.message, "was not held; try again"));
	bump_version(cl, id);
	assert_int_equal(tcall_error(cl->c[0], "update", &e, "{sI ss}",
	    "id", (json_int_t)id, "priority", "high"), -32005);
	assert_non_null(strstr(e.message, "was not updated"));
	bump_version(cl, id);
	res = tcall(cl->c[0], "hold", "{s{ss}}", "filter", "name", "edited");
	assert_int_equal(json_array_size(json_object_get(res, "ids")), 0);
	json_decref(res);
	for (i = 0; i < NODES; i++) {
		job = tget(cl->c[i], id);
		assert_false(json_is_true(json_object_get(job, "held")));
		assert_string_equal(tjstr(job, "priority"), "normal");
		json_decref(job);
	}
	/* Its row as it is: the same edits now go through. */
	res = tcall(cl->c[0], "hold", "{sI}", "id", (json_int_t)id);
	assert_true(json_is_true(json_object_get(res, "held")));
	json_decref(res);
	free_every_slot(cl, block);
	json_decref(tcall(cl->c[0], "cancel", "{sI}", "id", (json_int_t)id));
	tnodes_end(cl);
}

/*
 * `wait` and `watch` at one node on a job that runs on another, and a
 * cancel at a third: the node that runs it kills it, frozen or not. Only
 * that node freezes it.
 */
static void
test_wait_watch_and_cancel_across_nodes(void **state)
{
	struct tnodes *cl = tnodes_start(NODES, 1, "");
	struct triage_client *w = tconnect(cl->d[0]);
	struct triage_error e;
	int64_t done, doomed, got;
	json_t *job;
	pid_t pid;
	bool ran = false, ended = false;

	(void)state;
	json_decref(tcall(w, "watch", "{}"));
	done = submit_pinned(cl, 1, "done");
	doomed = submit_pinned(cl, 2, "never");
	/* A wait at c for b's job, pending while the job runs. */
	assert_true(triage_client_send(cl->c[2], "wait", json_pack("{sI}", "id",
	    (json_int_t)done), &e) > 0);
	tnodes_wait_state(cl, 0, done, "running", 1);
	topen_gate(cl->d[0], "done");
	job = triage_client_recv(cl->c[2], &got, HARNESS_TIMEOUT_MS, &e);
	assert_non_null(job);
	assert_string_equal(tstate(job), "succeeded");
	assert_string_equal(tjstr(job, "node"), "b");
	json_decref(job);
	/* a's watch saw it run and end, though a never ran it. */
	while (!ended) {
		job = tnotification(w);
		if (tjint(job, "id") == done) {
			ran |= strcmp(tstate(job), "running") == 0;
			ended = strcmp(tstate(job), "succeeded") == 0;
		}
		json_decref(job);
	}
	assert_true(ran);

	pid = trunning_pid(cl->c[2], doomed);
	/* a knows it runs (on c) once c's write has reached it. */
	tnodes_wait_state(cl, 0, doomed, "running", 1);
	/* Only the node that runs it reaches its processes to freeze them;
	 * the others hear that it is frozen. */
	assert_int_equal(tcall_error(cl->c[0], "freeze", &e, "{sI}", "id",
	    (json_int_t)doomed), -32005);
	if (strstr(e.message, "runs on node c") == NULL)
		fail_msg("freeze at a: %s", e.message);
	job = tcall(cl->c[2], "freeze", "{sI}", "id", (json_int_t)doomed);
	assert_true(json_is_true(json_object_get(job, "frozen")));
	json_decref(job);
	for (ended = false; !ended; json_decref(job)) {
		job = tnotification(w);
		ended = tjint(job, "id") == doomed &&
		    json_is_true(json_object_get(job, "frozen"));
	}
	/* Frozen, it is canceled all the same. */
	json_decref(tcall(cl->c[0], "cancel", "{sI}", "id",
	    (json_int_t)doomed));
	job = twait(cl->c[1], doomed);
	assert_string_equal(tstate(job), "canceled");
	assert_non_null(strstr(tjstr(job, "reason"), "canceled by uid"));
	json_decref(job);
	twait_gone(pid);
	triage_client_free(w);
	tnodes_end(cl);
}

/* Sends n submissions of `true` through node i without waiting. */
static void
send_submits(struct tnodes *cl, int i, int n)
{
	struct triage_error e;
	int k;

	for (k = 0; k < n; k++)
		assert_true(triage_client_send(cl->c[i], "submit",
		    json_pack("{s[s]}", "argv", "true"), &e) > 0);
}

/* The answers of n submissions sent through node i: each acknowledged
 * id goes to acked (*nacked grows), each refusal must be -32603. */
static void
recv_submits(struct tnodes *cl, int i, int n, int64_t *acked,
    int *nacked)
{
	struct triage_error e;
	json_t *res;
	int64_t got;
	int k;

	for (k = 0; k < n; k++) {
		res = triage_client_recv(cl->c[i], &got, 4 * HARNESS_TIMEOUT_MS,
		    &e);
		if (res != NULL) {
			acked[(*nacked)++] = tjint(res, "id");
			json_decref(res);
		} else if (e.code != -32603)
			fail_msg("submit through node %c: %d %s", 'a' + i,
			    e.code, e.message);
	}
}

/*
 * PostgreSQL killed mid-run, with submissions on their way, then stopped a
 * while with jobs ending meanwhile: every acknowledged job is there and
 * runs, no job is there that was not acknowledged, the ends are written
 * once it is back, and submissions go on.
 */
static void
test_database_restart_loses_nothing_acknowledged(void **state)
{
	enum { BURST = 40, HELD = 4, ROUNDS = 100 };
	struct tnodes *cl = tnodes_start(NODES, 2, "");
	int64_t acked[2 * NODES * BURST + 1 + NODES * ROUNDS], held[HELD];
	int64_t deadline;
	double down_at, down_s;
	bool lapsed;
	int nacked = 0, i, k, n;
	json_t *res, *job;
	size_t j;

	(void)state;
	for (i = 0; i < HELD; i++)
		held[i] = submit_ledgered(cl, i % NODES, "later", "normal");
	for (i = 0; i < HELD; i++)
		tnodes_wait_state(cl, 0, held[i], "running", 1);
	/* Commits on their way when the server dies. */
	for (i = 0; i < NODES; i++)
		send_submits(cl, i, BURST);
	tpg_crash_restart(tpg_group);
	for (i = 0; i < NODES; i++)
		recv_submits(cl, i, BURST, acked, &nacked);
	/* Down a while: jobs end (those whose node's lease ran out during
	 * the outage were killed, and run again once it is back),
	 * submissions are refused. */
	down_at = tsupport_clock_s();
	tpg_stop(tpg_group);
	topen_gate(cl->d[0], "later");
	for (i = 0; i < NODES; i++)
		send_submits(cl, i, BURST);
	tpg_restart(tpg_group);
	down_s = tsupport_clock_s() - down_at;
	for (i = 0; i < NODES; i++)
		recv_submits(cl, i, BURST, acked, &nacked);
	/* It goes on, once the node has its connection back. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (;;) {
		struct triage_error e;

		res = triage_client_call(cl->c[1], "submit", json_pack("{s[s]}",
		    "argv", "true"), HARNESS_TIMEOUT_MS, &e);
		if (res != NULL)
			break;
		if (e.code != -32603)
			fail_msg("submit: %d %s", e.code, e.message);
		tcheck_deadline(deadline, "node b to take jobs again");
		usleep(50000);
	}
	acked[nacked++] = tjint(res, "id");
	json_decref(res);

	/* A lease runs out in an outage longer than it, or, on a loaded
	 * machine, when a node's reconnection after a shorter one comes too
	 * late: either way a node says so as it takes the jobs over. */
	lapsed = down_s >= TNODES_LEASE_S;
	for (k = 0; k < NODES; k++)
		lapsed = lapsed || tlog_has(cl->d[k], "lease ran out");
	for (i = 0; i < HELD; i++) {
		for (k = 0; k < NODES; k++) {
			job = twait(cl->c[k], held[i]);
			assert_string_equal(tstate(job), "succeeded");
			json_decref(job);
		}
		/* Each attempt ended once at most: one killed for its lease
		 * never did. A job that ended while the database was away
		 * could not say so; once that outage outlasts its node's
		 * lease, another node may take it over and run it again (at
		 * least once, by design): only an outage no lease outlasted
		 * must leave it ended once. */
		for (k = 1; k <= 3; k++)
			assert_in_range(ledger_count(cl, "done", held[i], k),
			    0, 1);
		if (!lapsed)
			assert_int_equal(ledger_count(cl, "done", held[i], 0),
			    1);
		else
			assert_in_range(ledger_count(cl, "done", held[i], 0),
			    1, 2);
	}
	for (i = 0; i < nacked; i++) {
		job = twait(cl->c[i % NODES], acked[i]);
		assert_string_equal(tstate(job), "succeeded");
		json_decref(job);
	}
	/* The server's locks went with it: each node took its own again,
	 * and every node says every other is up (a job through each makes
	 * the others read the nodes again). */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (i = 0; !all_nodes_up(cl, 0); i++) {
		tcheck_deadline(deadline, "every node up again at node a");
		if (i == ROUNDS)
			fail_msg("every node up again at node a: not after %d "
			    "jobs through each", ROUNDS);
		/* Acknowledged too: the list below holds them. */
		for (k = 0; k < NODES; k++) {
			acked[nacked++] = tsubmit(cl->c[k], "{s[s]}", "argv",
			    "true");
			json_decref(twait(cl->c[k], acked[nacked - 1]));
		}
	}
	/* Exactly those: no job stored whose submitter was told it was not;
	 * and every one, once node a has read the last (another node's
	 * change reaches it a moment after its commit). */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	do {
		tcheck_deadline(deadline, "node a lists %d jobs", nacked + HELD);
		res = tcall(cl->c[0], "list", "{s[sss]si}", "state", "queued",
		    "running", "succeeded", "limit", 1000);
		n = 0;
		json_array_foreach(json_object_get(res, "jobs"), j, job) {
			for (i = 0; i < nacked && acked[i] != tjint(job, "id");
			    i++)
				continue;
			for (k = 0; k < HELD && held[k] != tjint(job, "id");
			    k++)
				continue;
			if (i == nacked && k == HELD)
				fail_msg("job %lld is stored, but its submitter "
				    "was told it was not",
				    (long long)tjint(job, "id"));
			n++;
		}
		json_decref(res);
		assert_in_range(n, 0, nacked + HELD);
	} while (n != nacked + HELD);
	print_message("database restarts: %d of %d submissions acknowledged, "
	    "the rest refused\n", nacked, 2 * NODES * BURST + 1);
	tnodes_end(cl);
}

/*
 * A root daemon runs a job as its submitter, whom the node that runs it
 * finds by name: the user nobody's job, submitted at a, runs at b as
 * nobody; a job whose user b does not have fails there, saying so.
 */
static void
test_submitter_is_found_by_name_where_the_job_runs(void **state)
{
	struct tnodes *cl = tnodes_start(NODES, 1, "socket_mode = 0666\n");
	struct passwd *pw = getpwnam("nobody");
	struct triage_client *as_nobody;
	char sql[256], out[64];
	int64_t id, deadline;
	json_t *job;
	PGresult *res;
	bool renamed;

	(void)state;
	if (pw == NULL)
		skip();
	/* nobody passes through a's dir to its socket. */
	assert_int_equal(chmod(cl->d[0]->dir, 0711), 0);
	assert_int_equal(seteuid(pw->pw_uid), 0);
	as_nobody = tconnect(cl->d[0]);
	assert_int_equal(seteuid(0), 0);
	id = tsubmit(as_nobody, "{s[sss] ss ss}", "argv", "sh", "-c",
	    "id -u", "node", "b", "cwd", "/");
	tnodes_wait_state(cl, 2, id, "succeeded", 1);
	job = tget(cl->c[2], id);
	assert_string_equal(tstate(job), "succeeded");
	assert_string_equal(tjstr(job, "node"), "b");
	json_decref(job);
	job = tcall(cl->c[1], "output", "{sI ss}", "id", (json_int_t)id,
	    "stream", "stdout");
	snprintf(out, sizeof out, "%u\n", (unsigned)pw->pw_uid);
	assert_string_equal(tjstr(job, "data"), out);
	json_decref(job);

	/* A user b does not know: as if it had been submitted elsewhere. */
	id = tsubmit(as_nobody, "{s[s] ss ss sb}", "argv", "true", "node", "b",
	    "cwd", "/", "hold", 1);
	snprintf(sql, sizeof sql, "UPDATE triage_jobs SET username ="
	    " 'no-such-user-here', name = 'elsewhere', version = version + 1"
	    " WHERE id = %lld; NOTIFY triage", (long long)id);
	res = tpg_query(tpg_group, cl->db, sql);
	PQclear(res);
	/* a has read the row (its name says so) before it releases it. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	for (;;) {
		job = tget(cl->c[0], id);
		renamed = strcmp(tjstr(job, "name"), "elsewhere") == 0;
		json_decref(job);
		if (renamed)
			break;
		tcheck_deadline(deadline, "node a to read job %lld's row",
		    (long long)id);
		usleep(10000);
	}
	json_decref(tcall(as_nobody, "release", "{sI}", "id", (json_int_t)id));
	job = twait(cl->c[0], id);
	assert_string_equal(tstate(job), "failed");
	assert_non_null(strstr(tjstr(job, "reason"),
	    "user no-such-user-here does not exist on node b"));
	json_decref(job);
	triage_client_free(as_nobody);
	tnodes_end(cl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs_run_on_every_node),
		cmocka_unit_test(test_start_order_is_priority_then_submission),
		cmocka_unit_test(test_killed_node_jobs_run_again_elsewhere),
		cmocka_unit_test(test_restarted_node_keeps_its_running_job),
		cmocka_unit_test(
		    test_stopped_node_cannot_overwrite_the_new_attempt),
		cmocka_unit_test(
		    test_cut_off_node_kills_its_jobs_before_takeover),
		cmocka_unit_test(
		    test_wait_never_answers_an_end_the_database_refused),
		cmocka_unit_test(
		    test_dead_node_is_down_and_its_takeover_logged),
		cmocka_unit_test(test_idle_node_stays_up_past_its_lease),
		cmocka_unit_test(
		    test_list_is_in_submission_order_across_nodes),
		cmocka_unit_test(
		    test_reloaded_kill_grace_is_what_the_others_wait),
		cmocka_unit_test(test_cancel_undone_by_another_write_is_done_again),
		cmocka_unit_test(
		    test_edit_undone_by_another_write_is_not_answered_done),
		cmocka_unit_test(test_wait_watch_and_cancel_across_nodes),
		cmocka_unit_test(
		    test_job_inserted_claimed_but_not_started_is_unclaimed),
		cmocka_unit_test(
		    test_database_restart_loses_nothing_acknowledged),
		cmocka_unit_test(
		    test_submitter_is_found_by_name_where_the_job_runs),
	};

	return cmocka_run_group_tests_name("cluster", tests, tpg_group_setup,
	    tpg_group_teardown);
}
