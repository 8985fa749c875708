/* bench-dispatch.c - `make bench`: jobs of /bin/true through triaged with 2
 * slots, against the fork+exec and posix_spawn floors and xargs, parallel, tsp;
 * the CPU each spends per job, and the host's cost of one job. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "bench-cgcost.h"
#include "bench-cpu.h"
#include "bench-daemon.h"
#include "bench-jobs.h"
#include "bench-machine.h"
#include "bench-proc.h"
#include "bench-stat.h"
#include "bench-why.h"
#include "triage/client.h"
#include "tsupport-clock.h"
#include "tsupport-dir.h"
#include "tsupport-proc.h"

#define BENCH_ROUNDS		4
/*
 * Jobs per round. One exec costs 2.4 to 5 ms here (a Firecracker VM, page
 * faults dear), so 4 rounds of 2,500 for triage and the two floors, and
 * of 500 for the tools, compared per job, keep the full run near 3.5
 * minutes; GNU parallel, near 40 ms a job, runs 2/5 of the tools' count.
 */
#define BENCH_JOBS		2500	/* per round: triage and the floors */
#define BENCH_TOOL_JOBS		500	/* per round: xargs, tsp */
#define BENCH_QUICK_ROUNDS	2
#define BENCH_QUICK_JOBS	500
#define BENCH_QUICK_TOOL_JOBS	100
#define BENCH_SLOTS		2
/* A run of a few thousand /bin/true is seconds; this is a stuck daemon. */
#define BENCH_REPLY_MS		600000
/* What the target allows over the faster floor. */
#define BENCH_FLOOR_TARGET	1.10
/* What a cgroup per job may cost over none: of a job's dispatch time. */
#define BENCH_CGROUP_TARGET	1.10
/* Resources the jobs do not ask for may cost them nothing: within the
 * noise of the rounds. */
#define BENCH_RESOURCES "[resource.gpu]\nunits = 0,1,2,3\n" \
	"env = CUDA_VISIBLE_DEVICES\n[resource.lic]\ncount = 8\n"
/* Cgroups a round when their steps are measured one by one. */
#define BENCH_CGCOST_N		200
/* What the daemon and its workers may spend of their own CPU on a job. */
#define BENCH_CPU_TARGET_US	100
/* Jobs of the host's fork+exec cost, one at a time (ref-floor one). */
#define BENCH_HOST_N		200


enum bench_who {
	BENCH_TRIAGE,
	BENCH_TRIAGE_OFF,	/* the same with cgroups = off */
	BENCH_TRIAGE_RES,	/* the same with resources, unused */
	BENCH_FORK,
	BENCH_SPAWN,
	BENCH_XARGS,
	BENCH_PARALLEL,
	BENCH_TSP,
	BENCH_NWHO
};

struct bench_contestant {
	const char *name;	/* short, for the tables */
	const char *how;	/* what it runs, for people */
	bool tool;		/* runs the tools' smaller rounds */
	bool slow;		/* and 2/5 of those */
	uint64_t jobs;		/* per round */
	unsigned rounds;	/* that ran */
	double ms[16];		/* ms per job, each round */
	/*
	 * CPU seconds over cpu_jobs jobs, the rounds that measured it. Of
	 * triage: the daemon's own (cpu) and its workers' (cpu_workers),
	 * not their jobs'. Of the others: the program's and its reaped
	 * children's, the jobs (wait4); tsp's jobs are its server's.
	 */
	double cpu, cpu_workers;
	uint64_t cpu_jobs;
	struct bench_why why;
};

struct bench {
	const char *dir;	/* parent of every temp dir */
	char tmp[256];		/* ours: tool inputs, tsp's socket and files */
	char floor[1024];	/* ref-floor, beside this program (build/bin) */
	unsigned rounds;
	struct bench_contestant who[BENCH_NWHO];
	char *version;
	char *cgroups;		/* stats' "cgroups" of the triage daemon */
	double host_us;		/* one job's spawn to reap, alone; 0: unknown */
};

/*
 * The environment a triage job gets when its submit names none (PATH,
 * HOME, USER, LOGNAME of its user: protocol.md), which every contestant
 * runs with: what exec and the dynamic loader do with a long environment
 * and a long PATH is the same for all. Filled by main().
 */
static char bench_dispatch_vars[3][300];
static const char *bench_dispatch_env[5] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	bench_dispatch_vars[0], bench_dispatch_vars[1], bench_dispatch_vars[2],
	NULL
};

static void
bench_dispatch_env_init(void)
{
	const struct passwd *pw = getpwuid(getuid());
	const char *name = pw != NULL ? pw->pw_name : "root";

	snprintf(bench_dispatch_vars[0], sizeof bench_dispatch_vars[0],
	    "HOME=%s", pw != NULL ? pw->pw_dir : "/");
	snprintf(bench_dispatch_vars[1], sizeof bench_dispatch_vars[1],
	    "USER=%s", name);
	snprintf(bench_dispatch_vars[2], sizeof bench_dispatch_vars[2],
	    "LOGNAME=%s", name);
}

/*
 * Runs argv (looked up in PATH) with env added to a job's default
 * environment, stdin from in_path (NULL: /dev/null), stdout and stderr to
 * /dev/null unless show_stdout, and waits for it; *ru (when not NULL) is
 * what it and the children it reaped used. The guard's blocked signals are
 * unblocked in the child, so that Ctrl-C reaches it. Returns its wait
 * status, or -1 with errno when it could not be run.
 */
static int
bench_dispatch_exec(const char *const argv[], const char *const env[],
    const char *in_path, bool show_stdout, struct rusage *ru)
{
	char *const *av;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	char **envp;
	const char **merged;
	size_t n = 0, k = 0, i;
	pid_t pid;
	int status, rc;

	while (bench_dispatch_env[n] != NULL)
		n++;
	while (env != NULL && env[k] != NULL)
		k++;
	if ((merged = calloc(n + k + 1, sizeof *merged)) == NULL)
		return -1;
	for (i = 0; i < k; i++)
		merged[i] = env[i];
	for (i = 0; i < n; i++)
		merged[k + i] = bench_dispatch_env[i];
	/* posix_spawn's prototype predates const; it writes none. */
	memcpy(&envp, &merged, sizeof envp);
	memcpy(&av, &argv, sizeof av);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in_path ? in_path :
	    "/dev/null", O_RDONLY, 0);
	if (!show_stdout)
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null",
		    O_WRONLY, 0);
	else
		posix_spawn_file_actions_adddup2(&fa, 2, 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	/* Found by our own PATH; what it runs, by the job's. */
	rc = posix_spawnp(&pid, av[0], &fa, &attr, av, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(merged);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	while (wait4(pid, &status, 0, ru) == -1)
		if (errno != EINTR)
			return -1;
	return status;
}

/* The seconds of user and system time in ru. */
static double
bench_dispatch_cpu_s(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + (double)ru->ru_stime.tv_sec +
	    (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

/* Records one round of c: jobs in seconds. */
static void
bench_dispatch_record(struct bench_contestant *c, uint64_t jobs,
    double seconds)
{
	double ms = seconds * 1000 / (double)jobs;

	if (c->rounds < sizeof c->ms / sizeof c->ms[0])
		c->ms[c->rounds++] = ms;
	fprintf(stderr, "bench-dispatch:   %-9s %6" PRIu64 " jobs %8.3f s "
	    "%7.3f ms/job\n", c->name, jobs, seconds, ms);
}

/* ---- triage ---- */

/* The daemon's version, for the report. */
static void
bench_dispatch_version(struct bench *b, struct triage_client *cl)
{
	struct triage_error e;
	json_t *stats;

	if (b->version != NULL ||
	    (stats = triage_client_call(cl, "stats", NULL, BENCH_REPLY_MS, &e))
	    == NULL)
		return;
	if (json_is_string(json_object_get(stats, "version")))
		b->version = strdup(json_string_value(json_object_get(stats,
		    "version")));
	if (json_is_string(json_object_get(stats, "cgroups")))
		b->cgroups = strdup(json_string_value(json_object_get(stats,
		    "cgroups")));
	json_decref(stats);
}

/* One round of triage on a fresh daemon: from the first submit to the
 * last job's end (the last wait reply). */
static void
bench_dispatch_triage(struct bench *b, struct bench_contestant *c)
{
	struct bench_daemon_conf conf = { 0 };
	struct bench_daemon *d;
	struct bench_cpu cpu0, cpu1;
	struct triage_client *cl;
	json_int_t *ids;
	char *cause = NULL, kept[300];
	double t0, t1, daemon_s, workers_s;
	int cpu_ok;

	conf.daemon = c == &b->who[BENCH_TRIAGE_OFF] ?
	    "slots = 2\nworkers = 2\ncgroups = off\n" :
	    "slots = 2\nworkers = 2\n";
	if (c == &b->who[BENCH_TRIAGE_RES])
		conf.sections = BENCH_RESOURCES;
	if ((ids = calloc(c->jobs, sizeof *ids)) == NULL) {
		bench_why_set(&c->why, "out of memory");
		return;
	}
	if ((d = bench_daemon_start(b->dir, &conf, &cause)) == NULL) {
		bench_why_set(&c->why, "%s", cause ? cause : "out of memory");
		free(cause);
		free(ids);
		return;
	}
	if ((cl = triage_client_connect(d->sock, &cause)) == NULL) {
		bench_why_set(&c->why, "%s", cause ? cause : "out of memory");
		free(cause);
		goto out;
	}
	if (c == &b->who[BENCH_TRIAGE])
		bench_dispatch_version(b, cl);
	/* Its CPU from before the first submit to after the last end,
	 * outside the timed part: reading /proc takes a few ms. */
	cpu_ok = bench_cpu_read(d->pid, &cpu0);
	t0 = tsupport_clock_s();
	if (bench_jobs_submit(cl, c->jobs, ids, NULL, BENCH_REPLY_MS,
	    &c->why) == 0
	    && bench_jobs_wait(cl, c->jobs, ids, BENCH_REPLY_MS, NULL, NULL,
	    &c->why) == 0) {
		t1 = tsupport_clock_s();
		bench_dispatch_record(c, c->jobs, t1 - t0);
		if (cpu_ok == 0 &&
		    (cpu_ok = bench_cpu_read(d->pid, &cpu1)) == 0)
			cpu_ok = bench_cpu_since(&cpu0, &cpu1, &daemon_s,
			    &workers_s);
		if (cpu_ok == 0) {
			c->cpu += daemon_s;
			c->cpu_workers += workers_s;
			c->cpu_jobs += c->jobs;
			fprintf(stderr, "bench-dispatch:   %-9s CPU %.3f s "
			    "daemon, %.3f s %zu workers\n", c->name,
			    daemon_s, workers_s, cpu1.nworkers);
		} else
			fprintf(stderr, "bench-dispatch:   %-9s CPU not "
			    "measured: %s\n", c->name, strerror(errno));
	}
	triage_client_free(cl);
out:
	if (bench_daemon_interrupted() != 0)
		bench_why_set(&c->why, "interrupted");
	if (bench_daemon_stop(d, &cause) == -1) {
		bench_why_set(&c->why, "%s", cause ? cause : "out of memory");
		free(cause);
	}
	if (c->why.failed && bench_daemon_interrupted() == 0)
		bench_daemon_dump_log(d);
	/* The round's job outputs are removed with our temp dir at the end,
	 * not now: on an ext4 without a journal every file created in the
	 * next 5 to 300 s would scan past their freed inodes, and the next
	 * round would pay for this one's cleanup. */
	snprintf(kept, sizeof kept, "%s/state-%u", b->tmp, c->rounds);
	(void)rename(d->state, kept);
	bench_daemon_free(d);
	free(ids);
}

/* ---- the floors and the tools ---- */

/* Runs argv as one contestant's round of jobs and records its time. */
static void
bench_dispatch_timed(struct bench_contestant *c, const char *const argv[],
    const char *const env[], const char *in_path, bool show_stdout)
{
	struct rusage ru;
	double t0 = tsupport_clock_s(), t1;
	int status = bench_dispatch_exec(argv, env, in_path, show_stdout, &ru);

	t1 = tsupport_clock_s();
	if (status == -1)
		bench_why_set(&c->why, "%s: %s", argv[0], strerror(errno));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		bench_why_set(&c->why, "%s: exit status %d", argv[0],
		    WIFEXITED(status) ? WEXITSTATUS(status) :
		    128 + WTERMSIG(status));
	else {
		bench_dispatch_record(c, c->jobs, t1 - t0);
		c->cpu += bench_dispatch_cpu_s(&ru);
		c->cpu_jobs += c->jobs;
	}
}

static void
bench_dispatch_floor(struct bench *b, struct bench_contestant *c,
    const char *mode)
{
	char jobs[24], inflight[8];
	const char *argv[] = { b->floor, mode, jobs, inflight, "true", NULL };

	snprintf(jobs, sizeof jobs, "%" PRIu64, c->jobs);
	snprintf(inflight, sizeof inflight, "%d", BENCH_SLOTS);
	/* Its own line (jobs, seconds) goes to our stderr, for people. */
	bench_dispatch_timed(c, argv, NULL, NULL, true);
}

/* A file of n lines, for xargs -n1 to make n jobs of. */
static int
bench_dispatch_lines(const char *path, uint64_t n)
{
	FILE *f = fopen(path, "w");
	uint64_t i;

	if (f == NULL)
		return -1;
	for (i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 "\n", i);
	return fclose(f);
}

static void
bench_dispatch_xargs(struct bench *b, struct bench_contestant *c)
{
	char in[300], p[8];
	const char *argv[] = { "xargs", "-P", p, "-n1", "true", NULL };

	snprintf(p, sizeof p, "%d", BENCH_SLOTS);
	snprintf(in, sizeof in, "%s/lines", b->tmp);
	if (bench_dispatch_lines(in, c->jobs) == -1) {
		bench_why_set(&c->why, "%s: %s", in, strerror(errno));
		return;
	}
	bench_dispatch_timed(c, argv, NULL, in, false);
}

static void
bench_dispatch_parallel(struct bench *b, struct bench_contestant *c)
{
	const char **argv;
	char j[8];
	char (*args)[24];
	uint64_t i;

	(void)b;
	argv = calloc(c->jobs + 6, sizeof *argv);
	args = calloc(c->jobs, sizeof *args);
	if (argv == NULL || args == NULL) {
		free(argv);
		free(args);
		bench_why_set(&c->why, "out of memory");
		return;
	}
	snprintf(j, sizeof j, "-j%d", BENCH_SLOTS);
	argv[0] = "parallel";
	argv[1] = "--will-cite";
	argv[2] = j;
	argv[3] = "true";
	argv[4] = ":::";
	for (i = 0; i < c->jobs; i++) {
		snprintf(args[i], sizeof args[i], "%" PRIu64, i);
		argv[5 + i] = args[i];
	}
	bench_dispatch_timed(c, argv, NULL, NULL, false);
	free(argv);
	free(args);
}

/* task-spooler's server for round r: its own socket and output files in
 * our temp dir, every finished job kept (so that waiting works), 2 slots. */
static void
bench_dispatch_tsp_env(const struct bench *b, unsigned r, char sock[300],
    char tmpdir[300], const char *env[4])
{
	snprintf(sock, 300, "TS_SOCKET=%s/tsp-%u.sock", b->tmp, r);
	snprintf(tmpdir, 300, "TMPDIR=%s", b->tmp);
	env[0] = sock;
	env[1] = tmpdir;
	env[2] = "TS_MAXFINISHED=1000000";
	env[3] = NULL;
}

/* Each job one `tsp true` client call, then `tsp -w` for the last one and
 * for any other still unfinished: only the job beside the last in the
 * other slot can be. */
static void
bench_dispatch_tsp(struct bench *b, struct bench_contestant *c, unsigned r)
{
	char sock[300], tmpdir[300], last[24], list[320];
	const char *env[4];
	const char *slots[] = { "tsp", "-S", "2", NULL };
	const char *add[] = { "tsp", "true", NULL };
	const char *wait_last[] = { "tsp", "-w", last, NULL };
	const char *kill_server[] = { "tsp", "-K", NULL };
	char line[512], state[32];
	unsigned long id;
	double t0, t1;
	uint64_t i;
	int status, waits;
	FILE *f;
	const char *lister[] = { "sh", "-c", list, NULL };

	bench_dispatch_tsp_env(b, r, sock, tmpdir, env);
	/* Started by its first call, which sets the slots; not timed. */
	if ((status = bench_dispatch_exec(slots, env, NULL, false,
	    NULL)) != 0) {
		bench_why_set(&c->why, "tsp -S 2: status %d", status);
		goto out;
	}
	t0 = tsupport_clock_s();
	for (i = 0; i < c->jobs; i++) {
		if ((status = bench_dispatch_exec(add, env, NULL, false,
		    NULL)) != 0) {
			bench_why_set(&c->why, "tsp true: status %d", status);
			goto out;
		}
		if (bench_daemon_interrupted() != 0)
			goto out;
	}
	/* A fresh server numbers its jobs from 0. */
	snprintf(last, sizeof last, "%" PRIu64, c->jobs - 1);
	(void)bench_dispatch_exec(wait_last, env, NULL, false, NULL);
	snprintf(list, sizeof list, "tsp -l > %s/tsp-list", b->tmp);
	for (waits = 0; waits < 3; waits++) {
		if (bench_dispatch_exec(lister, env, NULL, false, NULL) != 0)
			break;
		snprintf(line, sizeof line, "%s/tsp-list", b->tmp);
		if ((f = fopen(line, "r")) == NULL)
			break;
		id = ULONG_MAX;
		while (fgets(line, sizeof line, f) != NULL)
			if (sscanf(line, "%lu %31s", &id, state) == 2 &&
			    strcmp(state, "finished") != 0)
				break;
			else
				id = ULONG_MAX;
		fclose(f);
		if (id == ULONG_MAX)
			break;
		snprintf(last, sizeof last, "%lu", id);
		(void)bench_dispatch_exec(wait_last, env, NULL, false, NULL);
	}
	t1 = tsupport_clock_s();
	bench_dispatch_record(c, c->jobs, t1 - t0);
out:
	(void)bench_dispatch_exec(kill_server, env, NULL, false, NULL);
}

/*
 * The host's cost of one job, ref-floor one: /bin/true spawned and reaped
 * alone, BENCH_HOST_N times, the median in microseconds; 0 when it could
 * not be measured (said on stderr).
 */
static double
bench_dispatch_host_us(const struct bench *b)
{
	char path[300], n[24];
	const char *argv[] = { b->floor, "one", n, "/bin/true", NULL };
	const char *const *args = argv, **env = bench_dispatch_env;
	char *const *av, *const *envp;
	double us = 0, seconds;
	int fd, status;
	FILE *f;

	snprintf(n, sizeof n, "%d", BENCH_HOST_N);
	snprintf(path, sizeof path, "%s/host", b->tmp);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600))
	    == -1) {
		fprintf(stderr, "bench-dispatch: %s: %s\n", path,
		    strerror(errno));
		return 0;
	}
	/* posix_spawn's prototype predates const; it writes none. */
	memcpy(&av, &args, sizeof av);
	memcpy(&envp, &env, sizeof envp);
	status = bench_proc_run(av, envp, fd, &seconds);
	close(fd);
	if (status != 0) {
		fprintf(stderr, "bench-dispatch: %s one: %s\n", b->floor,
		    status == -1 ? strerror(errno) : "failed");
		return 0;
	}
	if ((f = fopen(path, "r")) == NULL || fscanf(f, "%lf", &us) != 1)
		us = 0;
	if (f != NULL)
		fclose(f);
	return us;
}

/* ---- the report ---- */

/* The median ms/job of c's rounds; 0 when none ran. */
static double
bench_dispatch_median(const struct bench_contestant *c)
{
	return bench_stat_median(c->ms, c->rounds);
}

/* A cgroup per job against none, in the same run, and what each step of
 * one costs. */
static void
bench_dispatch_cgroups(const struct bench *b, double tm)
{
	const struct bench_contestant *off = &b->who[BENCH_TRIAGE_OFF];
	double om = bench_dispatch_median(off);
	const char *mode = b->cgroups != NULL ? b->cgroups : "unknown";
	struct bench_cgcost cost;
	char why[256];

	if (tm > 0 && om > 0)
		printf("SUMMARY\tdispatch\tx true, a cgroup per job (%s) vs "
		    "none\t%.2f ms/job\tcgroups = off %.2f ms/job (%.2fx)\t"
		    "<= %.2fx off\t%s\n", mode, tm, om, tm / om,
		    BENCH_CGROUP_TARGET, strcmp(mode, "none") == 0 ? "MISSED" :
		    tm / om <= BENCH_CGROUP_TARGET ? "met" : "MISSED");
	else
		printf("SUMMARY\tdispatch\tx true, a cgroup per job vs none\t"
		    "%s\t%s\t<= %.2fx off\tMISSED\n", tm > 0 ? "ran" :
		    "failed", om > 0 ? "ran" : "failed", BENCH_CGROUP_TARGET);
	if (bench_cgcost_measure(&cost, BENCH_CGCOST_N, why, sizeof why) == 0)
		printf("SUMMARY\tdispatch\ta job's cgroup, each step (%u "
		    "cgroups, median of rounds)\tmkdir %.0f us, born in it "
		    "+%.0f us, kill %.0f us, rmdir %.0f us\t-\t-\t-\n",
		    cost.n, cost.mkdir_us, cost.born_us, cost.kill_us,
		    cost.rmdir_us);
	else
		printf("SUMMARY\tdispatch\ta job's cgroup, each step\t(not "
		    "measured: %s)\t-\t-\t-\n", why);
}

/*
 * Resources configured that no job asks for, against none: within the
 * noise, which is the spread of triage's own rounds (at least 5%).
 */
static void
bench_dispatch_resources(const struct bench *b, double tm)
{
	const struct bench_contestant *t = &b->who[BENCH_TRIAGE];
	double rm = bench_dispatch_median(&b->who[BENCH_TRIAGE_RES]);
	double lo = t->rounds > 0 ? t->ms[0] : 0, hi = lo, noise;
	unsigned k;

	for (k = 1; k < t->rounds; k++) {
		lo = t->ms[k] < lo ? t->ms[k] : lo;
		hi = t->ms[k] > hi ? t->ms[k] : hi;
	}
	noise = lo > 0 && hi / lo > 1.05 ? hi / lo : 1.05;
	if (tm > 0 && rm > 0)
		printf("SUMMARY\tdispatch\tx true, resources configured, "
		    "unused\t%.2f ms/job\tnone %.2f ms/job (%.2fx)\t<= %.2fx "
		    "(the rounds' spread)\t%s\n", rm, tm, rm / tm, noise,
		    rm / tm <= noise ? "met" : "MISSED");
	else
		printf("SUMMARY\tdispatch\tx true, resources configured, "
		    "unused\t%s\t%s\twithin noise\tMISSED\n", rm > 0 ? "ran" :
		    "failed", tm > 0 ? "ran" : "failed");
}

/*
 * The CPU triage's daemon and workers (of contestant c, which with what
 * says how it ran) spent of their own per job, against what a job itself
 * costs: the floor's CPU, its spawn, exec, exit and reap.
 */
static void
bench_dispatch_cpu(const struct bench_contestant *c, const char *what,
    const struct bench_contestant *floor)
{
	double n = (double)c->cpu_jobs, d, w;
	char job[128];

	if (c->cpu_jobs == 0) {
		if (c->rounds > 0)
			printf("SUMMARY\tdispatch\tdaemon+workers CPU per "
			    "job%s\t(not measured)\t-\t<= %d us\tMISSED\n",
			    what, BENCH_CPU_TARGET_US);
		return;
	}
	d = c->cpu * 1e6 / n;
	w = c->cpu_workers * 1e6 / n;
	if (floor->cpu_jobs > 0)
		snprintf(job, sizeof job, "a job itself %.0f us (%s floor's "
		    "CPU/job)", floor->cpu * 1e6 / (double)floor->cpu_jobs,
		    floor->name);
	else
		snprintf(job, sizeof job, "-");
	printf("SUMMARY\tdispatch\tdaemon+workers CPU per job, %" PRIu64
	    " x true%s\t%.0f us\t%s\t<= %d us\t%s\n", c->cpu_jobs, what,
	    d + w, job, BENCH_CPU_TARGET_US, d + w <= BENCH_CPU_TARGET_US ?
	    "met" : "MISSED");
	printf("SUMMARY\tdispatch\tdaemon alone, CPU per job%s\t%.0f us\t"
	    "-\t-\t-\n", what, d);
	printf("SUMMARY\tdispatch\tworkers alone, CPU per job%s\t%.0f us\t"
	    "-\t-\t-\n", what, w);
}

static void
bench_dispatch_report(const struct bench *b, const struct bench_machine *m)
{
	const struct bench_contestant *t = &b->who[BENCH_TRIAGE], *c, *floor;
	double tm = bench_dispatch_median(t), cm, fm, lo, hi;
	unsigned i, k;

	printf("\ntriage dispatch benchmark: jobs of `true`, %d in flight, "
	    "ms per job (first start to last end), median of rounds\n",
	    BENCH_SLOTS);
	printf("machine: nproc %ld, %s, load %.2f at start, fork+exec of "
	    "/bin/true %.0f us alone (median of %d); triaged %s, slots = "
	    "workers = %d, state in %s (%s)\n", m->cpus, m->kernel, m->load,
	    b->host_us, BENCH_HOST_N, b->version ? b->version :
	    "(version unknown)", BENCH_SLOTS, b->dir, m->fs);
	printf("CPU/job: triage's daemon and workers, without the jobs; the "
	    "others' with their jobs\n\n");
	printf("%-9s %-34s %6s %6s %7s %9s %9s %9s %8s %8s\n", "who", "runs",
	    "rounds", "jobs", "in all", "median", "min", "max", "triage/",
	    "CPU/job");
	for (i = 0; i < BENCH_NWHO; i++) {
		c = &b->who[i];
		cm = bench_dispatch_median(c);
		lo = hi = c->rounds > 0 ? c->ms[0] : 0;
		for (k = 1; k < c->rounds; k++) {
			lo = c->ms[k] < lo ? c->ms[k] : lo;
			hi = c->ms[k] > hi ? c->ms[k] : hi;
		}
		printf("%-9s %-34s %6u %6" PRIu64 " %7" PRIu64, c->name,
		    c->how, c->rounds, c->jobs, c->jobs * c->rounds);
		if (c->rounds > 0)
			printf(" %9.3f %9.3f %9.3f", cm, lo, hi);
		else
			printf(" %9s %9s %9s", "-", "-", "-");
		if (c->rounds > 0 && tm > 0 && i != BENCH_TRIAGE)
			printf(" %7.2fx", tm / cm);
		else
			printf(" %8s", "-");
		if (c->cpu_jobs > 0)
			printf(" %5.0f us", (c->cpu + c->cpu_workers) * 1e6 /
			    (double)c->cpu_jobs);
		else
			printf(" %8s", "-");
		printf("%s\n", c->why.failed ? "  FAILED" : "");
	}
	for (i = 0; i < BENCH_NWHO; i++)
		if (b->who[i].why.failed)
			printf("%s: FAILED: %s\n", b->who[i].name,
			    b->who[i].why.text);

	/* The floor: the faster of the two. */
	floor = &b->who[BENCH_FORK];
	if (b->who[BENCH_SPAWN].rounds > 0 &&
	    (floor->rounds == 0 || bench_dispatch_median(&b->who[BENCH_SPAWN])
	    < bench_dispatch_median(floor)))
		floor = &b->who[BENCH_SPAWN];
	fm = bench_dispatch_median(floor);
	if (tm > 0 && fm > 0)
		printf("SUMMARY\tdispatch\t%" PRIu64 " x true, 2 slots\t%.2f "
		    "ms/job\t%s floor %.2f ms/job (%.2fx)\t<= %.2fx floor\t%s\n",
		    t->jobs * t->rounds, tm, floor->name, fm, tm / fm,
		    BENCH_FLOOR_TARGET, tm / fm <= BENCH_FLOOR_TARGET ? "met" :
		    "MISSED");
	else
		printf("SUMMARY\tdispatch\tx true, 2 slots vs floor\t%s\t%s\t"
		    "<= %.2fx floor\tMISSED\n", tm > 0 ? "ran" : "failed",
		    fm > 0 ? "ran" : "failed", BENCH_FLOOR_TARGET);
	if (b->host_us > 0)
		printf("SUMMARY\tdispatch\thost: /bin/true alone, spawn to "
		    "reap (median of %d)\t-\t%.0f us\t-\t-\n", BENCH_HOST_N,
		    b->host_us);
	else
		printf("SUMMARY\tdispatch\thost: /bin/true alone, spawn to "
		    "reap\t-\t(not measured)\t-\t-\n");
	bench_dispatch_cpu(&b->who[BENCH_TRIAGE], "", floor);
	bench_dispatch_cpu(&b->who[BENCH_TRIAGE_RES], ", resources unused",
	    floor);
	bench_dispatch_cgroups(b, tm);
	bench_dispatch_resources(b, tm);
	for (i = BENCH_XARGS; i < BENCH_NWHO; i++) {
		c = &b->who[i];
		cm = bench_dispatch_median(c);
		if (tm > 0 && cm > 0)
			printf("SUMMARY\tdispatch\t%" PRIu64 " x true vs %s\t"
			    "%.2f ms/job\t%s %.2f ms/job (%.2fx)\ttriage "
			    "faster\t%s\n", c->jobs * c->rounds, c->name, tm,
			    c->name, cm, tm / cm, tm < cm ? "met" : "MISSED");
		else
			printf("SUMMARY\tdispatch\tx true vs %s\t%s\t%s\t"
			    "triage faster\tMISSED\n", c->name,
			    tm > 0 ? "ran" : "failed", cm > 0 ? "ran" :
			    "failed");
	}
}

/* ---- main ---- */

static void
bench_dispatch_usage(FILE *f)
{
	fprintf(f,
	    "usage: bench-dispatch [--quick] [--rounds R] [--jobs N] "
	    "[--tool-jobs M] [--dir DIR]\n"
	    "Runs jobs of `true` with %d in flight: through triaged (beside "
	    "this binary),\nref-floor's fork+exec and posix_spawn, xargs, GNU "
	    "parallel and task-spooler,\nalternating, and compares medians.\n"
	    "  --rounds R     rounds of each (default %d; --quick %d)\n"
	    "  --jobs N       jobs per round of triage and the floors "
	    "(default %d; --quick %d)\n"
	    "  --tool-jobs M  jobs per round of the tools (default %d; "
	    "--quick %d),\n"
	    "                 of GNU parallel 2/5 of that\n"
	    "  --dir DIR      where the temp dirs go (default /tmp)\n"
	    "  --only NAME    run only this one (triage, triage-nocg, triage-res, fork, "
	    "spawn, xargs,\n                 parallel, tsp),\n"
	    "                 to profile it\n",
	    BENCH_SLOTS, BENCH_ROUNDS, BENCH_QUICK_ROUNDS, BENCH_JOBS,
	    BENCH_QUICK_JOBS, BENCH_TOOL_JOBS, BENCH_QUICK_TOOL_JOBS);
}

static int
bench_dispatch_number(const char *opt, const char *s, unsigned long max,
    unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || *v < 1 ||
	    *v > max) {
		fprintf(stderr, "bench-dispatch: %s wants a number from 1 to "
		    "%lu, not \"%s\"\n", opt, max, s);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct tsupport_err err;
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "tool-jobs", required_argument, NULL, 't' },
		{ "dir", required_argument, NULL, 'd' },
		{ "only", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bench b = {
		.dir = "/tmp",
		.who = {
			[BENCH_TRIAGE] = { "triage", "triaged, submit pipelined "
			    "+ wait" },
			[BENCH_TRIAGE_OFF] = { "triage-nocg", "the same, "
			    "cgroups = off" },
			[BENCH_TRIAGE_RES] = { "triage-res", "the same, GPUs "
			    "and a licence configured, the jobs asking none" },
			[BENCH_FORK] = { "fork", "ref-floor fork+execvp" },
			[BENCH_SPAWN] = { "spawn", "ref-floor posix_spawnp" },
			[BENCH_XARGS] = { "xargs", "xargs -P2 -n1 true", true },
			[BENCH_PARALLEL] = { "parallel", "parallel -j2 true ::: "
			    "...", true, true },
			[BENCH_TSP] = { "tsp", "tsp -S 2; tsp true, each; tsp -w",
			    true },
		},
	};
	unsigned long rounds = 0, jobs = 0, tool_jobs = 0;
	const char *only = NULL;
	struct bench_machine m;
	bool quick = false, failed = false;
	unsigned r, i;
	int ch, sig;

	if (bench_daemon_guard() == -1) {
		fprintf(stderr, "bench-dispatch: cannot set up signals: %s\n",
		    strerror(errno));
		return 1;
	}
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'q':
			quick = true;
			break;
		case 'r':
			if (bench_dispatch_number("--rounds", optarg, 16,
			    &rounds) == -1)
				return 2;
			break;
		case 'j':
			if (bench_dispatch_number("--jobs", optarg, 10000000,
			    &jobs) == -1)
				return 2;
			break;
		case 't':
			if (bench_dispatch_number("--tool-jobs", optarg,
			    100000, &tool_jobs) == -1)
				return 2;
			break;
		case 'd':
			b.dir = optarg;
			break;
		case 'o':
			only = optarg;
			break;
		case 'h':
			bench_dispatch_usage(stdout);
			return 0;
		default:
			bench_dispatch_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		bench_dispatch_usage(stderr);
		return 2;
	}
	/* An explicit count wins over --quick, in any order. */
	if (rounds == 0)
		rounds = quick ? BENCH_QUICK_ROUNDS : BENCH_ROUNDS;
	if (jobs == 0)
		jobs = quick ? BENCH_QUICK_JOBS : BENCH_JOBS;
	if (tool_jobs == 0)
		tool_jobs = quick ? BENCH_QUICK_TOOL_JOBS : BENCH_TOOL_JOBS;
	b.rounds = (unsigned)rounds;
	bench_dispatch_env_init();
	for (i = 0; i < BENCH_NWHO; i++) {
		b.who[i].jobs = b.who[i].tool ? tool_jobs : jobs;
		if (b.who[i].slow && b.who[i].jobs >= 5)
			b.who[i].jobs = b.who[i].jobs * 2 / 5;
	}
	if (bench_machine_get(b.dir, &m) == -1) {
		fprintf(stderr, "bench-dispatch: %s: %s\n", b.dir,
		    strerror(errno));
		return 2;
	}
	if (tsupport_proc_beside("ref-floor", 0, b.floor, sizeof b.floor) ==
	    -1) {
		fprintf(stderr, "bench-dispatch: cannot find ref-floor beside "
		    "me: %s\n", strerror(errno));
		return 2;
	}
	if (tsupport_dir_make(b.tmp, sizeof b.tmp, b.dir,
	    "triage-bench-dispatch", &err) == -1) {
		fprintf(stderr, "bench-dispatch: %s\n", err.msg);
		return 2;
	}

	if (only == NULL) {
		b.host_us = bench_dispatch_host_us(&b);
		fprintf(stderr, "bench-dispatch: host: /bin/true alone, spawn "
		    "to reap, %.0f us (median of %d)\n", b.host_us,
		    BENCH_HOST_N);
	}
	for (r = 0; r < b.rounds && bench_daemon_interrupted() == 0; r++) {
		fprintf(stderr, "bench-dispatch: round %u of %u\n", r + 1,
		    b.rounds);
		for (i = 0; i < BENCH_NWHO; i++) {
			if (bench_daemon_interrupted() != 0)
				break;
			if (only != NULL && strcmp(only, b.who[i].name) != 0)
				continue;
			switch (i) {
			case BENCH_TRIAGE:
			case BENCH_TRIAGE_OFF:
			case BENCH_TRIAGE_RES:
				bench_dispatch_triage(&b, &b.who[i]);
				break;
			case BENCH_FORK:
				bench_dispatch_floor(&b, &b.who[i], "fork");
				break;
			case BENCH_SPAWN:
				bench_dispatch_floor(&b, &b.who[i], "spawn");
				break;
			case BENCH_XARGS:
				bench_dispatch_xargs(&b, &b.who[i]);
				break;
			case BENCH_PARALLEL:
				bench_dispatch_parallel(&b, &b.who[i]);
				break;
			case BENCH_TSP:
				bench_dispatch_tsp(&b, &b.who[i], r);
				break;
			}
		}
	}
	if (tsupport_dir_remove(b.tmp, &err) == -1)
		fprintf(stderr, "bench-dispatch: %s\n", err.msg);

	bench_dispatch_report(&b, &m);
	for (i = 0; i < BENCH_NWHO; i++)
		if (only == NULL || strcmp(only, b.who[i].name) == 0)
			failed = failed || b.who[i].rounds == 0;
	free(b.version);
	free(b.cgroups);
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "bench-dispatch: stdout: %s\n", strerror(errno));
		return 1;
	}
	if ((sig = bench_daemon_interrupted()) != 0) {
		fprintf(stderr, "bench-dispatch: interrupted\n");
		return 128 + sig;
	}
	return failed ? 1 : 0;
}
