/* bench-cluster.c - `make bench`: several triaged sharing their queues through
 * PostgreSQL: jobs/s by 1, 2 and 3 nodes (jobs that compute, and jobs that
 * wait), refused claims, transactions a job, claim latency, idle queries. */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bench-cpu.h"
#include "bench-daemon.h"
#include "bench-http.h"
#include "bench-jobs.h"
#include "bench-opts.h"
#include "bench-pg.h"
#include "bench-proc.h"
#include "bench-stamps.h"
#include "bench-stat.h"
#include "bench-why.h"
#include "triage/client.h"
#include "tsupport-clock.h"
#include "tsupport-dir.h"
#include "tsupport-proc.h"

#define BENCH_CLUSTER_ROUNDS		3
#define BENCH_CLUSTER_QUICK_ROUNDS	1
#define BENCH_CLUSTER_JOBS		1000
#define BENCH_CLUSTER_QUICK_JOBS	300
#define BENCH_CLUSTER_SAMPLES		200
#define BENCH_CLUSTER_QUICK_SAMPLES	50
#define BENCH_CLUSTER_IDLE_SECONDS	60
#define BENCH_CLUSTER_QUICK_IDLE_SECONDS 10
/* The slots of every contestant of `true` jobs, split evenly between its
 * nodes. */
#define BENCH_CLUSTER_SLOTS		6
/* Jobs that wait rather than compute: each node's slots, the job, its
 * length, and how long a round would take at the ideal rate (every slot
 * always busy): nodes x slots / length jobs a second. */
#define BENCH_CLUSTER_WAIT_SLOTS	16
#define BENCH_CLUSTER_WAIT_JOB		"0.1"
#define BENCH_CLUSTER_WAIT_JOB_S	0.1
#define BENCH_CLUSTER_WAIT_ROUND_S	4
#define BENCH_CLUSTER_QUICK_WAIT_ROUND_S 2
/* The targets: waiting jobs at 3 nodes at least this share of the ideal
 * rate (and of the machine's own rate of them); claims refused (another
 * node had the job) at most this share. */
#define BENCH_CLUSTER_WAIT_TARGET	0.95
#define BENCH_CLUSTER_REFUSED_TARGET	0.05
/* The claim latency's target: the cluster's p50 at most this many times
 * SQLite's. */
#define BENCH_CLUSTER_LATENCY_TARGET	1.5
#define BENCH_CLUSTER_MAX_NODES		3
/* A round of a few thousand `true` is seconds, and a job whose node went
 * silent is taken over after the lease (30 s): this is a stuck cluster. */
#define BENCH_CLUSTER_REPLY_MS		120000
/* A job of the latency samples starts in milliseconds; this is stuck. */
#define BENCH_CLUSTER_STAMP_MS		60000
/*
 * Before the idle window: a PostgreSQL 15 backend sends its counts to
 * pg_stat_database at most once a second, and an idle one within 10 s
 * (PGSTAT_IDLE_INTERVAL); past that, what the cluster did before the
 * window is counted before it.
 */
#define BENCH_CLUSTER_SETTLE_MS		11000
/* Jobs run before the idle window, so that it follows work. */
#define BENCH_CLUSTER_IDLE_JOBS		12

/* One contestant of the throughput rounds: SQLite, or a cluster. */
struct bench_cluster_who {
	const char *name;
	unsigned nodes;		/* 0: one daemon on SQLite */
	bool wait;		/* jobs that wait (sleep), each node
				 * BENCH_CLUSTER_WAIT_SLOTS; else `true`,
				 * BENCH_CLUSTER_SLOTS split */
	bool skipped;		/* not a contestant of this run (--nodes) */
	unsigned rounds;	/* that ran */
	double rate[16];	/* jobs/s, each round */
	/* Waiting jobs: the machine's own rate of the same jobs, as many in
	 * flight, without triage (ref-floor fork), after each round. */
	double floor[16];
	unsigned floor_rounds;
	uint64_t ran[BENCH_CLUSTER_MAX_NODES]; /* jobs each node ran,
						 * over every round */
	/* Over every round: the jobs, the claims the nodes wrote and
	 * those refused (their metrics), the database's transactions. */
	uint64_t jobs;
	uint64_t claims;
	uint64_t refused;
	uint64_t moved;
	long long xacts;
	/* CPU seconds: the daemons', their workers' (the jobs' own aside),
	 * the database's backends'. */
	double cpu_daemons;
	double cpu_workers;
	double cpu_pg;
	bool counted;		/* every round's counts were read */
	struct bench_why why;
};

/* The daemons of one contestant: one on SQLite, or 1 to 3 nodes on a
 * database of their own. */
struct bench_cluster_set {
	struct bench_daemon *d[BENCH_CLUSTER_MAX_NODES];
	unsigned n;
	char db[32];		/* the nodes' database; "" for SQLite */
};

struct bench_cluster {
	const char *dir;	/* parent of every temp dir */
	char tmp[256];		/* ours: the latency FIFOs */
	char stamp[PATH_MAX];	/* ref-stamp, beside us */
	char floor[PATH_MAX];	/* ref-floor, beside us */
	struct tsupport_pg *pg;
	unsigned dbs;		/* databases made, for their names */
	uint64_t jobs;		/* per throughput round of `true` */
	double wait_round_s;	/* of waiting jobs, at the ideal rate */
	long samples;		/* of the latency, each */
	long idle_seconds;
	long statements;	/* the top ones printed after a round */
	struct bench_cluster_idle *idle;
};

static void bench_cluster_idle_open(struct bench_cluster *b);

/* One node's share of a round's submissions, in a thread of its own so
 * that every node is fed at once. */
struct bench_cluster_feed {
	pthread_t thread;
	struct triage_client *cl;
	const json_t *params;	/* of each submit; NULL: `true` */
	uint64_t n;
	json_int_t *ids;	/* n, filled in */
	struct bench_why why;
};

/* ---- the daemons ---- */

/* Stops every daemon of s, saying why one did not stop cleanly. false
 * when one did not, or when ok is false (then the logs are printed). */
static bool
bench_cluster_stop(struct bench_cluster_set *s, bool ok)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		ok = bench_daemon_finish(s->d[i], "bench-cluster", ok) && ok;
	s->n = 0;
	return ok;
}

/*
 * Starts nodes daemons (0: one on SQLite), each with slots (0: the
 * `true` rounds' slots split between them) and its metrics on [http],
 * each a node of a new database. 0, or -1 with *cause set (allocated) and
 * nothing left running.
 */
static int
bench_cluster_start(struct bench_cluster *b, unsigned nodes, unsigned slots,
    struct bench_cluster_set *s, char **cause)
{
	struct bench_daemon_conf conf = { .http = true };
	char daemon[64], cluster[1024], *conninfo = NULL;
	unsigned i, count = nodes > 0 ? nodes : 1;

	*cause = NULL;
	s->n = 0;
	s->db[0] = '\0';
	snprintf(daemon, sizeof daemon, "slots = %u\n",
	    slots > 0 ? slots : BENCH_CLUSTER_SLOTS / count);
	conf.daemon = daemon;
	if (nodes > 0) {
		snprintf(s->db, sizeof s->db, "bench%u", ++b->dbs);
		if ((conninfo = bench_pg_createdb(b->pg, s->db, cause))
		    == NULL)
			return -1;
		conf.cluster = cluster;
	}
	for (i = 0; i < count; i++) {
		if (nodes > 0)
			snprintf(cluster, sizeof cluster, "postgresql = %s\n"
			    "node = n%u\n", conninfo, i + 1);
		if ((s->d[i] = bench_daemon_start(b->dir, &conf, cause))
		    == NULL) {
			free(conninfo);
			(void)bench_cluster_stop(s, false);
			return -1;
		}
		s->n++;
	}
	free(conninfo);
	return 0;
}

/* Connects to every daemon of s. 0, or -1 with *cause set (allocated) and
 * none connected. */
static int
bench_cluster_connect(const struct bench_cluster_set *s,
    struct triage_client **cl, char **cause)
{
	unsigned i, k;

	for (i = 0; i < s->n; i++) {
		if ((cl[i] = triage_client_connect(s->d[i]->sock, cause))
		    == NULL) {
			for (k = 0; k < i; k++)
				triage_client_free(cl[k]);
			return -1;
		}
	}
	return 0;
}

/* ---- jobs/s ---- */

static void *
bench_cluster_feed_cb(void *arg)
{
	struct bench_cluster_feed *f = arg;

	(void)bench_jobs_submit(f->cl, f->n, f->ids, f->params,
	    BENCH_CLUSTER_REPLY_MS, &f->why);
	return NULL;
}

/* Counts a job that succeeded on the node it ran on (its "node": n1, n2
 * or n3). */
static void
bench_cluster_ran_cb(const json_t *job, void *arg)
{
	struct bench_cluster_who *c = arg;
	const char *node = json_string_value(json_object_get(job, "node"));
	unsigned i;
	char name[16];

	for (i = 0; node != NULL && i < c->nodes; i++) {
		snprintf(name, sizeof name, "n%u", i + 1);
		if (strcmp(node, name) == 0)
			c->ran[i]++;
	}
}

/* Waits on cl until every job of f has ended, checking that each
 * succeeded and counting where they ran. 0, or -1 after saying why. */
static int
bench_cluster_wait(struct bench_cluster_who *c, struct triage_client *cl,
    const struct bench_cluster_feed *f)
{
	return bench_jobs_wait(cl, f->n, f->ids, BENCH_CLUSTER_REPLY_MS,
	    bench_cluster_ran_cb, c, &c->why);
}

/* The value of a counter of the daemon's metrics (a sample without
 * labels); 0, or -1 with *cause set (allocated). */
static int
bench_cluster_metric(const struct bench_daemon *d, const char *name,
    uint64_t *value, char **cause)
{
	char *body = NULL, *at;
	size_t bytes, len = strlen(name);

	if (bench_http_get(d->http, "/metrics", &bytes, &body, cause) != 0)
		return -1;
	for (at = body; (at = strstr(at, name)) != NULL; at += len)
		if ((at == body || at[-1] == '\n') && at[len] == ' ')
			break;
	if (at == NULL) {
		free(body);
		bench_why_alloc(cause, "the metrics have no %s", name);
		return -1;
	}
	*value = strtoull(at + len + 1, NULL, 10);
	free(body);
	return 0;
}

/* Adds what the round cost to c's counts: the claims and refusals of each
 * node, before they stop. false (the counts left incomplete) after saying
 * why. */
static bool
bench_cluster_count_claims(struct bench_cluster_who *c,
    const struct bench_cluster_set *s)
{
	uint64_t claims, refused, moved;
	char *cause = NULL;
	unsigned i;

	for (i = 0; i < s->n; i++) {
		if (bench_cluster_metric(s->d[i], "triage_store_claims_total",
		    &claims, &cause) != 0 || bench_cluster_metric(s->d[i],
		    "triage_store_claims_refused_total", &refused, &cause)
		    != 0 || bench_cluster_metric(s->d[i],
		    "triage_store_claims_moved_total", &moved, &cause) != 0) {
			fprintf(stderr, "bench-cluster: %s: %s\n", c->name,
			    cause != NULL ? cause : "out of memory");
			free(cause);
			return false;
		}
		c->claims += claims;
		c->refused += refused;
		c->moved += moved;
	}
	return true;
}

/* What the round's processes have used of the CPU so far: each daemon's
 * and its workers', and the database's exited backends'. */
struct bench_cluster_cpu {
	struct bench_cpu d[BENCH_CLUSTER_MAX_NODES];
	long long pg;
};

/* Reads s's CPU into *cpu (the database's only when pg); false after
 * saying why. */
static bool
bench_cluster_cpu_read(struct bench_cluster *b, const struct bench_cluster_set *s,
    bool pg, struct bench_cluster_cpu *cpu)
{
	char *cause = NULL;
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (bench_cpu_read(s->d[i]->pid, &cpu->d[i]) != 0) {
			fprintf(stderr, "bench-cluster: CPU of triaged %d: %s\n",
			    (int)s->d[i]->pid, strerror(errno));
			return false;
		}
	if (pg && (cpu->pg = bench_pg_cpu(b->pg, &cause)) == -1) {
		fprintf(stderr, "bench-cluster: %s\n", cause != NULL ? cause :
		    "out of memory");
		free(cause);
		return false;
	}
	return true;
}

/* Adds the daemons' and workers' CPU from before to after to c's. */
static bool
bench_cluster_count_cpu(struct bench_cluster_who *c, unsigned n,
    const struct bench_cluster_cpu *before,
    const struct bench_cluster_cpu *after)
{
	double daemon_s, workers_s;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (bench_cpu_since(&before->d[i], &after->d[i], &daemon_s,
		    &workers_s) != 0)
			return false;
		c->cpu_daemons += daemon_s;
		c->cpu_workers += workers_s;
	}
	return true;
}

/* The database's transactions over the round and its backends' CPU since
 * pg_before, once its nodes have stopped and their sessions gone (a
 * backend reports its counts as it exits). false after saying why. */
static bool
bench_cluster_count_db(struct bench_cluster *b, struct bench_cluster_who *c,
    const char *db, long long pg_before)
{
	char *cause = NULL;
	long long n, cpu;

	if (db[0] == '\0')
		return true;
	if (bench_pg_gone(b->pg, db, &cause) == -1 ||
	    (n = bench_pg_xacts(b->pg, db, &cause)) == -1 ||
	    (cpu = bench_pg_cpu(b->pg, &cause)) == -1) {
		fprintf(stderr, "bench-cluster: %s: %s\n", c->name,
		    cause != NULL ? cause : "out of memory");
		free(cause);
		return false;
	}
	c->xacts += n;
	c->cpu_pg += (double)(cpu - pg_before) / (double)sysconf(_SC_CLK_TCK);
	return true;
}

/* The jobs of a round of c: `true` split between the nodes, or waiting
 * jobs enough to keep every slot busy for the round's time. */
static uint64_t
bench_cluster_round_jobs(const struct bench_cluster *b,
    const struct bench_cluster_who *c)
{
	unsigned count = c->nodes > 0 ? c->nodes : 1;

	if (!c->wait)
		return b->jobs;
	return (uint64_t)(count * BENCH_CLUSTER_WAIT_SLOTS *
	    b->wait_round_s / BENCH_CLUSTER_WAIT_JOB_S + 0.5);
}

/*
 * What the machine itself makes of a round of c's waiting jobs: ref-floor
 * runs them (fork+execvp) with as many in flight as c's slots, timed from
 * its spawn to its end, into c->floor. Said on stderr when it cannot.
 */
static void
bench_cluster_floor(const struct bench_cluster *b, struct bench_cluster_who *c,
    uint64_t jobs)
{
	char n[24], inflight[24];
	const char *argv[] = { b->floor, "fork", n, inflight, "sleep",
	    BENCH_CLUSTER_WAIT_JOB, NULL };
	const char *const *args = argv;
	char *const *av;
	double seconds;
	int status;

	if (c->floor_rounds >= sizeof c->floor / sizeof c->floor[0])
		return;
	snprintf(n, sizeof n, "%" PRIu64, jobs);
	snprintf(inflight, sizeof inflight, "%u",
	    c->nodes * BENCH_CLUSTER_WAIT_SLOTS);
	/* posix_spawn's prototype predates const; it writes none. */
	memcpy(&av, &args, sizeof av);
	if ((status = bench_proc_run(av, environ, -1, &seconds)) != 0) {
		fprintf(stderr, "bench-cluster: %s: %s\n", b->floor,
		    status == -1 ? strerror(errno) : "failed");
		return;
	}
	c->floor[c->floor_rounds++] = (double)jobs / seconds;
	fprintf(stderr, "bench-cluster:   %-18s %6" PRIu64 " jobs %8.3f s "
	    "%8.0f jobs/s (ref-floor, %s in flight)\n", "the machine", jobs,
	    seconds, (double)jobs / seconds, inflight);
}

/* The first round's profile of c's database on stderr (--statements). */
static void
bench_cluster_statements(struct bench_cluster *b,
    const struct bench_cluster_who *c, const char *db, uint64_t jobs)
{
	char *cause = NULL;

	fprintf(stderr, "bench-cluster: %s: the database's top statements "
	    "of its first round, by the server's time in them\n", c->name);
	if (bench_pg_statements(b->pg, db, (double)jobs, (int)b->statements,
	    stderr, &cause) != 0) {
		fprintf(stderr, "bench-cluster: %s\n", cause != NULL ? cause :
		    "out of memory");
		free(cause);
	}
}

/*
 * One round of c on fresh daemons: the jobs split between its nodes, each
 * node's share submitted pipelined on a connection of its own, all at
 * once; timed from the first submit to the last job's end (the last wait
 * reply), each node's jobs waited for on that node.
 */
static void
bench_cluster_round(struct bench_cluster *b, struct bench_cluster_who *c)
{
	struct bench_cluster_feed f[BENCH_CLUSTER_MAX_NODES];
	struct triage_client *cl[BENCH_CLUSTER_MAX_NODES];
	struct bench_cluster_set s;
	unsigned i, started = 0, count = c->nodes > 0 ? c->nodes : 1;
	uint64_t jobs = bench_cluster_round_jobs(b, c);
	struct bench_cluster_cpu cpu0, cpu1;
	json_t *params = NULL;
	char *cause = NULL;
	json_int_t *ids;
	double t0, t1;
	bool counted = false, cpu_ok;
	int rc;

	if ((ids = calloc(jobs, sizeof *ids)) == NULL || (c->wait &&
	    (params = json_pack("{s[ss]}", "argv", "sleep",
	    BENCH_CLUSTER_WAIT_JOB)) == NULL)) {
		free(ids);
		bench_why_set(&c->why, "out of memory");
		return;
	}
	if (bench_cluster_start(b, c->nodes, c->wait ?
	    BENCH_CLUSTER_WAIT_SLOTS : 0, &s, &cause) == -1) {
		bench_why_set(&c->why, "%s", cause ? cause : "out of memory");
		free(cause);
		free(ids);
		json_decref(params);
		return;
	}
	if (bench_cluster_connect(&s, cl, &cause) == -1) {
		bench_why_set(&c->why, "%s", cause ? cause : "out of memory");
		free(cause);
		goto out;
	}
	memset(f, 0, sizeof f);
	for (i = 0; i < count; i++) {
		f[i].cl = cl[i];
		f[i].params = params;
		f[i].n = jobs / count + (i < jobs % count ? 1 : 0);
		f[i].ids = i == 0 ? ids : f[i - 1].ids + f[i - 1].n;
	}
	cpu_ok = bench_cluster_cpu_read(b, &s, c->nodes > 0, &cpu0);
	t0 = tsupport_clock_s();
	for (started = 0; started < count; started++) {
		if ((rc = pthread_create(&f[started].thread, NULL,
		    bench_cluster_feed_cb, &f[started])) != 0) {
			bench_why_set(&c->why, "cannot start a thread: %s",
			    strerror(rc));
			break;
		}
	}
	for (i = 0; i < started; i++) {
		pthread_join(f[i].thread, NULL);
		if (f[i].why.failed)
			bench_why_set(&c->why, "n%u: %s", i + 1, f[i].why.text);
	}
	for (i = 0; i < count && !c->why.failed; i++)
		(void)bench_cluster_wait(c, cl[i], &f[i]);
	t1 = tsupport_clock_s();
	if (!c->why.failed && c->rounds < sizeof c->rate / sizeof c->rate[0]) {
		c->rate[c->rounds++] = (double)jobs / (t1 - t0);
		c->jobs += jobs;
		fprintf(stderr, "bench-cluster:   %-18s %6" PRIu64 " jobs "
		    "%8.3f s %8.0f jobs/s\n", c->name, jobs, t1 - t0,
		    (double)jobs / (t1 - t0));
		counted = cpu_ok && bench_cluster_cpu_read(b, &s, false,
		    &cpu1) && bench_cluster_count_cpu(c, s.n, &cpu0, &cpu1) &&
		    bench_cluster_count_claims(c, &s);
	}
	for (i = 0; i < count; i++)
		triage_client_free(cl[i]);
out:
	if (bench_daemon_interrupted() != 0)
		bench_why_set(&c->why, "interrupted");
	if (!bench_cluster_stop(&s, !c->why.failed))
		bench_why_set(&c->why, "a daemon did not stop cleanly");
	if (counted && !bench_cluster_count_db(b, c, s.db, cpu0.pg))
		counted = false;
	if (counted && b->statements > 0 && c->rounds == 1)
		bench_cluster_statements(b, c, s.db, jobs);
	if (c->wait && !c->why.failed)
		bench_cluster_floor(b, c, jobs);
	/* A round that could not be counted leaves the counts out. */
	c->counted = counted && (c->rounds == 1 || c->counted);
	free(ids);
	json_decref(params);
}

/* The jobs each node of c ran, over every round, into ran. */
static void
bench_cluster_ran_text(const struct bench_cluster_who *c, char *ran,
    size_t size)
{
	size_t k, len = 0;

	ran[0] = '\0';
	for (k = 0; k < c->nodes && len < size; k++)
		len += (size_t)snprintf(ran + len, size - len, "%sn%zu %" PRIu64,
		    k > 0 ? ", " : "", k + 1, c->ran[k]);
}

/* What c's claims and transactions cost, as a table's last columns. */
static void
bench_cluster_costs_text(const struct bench_cluster_who *c, char *text,
    size_t size)
{
	double per = c->jobs > 0 ? 1000.0 / (double)c->jobs : 0;

	if (!c->counted || c->jobs == 0)
		snprintf(text, size, "%8s %8s %8s %8s %17s", "-", "-", "-", "-",
		    "-");
	else
		snprintf(text, size, "%8" PRIu64 " %7.2f%% %7.2f%% %8.2f "
		    "%5.2f %5.2f %5.2f", c->claims, c->claims > 0 ? 100.0 *
		    (double)c->refused / (double)c->claims : 0, c->claims > 0 ?
		    100.0 * (double)c->moved / (double)c->claims : 0,
		    c->nodes > 0 ? (double)c->xacts / (double)c->jobs : 0,
		    c->cpu_daemons * per, c->cpu_workers * per,
		    c->cpu_pg * per);
}

/* The `true` rounds' table and summaries: each cluster against the SQLite
 * daemon of the same run, and 3 nodes against 1. */
static void
bench_cluster_true_report(const struct bench_cluster *b,
    const struct bench_cluster_who *who, size_t n)
{
	double sqlite = bench_stat_median(who[0].rate, who[0].rounds), rate;
	double one = 0, three = 0;
	char ran[96], costs[64];
	size_t i;

	printf("\ntriage cluster throughput, jobs that compute: %" PRIu64
	    " jobs of `true`, %d slots split between the nodes, submitted "
	    "pipelined to every node at once, first submit to last end; "
	    "median of each's rounds; over all rounds, the claims refused "
	    "(another node had the job) or moved (to another job alike), "
	    "the database's transactions a job (pg_stat_database: a "
	    "commit, a read or a read-back is one round trip and one "
	    "transaction, and each listening node's backend takes one more "
	    "as it reads a NOTIFY, its sender's own too), and "
	    "the CPU a job of the daemons (d), their workers (w) and the "
	    "database's backends (pg), the jobs' own aside\n\n",
	    b->jobs, BENCH_CLUSTER_SLOTS);
	printf("%-8s %6s %8s %9s %8s %8s %8s %8s %17s  %s\n", "", "rounds",
	    "jobs/s", "x SQLite", "claims", "refused", "moved", "xact/job",
	    "CPU ms/job d w pg",
	    "jobs run by each node (all rounds)");
	for (i = 0; i < n; i++) {
		if (who[i].skipped)
			continue;
		if (who[i].rounds == 0) {
			printf("%-8s failed: %s\n", who[i].name,
			    who[i].why.text);
			continue;
		}
		rate = bench_stat_median(who[i].rate, who[i].rounds);
		if (who[i].nodes == 1)
			one = rate;
		if (who[i].nodes == 3)
			three = rate;
		bench_cluster_ran_text(&who[i], ran, sizeof ran);
		bench_cluster_costs_text(&who[i], costs, sizeof costs);
		printf("%-8s %6u %8.0f %9.2f %s  %s\n", who[i].name,
		    who[i].rounds, rate, sqlite > 0 ? rate / sqlite : 0,
		    costs, ran);
	}
	for (i = 1; i < n; i++) {
		if (who[i].skipped)
			continue;
		if (who[i].rounds == 0 || who[0].rounds == 0) {
			printf("SUMMARY\tcluster\tjobs/s, `true`, %s\t(failed)"
			    "\t-\t-\t-\n", who[i].name);
			continue;
		}
		rate = bench_stat_median(who[i].rate, who[i].rounds);
		printf("SUMMARY\tcluster\tjobs/s, `true`, %s, %d slots\t%.0f "
		    "jobs/s (%.2f x SQLite)\tSQLite %.0f jobs/s\t-\t-\n",
		    who[i].name, BENCH_CLUSTER_SLOTS, rate, rate / sqlite,
		    sqlite);
	}
	if (one > 0 && three > 0)
		printf("SUMMARY\tcluster\tjobs/s, `true`, 3 nodes against 1"
		    "\t%.0f jobs/s (%.2f x)\t1 node %.0f jobs/s\t>= 1.00 x"
		    "\t%s\n", three, three / one, one, three >= one ? "met" :
		    "MISSED");
}

/* The waiting jobs' table and summaries: each cluster against its ideal
 * rate (nodes x slots / job length), and the claims refused over every
 * cluster round of both kinds. */
static void
bench_cluster_wait_report(const struct bench_cluster *b,
    const struct bench_cluster_who *who, size_t n,
    const struct bench_cluster_who *all, size_t nall)
{
	uint64_t claims = 0, refused = 0;
	double rate, ideal, floor;
	char ran[96], costs[64];
	bool counted = true;
	size_t i;

	printf("\ntriage cluster throughput, jobs that wait: `sleep %s`, %d "
	    "slots a node, jobs for %.0f s at the ideal rate (nodes x slots / "
	    "%s s), submitted pipelined to every node at once, first submit "
	    "to last end; median of each's rounds; the floor: the machine "
	    "running the same jobs, as many at once, without triage "
	    "(ref-floor fork+execvp, after each round)\n\n",
	    BENCH_CLUSTER_WAIT_JOB, BENCH_CLUSTER_WAIT_SLOTS, b->wait_round_s,
	    BENCH_CLUSTER_WAIT_JOB);
	printf("%-18s %6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %17s  %s\n",
	    "", "rounds", "jobs/s", "ideal", "x ideal", "floor", "x floor",
	    "claims", "refused", "moved", "xact/job", "CPU ms/job d w pg",
	    "jobs run by each node (all rounds)");
	for (i = 0; i < n; i++) {
		ideal = who[i].nodes * BENCH_CLUSTER_WAIT_SLOTS /
		    BENCH_CLUSTER_WAIT_JOB_S;
		if (who[i].skipped)
			continue;
		if (who[i].rounds == 0) {
			printf("%-18s failed: %s\n", who[i].name,
			    who[i].why.text);
			printf("SUMMARY\tcluster\tjobs/s, sleep %s, %s\t"
			    "(failed)\t-\t-\tMISSED\n", BENCH_CLUSTER_WAIT_JOB,
			    who[i].name);
			continue;
		}
		rate = bench_stat_median(who[i].rate, who[i].rounds);
		floor = bench_stat_median(who[i].floor, who[i].floor_rounds);
		bench_cluster_ran_text(&who[i], ran, sizeof ran);
		bench_cluster_costs_text(&who[i], costs, sizeof costs);
		printf("%-18s %6u %8.0f %8.0f %8.2f %8.0f %8.2f %s  %s\n",
		    who[i].name, who[i].rounds, rate, ideal, rate / ideal,
		    floor, floor > 0 ? rate / floor : 0, costs, ran);
		/* The targets are the 3 nodes': fewer have less to share. */
		printf("SUMMARY\tcluster\tjobs/s, sleep %s, %s, %d slots "
		    "each\t%.0f jobs/s (%.2f of ideal)\tideal %.0f jobs/s\t"
		    "%s\t%s\n", BENCH_CLUSTER_WAIT_JOB, who[i].name,
		    BENCH_CLUSTER_WAIT_SLOTS, rate, rate / ideal, ideal,
		    who[i].nodes == 3 ? ">= 0.95 of ideal" : "-",
		    who[i].nodes != 3 ? "-" : rate / ideal >=
		    BENCH_CLUSTER_WAIT_TARGET ? "met" : "MISSED");
		printf("SUMMARY\tcluster\tjobs/s, sleep %s, %s, against the "
		    "machine's floor\t%.0f jobs/s (%.2f of the floor)\t"
		    "ref-floor, %u in flight: %.0f jobs/s\t%s\t%s\n",
		    BENCH_CLUSTER_WAIT_JOB, who[i].name, rate, floor > 0 ?
		    rate / floor : 0, who[i].nodes * BENCH_CLUSTER_WAIT_SLOTS,
		    floor, who[i].nodes == 3 ? ">= 0.95 of the floor" : "-",
		    who[i].nodes != 3 ? "-" : floor > 0 && rate / floor >=
		    BENCH_CLUSTER_WAIT_TARGET ? "met" : "MISSED");
	}
	for (i = 0; i < nall; i++) {
		if (all[i].nodes < 2 || all[i].skipped)
			continue;
		counted = counted && all[i].counted;
		claims += all[i].claims;
		refused += all[i].refused;
	}
	if (!counted || claims == 0)
		printf("SUMMARY\tcluster\tclaims refused, 2 and 3 nodes\t"
		    "(not counted)\t-\t< 5%%\tMISSED\n");
	else
		printf("SUMMARY\tcluster\tclaims refused, 2 and 3 nodes, all "
		    "rounds\t%.2f%% (%" PRIu64 " of %" PRIu64 ")\t-\t< 5%%\t"
		    "%s\n", 100.0 * (double)refused / (double)claims, refused,
		    claims, (double)refused < BENCH_CLUSTER_REFUSED_TARGET *
		    (double)claims ? "met" : "MISSED");
}

/* ---- claim latency ---- */

/* A contestant of the latency: its daemons, a connection to each, and the
 * FIFO its jobs stamp their start into. */
struct bench_cluster_lat {
	const char *name;
	struct bench_cluster_set s;
	struct triage_client *cl[BENCH_CLUSTER_MAX_NODES];
	bool connected;
	struct bench_stamps st;
	double *ms;		/* reply to start, one a sample; below 0
				 * when the job started before the reply */
	double *sent_ms;	/* submit sent to start */
	size_t n;
	unsigned strays;	/* starts of jobs other than the sample's: a
				 * job of an earlier sample run again */
};

/*
 * One sample of l, submitted to its node i: the time from the submit's
 * reply, and from its sending, to the job's own stamp of its start; then
 * the job's end is waited for, so that the next sample finds the daemons
 * idle again. 0, or -1 after saying why.
 */
static int
bench_cluster_sample(struct bench_cluster *b, struct bench_cluster_lat *l,
    unsigned i)
{
	struct triage_client *cl = l->cl[i % l->s.n];
	struct triage_error e;
	long long sent, reply, start, job_id;
	char kind;
	json_t *job, *done;
	json_int_t id;

	sent = tsupport_clock_ns();
	job = triage_client_call(cl, "submit", json_pack("{s[sss]}", "argv",
	    b->stamp, "start", l->st.path), BENCH_CLUSTER_STAMP_MS, &e);
	reply = tsupport_clock_ns();
	if (job == NULL) {
		fprintf(stderr, "bench-cluster: %s: submit: %s\n", l->name,
		    e.message);
		return -1;
	}
	id = json_integer_value(json_object_get(job, "id"));
	json_decref(job);
	do {
		if (bench_stamps_next(&l->st, BENCH_CLUSTER_STAMP_MS, &kind,
		    &start, &job_id) == -1)
			return -1;
		if (kind != 'S') {
			fprintf(stderr, "bench-cluster: stamp %c, not a "
			    "start\n", kind);
			return -1;
		}
		if (job_id != (long long)id)
			l->strays++;
	} while (job_id != (long long)id);
	l->ms[l->n] = (double)(start - reply) / 1e6;
	l->sent_ms[l->n++] = (double)(start - sent) / 1e6;
	if ((done = triage_client_call(cl, "wait", json_pack("{s[I]}", "ids",
	    (json_int_t)id), BENCH_CLUSTER_STAMP_MS, &e)) == NULL) {
		fprintf(stderr, "bench-cluster: %s: wait: %s\n", l->name,
		    e.message);
		return -1;
	}
	json_decref(done);
	return 0;
}

/* Makes l's FIFO and starts its daemons. 0, or -1 after saying why. */
static int
bench_cluster_lat_open(struct bench_cluster *b, struct bench_cluster_lat *l,
    unsigned nodes)
{
	char *cause = NULL;

	if ((l->ms = calloc((size_t)b->samples, sizeof *l->ms)) == NULL ||
	    (l->sent_ms = calloc((size_t)b->samples, sizeof *l->sent_ms))
	    == NULL)
		return -1;
	l->st.prog = "bench-cluster";
	if (bench_stamps_open(&l->st, b->tmp, nodes > 0 ? "cluster" :
	    "sqlite") == -1)
		return -1;
	if (bench_cluster_start(b, nodes, 0, &l->s, &cause) == -1 ||
	    bench_cluster_connect(&l->s, l->cl, &cause) == -1) {
		fprintf(stderr, "bench-cluster: %s: %s\n", l->name,
		    cause ? cause : "out of memory");
		free(cause);
		return -1;
	}
	l->connected = true;
	return 0;
}

/* Disconnects and stops l's daemons; ok made false by a bad stop. */
static bool
bench_cluster_lat_close(struct bench_cluster_lat *l, bool ok)
{
	unsigned i;

	if (l->connected) {
		for (i = 0; i < l->s.n; i++)
			triage_client_free(l->cl[i]);
	}
	ok = bench_cluster_stop(&l->s, ok);
	bench_stamps_close(&l->st);
	free(l->ms);
	free(l->sent_ms);
	return ok;
}

/* One line of the latency table; its p50 and p99 of both measures into
 * q[4] (reply to start, then submit to start). */
static void
bench_cluster_lat_line(struct bench_cluster_lat *l, double q[4])
{
	size_t i, early = 0;

	for (i = 0; i < l->n; i++)
		early += l->ms[i] < 0;
	q[0] = bench_stat_quantile(l->ms, l->n, 0.5);
	q[1] = bench_stat_quantile(l->ms, l->n, 0.99);
	q[2] = bench_stat_quantile(l->sent_ms, l->n, 0.5);
	q[3] = bench_stat_quantile(l->sent_ms, l->n, 0.99);
	printf("%-26s %8.3f %8.3f %8.3f  %8.3f %8.3f %8.3f  %6zu %6u\n",
	    l->name, q[0], q[1], bench_stat_quantile(l->ms, l->n, 1), q[2],
	    q[3], bench_stat_quantile(l->sent_ms, l->n, 1), early, l->strays);
}

static void
bench_cluster_lat_report(struct bench_cluster_lat *c,
    struct bench_cluster_lat *s)
{
	double cq[4], sq[4];

	printf("\ntriage claim latency: a job's exec after its submit's reply "
	    "(below 0: it started before the reply came) and after the "
	    "submit was sent, nothing else queued or running, %zu samples "
	    "each, taking turns; the cluster's submits go to its nodes in "
	    "turn; runs again: starts of an earlier sample's job\n\n",
	    c->n);
	printf("%-26s %26s  %26s  %6s %6s\n", "", "reply to start, ms",
	    "submit to start, ms", "before", "runs");
	printf("%-26s %8s %8s %8s  %8s %8s %8s  %6s %6s\n", "", "p50", "p99",
	    "max", "p50", "p99", "max", "reply", "again");
	bench_cluster_lat_line(c, cq);
	bench_cluster_lat_line(s, sq);
	printf("SUMMARY\tcluster\tclaim latency, 3 nodes idle: reply (submit)"
	    " to start\tp50 %.2f (%.2f) ms, p99 %.2f (%.2f) ms\tSQLite p50 "
	    "%.2f (%.2f) ms, p99 %.2f (%.2f) ms\t-\t-\n", cq[0], cq[2], cq[1],
	    cq[3], sq[0], sq[2], sq[1], sq[3]);
	printf("SUMMARY\tcluster\tclaim latency p50, reply to start, 3 nodes "
	    "against SQLite\t%.2f ms (%.2f x)\tSQLite %.2f ms\t<= %.1f x\t"
	    "%s\n", cq[0], sq[0] > 0 ? cq[0] / sq[0] : 0, sq[0],
	    BENCH_CLUSTER_LATENCY_TARGET, sq[0] > 0 && cq[0] <=
	    BENCH_CLUSTER_LATENCY_TARGET * sq[0] ? "met" : "MISSED");	/* Not speed, but what the samples saw: a queued row is handed to
	 * exactly one node, so no job of theirs may start twice. */
	printf("SUMMARY\tcluster\tjobs started twice, of %zu latency samples"
	    "\t%u\tSQLite %u\t0\t%s\n", c->n, c->strays, s->strays,
	    c->strays == 0 ? "met" : "MISSED");
}

/* Both contestants, taking turns. false after saying why. */
static bool
bench_cluster_latency(struct bench_cluster *b)
{
	struct bench_cluster_lat c = { .name = "cluster, 3 nodes (2+2+2)",
	    .st.fd = -1 };
	struct bench_cluster_lat s = { .name = "SQLite, 1 daemon (6)",
	    .st.fd = -1 };
	bool ok = false;
	long i;

	fprintf(stderr, "bench-cluster: claim latency, %ld samples each...\n",
	    b->samples);
	if (bench_cluster_lat_open(b, &c, BENCH_CLUSTER_MAX_NODES) == -1 ||
	    bench_cluster_lat_open(b, &s, 0) == -1)
		goto out;
	for (i = 0; i < b->samples; i++) {
		bench_cluster_idle_open(b);
		if (bench_cluster_sample(b, &c, (unsigned)i) == -1 ||
		    bench_cluster_sample(b, &s, 0) == -1)
			goto out;
	}
	ok = true;
	bench_cluster_lat_report(&c, &s);
out:
	ok = bench_cluster_lat_close(&c, ok);
	ok = bench_cluster_lat_close(&s, ok);
	return ok;
}

/* ---- idle queries ---- */

/*
 * The idle cluster: 3 nodes on a database of their own, whose window runs
 * alongside the other measurements to save minutes. It is sound: the
 * others use other databases, and a NOTIFY reaches only the listeners of
 * its own database; each node's idleness is its own.
 */
struct bench_cluster_idle {
	struct bench_cluster_set s;
	char db[32];
	double ready;		/* the window may open: warm-up + settle */
	double t0;		/* the window opened; 0 while not */
	long long before;
	bool failed;		/* said on stderr */
};

/* Runs a few jobs through the first node and waits for their ends. 0, or
 * -1 after saying why. */
static int
bench_cluster_warm(const struct bench_cluster_set *s)
{
	struct bench_cluster_who w = { .name = "warm-up",
	    .nodes = BENCH_CLUSTER_MAX_NODES };
	json_int_t ids[BENCH_CLUSTER_IDLE_JOBS];
	struct bench_cluster_feed f = { .n = BENCH_CLUSTER_IDLE_JOBS,
	    .ids = ids };
	char *cause = NULL;
	int rc = -1;

	if ((f.cl = triage_client_connect(s->d[0]->sock, &cause)) == NULL) {
		fprintf(stderr, "bench-cluster: %s\n", cause ? cause : "oom");
		free(cause);
		return -1;
	}
	(void)bench_cluster_feed_cb(&f);
	if (f.why.failed)
		fprintf(stderr, "bench-cluster: %s\n", f.why.text);
	else if (bench_cluster_wait(&w, f.cl, &f) == -1)
		fprintf(stderr, "bench-cluster: %s\n", w.why.text);
	else
		rc = 0;
	triage_client_free(f.cl);
	return rc;
}

/* Starts the idle cluster and runs its few jobs: the window opens once
 * they are counted. false after saying why (and i->failed). */
static bool
bench_cluster_idle_start(struct bench_cluster *b,
    struct bench_cluster_idle *i)
{
	char *cause = NULL;

	if (bench_cluster_start(b, BENCH_CLUSTER_MAX_NODES, 0, &i->s,
	    &cause)
	    == -1) {
		fprintf(stderr, "bench-cluster: idle: %s\n", cause ? cause :
		    "out of memory");
		free(cause);
		i->failed = true;
		return false;
	}
	snprintf(i->db, sizeof i->db, "%s", i->s.db);
	if (bench_cluster_warm(&i->s) == -1) {
		i->failed = true;
		return false;
	}
	i->ready = tsupport_clock_s() + BENCH_CLUSTER_SETTLE_MS / 1000.0;
	return true;
}

/* Opens the idle window when it may open: called between the other
 * measurements' steps. */
static void
bench_cluster_idle_open(struct bench_cluster *b)
{
	struct bench_cluster_idle *i = b->idle;
	char *cause = NULL;

	if (i == NULL || i->failed || i->t0 > 0 || i->s.n == 0 ||
	    tsupport_clock_s() < i->ready)
		return;
	if ((i->before = bench_pg_xacts(b->pg, i->db, &cause)) == -1) {
		fprintf(stderr, "bench-cluster: idle: %s\n", cause ? cause :
		    "out of memory");
		free(cause);
		i->failed = true;
		return;
	}
	i->t0 = tsupport_clock_s();
}

/* Sleeps ms, or less when interrupted. */
static void
bench_cluster_sleep(long ms)
{
	while (ms > 0 && bench_daemon_interrupted() == 0) {
		tsupport_clock_sleep_ms(ms < 100 ? ms : 100);
		ms -= 100;
	}
}

/*
 * Opens the window if it is not yet, lets it last b->idle_seconds at
 * least, then reads the transactions of the idle cluster's database again
 * and reports them scaled to a minute; stops the cluster. false after
 * saying why.
 */
static bool
bench_cluster_idle_finish(struct bench_cluster *b,
    struct bench_cluster_idle *i)
{
	double t1, per_min, left;
	long long after;
	char *cause = NULL;
	bool ok = false;

	if (!i->failed && i->s.n > 0 && i->t0 == 0) {
		bench_cluster_sleep((long)((i->ready - tsupport_clock_s()) *
		    1000) + 1);
		bench_cluster_idle_open(b);
	}
	if (i->failed || i->s.n == 0 || bench_daemon_interrupted() != 0)
		goto out;
	left = i->t0 + (double)b->idle_seconds - tsupport_clock_s();
	fprintf(stderr, "bench-cluster: idle: %.0f s more...\n",
	    left > 0 ? left : 0);
	if (left > 0)
		bench_cluster_sleep((long)(left * 1000) + 1);
	if (bench_daemon_interrupted() != 0)
		goto out;
	if ((after = bench_pg_xacts(b->pg, i->db, &cause)) == -1) {
		fprintf(stderr, "bench-cluster: idle: %s\n", cause ? cause :
		    "out of memory");
		free(cause);
		goto out;
	}
	t1 = tsupport_clock_s();
	per_min = (double)(after - i->before) * 60 / (t1 - i->t0);
	printf("\ntriage cluster idle: transactions of an idle cluster's "
	    "database (pg_stat_database xact_commit + xact_rollback, read "
	    "from another database), 3 nodes with nothing queued or running "
	    "after %d jobs, over the other measurements (each on a database "
	    "of its own)\n\n%-20s %10s %14s %12s\n", BENCH_CLUSTER_IDLE_JOBS,
	    "", "window s", "transactions", "per minute");
	printf("%-20s %10.1f %14lld %12.1f\n", "3 nodes, idle", t1 - i->t0,
	    after - i->before, per_min);
	printf("SUMMARY\tcluster\tidle queries/min, 3 nodes, nothing queued, "
	    "%.0f s\t%.1f\t-\t0\t%s\n", t1 - i->t0, per_min,
	    after == i->before ? "met" : "MISSED");
	ok = true;
out:
	return bench_cluster_stop(&i->s, ok);
}

/* ---- main ---- */

int
main(int argc, char **argv)
{
	struct tsupport_err err;
	static struct bench_cluster_who who[] = {
		{ .name = "SQLite", .nodes = 0 },
		{ .name = "1 node", .nodes = 1 },
		{ .name = "2 nodes", .nodes = 2 },
		{ .name = "3 nodes", .nodes = 3 },
		{ .name = "1 node, waiting", .nodes = 1, .wait = true },
		{ .name = "2 nodes, waiting", .nodes = 2, .wait = true },
		{ .name = "3 nodes, waiting", .nodes = 3, .wait = true },
	};
	/* The contestants of `true` come first, NTRUE of them. */
	const size_t ntrue = 4, nwho = sizeof who / sizeof who[0];
	static struct bench_cluster b;
	static struct bench_cluster_idle idle;
	long rounds, jobs, wait_s, only;
	struct bench_opts_count counts[] = {
		{ "rounds", 1, 16, &rounds, BENCH_CLUSTER_ROUNDS,
		    BENCH_CLUSTER_QUICK_ROUNDS, "throughput rounds of each" },
		{ "jobs", 1, 10000000, &jobs, BENCH_CLUSTER_JOBS,
		    BENCH_CLUSTER_QUICK_JOBS, "jobs of a throughput round" },
		{ "wait-seconds", 1, 3600, &wait_s,
		    BENCH_CLUSTER_WAIT_ROUND_S, BENCH_CLUSTER_QUICK_WAIT_ROUND_S,
		    "seconds of a round of waiting jobs at the ideal rate" },
		{ "samples", 1, 1000000, &b.samples, BENCH_CLUSTER_SAMPLES,
		    BENCH_CLUSTER_QUICK_SAMPLES, "latency samples of each" },
		{ "seconds", 1, 86400, &b.idle_seconds,
		    BENCH_CLUSTER_IDLE_SECONDS,
		    BENCH_CLUSTER_QUICK_IDLE_SECONDS, "idle window" },
		{ "nodes", 0, BENCH_CLUSTER_MAX_NODES, &only, 0, 0,
		    "only the clusters of this many nodes, SQLite's daemon "
		    "and 1 node beside them (0: all)" },
		{ "statements", 0, 100, &b.statements, 0, 0,
		    "top statements of each cluster's first round printed "
		    "(pg_stat_statements loaded)" },
	};
	struct bench_opts opts = {
		.prog = "bench-cluster",
		.about = "Runs triaged nodes sharing their queues through a "
		    "PostgreSQL server of its own: jobs/s of\n1, 2 and 3 nodes "
		    "running `true` (6 slots split between them) against one "
		    "daemon on\nSQLite, and running `sleep 0.1` (16 slots each) "
		    "against the ideal rate; the claims\nrefused and the "
		    "database's transactions a job; the claim latency of an "
		    "idle\n3-node cluster against SQLite's; and the queries per "
		    "minute of 3 idle nodes.\n",
		.counts = counts,
		.ncounts = sizeof counts / sizeof counts[0],
	};
	char *cause = NULL;
	bool ok = true;
	unsigned r;
	size_t i;
	int rc;

	if ((rc = bench_opts_parse(&opts, argc, argv)) != -1)
		return rc;
	b.dir = opts.dir;
	b.jobs = (uint64_t)jobs;
	for (i = 0; i < nwho; i++)
		who[i].skipped = only != 0 && who[i].nodes > 1 &&
		    who[i].nodes != (unsigned)only;
	b.wait_round_s = (double)wait_s;
	if (tsupport_proc_beside("ref-stamp", 0, b.stamp, sizeof b.stamp) ==
	    -1 || access(b.stamp, X_OK) == -1 ||
	    tsupport_proc_beside("ref-floor", 0, b.floor, sizeof b.floor) ==
	    -1 || access(b.floor, X_OK) == -1) {
		fprintf(stderr, "bench-cluster: needs ref-stamp and ref-floor "
		    "beside it (make bench-build)\n");
		return 1;
	}
	if (tsupport_dir_make(b.tmp, sizeof b.tmp, b.dir,
	    "triage-bench-cluster", &err) == -1) {
		fprintf(stderr, "bench-cluster: %s\n", err.msg);
		return 1;
	}
	/* The daemons' jobs reach the FIFOs. */
	if (chmod(b.tmp, 0711) == -1) {
		fprintf(stderr, "bench-cluster: %s: %s\n", b.tmp,
		    strerror(errno));
		ok = false;
		goto out;
	}
	fprintf(stderr, "bench-cluster: starting PostgreSQL...\n");
	if ((b.pg = bench_pg_start(b.dir, b.statements > 0, &cause)) == NULL) {
		fprintf(stderr, "bench-cluster: %s\n", cause ? cause : "oom");
		free(cause);
		ok = false;
		goto out;
	}
	/* First: its window runs alongside the rest. */
	fprintf(stderr, "bench-cluster: idle: 3 nodes, %d jobs, then at least "
	    "%d s of settling and %ld s of nothing, alongside the rest\n",
	    BENCH_CLUSTER_IDLE_JOBS, BENCH_CLUSTER_SETTLE_MS / 1000,
	    b.idle_seconds);
	b.idle = &idle;
	ok = bench_cluster_idle_start(&b, &idle);

	for (r = 0; r < (unsigned)rounds && bench_daemon_interrupted() == 0;
	    r++) {
		fprintf(stderr, "bench-cluster: jobs/s, round %u of %ld\n",
		    r + 1, rounds);
		for (i = 0; i < sizeof who / sizeof who[0] &&
		    bench_daemon_interrupted() == 0; i++) {
			if (who[i].skipped)
				continue;
			bench_cluster_idle_open(&b);
			bench_cluster_round(&b, &who[i]);
		}
	}
	for (i = 0; i < sizeof who / sizeof who[0]; i++) {
		if (who[i].why.failed) {
			fprintf(stderr, "bench-cluster: %s: %s\n", who[i].name,
			    who[i].why.text);
			ok = false;
		}
	}
	if (bench_daemon_interrupted() == 0)
	{
		bench_cluster_true_report(&b, who, ntrue);
		bench_cluster_wait_report(&b, who + ntrue, nwho - ntrue, who,
		    nwho);
	}
	if (bench_daemon_interrupted() == 0)
		ok = bench_cluster_latency(&b) && ok;
	ok = bench_cluster_idle_finish(&b, &idle) && ok;

out:
	if (bench_pg_free(b.pg, &cause) == -1) {
		if (bench_daemon_interrupted() == 0) {
			fprintf(stderr, "bench-cluster: %s\n", cause ? cause :
			    "oom");
			ok = false;
		}
		free(cause);
	}
	if (tsupport_dir_remove(b.tmp, &err) == -1)
		fprintf(stderr, "bench-cluster: %s\n", err.msg);
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "bench-cluster: stdout: %s\n", strerror(errno));
		ok = false;
	}
	if (bench_daemon_interrupted() != 0) {
		fprintf(stderr, "bench-cluster: interrupted\n");
		return 128 + bench_daemon_interrupted();
	}
	return ok ? 0 : 1;
}
