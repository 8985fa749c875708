/* ref-floor.c - the floor the dispatch benchmark measures triaged against:
 * N jobs of one command, a fixed number in flight, by fork+exec or posix_spawn. */
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

/* One job's process, as a user's minimal C program would start it: the
 * command looked up in PATH, every fd inherited. Returns its pid or -1. */
static pid_t
ref_floor_start(int spawn, char **argv)
{
	pid_t pid;

	if (spawn) {
		errno = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
		return errno == 0 ? pid : -1;
	}
	if ((pid = fork()) == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

int
main(int argc, char **argv)
{
	unsigned long n, inflight, started = 0, ended = 0, failed = 0;
	int spawn, status;
	double t0;

	if (argc < 5 || (strcmp(argv[1], "fork") != 0 &&
	    strcmp(argv[1], "spawn") != 0)) {
		fprintf(stderr, "usage: ref-floor fork|spawn JOBS INFLIGHT "
		    "COMMAND [ARG...]\n"
		    "Runs JOBS times COMMAND, INFLIGHT at a time, and prints "
		    "the seconds it took.\n");
		return 2;
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
			if (ref_floor_start(spawn, argv + 4) == -1) {
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
