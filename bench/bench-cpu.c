/* bench-cpu.c - for the benchmarks: the CPU time triaged and its workers
 * have used, from /proc: what the daemon costs apart from its jobs. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-cpu.h"
#include "tsupport-proc.h"

/* What daemon/pool.c names a worker (PR_SET_NAME). */
#define BENCH_CPU_WORKER	"triaged-worker"

/* Whether pid's command name (/proc/PID/comm) is name. */
static int
bench_cpu_named(pid_t pid, const char *name)
{
	char path[64], comm[32];
	size_t n;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fgets(comm, sizeof comm, f) == NULL)
		comm[0] = '\0';
	fclose(f);
	n = strcspn(comm, "\n");
	comm[n] = '\0';
	return strcmp(comm, name) == 0;
}

int
bench_cpu_read(pid_t daemon, struct bench_cpu *c)
{
	struct tsupport_proc_stat st;
	struct dirent *de;
	DIR *dir;
	pid_t pid;

	memset(c, 0, sizeof *c);
	if (tsupport_proc_stat(daemon, &st) == -1) {
		errno = ESRCH;
		return -1;
	}
	c->daemon = st.utime + st.stime;
	/* Its children are found by their parent: the workers make process
	 * groups of their own. */
	if ((dir = opendir("/proc")) == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atol(de->d_name);
		if (tsupport_proc_stat(pid, &st) == -1 || st.ppid != daemon ||
		    !bench_cpu_named(pid, BENCH_CPU_WORKER))
			continue;
		if (c->nworkers == BENCH_CPU_MAXWORKERS) {
			closedir(dir);
			errno = E2BIG;
			return -1;
		}
		c->worker[c->nworkers].pid = pid;
		c->worker[c->nworkers].ticks = st.utime + st.stime;
		c->nworkers++;
	}
	closedir(dir);
	return 0;
}

int
bench_cpu_since(const struct bench_cpu *before,
    const struct bench_cpu *after, double *daemon_s, double *workers_s)
{
	double tick = 1 / (double)sysconf(_SC_CLK_TCK);
	unsigned long long workers = 0;
	size_t i, j;

	for (i = 0; i < before->nworkers; i++) {
		for (j = 0; j < after->nworkers &&
		    after->worker[j].pid != before->worker[i].pid; j++)
			continue;
		if (j == after->nworkers) {
			errno = ESRCH;
			return -1;
		}
	}
	for (j = 0; j < after->nworkers; j++) {
		workers += after->worker[j].ticks;
		for (i = 0; i < before->nworkers; i++)
			if (before->worker[i].pid == after->worker[j].pid)
				workers -= before->worker[i].ticks;
	}
	*daemon_s = (double)(after->daemon - before->daemon) * tick;
	*workers_s = (double)workers * tick;
	return 0;
}
