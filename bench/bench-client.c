/* bench-client.c - `make bench`: the wall time of `triage submit -- true`, the
 * whole process, against a minimal C client and task-spooler's `tsp -n`. */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bench-daemon.h"
#include "bench-opts.h"
#include "bench-proc.h"
#include "bench-rpc.h"
#include "bench-stat.h"
#include "tsupport-child.h"
#include "tsupport-dir.h"
#include "tsupport-proc.h"

#define BENCH_CLIENT_ROUNDS 600
#define BENCH_CLIENT_QUICK_ROUNDS 100
/* The target: triage within this factor of the minimal client. */
#define BENCH_CLIENT_TARGET 1.10

extern char **environ;

/* One program the rounds take turns running. */
struct bench_client_prog {
	const char *name;
	char *argv[8];
	bool submits;		/* queues a job in triaged, prints its id */
	char *settle[4];	/* run after it, untimed: what it left running
				 * must not weigh on the next program */
	double *t;		/* seconds, one a round */
	size_t n;
};

/* Our environment without what points elsewhere, plus the two sockets and
 * tsp's TMPDIR (vars, allocated): every program runs with the same. Free
 * the array only, and vars. */
static char **
bench_client_env(const char *sock, const char *tspdir, char *vars[3])
{
	static const char *const drop[] = {
		"TRIAGE_SOCKET=", "TS_SOCKET=", "TMPDIR=", "TS_SLOTS=",
	};

	if (asprintf(&vars[0], "TRIAGE_SOCKET=%s", sock) == -1 ||
	    asprintf(&vars[1], "TS_SOCKET=%s/tsp.sock", tspdir) == -1 ||
	    asprintf(&vars[2], "TMPDIR=%s", tspdir) == -1)
		return NULL;
	return tsupport_child_env(drop, sizeof drop / sizeof drop[0], vars, 3);
}

/* Runs p once with stdout in a pipe; checks that it exits 0 and, if it
 * submits to triaged, prints a job id. 0, or -1 after saying why. */
static int
bench_client_check(struct bench_client_prog *p, char **env)
{
	char out[256];
	double s;
	ssize_t n;
	size_t got = 0;
	int fds[2], status;

	if (pipe2(fds, O_CLOEXEC) == -1)
		return -1;
	status = bench_proc_run(p->argv, env, fds[1], &s);
	close(fds[1]);
	/* Up to the end of the line: tsp's server, which it forks, keeps
	 * the pipe open. */
	while (got < sizeof out - 1 && memchr(out, '\n', got) == NULL &&
	    (n = read(fds[0], out + got, sizeof out - 1 - got)) > 0)
		got += (size_t)n;
	close(fds[0]);
	out[got] = '\0';
	if (status == -1) {
		fprintf(stderr, "bench-client: %s: %s\n", p->argv[0],
		    strerror(errno));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    (p->submits && strspn(out, "0123456789") == 0)) {
		fprintf(stderr, "bench-client: %s: exit status 0x%x, printed "
		    "\"%s\" instead of a job id\n", p->name, status, out);
		return -1;
	}
	return 0;
}

/* Stops tsp's server (it runs detached, outside the daemon's group). */
static void
bench_client_tsp_stop(char **env)
{
	static char tsp[] = "/usr/bin/tsp", kill[] = "-K";
	char *argv[] = { tsp, kill, NULL };
	double s;

	(void)bench_proc_run(argv, env, -1, &s);
}

/* Runs every program rounds times, taking turns. 0, or -1. */
static int
bench_client_rounds(struct bench_client_prog *progs, size_t nprogs,
    char **env, size_t rounds)
{
	size_t r, k, i;
	int status;
	double s;

	for (r = 0; r < rounds && bench_daemon_interrupted() == 0; r++) {
		/* Each round starts with the next program: none is always
		 * the one that follows a given other. */
		for (k = 0; k < nprogs; k++) {
			i = (r + k) % nprogs;
			status = bench_proc_run(progs[i].argv, env, -1, &s);
			if (status == -1 || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0) {
				fprintf(stderr, "bench-client: %s failed "
				    "(status 0x%x)\n", progs[i].name, status);
				return -1;
			}
			progs[i].t[progs[i].n++] = s;
			if (progs[i].settle[0] != NULL)
				(void)bench_proc_run(progs[i].settle, env, -1,
				    &s);
		}
	}
	return bench_daemon_interrupted() != 0 ? -1 : 0;
}

int
main(int argc, char **argv)
{
	struct tsupport_err err;
	long rounds;
	struct bench_opts_count counts[] = {
		{ "rounds", 1, 1000000, &rounds, BENCH_CLIENT_ROUNDS,
		    BENCH_CLIENT_QUICK_ROUNDS, "runs of each" },
	};
	struct bench_opts opts = {
		.prog = "bench-client",
		.about = "Times `triage submit -- true`, the whole process, "
		    "against a minimal C client\n(ref-client), `tsp -n true` "
		    "and /bin/true, taking turns, on a paused triaged.\n",
		.counts = counts,
		.ncounts = 1,
	};
	static char triage[PATH_MAX], ref[PATH_MAX], tspdir[PATH_MAX];
	/* execve's argv is char *const *: words of our own to point at. */
	static char submit[] = "submit", dashes[] = "--", t[] = "true",
	    n[] = "-n", w[] = "-w", tsp[] = "/usr/bin/tsp",
	    bintrue[] = "/bin/true";
	struct bench_client_prog progs[] = {
		{ .name = "triage submit -- true", .submits = true },
		{ .name = "ref-client true (minimal C)", .submits = true },
		{ .name = "tsp -n true" },
		{ .name = "/bin/true" },
	};
	const size_t nprogs = sizeof progs / sizeof progs[0];
	struct bench_daemon *d = NULL;
	double med[4], p10[4], p90[4], ratio;
	json_t *paused = NULL;
	char **env = NULL, *vars[3] = { NULL, NULL, NULL }, *cause = NULL;
	long long queued, submitted;
	bool ok = false;
	size_t i;
	int rc;

	if ((rc = bench_opts_parse(&opts, argc, argv)) != -1)
		return rc;
	if (tsupport_proc_beside("triage", 0, triage, sizeof triage) == -1 ||
	    tsupport_proc_beside("ref-client", 0, ref, sizeof ref) == -1 ||
	    access(triage, X_OK) == -1 || access(ref, X_OK) == -1 ||
	    access("/usr/bin/tsp", X_OK) == -1) {
		fprintf(stderr, "bench-client: needs triage and ref-client "
		    "beside it and /usr/bin/tsp (make bench-build)\n");
		return 1;
	}
	progs[0].argv[0] = triage;
	progs[0].argv[1] = submit;
	progs[0].argv[2] = dashes;
	progs[0].argv[3] = t;
	progs[1].argv[0] = ref;
	progs[1].argv[1] = t;
	progs[2].argv[0] = tsp;
	progs[2].argv[1] = n;
	progs[2].argv[2] = t;
	/* tsp's server runs the job after its client has exited: wait for
	 * it, or its run is counted against whoever comes next. */
	progs[2].settle[0] = tsp;
	progs[2].settle[1] = w;
	progs[3].argv[0] = bintrue;
	for (i = 0; i < nprogs; i++) {
		if ((progs[i].t = calloc((size_t)rounds, sizeof(double)))
		    == NULL) {
			fprintf(stderr, "bench-client: out of memory\n");
			return 1;
		}
	}

	if (tsupport_dir_make(tspdir, sizeof tspdir, opts.dir,
	    "triage-bench-tsp", &err) == -1) {
		fprintf(stderr, "bench-client: %s\n", err.msg);
		return 1;
	}
	if ((d = bench_daemon_start(opts.dir, NULL, &cause)) == NULL) {
		fprintf(stderr, "bench-client: %s\n", cause ? cause : "oom");
		free(cause);
		goto out;
	}
	if ((env = bench_client_env(d->sock, tspdir, vars)) == NULL) {
		fprintf(stderr, "bench-client: out of memory\n");
		goto out;
	}
	/* Paused, so that the jobs stay queued and the machine quiet; the
	 * checks start tsp's server, which then stays up. */
	if ((paused = bench_rpc_call("bench-client", d->sock, "pause",
	    NULL)) == NULL ||
	    bench_client_check(&progs[0], env) == -1 ||
	    bench_client_check(&progs[1], env) == -1 ||
	    bench_client_check(&progs[2], env) == -1)
		goto out;
	fprintf(stderr, "bench-client: %ld rounds of %zu programs...\n",
	    rounds, nprogs);
	if (bench_client_rounds(progs, nprogs, env, (size_t)rounds) == -1)
		goto out;
	/* Every submission of the rounds and the checks is in the queue. */
	submitted = 2 + 2 * (long long)rounds;
	if ((queued = bench_rpc_queued("bench-client", d->sock)) !=
	    submitted) {
		fprintf(stderr, "bench-client: %lld jobs queued after %lld "
		    "submissions\n", queued, submitted);
		goto out;
	}
	ok = true;

	printf("\ntriage client benchmark: wall time of one whole process "
	    "(spawn to reaped), %ld rounds taking turns, paused daemon\n\n",
	    rounds);
	printf("%-30s %10s %10s %10s %8s\n", "program", "p10 ms", "median ms",
	    "p90 ms", "x ref");
	for (i = 0; i < nprogs; i++) {
		p10[i] = bench_stat_quantile(progs[i].t, progs[i].n, 0.1);
		med[i] = bench_stat_quantile(progs[i].t, progs[i].n, 0.5);
		p90[i] = bench_stat_quantile(progs[i].t, progs[i].n, 0.9);
	}
	for (i = 0; i < nprogs; i++)
		printf("%-30s %10.3f %10.3f %10.3f %7.2fx\n", progs[i].name,
		    p10[i] * 1e3, med[i] * 1e3, p90[i] * 1e3,
		    med[i] / med[1]);
	ratio = med[0] / med[1];
	printf("SUMMARY\tclient\ttriage submit -- true, whole process\t"
	    "%.2f ms\tminimal C client %.2f ms (%.2fx)\t<= %.2fx minimal\t"
	    "%s\n", med[0] * 1e3, med[1] * 1e3, ratio, BENCH_CLIENT_TARGET,
	    ratio <= BENCH_CLIENT_TARGET ? "met" : "MISSED");
	printf("SUMMARY\tclient\ttriage submit vs tsp -n true\t%.2f ms\t"
	    "tsp %.2f ms (%.2fx), /bin/true %.2f ms\t-\t-\n", med[0] * 1e3,
	    med[2] * 1e3, med[0] / med[2], med[3] * 1e3);

out:
	json_decref(paused);
	if (env != NULL)
		bench_client_tsp_stop(env);
	free(env);
	for (i = 0; i < 3; i++)
		free(vars[i]);
	ok = bench_daemon_finish(d, "bench-client", ok);
	if (tsupport_dir_remove(tspdir, &err) == -1)
		fprintf(stderr, "bench-client: %s\n", err.msg);
	for (i = 0; i < nprogs; i++)
		free(progs[i].t);
	if (bench_daemon_interrupted() != 0)
		return 128 + bench_daemon_interrupted();
	return ok ? 0 : 1;
}
