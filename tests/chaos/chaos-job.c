/* chaos-job.c - the job of the chaos test: it notes its start, a tick every
 * CHAOS_JOB_TICK_MS while it runs and its end in the ledger, for the checker. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHAOS_JOB_TICK_MS 20

/* CLOCK_MONOTONIC in ns: the clock every process of the run shares. */
static int64_t
chaos_job_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * One line, "ID ATTEMPT NODE MARK TIMESTAMP_NS", in one write(2) on an
 * O_APPEND fd: the lines of every job's processes, on every node, never
 * mix. The time is taken last, just before the write. Exits 99 when the
 * write fails: a ledger with holes would make the checker lie.
 */
static void
chaos_job_note(int fd, const char *id, const char *attempt, const char *node,
    const char *mark)
{
	char line[512];
	int n;

	n = snprintf(line, sizeof line, "%s %s %s %s %lld\n", id, attempt,
	    node, mark, (long long)chaos_job_now());
	if (n <= 0 || (size_t)n >= sizeof line || write(fd, line, (size_t)n) !=
	    n) {
		fprintf(stderr, "chaos-job: cannot write the ledger: %s\n",
		    strerror(errno));
		exit(99);
	}
}

static const char *
chaos_job_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : "-";
}

/*
 * Which node runs it, as the checker maps it: $TRIAGE_SOCKET when the job
 * has it, else its worker's working dir. triaged gives a job no variable
 * that names its node (TRIAGE_JOB_ID, TRIAGE_PRIORITY, TRIAGE_ATTEMPT and
 * TRIAGE_RESULT only: daemon/run.c), but its worker is a fork of the
 * daemon, in the daemon's working dir, which the harness makes the node's
 * own dir; a worker that outlived its daemon keeps it.
 */
static const char *
chaos_job_node(void)
{
	static char dir[256];
	char link[64];
	ssize_t n;

	if (getenv("TRIAGE_SOCKET") != NULL && *getenv("TRIAGE_SOCKET") != '\0')
		return getenv("TRIAGE_SOCKET");
	snprintf(link, sizeof link, "/proc/%d/cwd", (int)getppid());
	if ((n = readlink(link, dir, sizeof dir - 1)) <= 0)
		return "-";
	dir[n] = '\0';
	/* The ledger's fields are split on blanks. */
	return strpbrk(dir, " \t\n") == NULL ? dir : "-";
}

int
main(int argc, char **argv)
{
	const char *id = chaos_job_env("TRIAGE_JOB_ID");
	const char *attempt = chaos_job_env("TRIAGE_ATTEMPT");
	const char *node = chaos_job_node();
	struct timespec tick = { 0, CHAOS_JOB_TICK_MS * 1000000L };
	int64_t end, left;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: chaos-job LEDGER DURATION_MS EXIT\n");
		return 2;
	}
	if ((fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) == -1) {
		fprintf(stderr, "chaos-job: %s: %s\n", argv[1],
		    strerror(errno));
		return 99;
	}
	end = chaos_job_now() + strtoll(argv[2], NULL, 10) * 1000000;
	chaos_job_note(fd, id, attempt, node, "start");
	while ((left = end - chaos_job_now()) > 0) {
		if (left < tick.tv_nsec)
			tick.tv_nsec = (long)left;
		nanosleep(&tick, NULL);
		if (chaos_job_now() < end)
			chaos_job_note(fd, id, attempt, node, "tick");
	}
	chaos_job_note(fd, id, attempt, node, "end");
	return atoi(argv[3]);
}
