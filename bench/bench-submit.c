/* bench-submit.c - `make bench`: how many jobs per second triaged durably
 * accepts (submit replies), with and without group commit. */
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

#include "bench-daemon.h"
#include "bench-load.h"
#include "bench-machine.h"
#include "client.h"

#define BENCH_JOBS 200000
#define BENCH_UNGROUPED_JOBS 5000
#define BENCH_QUICK_JOBS 20000
#define BENCH_QUICK_UNGROUPED_JOBS 1000
#define BENCH_CONNECTIONS 32
#define BENCH_WINDOW 1000
/* A submit request is about 75 bytes: 2000 of them stay well inside a Unix
 * socket's default buffer, so the client never blocks sending while the
 * daemon waits for it to read replies. */
#define BENCH_WINDOW_MAX 2000
#define BENCH_CONTROL_MS 60000

struct bench_run {
	const char *name;
	bool grouped;
	bool pipelined;
	uint64_t jobs;
	bool ran;		/* a load was measured */
	bool failed;
	char why[512];		/* why it failed, "" if it did not */
	struct bench_load_result r;
};

static void
bench_submit_usage(FILE *f)
{
	fprintf(f,
	    "usage: bench-submit [--quick] [--jobs N] [--ungrouped-jobs N] "
	    "[--window W] [--dir DIR]\n"
	    "Measures how many submissions per second triaged (beside this "
	    "binary)\nacknowledges, each on a fresh daemon with every "
	    "priority paused.\n"
	    "  --jobs N            jobs of each grouped run (default %d)\n"
	    "  --ungrouped-jobs N  jobs of each run with "
	    "TRIAGED_GROUP_COMMIT=0 (default %d)\n"
	    "  --quick             %d and %d, for a quick check\n"
	    "  --window W          pipelined requests in flight, 1 to %d "
	    "(default %d)\n"
	    "  --dir DIR           where the temp state dirs go "
	    "(default /tmp)\n",
	    BENCH_JOBS, BENCH_UNGROUPED_JOBS, BENCH_QUICK_JOBS,
	    BENCH_QUICK_UNGROUPED_JOBS, BENCH_WINDOW_MAX, BENCH_WINDOW);
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

/* Sets run->failed and the reason, keeping the first reason given. */
static void
bench_submit_fail(struct bench_run *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
bench_submit_fail(struct bench_run *run, const char *fmt, ...)
{
	va_list ap;

	if (!run->failed) {
		va_start(ap, fmt);
		vsnprintf(run->why, sizeof run->why, fmt, ap);
		va_end(ap);
	}
	run->failed = true;
}

/* Pauses every priority, so that nothing runs while we measure, and checks
 * that it took. *version gets the daemon's (allocated, may stay NULL). */
static void
bench_submit_pause(struct bench_run *run, struct client *c, char **version)
{
	struct client_error e;
	json_t *stats, *p;
	size_t i;

	if ((stats = client_call(c, "pause", NULL, BENCH_CONTROL_MS, &e))
	    == NULL) {
		bench_submit_fail(run, "pause: %s", e.message);
		return;
	}
	json_array_foreach(json_object_get(stats, "priorities"), i, p) {
		if (!json_is_true(json_object_get(p, "paused")))
			bench_submit_fail(run, "pause left a priority "
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
bench_submit_verify(struct bench_run *run, struct client *c)
{
	struct client_error e;
	json_t *stats, *jobs;
	json_int_t queued, running;

	if ((stats = client_call(c, "stats", NULL, BENCH_CONTROL_MS, &e))
	    == NULL) {
		bench_submit_fail(run, "stats after the run: %s",
		    e.message);
		return;
	}
	jobs = json_object_get(stats, "jobs");
	queued = json_integer_value(json_object_get(jobs, "queued"));
	running = json_integer_value(json_object_get(jobs, "running"));
	if ((uint64_t)queued != run->r.ok - run->r.not_queued ||
	    running != 0) {
		bench_submit_fail(run, "after the run, stats counts %"
		    JSON_INTEGER_FORMAT " queued and %" JSON_INTEGER_FORMAT
		    " running jobs, for %" PRIu64 " acknowledged", queued,
		    running, run->r.ok);
	}
	json_decref(stats);
}

/* One run on a daemon of its own, from start to removal. */
static void
bench_submit_run(struct bench_run *run, const char *dir, unsigned window,
    char **version)
{
	struct bench_daemon_conf conf = { 0 };
	struct bench_daemon *d;
	struct client *c;
	char *cause = NULL;
	int rc;

	fprintf(stderr, "bench-submit: %s, %" PRIu64 " jobs...\n", run->name,
	    run->jobs);
	conf.ungrouped = !run->grouped;
	if ((d = bench_daemon_start(dir, &conf, &cause)) == NULL) {
		bench_submit_fail(run, "%s", cause ? cause : "out of memory");
		free(cause);
		return;
	}
	if ((c = client_connect(d->sock, &cause)) == NULL) {
		bench_submit_fail(run, "%s", cause ? cause : "out of memory");
		free(cause);
		bench_daemon_free(d);
		return;
	}
	bench_submit_pause(run, c, version);
	if (!run->failed) {
		if (run->pipelined)
			rc = bench_load_pipelined(d->sock, run->jobs, window,
			    &run->r);
		else
			rc = bench_load_parallel(d->sock, run->jobs,
			    BENCH_CONNECTIONS, &run->r);
		run->ran = rc == 0;
		if (rc == -1)
			bench_submit_fail(run, "%s", run->r.error);
		else if (run->r.errors > 0)
			bench_submit_fail(run, "%" PRIu64 " submissions "
			    "failed; the first: %s", run->r.errors,
			    run->r.error);
		else if (run->r.not_queued > 0)
			bench_submit_fail(run, "%" PRIu64 " jobs were "
			    "dispatched despite the pause",
			    run->r.not_queued);
		if (run->ran && run->r.errors == 0)
			bench_submit_verify(run, c);
	}
	client_free(c);
	/* The guard killed the daemon: that is why the clients failed. */
	if (bench_daemon_interrupted() != 0) {
		run->failed = false;
		bench_submit_fail(run, "interrupted");
	}
	if (bench_daemon_stop(d, &cause) == -1) {
		bench_submit_fail(run, "%s", cause ? cause : "out of memory");
		free(cause);
	}
	if (run->failed && bench_daemon_interrupted() == 0)
		bench_daemon_dump_log(d);
	bench_daemon_free(d);
}

static double
bench_submit_rate(const struct bench_run *run)
{
	return run->r.seconds > 0 ? (double)run->r.ok / run->r.seconds : 0;
}

static void
bench_submit_report(const struct bench_run *runs, size_t nruns,
    const struct bench_machine *m, const char *dir, const char *version,
    unsigned window)
{
	const struct bench_run *g, *u;
	size_t i;

	printf("\ntriage submit benchmark: jobs per second durably accepted "
	    "(submit replies read)\n");
	printf("machine: nproc %ld, %s on %s, %s, load %.2f at start\n",
	    m->cpus, dir, m->fs, m->kernel, m->load);
	printf("triaged %s, every priority paused; pipelined window %u\n\n",
	    version != NULL ? version : "(version unknown)", window);
	printf("%-26s %9s %9s %11s  %s\n", "run", "jobs", "seconds",
	    "jobs/s", "result");
	for (i = 0; i < nruns; i++) {
		if (runs[i].ran)
			printf("%-26s %9" PRIu64 " %9.3f %11.1f  %s\n",
			    runs[i].name, runs[i].jobs, runs[i].r.seconds,
			    bench_submit_rate(&runs[i]),
			    runs[i].failed ? "FAILED" : "ok");
		else
			printf("%-26s %9" PRIu64 " %9s %11s  %s\n",
			    runs[i].name, runs[i].jobs, "-", "-",
			    runs[i].failed ? "FAILED" : "not run");
	}

	/* runs[] is the grouped pair, then the same pair ungrouped. */
	printf("\ngrouped/ungrouped:");
	for (i = 0; i < nruns / 2; i++) {
		g = &runs[i];
		u = &runs[i + nruns / 2];
		if (g->ran && u->ran && !g->failed && !u->failed &&
		    bench_submit_rate(u) > 0)
			printf("%s %s %.1fx", i > 0 ? "," : "",
			    g->pipelined ? "pipelined" : "32 connections",
			    bench_submit_rate(g) / bench_submit_rate(u));
		else
			printf("%s %s -", i > 0 ? "," : "",
			    g->pipelined ? "pipelined" : "32 connections");
	}
	printf("\n");
	if (m->fs_tmpfs)
		printf("note: %s is tmpfs, where fsync costs nothing: the "
		    "ungrouped runs do not measure a disk (try --dir)\n", dir);
	for (i = 0; i < nruns; i++) {
		if (runs[i].failed)
			printf("%s: FAILED: %s\n", runs[i].name, runs[i].why);
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "ungrouped-jobs", required_argument, NULL, 'u' },
		{ "quick", no_argument, NULL, 'q' },
		{ "window", required_argument, NULL, 'w' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_run runs[] = {
		{ .name = "pipelined, grouped", .grouped = true,
		  .pipelined = true },
		{ .name = "32 connections, grouped", .grouped = true },
		{ .name = "pipelined, ungrouped", .pipelined = true },
		{ .name = "32 connections, ungrouped" },
	};
	const size_t nruns = sizeof runs / sizeof runs[0];
	uint64_t jobs = 0, ungrouped = 0, window = BENCH_WINDOW;
	const char *dir = "/tmp";
	struct bench_machine m;
	char *version = NULL;
	bool quick = false, failed = false;
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
		case 'u':
			if (bench_submit_number("--ungrouped-jobs", optarg, 1,
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
	if (ungrouped == 0)
		ungrouped = quick ? BENCH_QUICK_UNGROUPED_JOBS :
		    BENCH_UNGROUPED_JOBS;
	if (bench_machine_get(dir, &m) == -1) {
		fprintf(stderr, "bench-submit: %s: %s\n", dir, strerror(errno));
		return 2;
	}

	for (i = 0; i < nruns; i++)
		runs[i].jobs = runs[i].grouped ? jobs : ungrouped;
	for (i = 0; i < nruns; i++) {
		bench_submit_run(&runs[i], dir, (unsigned)window, &version);
		failed = failed || runs[i].failed;
		if (bench_daemon_interrupted() != 0)
			break;
	}
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
	return failed ? 1 : 0;
}
