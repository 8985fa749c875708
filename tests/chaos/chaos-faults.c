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
#include <libpq-fe.h>

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
/*
 * CHAOS_LAG_MS=N: the standby's WAL receiver stopped (SIGSTOP) for N ms
 * before the primary dies, so that the standby lags behind it: what an
 * asynchronous standby can lose then shows (a synchronous primary commits
 * nothing meanwhile). 0 when unset.
 */
static long
chaos_fault_lag_ms(void)
{
	const char *v = getenv("CHAOS_LAG_MS");

	return v != NULL ? strtol(v, NULL, 10) : 0;
}

/* The standby's WAL receiver, stopped; its pid, or 0 when it has none. */
static pid_t
chaos_fault_stop_receiver(struct tpg *standby)
{
	PGresult *res = tpg_query(standby, "postgres",
	    "SELECT pid FROM pg_stat_wal_receiver");
	pid_t pid = PQntuples(res) > 0 ? (pid_t)atoi(PQgetvalue(res, 0, 0)) :
	    0;

	PQclear(res);
	if (pid > 0)
		tstop(pid);
	return pid;
}

static void
chaos_fault_failover(struct chaos_cluster *cc, unsigned i, unsigned seed)
{
	int old = cc->primary;
	long lag = chaos_fault_lag_ms();
	pid_t receiver = 0;

	(void)i;
	(void)seed;
	if (lag > 0) {
		receiver = chaos_fault_stop_receiver(cc->pg[!old]);
		tsupport_clock_sleep_ms(lag);
	}
	tpg_kill(cc->pg[old]);
	/* It ends, its primary gone, and another starts for the promotion
	 * to stop. */
	if (receiver > 0)
		(void)kill(receiver, SIGCONT);
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
