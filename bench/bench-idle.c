/* bench-idle.c - `make bench`: what triaged and its workers cost while there
 * is nothing to do: CPU ticks and wakeups, empty and with a paused queue. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bench-daemon.h"
#include "bench-load.h"
#include "bench-opts.h"
#include "bench-rpc.h"
#include "tsupport-proc.h"

#define BENCH_IDLE_SECONDS 60
#define BENCH_IDLE_QUICK_SECONDS 8
#define BENCH_IDLE_QUEUED 100000
#define BENCH_IDLE_WINDOW 1000
/* Before each window: what the daemon does just after a start or a burst
 * of submissions (the last commit, a status line) is not idling. */
#define BENCH_IDLE_SETTLE_MS 1000
/* Every process of the machine is read to find the daemon's. */
#define BENCH_IDLE_MAXPROCS 4096

/* One process of the daemon's group, as /proc shows it at one moment. */
struct bench_idle_proc {
	int pid;
	int ppid;
	unsigned long long ticks;	/* utime + stime, every thread */
	unsigned long long switches;	/* voluntary + nonvoluntary, summed
					 * over its threads */
};

struct bench_idle_snap {
	struct bench_idle_proc p[BENCH_IDLE_MAXPROCS];
	size_t n;
};

/* Sums the context switches of every thread of pid. 0, or -1 when the
 * process is gone. */
static int
bench_idle_switches(int pid, unsigned long long *sum)
{
	char path[64], line[256];
	struct dirent *de;
	unsigned long long v;
	DIR *dir;
	FILE *f;

	*sum = 0;
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%.16s/status", pid,
		    de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;	/* a thread that just ended */
		while (fgets(line, sizeof line, f) != NULL) {
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v)
			    == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %llu",
			    &v) == 1)
				*sum += v;
		}
		fclose(f);
	}
	closedir(dir);
	return 0;
}

/* Reads /proc/PID/stat into *p. 0, or -1 when the process is gone. */
static int
bench_idle_stat(int pid, struct bench_idle_proc *p)
{
	struct tsupport_proc_stat st;

	if (tsupport_proc_stat(pid, &st) == -1)
		return -1;
	p->pid = pid;
	p->ppid = st.ppid;
	p->ticks = st.utime + st.stime;
	return 0;
}

/* Whether pid is root or descends from it, by the parents in s. */
static bool
bench_idle_descends(const struct bench_idle_snap *s, int pid, int root)
{
	size_t i, hops;

	for (hops = 0; pid != root && hops < 64; hops++) {
		for (i = 0; i < s->n && s->p[i].pid != pid; i++)
			continue;
		if (i == s->n || s->p[i].ppid <= 1)
			return false;
		pid = s->p[i].ppid;
	}
	return pid == root;
}

/* The daemon (root) and every process it started, workers and jobs: the
 * workers make process groups of their own. 0, or -1 with errno. */
static int
bench_idle_snap(int root, struct bench_idle_snap *s)
{
	static struct bench_idle_snap all;
	struct dirent *de;
	DIR *dir;
	size_t i;
	int pid;

	all.n = 0;
	if ((dir = opendir("/proc")) == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL && all.n < BENCH_IDLE_MAXPROCS) {
		if ((pid = atoi(de->d_name)) > 0 &&
		    bench_idle_stat(pid, &all.p[all.n]) == 0)
			all.n++;
	}
	closedir(dir);
	s->n = 0;
	for (i = 0; i < all.n; i++) {
		if (!bench_idle_descends(&all, all.p[i].pid, root) ||
		    bench_idle_switches(all.p[i].pid, &all.p[i].switches)
		    == -1)
			continue;
		s->p[s->n++] = all.p[i];
	}
	return 0;
}

static const struct bench_idle_proc *
bench_idle_find(const struct bench_idle_snap *s, int pid)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->p[i].pid == pid)
			return &s->p[i];
	}
	return NULL;
}

/* Sleeps ms, or less when interrupted. */
static void
bench_idle_sleep(long ms)
{
	struct timespec ts;

	while (ms > 0 && bench_daemon_interrupted() == 0) {
		ts.tv_sec = 0;
		ts.tv_nsec = (ms < 100 ? ms : 100) * 1000000L;
		nanosleep(&ts, NULL);
		ms -= 100;
	}
}

/* One window: prints each process's ticks and wakeups over it and sets the
 * totals. 0, or -1 after saying why. */
static int
bench_idle_window(const struct bench_daemon *d, const char *name,
    long seconds, unsigned long long *ticks, unsigned long long *wakeups)
{
	static struct bench_idle_snap a, b;
	const struct bench_idle_proc *pa;
	unsigned long long dt, dw;
	size_t i;

	bench_idle_sleep(BENCH_IDLE_SETTLE_MS);
	if (bench_idle_snap(d->pid, &a) == -1) {
		fprintf(stderr, "bench-idle: /proc: %s\n", strerror(errno));
		return -1;
	}
	fprintf(stderr, "bench-idle: %s: %ld s...\n", name, seconds);
	bench_idle_sleep(seconds * 1000);
	if (bench_daemon_interrupted() != 0)
		return -1;
	if (bench_idle_snap(d->pid, &b) == -1) {
		fprintf(stderr, "bench-idle: /proc: %s\n", strerror(errno));
		return -1;
	}
	printf("\n%s, %ld s:\n%8s %-8s %12s %12s\n", name, seconds, "pid",
	    "process", "CPU ticks", "wakeups");
	*ticks = *wakeups = 0;
	for (i = 0; i < b.n; i++) {
		/* A process born in the window counts whole. */
		pa = bench_idle_find(&a, b.p[i].pid);
		dt = b.p[i].ticks - (pa != NULL ? pa->ticks : 0);
		dw = b.p[i].switches - (pa != NULL ? pa->switches : 0);
		printf("%8d %-8s %12llu %12llu%s\n", b.p[i].pid,
		    b.p[i].pid == d->pid ? "triaged" : b.p[i].ppid == d->pid ?
		    "worker" : "other", dt, dw, pa == NULL ? " (new)" : "");
		*ticks += dt;
		*wakeups += dw;
	}
	for (i = 0; i < a.n; i++) {
		if (bench_idle_find(&b, a.p[i].pid) == NULL)
			printf("%8d %-8s ended in the window\n", a.p[i].pid,
			    a.p[i].pid == d->pid ? "triaged" : "worker");
	}
	printf("%8s %-8s %12llu %12llu\n", "", "total", *ticks, *wakeups);
	return 0;
}

/* Pauses every priority and queues n jobs. 0, or -1 after saying why. */
static int
bench_idle_queue(const struct bench_daemon *d, uint64_t n)
{
	struct bench_load_result r;
	json_t *res;

	if ((res = bench_rpc_call("bench-idle", d->sock, "pause", NULL))
	    == NULL)
		return -1;
	json_decref(res);
	fprintf(stderr, "bench-idle: queueing %" PRIu64 " jobs...\n", n);
	if (bench_load_pipelined(d->sock, n, BENCH_IDLE_WINDOW, &r) == -1 ||
	    r.errors > 0 || r.ok != n || r.not_queued > 0) {
		fprintf(stderr, "bench-idle: queueing failed: %s\n",
		    r.error[0] != '\0' ? r.error : "jobs not queued");
		return -1;
	}
	return 0;
}

static void
bench_idle_summary(const char *measure, unsigned long long ticks,
    unsigned long long wakeups)
{
	printf("SUMMARY\tidle\t%s\t%llu wakeups, %llu ticks\t-\t0 wakeups\t"
	    "%s\n", measure, wakeups, ticks, wakeups == 0 ? "met" : "MISSED");
}

int
main(int argc, char **argv)
{
	/* With the HTTP listener on: metrics and the dashboard's series
	 * must not tick either. */
	struct bench_daemon_conf conf = { .daemon = "slots = 2\n",
	    .http = true };
	long seconds, queued;
	struct bench_opts_count counts[] = {
		{ "seconds", 1, 86400, &seconds, BENCH_IDLE_SECONDS,
		    BENCH_IDLE_QUICK_SECONDS, "each window" },
		{ "queued", 1, 100000000, &queued, BENCH_IDLE_QUEUED, 0,
		    "jobs of the second window" },
	};
	struct bench_opts opts = {
		.prog = "bench-idle",
		.about = "Counts the CPU ticks and wakeups (context switches) "
		    "of triaged (its HTTP listener on) and its workers\nover a "
		    "window with nothing queued, then over one with jobs queued "
		    "but paused.\n",
		.counts = counts,
		.ncounts = sizeof counts / sizeof counts[0],
	};
	struct bench_daemon *d;
	unsigned long long ticks[2], wakeups[2];
	char measure[2][96], *cause = NULL;
	bool ok = false;
	int rc;

	if ((rc = bench_opts_parse(&opts, argc, argv)) != -1)
		return rc;
	snprintf(measure[0], sizeof measure[0], "%ld s, nothing queued",
	    seconds);
	snprintf(measure[1], sizeof measure[1], "%ld s, %ld queued, paused",
	    seconds, queued);

	if ((d = bench_daemon_start(opts.dir, &conf, &cause)) == NULL) {
		fprintf(stderr, "bench-idle: %s\n", cause ? cause : "oom");
		free(cause);
		return 1;
	}
	printf("triage idle benchmark: CPU ticks (utime+stime, 1/%ld s) and "
	    "wakeups (context switches of every thread) of triaged and its "
	    "workers\n", sysconf(_SC_CLK_TCK));
	if (bench_idle_window(d, measure[0], seconds, &ticks[0],
	    &wakeups[0]) == 0 &&
	    bench_idle_queue(d, (uint64_t)queued) == 0 &&
	    bench_idle_window(d, measure[1], seconds, &ticks[1],
	    &wakeups[1]) == 0) {
		bench_idle_summary(measure[0], ticks[0], wakeups[0]);
		bench_idle_summary(measure[1], ticks[1], wakeups[1]);
		ok = true;
	}
	ok = bench_daemon_finish(d, "bench-idle", ok);
	if (bench_daemon_interrupted() != 0)
		return 128 + bench_daemon_interrupted();
	return ok ? 0 : 1;
}
