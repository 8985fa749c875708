/* chaos-faults.c - what the chaos test does to its cluster, one fault at a
 * time: each a function of a table, held its time and then undone. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "triage/client.h"
#include "chaos-cluster.h"
#include "chaos-faults.h"
#include "harness.h"
#include "tpg.h"
#include "tproxy.h"
#include "tsupport-clock.h"

/* Faults of a node are held this long: past its lease, so that the others
 * take its jobs over, with time left for the takeover to run them. */
#define CHAOS_HOLD_MS (2 * CHAOS_LEASE_MS)

/*
 * kill -9 of the node's daemon; its workers live on with their jobs. It
 * starts again after a while from none to twice its lease: sooner, it
 * takes its own jobs back from its workers; later, the others have taken
 * them over, and its workers must have killed them first.
 */
static void
chaos_fault_kill(struct chaos_cluster *cc, unsigned i, unsigned seed)
{
	triage_client_free(cc->cl->c[i]);
	cc->cl->c[i] = NULL;
	tdaemon_crash(cc->cl->d[i]);
	tsupport_clock_sleep_ms((long)(seed % (CHAOS_HOLD_MS + 1)));
	tdaemon_restart(cc->cl->d[i]);
	cc->cl->c[i] = tconnect(cc->cl->d[i]);
}

/* SIGSTOP of the node's daemon for twice its lease, then SIGCONT: it
 * wakes to find its jobs taken over, which its workers stopped. */
static void
chaos_fault_stop(struct chaos_cluster *cc, unsigned i, unsigned seed)
{
	(void)seed;
	tstop(cc->cl->d[i]->pid);
	tsupport_clock_sleep_ms(CHAOS_HOLD_MS);
	if (kill(cc->cl->d[i]->pid, SIGCONT) == -1)
		fail_msg("SIGCONT to node %c", 'a' + i);
}

/* The node cut off from both servers for twice its lease, its
 * connections held open and silent; then new ones pass again. */
static void
chaos_fault_cut(struct chaos_cluster *cc, unsigned i, unsigned seed)
{
	(void)seed;
	tproxy_cut(cc->px[i][0]);
	tproxy_cut(cc->px[i][1]);
	tsupport_clock_sleep_ms(CHAOS_HOLD_MS);
	tproxy_heal(cc->px[i][0]);
	tproxy_heal(cc->px[i][1]);
}

/* pg_ctl restart -m immediate of the primary, under load. */
static void
chaos_fault_pg_restart(struct chaos_cluster *cc, unsigned i, unsigned seed)
{
	(void)i;
	(void)seed;
	tpg_immediate_restart(cc->pg[cc->primary]);
}

/*
 * kill -9 of the primary (postmaster and children), the standby promoted
 * at once; then the old primary made a standby of the new one (a base
 * backup of it anew), so that the next round can fail over back. The
 * nodes' multi-host conninfo finds the writable one by itself.
 */
static void
chaos_fault_failover(struct chaos_cluster *cc, unsigned i, unsigned seed)
{
	int old = cc->primary;

	(void)i;
	(void)seed;
	tpg_kill(cc->pg[old]);
	tpg_promote(cc->pg[!old]);
	cc->primary = !old;
	tpg_rejoin(cc->pg[old], cc->pg[!old], cc->sync);
}

const struct chaos_fault chaos_faults[] = {
	{ "kill", "kill -9 and restart of node", chaos_fault_kill, 1 },
	{ "stop", "SIGSTOP for twice the lease of node", chaos_fault_stop,
	  1 },
	{ "cut", "cut off from PostgreSQL for twice the lease: node",
	  chaos_fault_cut, 1 },
	{ "restart", "PostgreSQL restart -m immediate",
	  chaos_fault_pg_restart, 0 },
	{ "failover", "primary killed -9, standby promoted",
	  chaos_fault_failover, 0 },
};
const size_t chaos_nfaults = sizeof chaos_faults / sizeof chaos_faults[0];
