/* bench-proc.c - for the benchmarks: a program run as a user's shell runs it
 * (spawned, waited for), timed from the spawn to the end of its wait. */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-proc.h"
#include "tsupport-clock.h"

extern char **environ;

int
bench_proc_run(char *const argv[], char *const envp[], int out_fd,
    double *seconds)
{
	static int devnull = -1;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none;
	double t0 = 0;
	pid_t pid;
	int rc, status;

	if (out_fd == -1) {
		if (devnull == -1 &&
		    (devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
			return -1;
		out_fd = devnull;
	}
	sigemptyset(&none);
	if ((rc = posix_spawn_file_actions_init(&fa)) != 0) {
		errno = rc;
		return -1;
	}
	if ((rc = posix_spawnattr_init(&attr)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		errno = rc;
		return -1;
	}
	/* The benchmark's guard blocks its signals; the program gets none
	 * blocked, as from a shell. */
	if ((rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1)) == 0 &&
	    (rc = posix_spawnattr_setsigmask(&attr, &none)) == 0 &&
	    (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK))
	    == 0) {
		t0 = tsupport_clock_s();
		rc = posix_spawn(&pid, argv[0], &fa, &attr, argv, envp);
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR)
			return -1;
	}
	*seconds = tsupport_clock_s() - t0;
	return status;
}
