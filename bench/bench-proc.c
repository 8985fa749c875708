/* bench-proc.c - for the benchmarks: a program run as a user's shell runs it
 * (spawned, waited for), timed from the spawn to the end of its wait. */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-proc.h"
#include "bench-stat.h"

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
		t0 = bench_stat_now();
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
	*seconds = bench_stat_now() - t0;
	return status;
}

char **
bench_proc_env(const char *const *drop, size_t ndrop, char *const *add,
    size_t nadd)
{
	char **env;
	size_t n, i, j, k;
	bool keep;

	for (n = 0; environ[n] != NULL; n++)
		continue;
	if ((env = calloc(n + nadd + 1, sizeof *env)) == NULL)
		return NULL;
	for (i = 0, k = 0; i < n; i++) {
		keep = true;
		for (j = 0; j < ndrop; j++) {
			if (strncmp(environ[i], drop[j], strlen(drop[j])) == 0)
				keep = false;
		}
		if (keep)
			env[k++] = environ[i];
	}
	for (j = 0; j < nadd; j++)
		env[k++] = add[j];
	env[k] = NULL;
	return env;
}

int
bench_proc_beside(const char *name, char *path, size_t size)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) == -1)
		return -1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL) {
		errno = ENOENT;
		return -1;
	}
	*slash = '\0';
	if ((size_t)snprintf(path, size, "%s/%s", self, name) >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
