/* bench-scale.c - `make bench`: whether triaged stays flat as its queue grows
 * (per-request cost, memory per queued job, a restart) from 1k to 1M. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bench-daemon.h"
#include "bench-http.h"
#include "bench-load.h"
#include "bench-machine.h"
#include "bench-why.h"
#include "triage/client.h"
#include "tsupport-proc.h"

#define SCALE_LEVELS_MAX 4
#define SCALE_WINDOW 1000
#define SCALE_BATCH 1000	/* submits or cancels timed in one go */
#define SCALE_BATCHES 3		/* of each, per level: the median counts */
#define SCALE_CALLS 300		/* list and stats calls timed one by one */
#define SCALE_QUICK_CALLS 100	/* the same under --quick */
#define SCALE_CALL_MS 120000
/* What the targets allow. */
#define SCALE_FLAT_RATIO 1.3
#define SCALE_BYTES_PER_JOB 200
#define SCALE_RESTART_S 1.0
/* The argv every job has: ["true"], its string's bytes. */
#define SCALE_ARGV_BYTES 5

/* The measures taken at each level, in the order of the summary. */
enum scale_measure {
	SCALE_SUBMIT,
	SCALE_CANCEL,
	SCALE_LIST,
	SCALE_STATS,
	SCALE_METRICS,
	SCALE_STATE,
	SCALE_NMEASURES,
};

static const char *const scale_measure_names[SCALE_NMEASURES] = {
	"submit, 1000 pipelined",
	"cancel, 1000 pipelined",
	"list of 100",
	"stats",
	"GET /metrics",
	"GET /api/state",
};

struct scale_level {
	uint64_t queued;	/* jobs queued when it was measured */
	long rss_kb;		/* the daemon's VmRSS then */
	double us[SCALE_NMEASURES];	/* median per operation */
};

struct scale_run {
	struct bench_daemon *d;
	struct triage_client *c;
	uint64_t submitted;	/* jobs 1 to submitted exist */
	uint64_t canceled;
	unsigned char *gone;	/* by id: canceled already */
	size_t gone_size;
	uint64_t probe;		/* moves the cancels' ids between batches */
	bool resources;		/* every job asks for memory, a GPU and a
				 * licence (--resources) */
	struct bench_why why;	/* whether it failed, and why */
};

static double
scale_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
scale_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
scale_median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, scale_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The daemon's resident memory in KiB, from /proc; -1 when unknown. */
static long
scale_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* The CPU seconds the process has used (user and system); -1 unknown. A
 * loaded machine stretches wall times, not this. */
static double
scale_cpu_s(pid_t pid)
{
	struct tsupport_proc_stat st;

	if (tsupport_proc_stat(pid, &st) == -1)
		return -1;
	return (double)(st.utime + st.stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Params of the i-th request of a pipelined batch; NULL out of memory. */
typedef json_t *(*scale_params_cb)(struct scale_run *run, uint64_t i);

/* The GPUs and licences of --resources: more than the paused queue could
 * ever take, since nothing runs. */
#define SCALE_RESOURCES "[resource.gpu]\nunits = 0,1,2,3\n" \
	"env = CUDA_VISIBLE_DEVICES\n[resource.lic]\ncount = 8\n"

static json_t *
scale_submit_params(struct scale_run *run, uint64_t i)
{
	(void)i;
	if (run->resources)
		return json_pack("{s[s] sI s{si si}}", "argv", "true",
		    "memory", (json_int_t)(1 << 20) * 64, "resources", "gpu",
		    1, "lic", 1);
	return json_pack("{s[s]}", "argv", "true");
}

/* A queued job spread over the whole queue, never the same twice. */
static json_t *
scale_cancel_params(struct scale_run *run, uint64_t i)
{
	uint64_t stride = run->submitted / SCALE_BATCH, id;

	(void)i;
	if (stride == 0)
		stride = 1;
	id = 1 + (i * stride + run->probe) % run->submitted;
	while (run->gone[id]) {
		if (++id > run->submitted)
			id = 1;
	}
	run->gone[id] = 1;
	return json_pack("{sI}", "id", (json_int_t)id);
}

/*
 * Sends n requests of method on run's connection, at most SCALE_WINDOW in
 * flight, and reads every reply. Returns the seconds it took, or -1 after
 * failing the run.
 */
static double
scale_pipeline(struct scale_run *run, const char *method, uint64_t n,
    scale_params_cb params_cb)
{
	struct triage_error e;
	uint64_t sent = 0, received = 0;
	json_t *params, *res;
	int64_t id;
	double t0 = scale_now();

	while (received < n) {
		while (sent < n && sent - received < SCALE_WINDOW) {
			if ((params = params_cb(run, sent)) == NULL) {
				bench_why_set(&run->why, "%s: out of memory",
				    method);
				return -1;
			}
			if (triage_client_send(run->c, method, params, &e)
			    == -1) {
				bench_why_set(&run->why, "%s: %s", method,
				    e.message);
				return -1;
			}
			sent++;
		}
		if ((res = triage_client_recv(run->c, &id, SCALE_CALL_MS, &e))
		    == NULL) {
			bench_why_set(&run->why, "%s: %s", method, e.message);
			return -1;
		}
		json_decref(res);
		received++;
	}
	return scale_now() - t0;
}

/* How many list and stats calls: fewer under --quick. */
static size_t scale_ncalls = SCALE_CALLS;

/* The median of scale_ncalls calls of method, in microseconds; -1 after
 * failing the run. */
static double
scale_calls(struct scale_run *run, const char *method, const json_t *params)
{
	static double t[SCALE_CALLS];
	struct triage_error e;
	json_t *res;
	double t0;
	size_t i;

	for (i = 0; i < scale_ncalls; i++) {
		t0 = scale_now();
		res = triage_client_call(run->c, method,
		    params != NULL ? json_deep_copy(params) : NULL,
		    SCALE_CALL_MS, &e);
		t[i] = scale_now() - t0;
		if (res == NULL) {
			bench_why_set(&run->why, "%s: %s", method, e.message);
			return -1;
		}
		json_decref(res);
	}
	return scale_median(t, scale_ncalls) * 1e6;
}

/* The same for GETs of path from the [http] listener, as a scraper or the
 * dashboard makes them: a connection each. */
static double
scale_gets(struct scale_run *run, const char *path)
{
	static double t[SCALE_CALLS];
	char *cause = NULL;
	size_t i, bytes;
	double t0;

	for (i = 0; i < scale_ncalls; i++) {
		t0 = scale_now();
		if (bench_http_get(run->d->http, path, &bytes, NULL,
		    &cause) != 0) {
			bench_why_set(&run->why, "%s", cause ? cause :
			    "out of memory");
			free(cause);
			return -1;
		}
		t[i] = scale_now() - t0;
	}
	return scale_median(t, scale_ncalls) * 1e6;
}

/* The median per operation of SCALE_BATCHES pipelined batches. */
static double
scale_batches(struct scale_run *run, const char *method,
    scale_params_cb params_cb, bool cancels)
{
	double t[SCALE_BATCHES], s;
	size_t i;

	for (i = 0; i < SCALE_BATCHES; i++) {
		if ((s = scale_pipeline(run, method, SCALE_BATCH, params_cb))
		    < 0)
			return -1;
		t[i] = s / SCALE_BATCH * 1e6;
		if (cancels) {
			run->canceled += SCALE_BATCH;
			run->probe += 7919;	/* a prime: other jobs */
		} else
			run->submitted += SCALE_BATCH;
	}
	return scale_median(t, SCALE_BATCHES);
}

/* Checks that stats counts what was sent: every job queued or canceled. */
static void
scale_verify(struct scale_run *run, const char *when)
{
	struct triage_error e;
	json_t *stats, *jobs;
	json_int_t queued, canceled;

	if ((stats = triage_client_call(run->c, "stats", NULL, SCALE_CALL_MS,
	    &e)) == NULL) {
		bench_why_set(&run->why, "stats %s: %s", when, e.message);
		return;
	}
	jobs = json_object_get(stats, "jobs");
	queued = json_integer_value(json_object_get(jobs, "queued"));
	canceled = json_integer_value(json_object_get(jobs, "canceled"));
	if ((uint64_t)queued != run->submitted - run->canceled ||
	    (uint64_t)canceled != run->canceled)
		bench_why_set(&run->why, "stats %s counts %" JSON_INTEGER_FORMAT
		    " queued and %" JSON_INTEGER_FORMAT " canceled, for %"
		    PRIu64 " and %" PRIu64, when, queued, canceled,
		    run->submitted - run->canceled, run->canceled);
	json_decref(stats);
}

/* Fills the queue to level->queued jobs, then measures at that level. */
static void
scale_level(struct scale_run *run, struct scale_level *level)
{
	struct bench_load_result r;
	uint64_t want = level->queued + run->canceled;
	json_t *list;
	double t0;

	if (want > run->submitted) {
		t0 = scale_now();
		if (bench_load_pipelined(run->d->sock, want - run->submitted,
		    SCALE_WINDOW, &r) == -1 || r.errors > 0) {
			bench_why_set(&run->why, "filling the queue: %s",
			    r.error);
			return;
		}
		run->submitted = want;
		fprintf(stderr, "bench-scale: %" PRIu64 " queued (%.1f s to "
		    "fill)\n", level->queued, scale_now() - t0);
	}
	level->rss_kb = scale_rss_kb(run->d->pid);
	level->us[SCALE_SUBMIT] = scale_batches(run, "submit",
	    scale_submit_params, false);
	level->us[SCALE_CANCEL] = scale_batches(run, "cancel",
	    scale_cancel_params, true);
	/* A page from the middle of the queue: finding it is the work. */
	if ((list = json_pack("{s[s]sisI}", "state", "queued", "limit", 100,
	    "after_id", (json_int_t)(run->submitted / 2))) == NULL) {
		bench_why_set(&run->why, "out of memory");
		return;
	}
	level->us[SCALE_LIST] = scale_calls(run, "list", list);
	json_decref(list);
	level->us[SCALE_STATS] = scale_calls(run, "stats", NULL);
	level->us[SCALE_METRICS] = scale_gets(run, "/metrics");
	level->us[SCALE_STATE] = scale_gets(run, "/api/state");
	scale_verify(run, "after the measures");
}

/* Connects run->c to the daemon, and pauses every priority (the pause is
 * kept across restarts). */
static void
scale_connect(struct scale_run *run, bool pause)
{
	struct triage_error e;
	char *cause = NULL;
	json_t *res;

	triage_client_free(run->c);
	if ((run->c = triage_client_connect(run->d->sock, &cause)) == NULL) {
		bench_why_set(&run->why, "%s", cause ? cause : "out of memory");
		free(cause);
		return;
	}
	if (pause) {
		if ((res = triage_client_call(run->c, "pause", NULL,
		    SCALE_CALL_MS, &e)) == NULL)
			bench_why_set(&run->why, "pause: %s", e.message);
		json_decref(res);
	}
}

static void
scale_usage(FILE *f)
{
	fprintf(f,
	    "usage: bench-scale [--quick] [--dir DIR]\n"
	    "Measures triaged (beside this binary) with 1,000, 100,000 and "
	    "1,000,000 jobs\nqueued (a paused priority): submit, cancel, "
	    "list and stats cost, a scrape of\n/metrics and of the dashboard's "
	    "/api/state, memory per queued job, and a\nrestart with the "
	    "largest queue.\n"
	    "  --quick    stops at 100,000 (the restart too)\n"
	    "  --resources  every job asks for 64MiB, a GPU and a licence "
	    "(per request\n             only: no restart, no memory target)\n"
	    "  --dir DIR  where the temp state dir goes (default /tmp)\n");
}

static const char *
scale_count(uint64_t n, char *buf, size_t size)
{
	if (n >= 1000000 && n % 1000000 == 0)
		snprintf(buf, size, "%" PRIu64 "M", n / 1000000);
	else if (n >= 1000 && n % 1000 == 0)
		snprintf(buf, size, "%" PRIu64 "k", n / 1000);
	else
		snprintf(buf, size, "%" PRIu64, n);
	return buf;
}

static void
scale_report(const struct scale_level *levels, size_t nlevels,
    long rss_empty_kb, double restart_s, double restart_cpu_s,
    long rss_restart_kb, bool quick, bool resources,
    const struct bench_machine *m, const char *dir)
{
	const struct scale_level *lo = &levels[0], *hi = &levels[nlevels - 1];
	char a[32], b[32];
	double per_job = -1, ratio;
	size_t i, k;

	printf("\ntriage scale benchmark: cost per request and memory as the "
	    "queue grows\n");
	printf("machine: nproc %ld, %s on %s, %s, load %.2f at start\n",
	    m->cpus, dir, m->fs, m->kernel, m->load);
	printf("medians: %d batches of %d pipelined (submit, cancel), %zu "
	    "calls (list, stats, and GETs of the [http] listener)\n\n",
	    SCALE_BATCHES, SCALE_BATCH, scale_ncalls);
	printf("%-10s %12s %12s %12s %12s %12s %12s %10s %10s\n", "queued",
	    "submit us", "cancel us", "list us", "stats us", "metrics us",
	    "state us", "RSS MiB", "B/job");
	for (i = 0; i < nlevels; i++) {
		printf("%-10s", scale_count(levels[i].queued, a, sizeof a));
		for (k = 0; k < SCALE_NMEASURES; k++)
			printf(" %12.1f", levels[i].us[k]);
		printf(" %10.1f %10.0f\n", (double)levels[i].rss_kb / 1024,
		    (double)(levels[i].rss_kb - rss_empty_kb) * 1024 /
		    (double)levels[i].queued);
	}
	printf("empty daemon: RSS %.1f MiB", (double)rss_empty_kb / 1024);
	if (rss_restart_kb >= 0)
		printf("; after the restart with %s queued: %.1f MiB, "
		    "%.2f s of CPU to the first answer",
		    scale_count(hi->queued, a, sizeof a),
		    (double)rss_restart_kb / 1024, restart_cpu_s);
	printf("\n");

	scale_count(hi->queued, a, sizeof a);
	scale_count(lo->queued, b, sizeof b);
	for (k = 0; k < SCALE_NMEASURES; k++) {
		ratio = hi->us[k] / lo->us[k];
		printf("SUMMARY\tscale\t%s%s%s\t%.1f us/op at %s\t%.1f us/op "
		    "at %s (%.2fx)\t<= %.1fx at %s\t%s\n",
		    scale_measure_names[k], resources ? ", jobs asking for "
		    "resources" : "", quick ? " (quick: 100k)" : "",
		    hi->us[k], a, lo->us[k], b,
		    ratio, SCALE_FLAT_RATIO, b,
		    ratio <= SCALE_FLAT_RATIO ? "met" : "MISSED");
	}
	if (resources)
		return;
	if (hi->rss_kb > 0 && rss_empty_kb > 0)
		per_job = (double)(hi->rss_kb - rss_empty_kb) * 1024 /
		    (double)hi->queued - SCALE_ARGV_BYTES;
	printf("SUMMARY\tscale\tmemory per queued job%s\t%.0f B beyond argv "
	    "at %s\tbeanstalkd ~300 B (issue)\t<= %d B\t%s\n",
	    quick ? " (quick: 100k)" : "", per_job, a, SCALE_BYTES_PER_JOB,
	    per_job >= 0 && per_job <= SCALE_BYTES_PER_JOB ? "met" :
	    "MISSED");
	printf("SUMMARY\tscale\trestart, %s queued%s\t%.2f s to first "
	    "answer (%.2f s CPU)\t-\t<= %.1f s\t%s\n", a,
	    quick ? " (quick)" : "", restart_s, restart_cpu_s,
	    SCALE_RESTART_S,
	    restart_s >= 0 && restart_s <= SCALE_RESTART_S ? "met" :
	    "MISSED");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "resources", no_argument, NULL, 'r' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const uint64_t full[] = { 1000, 100000, 1000000 };
	static const uint64_t quick_levels[] = { 1000, 100000 };
	struct scale_level levels[SCALE_LEVELS_MAX];
	struct scale_run run = { 0 };
	/* /metrics and the dashboard's state are measured too. */
	struct bench_daemon_conf conf = { .http = true };
	const uint64_t *want = full;
	size_t nlevels = 3, i;
	const char *dir = "/tmp";
	struct bench_machine m;
	long rss_empty_kb, rss_restart_kb = -1;
	double restart_s = -1, restart_cpu_s = -1;
	char *cause = NULL;
	bool quick = false;
	int ch, sig;

	if (bench_daemon_guard() == -1) {
		fprintf(stderr, "bench-scale: cannot set up signals: %s\n",
		    strerror(errno));
		return 1;
	}
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'q':
			quick = true;
			break;
		case 'r':
			run.resources = true;
			conf.sections = SCALE_RESOURCES;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			scale_usage(stdout);
			return 0;
		default:
			scale_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		scale_usage(stderr);
		return 2;
	}
	if (quick) {
		want = quick_levels;
		nlevels = 2;
		scale_ncalls = SCALE_QUICK_CALLS;
	}
	if (bench_machine_get(dir, &m) == -1) {
		fprintf(stderr, "bench-scale: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	/* Every id the run can reach: the levels, and the batches at each. */
	run.gone_size = want[nlevels - 1] + nlevels * SCALE_BATCHES *
	    SCALE_BATCH * 2 + 1;
	if ((run.gone = calloc(run.gone_size, 1)) == NULL) {
		fprintf(stderr, "bench-scale: out of memory\n");
		return 1;
	}
	memset(levels, 0, sizeof levels);
	if ((run.d = bench_daemon_start(dir, &conf, &cause)) == NULL) {
		fprintf(stderr, "bench-scale: %s\n", cause);
		free(cause);
		free(run.gone);
		return 1;
	}
	scale_connect(&run, true);
	rss_empty_kb = scale_rss_kb(run.d->pid);
	for (i = 0; i < nlevels && !run.why.failed; i++) {
		levels[i].queued = want[i];
		scale_level(&run, &levels[i]);
	}
	/* The restart and the memory of --resources' jobs are the plain
	 * run's to measure. */
	if (!run.why.failed && !run.resources) {
		fprintf(stderr, "bench-scale: restart with %" PRIu64
		    " jobs...\n", run.submitted);
		triage_client_free(run.c);
		run.c = NULL;
		if (bench_daemon_restart(run.d, &restart_s, &cause) == -1) {
			bench_why_set(&run.why, "restart: %s", cause);
			free(cause);
		} else {
			restart_cpu_s = scale_cpu_s(run.d->pid);
			scale_connect(&run, false);
			if (!run.why.failed)
				scale_verify(&run, "after the restart");
			rss_restart_kb = scale_rss_kb(run.d->pid);
		}
	}
	triage_client_free(run.c);
	if ((sig = bench_daemon_interrupted()) != 0) {
		bench_daemon_free(run.d);
		free(run.gone);
		fprintf(stderr, "bench-scale: interrupted\n");
		return 128 + sig;
	}
	if (bench_daemon_stop(run.d, &cause) == -1) {
		bench_why_set(&run.why, "%s", cause ? cause : "out of memory");
		free(cause);
	}
	if (run.why.failed)
		bench_daemon_dump_log(run.d);
	bench_daemon_free(run.d);
	free(run.gone);
	if (run.why.failed) {
		fprintf(stderr, "bench-scale: FAILED: %s\n", run.why.text);
		return 1;
	}
	scale_report(levels, nlevels, rss_empty_kb, restart_s, restart_cpu_s,
	    rss_restart_kb, quick, run.resources, &m, dir);
	return fflush(stdout) == EOF ? 1 : 0;
}
