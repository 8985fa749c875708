/* ref-stamp.c - the job bench-latency and bench-cluster run: stamps
 * CLOCK_MONOTONIC into a FIFO at its start ("S"), or holds a slot until told
 * to end ("B", then "E"). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long
ref_stamp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One record, "K <ns> <job>\n", in one write: shorter than PIPE_BUF, so
 * that the records of jobs writing at once never mix. The job is triage's
 * TRIAGE_JOB_ID, 0 outside triage: whose start it was, when a job may run
 * twice. */
static int
ref_stamp_put(int fd, char kind, long long ns)
{
	const char *job = getenv("TRIAGE_JOB_ID");
	char rec[64];
	int n = snprintf(rec, sizeof rec, "%c %lld %.20s\n", kind, ns,
	    job != NULL ? job : "0");

	return write(fd, rec, (size_t)n) == n ? 0 : -1;
}

int
main(int argc, char **argv)
{
	/* First of all: a high job's start is its exec, not what follows. */
	long long t = ref_stamp_now();
	char token;
	int out, in;

	if (argc == 3 && strcmp(argv[1], "start") == 0) {
		if ((out = open(argv[2], O_WRONLY | O_CLOEXEC)) == -1 ||
		    ref_stamp_put(out, 'S', t) == -1)
			return 1;
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "block") == 0) {
		/* A low job: holds its slot until the benchmark sends a
		 * token, then stamps its end as the last thing before its
		 * exit. */
		if ((out = open(argv[3], O_WRONLY | O_CLOEXEC)) == -1 ||
		    (in = open(argv[2], O_RDONLY | O_CLOEXEC)) == -1 ||
		    ref_stamp_put(out, 'B', t) == -1 ||
		    read(in, &token, 1) != 1)
			return 1;
		return ref_stamp_put(out, 'E', ref_stamp_now()) == -1;
	}
	fprintf(stderr, "usage: ref-stamp start STAMPS\n"
	    "       ref-stamp block TOKENS STAMPS\n");
	return 2;
}
