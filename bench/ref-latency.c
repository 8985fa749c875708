/* ref-latency.c - the floor of bench-latency: a minimal C parent that keeps
 * two slots busy with low jobs and, the moment one ends, spawns a high one. */
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REF_LATENCY_SLOTS 2

extern char **environ;

static pid_t
ref_latency_spawn(char *const argv[])
{
	pid_t pid;
	int rc;

	if ((rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ))
	    != 0) {
		fprintf(stderr, "ref-latency: %s: %s\n", argv[0],
		    strerror(rc));
		exit(1);
	}
	return pid;
}

/*
 * Runs n rounds: two low jobs (ref-stamp block) hold the slots; when one
 * ends, a high job (ref-stamp start) takes its slot at once, and a new low
 * job takes it after that, as triaged's queues do with two slots. Then
 * waits for the two low jobs left, which end as the benchmark says.
 */
int
main(int argc, char **argv)
{
	static char block[] = "block", start[] = "start";
	char *low[] = { NULL, block, NULL, NULL, NULL };
	char *high[] = { NULL, start, NULL, NULL };
	pid_t lows[REF_LATENCY_SLOTS], hi = 0, pid;
	long n, done = 0;
	int i, status;

	if (argc != 5 || (n = strtol(argv[1], NULL, 10)) < 1) {
		fprintf(stderr, "usage: ref-latency ROUNDS STAMP-PROGRAM "
		    "TOKENS STAMPS\n");
		return 2;
	}
	low[0] = high[0] = argv[2];
	low[2] = argv[3];
	low[3] = high[2] = argv[4];
	for (i = 0; i < REF_LATENCY_SLOTS; i++)
		lows[i] = ref_latency_spawn(low);
	while (done < n) {
		if ((pid = wait(&status)) == -1) {
			if (errno == EINTR)
				continue;
			perror("ref-latency: wait");
			return 1;
		}
		if (pid == hi) {
			done++;
			hi = 0;
			for (i = 0; i < REF_LATENCY_SLOTS && lows[i] != 0; i++)
				continue;
			if (i < REF_LATENCY_SLOTS)
				lows[i] = ref_latency_spawn(low);
			continue;
		}
		for (i = 0; i < REF_LATENCY_SLOTS && lows[i] != pid; i++)
			continue;
		if (i == REF_LATENCY_SLOTS)
			continue;
		lows[i] = 0;
		hi = ref_latency_spawn(high);
	}
	/* The low jobs left end with the benchmark's last tokens. */
	while (wait(&status) != -1 || errno == EINTR)
		continue;
	return 0;
}
