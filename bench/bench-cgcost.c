/* bench-cgcost.c - what a job's cgroup costs, step by step, as the worker
 * takes them: mkdir, a child born in it, its kill, rmdir. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-cgcost.h"
#include "bench-stat.h"
#include "cgroup.h"
#include "clone3.h"
#include "tsupport-clock.h"

#define CGCOST_ROUNDS	5
#define CGCOST_STACK	(64 * 1024)

/* The child: waits to be killed, as a job does until it ends. An exec,
 * which lets the caller (a vfork's parent) go on. */
static int
cgcost_child(void *arg)
{
	(void)arg;
	execl("/bin/sleep", "sleep", "1000", (char *)NULL);
	return 127;
}

static int
cgcost_exit(void *arg)
{
	(void)arg;
	return 0;
}

static double
cgcost_us(double t0)
{
	return (tsupport_clock_s() - t0) * 1e6;
}

/* One child born with clone3 (into fd, or -1: where the caller is) and
 * reaped: its microseconds, or -1. */
static double
cgcost_spawn(char *stack, int fd)
{
	double t0 = tsupport_clock_s();
	pid_t pid = clone3_into(cgcost_exit, NULL, stack, CGCOST_STACK, fd);

	if (pid == -1 || waitpid(pid, NULL, 0) != pid)
		return -1;
	return cgcost_us(t0);
}

/* One round of n cgroups under parent: each step's mean into v[4]. */
static int
cgcost_round(int parent, unsigned n, char *stack, double v[4], char *why,
    size_t size)
{
	double t0, mk = 0, born = 0, kill = 0, rm = 0, in, out;
	char name[32];
	unsigned i;
	pid_t pid;
	int fd;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%u", i);
		t0 = tsupport_clock_s();
		if (mkdirat(parent, name, 0755) == -1 ||
		    (fd = cgroup_open(parent, name)) == -1) {
			snprintf(why, size, "mkdir: %s", strerror(errno));
			return -1;
		}
		mk += cgcost_us(t0);
		if ((in = cgcost_spawn(stack, fd)) < 0 ||
		    (out = cgcost_spawn(stack, -1)) < 0) {
			snprintf(why, size, "clone3: %s", strerror(errno));
			close(fd);
			return -1;
		}
		born += in - out;
		pid = clone3_into(cgcost_child, NULL, stack, CGCOST_STACK, fd);
		if (pid == -1) {
			snprintf(why, size, "clone3: %s", strerror(errno));
			close(fd);
			return -1;
		}
		t0 = tsupport_clock_s();
		(void)cgroup_kill(fd);
		kill += cgcost_us(t0);
		(void)waitpid(pid, NULL, 0);
		while (cgroup_populated(fd) == 1)
			(void)poll(NULL, 0, 1);
		close(fd);
		t0 = tsupport_clock_s();
		if (unlinkat(parent, name, AT_REMOVEDIR) == -1) {
			snprintf(why, size, "rmdir: %s", strerror(errno));
			return -1;
		}
		rm += cgcost_us(t0);
	}
	v[0] = mk / n;
	v[1] = born / n;
	v[2] = kill / n;
	v[3] = rm / n;
	return 0;
}

int
bench_cgcost_measure(struct bench_cgcost *cost, unsigned n, char *why,
    size_t size)
{
	char mount[PATH_MAX], self[PATH_MAX], name[64];
	double v[4][CGCOST_ROUNDS];
	double one[4];
	int own = -1, parent = -1, rc = -1;
	unsigned r, k;
	char *stack;

	if (geteuid() != 0) {
		snprintf(why, size, "not root");
		return -1;
	}
	if (cgroup_mount_find("/proc/self/mountinfo", mount,
	    sizeof mount) == -1 || cgroup_path_of("/proc/self/cgroup", self,
	    sizeof self) == -1) {
		snprintf(why, size, "no cgroup v2 here");
		return -1;
	}
	if (strlen(mount) + strlen(self) + 1 >= sizeof mount) {
		snprintf(why, size, "cgroup path too long");
		return -1;
	}
	if (strcmp(self, "/") != 0)
		strcat(mount, self);
	stack = mmap(NULL, CGCOST_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		snprintf(why, size, "mmap: %s", strerror(errno));
		return -1;
	}
	snprintf(name, sizeof name, "bench-cgcost.%ld", (long)getpid());
	if ((own = cgroup_open(AT_FDCWD, mount)) == -1 ||
	    mkdirat(own, name, 0755) == -1 ||
	    (parent = cgroup_open(own, name)) == -1) {
		snprintf(why, size, "%s/%s: %s", mount, name, strerror(errno));
		goto out;
	}
	for (r = 0; r < CGCOST_ROUNDS; r++) {
		if (cgcost_round(parent, n, stack, one, why, size) == -1)
			goto out;
		for (k = 0; k < 4; k++)
			v[k][r] = one[k];
	}
	cost->mkdir_us = bench_stat_median(v[0], CGCOST_ROUNDS);
	cost->born_us = bench_stat_median(v[1], CGCOST_ROUNDS);
	cost->kill_us = bench_stat_median(v[2], CGCOST_ROUNDS);
	cost->rmdir_us = bench_stat_median(v[3], CGCOST_ROUNDS);
	cost->n = n;
	rc = 0;
out:
	if (parent != -1)
		close(parent);
	if (own != -1) {
		(void)unlinkat(own, name, AT_REMOVEDIR);
		close(own);
	}
	munmap(stack, CGCOST_STACK);
	return rc;
}
