/* bench-client.c - `make bench`: the wall time of `triage submit -- true`, the
 * whole process, against a minimal C client and task-spooler's `tsp -n`. */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bench-daemon.h"
#include "bench-proc.h"
#include "bench-stat.h"
#include "client.h"

#define BENCH_CLIENT_ROUNDS 1000
#define BENCH_CLIENT_QUICK_ROUNDS 200
#define BENCH_CLIENT_CONTROL_MS 60000
/* The target: triage within this factor of the minimal client. */
#define BENCH_CLIENT_TARGET 1.10

extern char **environ;

/* One program the rounds take turns running. */
struct bench_client_prog {
	const char *name;
	char *argv[8];
	bool submits;		/* queues a job in triaged, prints its id */
	double *t;		/* seconds, one a round */
	size_t n;
};

static void
bench_client_usage(FILE *f)
{
	fprintf(f, "usage: bench-client [--quick] [--rounds N] [--dir DIR]\n"
	    "Times `triage submit -- true`, the whole process, against a "
	    "minimal C client\n(ref-client), `tsp -n true` and /bin/true, "
	    "taking turns, on a paused triaged.\n"
	    "  --rounds N  runs of each (default %d, --quick %d)\n"
	    "  --dir DIR   where the temp dirs go (default /tmp)\n",
	    BENCH_CLIENT_ROUNDS, BENCH_CLIENT_QUICK_ROUNDS);
}

/* Our environment without what points elsewhere, plus the two sockets and
 * tsp's TMPDIR: every program runs with the same. Strings borrowed but the
 * three added (allocated); free with bench_client_env_free. */
static char **
bench_client_env(const char *sock, const char *tspdir)
{
	static const char *const drop[] = {
		"TRIAGE_SOCKET=", "TS_SOCKET=", "TMPDIR=", "TS_SLOTS=",
	};
	char **env;
	size_t n, i, j, k;
	bool keep;

	for (n = 0; environ[n] != NULL; n++)
		continue;
	if ((env = calloc(n + 4, sizeof *env)) == NULL)
		return NULL;
	for (i = 0, k = 0; i < n; i++) {
		keep = true;
		for (j = 0; j < sizeof drop / sizeof drop[0]; j++) {
			if (strncmp(environ[i], drop[j], strlen(drop[j])) == 0)
				keep = false;
		}
		if (keep)
			env[k++] = environ[i];
	}
	if (asprintf(&env[k++], "TRIAGE_SOCKET=%s", sock) == -1 ||
	    asprintf(&env[k++], "TS_SOCKET=%s/tsp.sock", tspdir) == -1 ||
	    asprintf(&env[k++], "TMPDIR=%s", tspdir) == -1)
		return NULL;
	env[k] = NULL;
	return env;
}

static void
bench_client_env_free(char **env)
{
	size_t n;

	if (env == NULL)
		return;
	for (n = 0; env[n] != NULL; n++)
		continue;
	/* The three last are ours. */
	for (; n > 0 && strncmp(env[n - 1], "TMPDIR=", 7) != 0 &&
	    strncmp(env[n - 1], "TS_SOCKET=", 10) != 0 &&
	    strncmp(env[n - 1], "TRIAGE_SOCKET=", 14) != 0; n--)
		continue;
	free(env[n - 1]);
	free(env[n - 2]);
	free(env[n - 3]);
	free(env);
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

/* The jobs the daemon holds queued. -1 after saying why. */
static long long
bench_client_queued(const char *sock)
{
	struct client_error e;
	struct client *c;
	char *cause = NULL;
	json_t *stats;
	long long n;

	if ((c = client_connect(sock, &cause)) == NULL) {
		fprintf(stderr, "bench-client: %s\n", cause ? cause : "oom");
		free(cause);
		return -1;
	}
	stats = client_call(c, "stats", NULL, BENCH_CLIENT_CONTROL_MS, &e);
	client_free(c);
	if (stats == NULL) {
		fprintf(stderr, "bench-client: stats: %s\n", e.message);
		return -1;
	}
	n = json_integer_value(json_object_get(json_object_get(stats,
	    "jobs"), "queued"));
	json_decref(stats);
	return n;
}

static int
bench_client_pause(const char *sock)
{
	struct client_error e;
	struct client *c;
	char *cause = NULL;
	json_t *r;

	if ((c = client_connect(sock, &cause)) == NULL) {
		fprintf(stderr, "bench-client: %s\n", cause ? cause : "oom");
		free(cause);
		return -1;
	}
	r = client_call(c, "pause", NULL, BENCH_CLIENT_CONTROL_MS, &e);
	client_free(c);
	if (r == NULL) {
		fprintf(stderr, "bench-client: pause: %s\n", e.message);
		return -1;
	}
	json_decref(r);
	return 0;
}

static int
bench_client_rm_cb(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == -1 && errno != ENOENT ? -1 : 0;
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
	size_t r, i;
	int status;
	double s;

	for (r = 0; r < rounds && bench_daemon_interrupted() == 0; r++) {
		for (i = 0; i < nprogs; i++) {
			status = bench_proc_run(progs[i].argv, env, -1, &s);
			if (status == -1 || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0) {
				fprintf(stderr, "bench-client: %s failed "
				    "(status 0x%x)\n", progs[i].name, status);
				return -1;
			}
			progs[i].t[progs[i].n++] = s;
		}
	}
	return bench_daemon_interrupted() != 0 ? -1 : 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static char triage[PATH_MAX], ref[PATH_MAX], tspdir[PATH_MAX];
	/* execve's argv is char *const *: words of our own to point at. */
	static char submit[] = "submit", dashes[] = "--", t[] = "true",
	    n[] = "-n", tsp[] = "/usr/bin/tsp", bintrue[] = "/bin/true";
	struct bench_client_prog progs[] = {
		{ .name = "triage submit -- true", .submits = true },
		{ .name = "ref-client true (minimal C)", .submits = true },
		{ .name = "tsp -n true" },
		{ .name = "/bin/true" },
	};
	const size_t nprogs = sizeof progs / sizeof progs[0];
	const char *dir = "/tmp";
	struct bench_daemon *d = NULL;
	double med[4], p10[4], p90[4], ratio;
	char **env = NULL, *cause = NULL;
	long rounds = 0;
	long long queued, submitted;
	bool quick = false, ok = false;
	size_t i;
	int ch;

	if (bench_daemon_guard() == -1) {
		fprintf(stderr, "bench-client: cannot set up signals: %s\n",
		    strerror(errno));
		return 1;
	}
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'q':
			quick = true;
			break;
		case 'r':
			rounds = strtol(optarg, NULL, 10);
			if (rounds < 1 || rounds > 1000000) {
				fprintf(stderr, "bench-client: --rounds wants "
				    "1 to 1000000\n");
				return 2;
			}
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			bench_client_usage(stdout);
			return 0;
		default:
			bench_client_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		bench_client_usage(stderr);
		return 2;
	}
	if (rounds == 0)
		rounds = quick ? BENCH_CLIENT_QUICK_ROUNDS :
		    BENCH_CLIENT_ROUNDS;
	if (bench_proc_beside("triage", triage, sizeof triage) == -1 ||
	    bench_proc_beside("ref-client", ref, sizeof ref) == -1 ||
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
	progs[3].argv[0] = bintrue;
	for (i = 0; i < nprogs; i++) {
		if ((progs[i].t = calloc((size_t)rounds, sizeof(double)))
		    == NULL) {
			fprintf(stderr, "bench-client: out of memory\n");
			return 1;
		}
	}

	snprintf(tspdir, sizeof tspdir, "%s/triage-bench-tsp-XXXXXX", dir);
	if (mkdtemp(tspdir) == NULL) {
		fprintf(stderr, "bench-client: mkdtemp in %s: %s\n", dir,
		    strerror(errno));
		return 1;
	}
	if ((d = bench_daemon_start(dir, NULL, &cause)) == NULL) {
		fprintf(stderr, "bench-client: %s\n", cause ? cause : "oom");
		free(cause);
		goto out;
	}
	if ((env = bench_client_env(d->sock, tspdir)) == NULL) {
		fprintf(stderr, "bench-client: out of memory\n");
		goto out;
	}
	/* Paused, so that the jobs stay queued and the machine quiet; the
	 * checks start tsp's server, which then stays up. */
	if (bench_client_pause(d->sock) == -1 ||
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
	if ((queued = bench_client_queued(d->sock)) != submitted) {
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
	if (env != NULL)
		bench_client_tsp_stop(env);
	bench_client_env_free(env);
	if (d != NULL) {
		if (bench_daemon_stop(d, &cause) == -1) {
			fprintf(stderr, "bench-client: %s\n",
			    cause ? cause : "oom");
			ok = false;
		}
		free(cause);
		bench_daemon_free(d);
	}
	if (nftw(tspdir, bench_client_rm_cb, 16, FTW_DEPTH | FTW_PHYS) == -1)
		fprintf(stderr, "bench-client: cannot remove %s: %s\n",
		    tspdir, strerror(errno));
	for (i = 0; i < nprogs; i++)
		free(progs[i].t);
	if (bench_daemon_interrupted() != 0)
		return 128 + bench_daemon_interrupted();
	return ok ? 0 : 1;
}
