/* bench-submit.c - `make bench`: how many jobs per second triaged durably
 * accepts (submit replies read), against beanstalkd with its binlog. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench-beanstalk.h"
#include "bench-daemon.h"
#include "bench-load.h"
#include "bench-machine.h"
#include "bench-stat.h"
#include "bench-why.h"
#include "triage/client.h"

#define BENCH_JOBS 40000
#define BENCH_QUICK_JOBS 10000
#define BENCH_ROUNDS 5
#define BENCH_QUICK_ROUNDS 3
#define BENCH_ROUNDS_MAX 50
/* Without group commit a job costs an fsync: few of them say enough. */
#define BENCH_UNGROUPED_JOBS 1000
#define BENCH_CONNECTIONS 32
#define BENCH_WINDOW 1000
/* A submit request is about 75 bytes: 2000 of them stay well inside a Unix
 * socket's default buffer, so the client never blocks sending while the
 * daemon waits for it to read replies. */
#define BENCH_WINDOW_MAX 2000
#define BENCH_CONTROL_MS 60000

enum bench_server {
	BENCH_TRIAGE,
	BENCH_BEANSTALK,
};

/* One contestant: a server and a load, measured once per round. */
struct bench_run {
	const char *name;
	enum bench_server server;
	bool grouped;		/* triage: group commit on (the default) */
	bool pipelined;		/* else BENCH_CONNECTIONS connections */
	uint64_t jobs;
	unsigned nrates;	/* rounds measured */
	double rates[BENCH_ROUNDS_MAX];
	struct bench_why why;	/* whether it failed, and why */
	struct bench_load_result r;	/* the last round's */
};

static void
bench_submit_usage(FILE *f)
{
	fprintf(f,
	    "usage: bench-submit [--quick] [--jobs N] [--rounds N] "
	    "[--ungrouped-jobs N]\n"
	    "                    [--window W] [--dir DIR]\n"
	    "Measures how many submissions per second triaged (beside this "
	    "binary)\nacknowledges, each run on a fresh daemon with every "
	    "priority paused, and\nhow many puts of 100 bytes beanstalkd "
	    "(binlog on, default fsync) takes,\nrounds alternating, "
	    "pipelined and over %d connections.\n"
	    "  --jobs N            jobs of each run (default %d)\n"
	    "  --rounds N          rounds, 1 to %d (default %d)\n"
	    "  --ungrouped-jobs N  jobs of one more round with "
	    "TRIAGED_GROUP_COMMIT=0,\n"
	    "                      0 for none (default %d)\n"
	    "  --quick             %d jobs, %d rounds, no ungrouped round\n"
	    "  --window W          pipelined requests in flight, 1 to %d "
	    "(default %d)\n"
	    "  --dir DIR           where the temp state dirs go "
	    "(default /tmp)\n",
	    BENCH_CONNECTIONS, BENCH_JOBS, BENCH_ROUNDS_MAX, BENCH_ROUNDS,
	    BENCH_UNGROUPED_JOBS, BENCH_QUICK_JOBS, BENCH_QUICK_ROUNDS,
	    BENCH_WINDOW_MAX, BENCH_WINDOW);
}

/* Parses a count in [min, max]. 0, or -1 after saying why. */
static int
bench_submit_number(const char *opt, const char *s, uint64_t min,
    uint64_t max, uint64_t *v)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || n < min ||
	    n > max) {
		fprintf(stderr, "bench-submit: %s wants a number from %" PRIu64
		    " to %" PRIu64 ", not \"%s\"\n", opt, min, max, s);
		return -1;
	}
	*v = n;
	return 0;
}

/* Pauses every priority, so that nothing runs while we measure, and checks
 * that it took. *version gets the daemon's (allocated, may stay NULL). */
static void
bench_submit_pause(struct bench_run *run, struct triage_client *c,
    char **version)
{
	struct triage_error e;
	json_t *stats, *p;
	size_t i;

	if ((stats = triage_client_call(c, "pause", NULL, BENCH_CONTROL_MS, &e))
	    == NULL) {
		bench_why_set(&run->why, "pause: %s", e.message);
		return;
	}
	json_array_foreach(json_object_get(stats, "priorities"), i, p) {
		if (!json_is_true(json_object_get(p, "paused")))
			bench_why_set(&run->why, "pause left a priority "
			    "unpaused");
	}
	if (*version == NULL &&
	    json_is_string(json_object_get(stats, "version")))
		*version = strdup(json_string_value(json_object_get(stats,
		    "version")));
	json_decref(stats);
}

/* Checks that the daemon holds, queued, every job it acknowledged. */
static void
bench_submit_verify(struct bench_run *run, struct triage_client *c)
{
	struct triage_error e;
	json_t *stats, *jobs;
	json_int_t queued, running;

	if ((stats = triage_client_call(c, "stats", NULL, BENCH_CONTROL_MS, &e))
	    == NULL) {
		bench_why_set(&run->why, "stats after the run: %s",
		    e.message);
		return;
	}
	jobs = json_object_get(stats, "jobs");
	queued = json_integer_value(json_object_get(jobs, "queued"));
	running = json_integer_value(json_object_get(jobs, "running"));
	if ((uint64_t)queued != run->r.ok - run->r.not_queued ||
	    running != 0) {
		bench_why_set(&run->why, "after the run, stats counts %"
		    JSON_INTEGER_FORMAT " queued and %" JSON_INTEGER_FORMAT
		    " running jobs, for %" PRIu64 " acknowledged", queued,
		    running, run->r.ok);
	}
	json_decref(stats);
}

/* Records the rate of a round that went well. */
static void
bench_submit_measured(struct bench_run *run)
{
	if (!run->why.failed && run->r.seconds > 0 &&
	    run->nrates < BENCH_ROUNDS_MAX)
		run->rates[run->nrates++] = (double)run->r.ok / run->r.seconds;
}

/* One round of a triage run on a daemon of its own, start to removal. */
static void
bench_submit_triage(struct bench_run *run, const char *dir, unsigned window,
    char **version)
{
	struct bench_daemon_conf conf = { 0 };
	struct bench_daemon *d;
	struct triage_client *c;
	char *cause = NULL;
	bool ran = false;
	int rc;

	conf.ungrouped = !run->grouped;
	if ((d = bench_daemon_start(dir, &conf, &cause)) == NULL) {
		bench_why_set(&run->why, "%s", cause ? cause : "out of memory");
		free(cause);
		return;
	}
	if ((c = triage_client_connect(d->sock, &cause)) == NULL) {
		bench_why_set(&run->why, "%s", cause ? cause : "out of memory");
		free(cause);
		bench_daemon_free(d);
		return;
	}
	bench_submit_pause(run, c, version);
	if (!run->why.failed) {
		if (run->pipelined)
			rc = bench_load_pipelined(d->sock, run->jobs, window,
			    &run->r);
		else
			rc = bench_load_parallel(d->sock, run->jobs,
			    BENCH_CONNECTIONS, &run->r);
		ran = rc == 0;
		if (rc == -1)
			bench_why_set(&run->why, "%s", run->r.error);
		else if (run->r.errors > 0)
			bench_why_set(&run->why, "%" PRIu64 " submissions "
			    "failed; the first: %s", run->r.errors,
			    run->r.error);
		else if (run->r.not_queued > 0)
			bench_why_set(&run->why, "%" PRIu64 " jobs were "
			    "dispatched despite the pause",
			    run->r.not_queued);
		if (ran && run->r.errors == 0)
			bench_submit_verify(run, c);
	}
	triage_client_free(c);
	/* The guard killed the daemon: that is why the clients failed. */
	if (bench_daemon_interrupted() != 0) {
		run->why.failed = false;
		bench_why_set(&run->why, "interrupted");
	}
	if (bench_daemon_stop(d, &cause) == -1) {
		bench_why_set(&run->why, "%s", cause ? cause : "out of memory");
		free(cause);
	}
	if (run->why.failed && bench_daemon_interrupted() == 0)
		bench_daemon_dump_log(d);
	bench_daemon_free(d);
	if (ran)
		bench_submit_measured(run);
}

/* One round of a beanstalkd run, on a fresh server and binlog. */
static void
bench_submit_beanstalk(struct bench_run *run, const char *dir,
    unsigned window)
{
	struct bench_beanstalk *b;
	char *cause = NULL;

	if ((b = bench_beanstalk_start(dir, &cause)) == NULL) {
		bench_why_set(&run->why, "%s", cause ? cause : "out of memory");
		free(cause);
		return;
	}
	if (bench_beanstalk_load(b, run->jobs, run->pipelined ? window : 1,
	    run->pipelined ? 1 : BENCH_CONNECTIONS, &run->r) == -1)
		bench_why_set(&run->why, "%s", run->r.error);
	else if (run->r.errors > 0)
		bench_why_set(&run->why, "%s", run->r.error);
	else if (run->r.not_queued > 0)
		bench_why_set(&run->why, "beanstalkd holds %" PRIu64 " jobs "
		    "fewer than it acknowledged", run->r.not_queued);
	else
		bench_submit_measured(run);
	if (bench_daemon_interrupted() != 0) {
		run->why.failed = false;
		bench_why_set(&run->why, "interrupted");
	}
	bench_beanstalk_free(b);
}

static void
bench_submit_round(struct bench_run *run, unsigned round, const char *dir,
    unsigned window, char **version)
{
	/* A reference that cannot run (no beanstalkd) is tried once. */
	if (run->why.failed)
		return;
	fprintf(stderr, "bench-submit: round %u, %s, %" PRIu64 " jobs...",
	    round, run->name, run->jobs);
	if (run->server == BENCH_TRIAGE)
		bench_submit_triage(run, dir, window, version);
	else
		bench_submit_beanstalk(run, dir, window);
	if (run->why.failed)
		fprintf(stderr, " FAILED\n");
	else
		fprintf(stderr, " %.0f/s\n", run->rates[run->nrates - 1]);
}

/* The median rate of the rounds measured, 0 when none. */
static double
bench_submit_median(const struct bench_run *run)
{
	return bench_stat_median(run->rates, run->nrates);
}

/* The SUMMARY line of the pipelined runs: triage against beanstalkd. */
static void
bench_submit_summary_pipelined(struct bench_run *t, struct bench_run *b,
    unsigned window)
{
	double tr = bench_submit_median(t), br = bench_submit_median(b);
	char ref[128];

	if (b->nrates > 0 && br > 0)
		snprintf(ref, sizeof ref, "beanstalkd %.0f/s (%.2fx)", br,
		    tr / br);
	else
		snprintf(ref, sizeof ref, "beanstalkd not measured");
	printf("SUMMARY\tsubmit\tdurable submits, pipelined (window %u)\t"
	    "%s%.0f/s\t%s\t>= beanstalkd\t%s\n", window,
	    t->nrates > 0 ? "" : "-", tr, ref,
	    t->nrates > 0 && b->nrates > 0 && tr >= br ? "met" : "MISSED");
}

/* The SUMMARY line of the runs over many connections. */
static void
bench_submit_summary_parallel(struct bench_run *t, struct bench_run *b)
{
	double tr = bench_submit_median(t), br = bench_submit_median(b);
	char ref[128];

	if (b->nrates > 0)
		snprintf(ref, sizeof ref, "beanstalkd %.0f/s", br);
	else
		snprintf(ref, sizeof ref, "-");
	printf("SUMMARY\tsubmit\tdurable submits, %d connections\t%.0f/s\t%s"
	    "\t>= beanstalkd\t%s\n", BENCH_CONNECTIONS, tr, ref,
	    t->nrates > 0 && b->nrates > 0 && tr >= br ? "met" : "MISSED");
}

static void
bench_submit_report(struct bench_run *runs, size_t nruns,
    const struct bench_machine *m, const char *dir, const char *version,
    unsigned window)
{
	struct bench_run *r;
	double lo, hi;
	size_t i;
	unsigned j;

	printf("\nsubmit benchmark: jobs per second acknowledged "
	    "(median of the rounds)\n");
	printf("machine: nproc %ld, %s on %s, %s, load %.2f at start\n",
	    m->cpus, dir, m->fs, m->kernel, m->load);
	printf("triaged %s, every priority paused, replies after the fsync;"
	    "\nbeanstalkd with -b (replies before its fsync, every 50 ms); "
	    "pipelined window %u\n\n", version != NULL ? version :
	    "(version unknown)", window);
	printf("%-36s %8s %6s %10s %10s %10s  %s\n", "run", "jobs", "rounds",
	    "median/s", "min/s", "max/s", "result");
	for (i = 0; i < nruns; i++) {
		r = &runs[i];
		if (r->jobs == 0)
			continue;
		if (r->nrates == 0) {
			printf("%-36s %8" PRIu64 " %6u %10s %10s %10s  %s\n",
			    r->name, r->jobs, 0u, "-", "-", "-",
			    r->why.failed ? "FAILED" : "not run");
			continue;
		}
		lo = hi = r->rates[0];
		for (j = 1; j < r->nrates; j++) {
			lo = r->rates[j] < lo ? r->rates[j] : lo;
			hi = r->rates[j] > hi ? r->rates[j] : hi;
		}
		printf("%-36s %8" PRIu64 " %6u %10.0f %10.0f %10.0f  %s\n",
		    r->name, r->jobs, r->nrates, bench_submit_median(r), lo, hi,
		    r->why.failed ? "FAILED" : "ok");
	}
	if (runs[4].nrates > 0 && runs[5].nrates > 0 &&
	    bench_submit_median(&runs[4]) > 0 &&
	    bench_submit_median(&runs[5]) > 0)
		printf("\ngroup commit: pipelined %.1fx, %d connections %.1fx "
		    "the rate without\n", bench_submit_median(&runs[0]) /
		    bench_submit_median(&runs[4]), BENCH_CONNECTIONS,
		    bench_submit_median(&runs[2]) /
		    bench_submit_median(&runs[5]));
	if (m->fs_tmpfs)
		printf("note: %s is tmpfs, where fsync costs nothing: "
		    "durability costs are not measured (try --dir)\n", dir);
	for (i = 0; i < nruns; i++) {
		if (runs[i].why.failed)
			printf("%s: FAILED: %s\n", runs[i].name,
			    runs[i].why.text);
	}
	printf("\n");
	bench_submit_summary_pipelined(&runs[0], &runs[1], window);
	bench_submit_summary_parallel(&runs[2], &runs[3]);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "ungrouped-jobs", required_argument, NULL, 'u' },
		{ "quick", no_argument, NULL, 'q' },
		{ "window", required_argument, NULL, 'w' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* The summary and the report know this order. */
	struct bench_run runs[] = {
		{ .name = "triage, pipelined", .server = BENCH_TRIAGE,
		  .grouped = true, .pipelined = true },
		{ .name = "beanstalkd, pipelined", .server = BENCH_BEANSTALK,
		  .pipelined = true },
		{ .name = "triage, 32 connections", .server = BENCH_TRIAGE,
		  .grouped = true },
		{ .name = "beanstalkd, 32 connections",
		  .server = BENCH_BEANSTALK },
		{ .name = "triage, pipelined, ungrouped",
		  .server = BENCH_TRIAGE, .pipelined = true },
		{ .name = "triage, 32 connections, ungrouped",
		  .server = BENCH_TRIAGE },
	};
	const size_t nruns = sizeof runs / sizeof runs[0];
	uint64_t jobs = 0, rounds = 0, window = BENCH_WINDOW;
	uint64_t ungrouped = UINT64_MAX;
	const char *dir = "/tmp";
	struct bench_machine m;
	char *version = NULL;
	bool quick = false;
	unsigned round;
	size_t i;
	int ch, sig;

	if (bench_daemon_guard() == -1) {
		fprintf(stderr, "bench-submit: cannot set up signals: %s\n",
		    strerror(errno));
		return 1;
	}
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			if (bench_submit_number("--jobs", optarg, 1,
			    100000000, &jobs) == -1)
				return 2;
			break;
		case 'r':
			if (bench_submit_number("--rounds", optarg, 1,
			    BENCH_ROUNDS_MAX, &rounds) == -1)
				return 2;
			break;
		case 'u':
			if (bench_submit_number("--ungrouped-jobs", optarg, 0,
			    100000000, &ungrouped) == -1)
				return 2;
			break;
		case 'q':
			quick = true;
			break;
		case 'w':
			if (bench_submit_number("--window", optarg, 1,
			    BENCH_WINDOW_MAX, &window) == -1)
				return 2;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			bench_submit_usage(stdout);
			return 0;
		default:
			bench_submit_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		bench_submit_usage(stderr);
		return 2;
	}
	/* An explicit count wins over --quick, in any order. */
	if (jobs == 0)
		jobs = quick ? BENCH_QUICK_JOBS : BENCH_JOBS;
	if (rounds == 0)
		rounds = quick ? BENCH_QUICK_ROUNDS : BENCH_ROUNDS;
	if (ungrouped == UINT64_MAX)
		ungrouped = quick ? 0 : BENCH_UNGROUPED_JOBS;
	if (bench_machine_get(dir, &m) == -1) {
		fprintf(stderr, "bench-submit: %s: %s\n", dir, strerror(errno));
		return 2;
	}

	for (i = 0; i < nruns; i++)
		runs[i].jobs = runs[i].grouped || runs[i].server ==
		    BENCH_BEANSTALK ? jobs : ungrouped;
	/* Rounds alternate the contestants, so that whatever else the
	 * machine does weighs on each alike. */
	for (round = 1; round <= rounds && bench_daemon_interrupted() == 0;
	    round++)
		for (i = 0; i < 4 && bench_daemon_interrupted() == 0; i++)
			bench_submit_round(&runs[i], round, dir,
			    (unsigned)window, &version);
	for (i = 4; i < nruns && bench_daemon_interrupted() == 0; i++)
		if (runs[i].jobs > 0)
			bench_submit_round(&runs[i], 1, dir, (unsigned)window,
			    &version);
	bench_submit_report(runs, nruns, &m, dir, version, (unsigned)window);
	free(version);
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "bench-submit: stdout: %s\n", strerror(errno));
		return 1;
	}
	if ((sig = bench_daemon_interrupted()) != 0) {
		fprintf(stderr, "bench-submit: interrupted\n");
		return 128 + sig;
	}
	/* Targets missed or not, a triage run that failed is no measure. */
	return runs[0].nrates == 0 || runs[2].nrates == 0 ? 1 : 0;
}
