/* bench-latency.c - `make bench`: how soon a high job starts once a slot frees
 * while both slots run low jobs and 100,000 more low jobs wait behind. */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bench-daemon.h"
#include "bench-load.h"
#include "bench-opts.h"
#include "bench-rpc.h"
#include "bench-stamps.h"
#include "bench-stat.h"
#include "triage/client.h"
#include "tsupport-dir.h"
#include "tsupport-proc.h"

#define BENCH_LATENCY_SAMPLES 200
#define BENCH_LATENCY_QUICK_SAMPLES 50
#define BENCH_LATENCY_QUEUED 100000
#define BENCH_LATENCY_WINDOW 1000
#define BENCH_LATENCY_SLOTS 2
/* Nothing of one sample takes this long unless something is stuck. */
#define BENCH_LATENCY_WAIT_MS 60000
/* Issue 27: what triage adds to the floor's p99, at most. */
#define BENCH_LATENCY_OVER_FLOOR_MS 0.3

extern char **environ;

/* One contestant's two FIFOs: tokens end its low jobs, one a token; its
 * jobs write their stamps ("B", "E", "S" and CLOCK_MONOTONIC ns) to the
 * other. */
struct bench_latency_pipes {
	char tokens[PATH_MAX];
	int tok_fd;
	struct bench_stamps st;
	double *lat;		/* seconds, one a sample */
	size_t n;
};

/* Makes the FIFOs in dir, named for the contestant, and opens both ends
 * we need: read-write, so that no open blocks and no reader sees EOF. */
static int
bench_latency_pipes_open(struct bench_latency_pipes *p, const char *dir,
    const char *name, size_t samples)
{
	p->tok_fd = -1;
	p->st.prog = "bench-latency";
	if (bench_stamps_open(&p->st, dir, name) == -1)
		return -1;
	if ((size_t)snprintf(p->tokens, sizeof p->tokens, "%s/%s.tokens", dir,
	    name) >= sizeof p->tokens) {
		fprintf(stderr, "bench-latency: %s: %s\n", dir,
		    strerror(ENAMETOOLONG));
		return -1;
	}
	if (mkfifo(p->tokens, 0600) == -1 ||
	    (p->tok_fd = open(p->tokens, O_RDWR | O_CLOEXEC)) == -1) {
		fprintf(stderr, "bench-latency: %s: %s\n", p->tokens,
		    strerror(errno));
		return -1;
	}
	if ((p->lat = calloc(samples, sizeof *p->lat)) == NULL) {
		fprintf(stderr, "bench-latency: out of memory\n");
		return -1;
	}
	return 0;
}

static void
bench_latency_pipes_close(struct bench_latency_pipes *p)
{
	if (p->tok_fd != -1)
		close(p->tok_fd);
	bench_stamps_close(&p->st);
	free(p->lat);
}

/* The next stamp: its kind and time. 0, or -1 after saying why. */
static int
bench_latency_stamp(struct bench_latency_pipes *p, char *kind, long long *ns)
{
	long long job;

	return bench_stamps_next(&p->st, BENCH_LATENCY_WAIT_MS, kind, ns,
	    &job);
}

/* Waits for count low jobs to have begun ("B"). 0, or -1. */
static int
bench_latency_begun(struct bench_latency_pipes *p, int count)
{
	long long ns;
	char kind;

	while (count > 0) {
		if (bench_latency_stamp(p, &kind, &ns) == -1)
			return -1;
		if (kind != 'B') {
			fprintf(stderr, "bench-latency: stamp %c while low "
			    "jobs start\n", kind);
			return -1;
		}
		count--;
	}
	return 0;
}

/*
 * One sample: a token ends one low job; its end ("E") to the high job's
 * start ("S") is the latency; then the next low job takes the slot back
 * ("B"), and both slots are busy again. 0, or -1 after saying why.
 */
static int
bench_latency_sample(struct bench_latency_pipes *p)
{
	long long ns, end = -1, start = -1;
	bool again = false;
	char kind;

	if (write(p->tok_fd, "x", 1) != 1) {
		fprintf(stderr, "bench-latency: %s: %s\n", p->tokens,
		    strerror(errno));
		return -1;
	}
	while (end < 0 || start < 0 || !again) {
		if (bench_latency_stamp(p, &kind, &ns) == -1)
			return -1;
		if (kind == 'E' && end < 0)
			end = ns;
		else if (kind == 'S' && start < 0)
			start = ns;
		else if (kind == 'B' && !again)
			again = true;
		else {
			fprintf(stderr, "bench-latency: unexpected stamp %c "
			    "in a sample\n", kind);
			return -1;
		}
	}
	if (start < end) {
		fprintf(stderr, "bench-latency: the high job started before "
		    "a slot was free\n");
		return -1;
	}
	p->lat[p->n++] = (double)(start - end) / 1e9;
	return 0;
}

/* Submits the high job, and checks that it waits for a slot. */
static int
bench_latency_submit_high(struct triage_client *c, const char *stamp,
    const struct bench_latency_pipes *p)
{
	struct triage_error e;
	json_t *job;
	const char *state;
	int rc = -1;

	job = triage_client_call(c, "submit", json_pack("{s[sss]ss}", "argv",
	    stamp, "start", p->st.path, "priority", "high"),
	    BENCH_LATENCY_WAIT_MS, &e);
	if (job == NULL) {
		fprintf(stderr, "bench-latency: submit: %s\n", e.message);
		return -1;
	}
	state = json_string_value(json_object_get(job, "state"));
	if (state == NULL || strcmp(state, "queued") != 0)
		fprintf(stderr, "bench-latency: the high job is %s, not "
		    "queued behind the busy slots\n", state ? state : "?");
	else
		rc = 0;
	json_decref(job);
	return rc;
}

/* Queues n + 2 low jobs: 2 take the slots, n wait. 0, or -1. */
static int
bench_latency_queue(const struct bench_daemon *d, const char *stamp,
    struct bench_latency_pipes *p, uint64_t n)
{
	struct bench_load_result r;
	json_t *low;
	int rc;

	if ((low = json_pack("{s[ssss]ss}", "argv", stamp, "block",
	    p->tokens, p->st.path, "priority", "low")) == NULL)
		return -1;
	fprintf(stderr, "bench-latency: queueing %" PRIu64 " low jobs...\n",
	    n + BENCH_LATENCY_SLOTS);
	rc = bench_load_pipelined_params(d->sock, n + BENCH_LATENCY_SLOTS,
	    BENCH_LATENCY_WINDOW, low, &r);
	json_decref(low);
	if (rc == -1 || r.errors > 0) {
		fprintf(stderr, "bench-latency: queueing failed: %s\n",
		    r.error);
		return -1;
	}
	return bench_latency_begun(p, BENCH_LATENCY_SLOTS);
}

/* Ends n low jobs of p, at the end of a run: a failure is theirs to
 * report. */
static void
bench_latency_tokens(struct bench_latency_pipes *p, int n)
{
	while (n-- > 0)
		(void)!write(p->tok_fd, "x", 1);
}

/* Lets the daemon's low jobs go: nothing more starts, the two running end
 * (a daemon stopping would wait for them or kill them). */
static void
bench_latency_drain(struct triage_client *c, struct bench_latency_pipes *p)
{
	struct triage_error e;
	json_t *r;

	r = triage_client_call(c, "pause", NULL, BENCH_LATENCY_WAIT_MS, &e);
	json_decref(r);
	bench_latency_tokens(p, BENCH_LATENCY_SLOTS);
}

/* Starts ref-latency for samples rounds on p. Its pid, or -1. */
static pid_t
bench_latency_floor(const char *ref, const char *stamp,
    struct bench_latency_pipes *p, size_t samples)
{
	char rounds[32], *argv[6];
	posix_spawnattr_t attr;
	sigset_t none;
	pid_t pid;
	int rc;

	snprintf(rounds, sizeof rounds, "%zu", samples);
	argv[0] = (char *)(uintptr_t)ref;
	argv[1] = rounds;
	argv[2] = (char *)(uintptr_t)stamp;
	argv[3] = p->tokens;
	argv[4] = p->st.path;
	argv[5] = NULL;
	sigemptyset(&none);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawn(&pid, ref, NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		fprintf(stderr, "bench-latency: %s: %s\n", ref, strerror(rc));
		return -1;
	}
	if (bench_latency_begun(p, BENCH_LATENCY_SLOTS) == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static void
bench_latency_report(struct bench_latency_pipes *t,
    struct bench_latency_pipes *f, long queued)
{
	double t50, t99, tmax, f50, f99, fmax;
	char target[64];
	bool met;

	t50 = bench_stat_quantile(t->lat, t->n, 0.5) * 1e3;
	t99 = bench_stat_quantile(t->lat, t->n, 0.99) * 1e3;
	tmax = bench_stat_quantile(t->lat, t->n, 1) * 1e3;
	f50 = bench_stat_quantile(f->lat, f->n, 0.5) * 1e3;
	f99 = bench_stat_quantile(f->lat, f->n, 0.99) * 1e3;
	fmax = bench_stat_quantile(f->lat, f->n, 1) * 1e3;
	printf("\ntriage priority latency: a low job's end to the high job's "
	    "exec, 2 slots, %ld low jobs queued, %zu samples each, taking "
	    "turns\n\n", queued, t->n);
	printf("%-34s %9s %9s %9s\n", "", "p50 ms", "p99 ms", "max ms");
	printf("%-34s %9.3f %9.3f %9.3f\n", "triaged", t50, t99, tmax);
	printf("%-34s %9.3f %9.3f %9.3f\n", "floor (ref-latency, posix_spawn)",
	    f50, f99, fmax);
	met = t99 <= f99 + BENCH_LATENCY_OVER_FLOOR_MS;
	snprintf(target, sizeof target, "p99 <= floor + %.1f ms",
	    BENCH_LATENCY_OVER_FLOOR_MS);
	printf("SUMMARY\tlatency\thigh job start after a slot frees, "
	    "%ld queued\tp50 %.2f ms, p99 %.2f ms\tfloor p50 %.2f ms, p99 "
	    "%.2f ms\t%s\t%s\n", queued, t50, t99, f50, f99, target,
	    met ? "met" : "MISSED");
}

int
main(int argc, char **argv)
{
	struct tsupport_err err;
	struct bench_daemon_conf conf = {
		.daemon = "slots = 2\nworkers = 2\npolicy = strict\n",
		.priorities = "[priority.high]\nrank = 0\n"
		    "max_queued = 100000000\n[priority.low]\nrank = 20\n"
		    "max_queued = 100000000\n",
	};
	long samples, queued, i;
	struct bench_opts_count counts[] = {
		{ "samples", 1, 1000000, &samples, BENCH_LATENCY_SAMPLES,
		    BENCH_LATENCY_QUICK_SAMPLES, "samples of each" },
		{ "queued", 0, 100000000, &queued, BENCH_LATENCY_QUEUED, 0,
		    "low jobs queued" },
	};
	struct bench_opts opts = {
		.prog = "bench-latency",
		.about = "With 2 slots running low jobs and N low jobs queued, "
		    "times a high job from the\nend of a low job to its own "
		    "start, in triaged and in a minimal C parent\n"
		    "(ref-latency), taking turns.\n",
		.counts = counts,
		.ncounts = sizeof counts / sizeof counts[0],
	};
	static char stamp[PATH_MAX], ref[PATH_MAX], dir[PATH_MAX];
	struct bench_latency_pipes t = { .tok_fd = -1, .st.fd = -1 };
	struct bench_latency_pipes f = { .tok_fd = -1, .st.fd = -1 };
	struct bench_daemon *d = NULL;
	struct triage_client *c = NULL;
	char *cause = NULL;
	long long waiting;
	pid_t floor_pid = -1;
	bool ok = false;
	int rc, status;

	if ((rc = bench_opts_parse(&opts, argc, argv)) != -1)
		return rc;
	if (tsupport_proc_beside("ref-stamp", 0, stamp, sizeof stamp) == -1 ||
	    tsupport_proc_beside("ref-latency", 0, ref, sizeof ref) == -1 ||
	    access(stamp, X_OK) == -1 || access(ref, X_OK) == -1) {
		fprintf(stderr, "bench-latency: needs ref-stamp and "
		    "ref-latency beside it (make bench-build)\n");
		return 1;
	}
	if (tsupport_dir_make(dir, sizeof dir, opts.dir,
	    "triage-bench-latency", &err) == -1) {
		fprintf(stderr, "bench-latency: %s\n", err.msg);
		return 1;
	}
	/* The daemon's jobs run as us, and reach the FIFOs. */
	if (chmod(dir, 0711) == -1 ||
	    bench_latency_pipes_open(&t, dir, "triage", (size_t)samples)
	    == -1 ||
	    bench_latency_pipes_open(&f, dir, "floor", (size_t)samples) == -1)
		goto out;
	if ((d = bench_daemon_start(opts.dir, &conf, &cause)) == NULL) {
		fprintf(stderr, "bench-latency: %s\n", cause ? cause : "oom");
		goto out;
	}
	if ((c = triage_client_connect(d->sock, &cause)) == NULL) {
		fprintf(stderr, "bench-latency: %s\n", cause ? cause : "oom");
		goto out;
	}
	/* The low jobs left over at the end keep the queue at its size. */
	if (bench_latency_queue(d, stamp, &t, (uint64_t)queued +
	    (uint64_t)samples) == -1)
		goto out;
	if ((waiting = bench_rpc_queued("bench-latency", d->sock)) < queued) {
		fprintf(stderr, "bench-latency: %lld jobs queued, not %ld\n",
		    waiting, queued + samples);
		goto out;
	}
	if ((floor_pid = bench_latency_floor(ref, stamp, &f, (size_t)samples))
	    == -1)
		goto out;
	fprintf(stderr, "bench-latency: %ld samples each...\n", samples);
	for (i = 0; i < samples; i++) {
		if (bench_latency_submit_high(c, stamp, &t) == -1 ||
		    bench_latency_sample(&t) == -1 ||
		    bench_latency_sample(&f) == -1)
			goto out;
	}
	ok = true;
	bench_latency_report(&t, &f, queued);

out:
	free(cause);
	cause = NULL;
	if (floor_pid > 0) {
		if (!ok)
			kill(floor_pid, SIGKILL);
		/* Its last low jobs end, and it with them. */
		bench_latency_tokens(&f, BENCH_LATENCY_SLOTS);
		if (waitpid(floor_pid, &status, 0) == floor_pid && ok &&
		    (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
			fprintf(stderr, "bench-latency: ref-latency failed\n");
			ok = false;
		}
	}
	if (c != NULL) {
		bench_latency_drain(c, &t);
		triage_client_free(c);
	}
	ok = bench_daemon_finish(d, "bench-latency", ok);
	bench_latency_pipes_close(&t);
	bench_latency_pipes_close(&f);
	if (tsupport_dir_remove(dir, &err) == -1)
		fprintf(stderr, "bench-latency: %s\n", err.msg);
	if (bench_daemon_interrupted() != 0)
		return 128 + bench_daemon_interrupted();
	return ok ? 0 : 1;
}
