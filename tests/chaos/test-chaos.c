/* test-chaos.c - make test-chaos: three real triaged under steady load while
 * faults strike one at a time, then the checker over everything they said. */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "triage/client.h"
#include "chaos-check.h"
#include "chaos-cluster.h"
#include "chaos-faults.h"
#include "chaos-load.h"
#include "harness.h"
#include "tsupport-clock.h"

/* Rounds of every fault: CHAOS=short (.ci/run's) one, else this many
 * (about 45 s a round); CHAOS_ROUNDS=N overrides either. */
#define CHAOS_ROUNDS_LONG 8
/* The whole program fails past these, s: 3 and 10 minutes. */
#define CHAOS_LIMIT_SHORT_S 180
#define CHAOS_LIMIT_LONG_S 600
/* Load alone before the first fault and after each, once the cluster is
 * whole again: jobs of every kind under way when the next one strikes. */
#define CHAOS_CALM_MS 3000
/* Once the load stops, every job must end within this. */
#define CHAOS_DRAIN_MS 60000

static double chaos_t0;

static bool
chaos_short(void)
{
	const char *v = getenv("CHAOS");

	return v != NULL && strcmp(v, "short") == 0;
}

static int
chaos_rounds(void)
{
	const char *v = getenv("CHAOS_ROUNDS");

	if (v != NULL && atoi(v) > 0)
		return atoi(v);
	return chaos_short() ? 1 : CHAOS_ROUNDS_LONG;
}

/* Whether fault f is in CHAOS_FAULTS, a list of keys (kill, stop, cut,
 * restart, failover), or the variable is unset: for a hunt after one. */
static bool
chaos_chosen(const struct chaos_fault *f)
{
	const char *v = getenv("CHAOS_FAULTS"), *p;
	size_t n = strlen(f->key);

	if (v == NULL || *v == '\0')
		return true;
	for (p = v; (p = strstr(p, f->key)) != NULL; p += n)
		if ((p == v || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

static bool
chaos_sync(void)
{
	const char *v = getenv("CHAOS_STANDBY");

	return v == NULL || strcmp(v, "async") != 0;
}

static void
chaos_progress(struct chaos_load *load, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
chaos_progress(struct chaos_load *load, const char *fmt, ...)
{
	struct chaos_load_counts n;
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	chaos_load_counts(load, &n);
	print_message("chaos: %6.1f s: %s (%zu acknowledged, %zu refused, %zu "
	    "unanswered, %zu outcomes)\n", tsupport_clock_s() - chaos_t0, what,
	    n.acked, n.refused, n.unanswered, n.outcomes);
}

static bool
chaos_terminal(const char *state)
{
	return strcmp(state, "succeeded") == 0 || strcmp(state, "failed") ==
	    0 || strcmp(state, "timed_out") == 0 || strcmp(state, "canceled") ==
	    0 || strcmp(state, "lost") == 0;
}

/* Every job, as node i lists it: a new reference. */
static json_t *
chaos_list(struct chaos_cluster *cc, unsigned i)
{
	return tcall(cc->cl->c[i], "list", "{si}", "limit", 100000);
}

/* Polls node a's list until every job is in a final state or the drain's
 * deadline passes (the checker then names those that are not). */
static void
chaos_drain(struct chaos_cluster *cc)
{
	int64_t deadline = tdeadline(CHAOS_DRAIN_MS);
	json_t *list, *job;
	size_t k, open;

	for (;;) {
		list = chaos_list(cc, 0);
		open = 0;
		json_array_foreach(json_object_get(list, "jobs"), k, job)
			open += !chaos_terminal(tstate(job));
		json_decref(list);
		if (open == 0 || tleft_ms(deadline) == 0)
			return;
		poll(NULL, 0, 200);
	}
}

/* The checker over the ledger, the clients' records and node a's final
 * list; the number of violations. */
static size_t
chaos_verdict(struct chaos_cluster *cc, struct chaos_load *load, int rounds,
    int faults)
{
	struct chaos_check *ck = chaos_check_new();
	json_t *list, *job;
	size_t k, violations;
	unsigned i;

	for (i = 0; i < CHAOS_NODES; i++) {
		char name[2] = { (char)('a' + i), '\0' };

		/* chaos-job names its node by its worker's dir, the
		 * daemon's (or the socket, when a job has one). */
		chaos_check_node(ck, cc->cl->d[i]->dir, name);
		chaos_check_node(ck, cc->cl->d[i]->sock, name);
	}
	if (chaos_check_ledger_file(ck, cc->ledger) == -1)
		fail_msg("cannot read %s", cc->ledger);
	chaos_load_feed(load, ck);
	list = chaos_list(cc, 0);
	json_array_foreach(json_object_get(list, "jobs"), k, job)
		chaos_check_final(ck, tjint(job, "id"), tstate(job),
		    tjint(job, "attempt"));
	json_decref(list);
	violations = chaos_check_run(ck, stdout, rounds, faults);
	chaos_check_free(ck);
	return violations;
}

static void
test_chaos(void **state)
{
	int rounds = chaos_rounds(), faults = 0, r;
	int limit = chaos_short() ? CHAOS_LIMIT_SHORT_S : CHAOS_LIMIT_LONG_S;
	const struct chaos_fault *f;
	struct chaos_cluster *cc;
	struct chaos_load *load;
	unsigned seed = 29, node;
	size_t violations, k;

	(void)state;
	cc = chaos_cluster_start(chaos_sync());
	print_message("chaos: %d rounds of %zu faults, 3 nodes (lease %s, %d "
	    "slots each), %s standby\n", rounds, chaos_nfaults, CHAOS_LEASE,
	    CHAOS_SLOTS, cc->sync ? "a synchronous" : "an asynchronous");
	load = chaos_load_start(cc);
	tsupport_clock_sleep_ms(CHAOS_CALM_MS);
	for (r = 0; r < rounds; r++)
		for (k = 0; k < chaos_nfaults; k++) {
			f = &chaos_faults[k];
			if (!chaos_chosen(f))
				continue;
			/* Each node fault of a round on another node. */
			node = (unsigned)(r + (int)k) % CHAOS_NODES;
			if (f->on_node)
				chaos_progress(load, "round %d: %s %c", r + 1,
				    f->name, 'a' + node);
			else
				chaos_progress(load, "round %d: %s", r + 1,
				    f->name);
			f->run(cc, node, rand_r(&seed));
			faults++;
			chaos_cluster_wait_up(cc, HARNESS_TIMEOUT_MS);
			chaos_progress(load, "every node up again");
			tsupport_clock_sleep_ms(CHAOS_CALM_MS);
		}
	chaos_load_stop_submitting(load);
	chaos_progress(load, "load stopped");
	chaos_drain(cc);
	chaos_load_stop(load);
	chaos_progress(load, "drained");
	violations = chaos_verdict(cc, load, rounds, faults);
	print_message("chaos: %d rounds, %d faults, %zu violations in %.1f s\n",
	    rounds, faults, violations, tsupport_clock_s() - chaos_t0);
	/* CHAOS_KEEP=1 keeps them of a passing run too, for its reader. */
	if (violations > 0 || getenv("CHAOS_KEEP") != NULL)
		chaos_cluster_keep_logs(cc);
	chaos_load_free(load);
	chaos_cluster_end(cc);
	if (violations > 0)
		fail_msg("%zu violations (above)", violations);
	if (tsupport_clock_s() - chaos_t0 > limit)
		fail_msg("the run took %.0f s, past its %d s",
		    tsupport_clock_s() - chaos_t0, limit);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chaos),
	};

	chaos_t0 = tsupport_clock_s();
	return cmocka_run_group_tests_name("chaos", tests, NULL, NULL);
}
