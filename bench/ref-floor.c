/* ref-floor.c - the floor the dispatch benchmark measures triaged against:
 * N jobs of one command, a fixed number in flight, by fork+exec or posix_spawn;
 * and what one such job costs the host, spawned and reaped one at a time. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double
ref_floor_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * One job's process, as a user's minimal C program would start it: the
 * command looked up in PATH, every fd inherited; and, like a triage job, a
 * session of its own. Where the kernel shares the CPU out by session
 * (autogroups), that gives each job the share a triage job gets, so that
 * on a busy machine the two are compared alike. Returns its pid or -1.
 */
static pid_t
ref_floor_start(int spawn, char **argv, const posix_spawnattr_t *attr)
{
	pid_t pid;

	if (spawn) {
		errno = posix_spawnp(&pid, argv[0], NULL, attr, argv, environ);
		return errno == 0 ? pid : -1;
	}
	if ((pid = fork()) == 0) {
		if (setsid() == -1)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int
ref_floor_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The host's cost of one job: n times posix_spawn of argv and waitpid, one
 * at a time, each timed alone; prints the median in microseconds. Nothing
 * else runs beside it, so this is the latency of fork+exec+exit+reap, not a
 * rate. Returns main's exit status.
 */
static int
ref_floor_one(unsigned long n, char **argv, const posix_spawnattr_t *attr)
{
	double *us, t0, median;
	unsigned long i;
	pid_t pid;
	int status;

	if ((us = calloc(n, sizeof *us)) == NULL) {
		perror("ref-floor");
		return 1;
	}
	for (i = 0; i < n; i++) {
		t0 = ref_floor_now();
		if ((pid = ref_floor_start(1, argv, attr)) == -1 ||
		    waitpid(pid, &status, 0) == -1) {
			perror("ref-floor: one");
			free(us);
			return 1;
		}
		us[i] = (ref_floor_now() - t0) * 1e6;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "ref-floor: %s failed\n", argv[0]);
			free(us);
			return 1;
		}
	}
	qsort(us, n, sizeof *us, ref_floor_cmp);
	median = n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
	printf("%.0f us median of %lu, min %.0f, max %.0f\n", median, n,
	    us[0], us[n - 1]);
	free(us);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long n, inflight, started = 0, ended = 0, failed = 0;
	posix_spawnattr_t attr;
	int spawn, one, status;
	double t0;

	one = argc >= 4 && strcmp(argv[1], "one") == 0;
	if (!one && (argc < 5 || (strcmp(argv[1], "fork") != 0 &&
	    strcmp(argv[1], "spawn") != 0))) {
		fprintf(stderr, "usage: ref-floor fork|spawn JOBS INFLIGHT "
		    "COMMAND [ARG...]\n"
		    "       ref-floor one JOBS COMMAND [ARG...]\n"
		    "Runs JOBS times COMMAND, INFLIGHT at a time, and prints "
		    "the seconds it took;\nor one at a time by posix_spawn and "
		    "waitpid, and prints the median time\nof one in "
		    "microseconds (the host's fork+exec cost).\n");
		return 2;
	}
	if ((errno = posix_spawnattr_init(&attr)) != 0 ||
	    (errno = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID)) != 0) {
		perror("ref-floor: posix_spawnattr");
		return 1;
	}
	if (one) {
		if ((n = strtoul(argv[2], NULL, 10)) == 0) {
			fprintf(stderr, "ref-floor: JOBS must be > 0\n");
			return 2;
		}
		return ref_floor_one(n, argv + 3, &attr);
	}
	spawn = strcmp(argv[1], "spawn") == 0;
	n = strtoul(argv[2], NULL, 10);
	inflight = strtoul(argv[3], NULL, 10);
	if (n == 0 || inflight == 0) {
		fprintf(stderr, "ref-floor: JOBS and INFLIGHT must be > 0\n");
		return 2;
	}
	t0 = ref_floor_now();
	while (ended < n) {
		while (started < n && started - ended < inflight) {
			if (ref_floor_start(spawn, argv + 4, &attr) == -1) {
				perror("ref-floor: start");
				return 1;
			}
			started++;
		}
		if (wait(&status) == -1) {
			perror("ref-floor: wait");
			return 1;
		}
		ended++;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	printf("%lu jobs %lu failed %.6f seconds\n", n, failed,
	    ref_floor_now() - t0);
	return failed > 0 ? 1 : 0;
}
