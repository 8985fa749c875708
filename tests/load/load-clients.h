/* load-clients.h - the clients of make test-load, each kind a thread over
 * many connections: submitters, waiters, and the stats sampler. */
#ifndef TRIAGE_LOAD_CLIENTS_H
#define TRIAGE_LOAD_CLIENTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct triage_client;

/* What the threads share. Counters are atomic; ids and error under lock. */
struct load {
	int njobs;			/* to submit, and to see succeed */
	atomic_int claimed;		/* submissions sent or about to be */
	atomic_int submitted;		/* accepted (a reply with an id) */
	atomic_int succeeded;		/* wait replies: succeeded */
	atomic_int errors;		/* anything else that went wrong */
	atomic_bool stop;
	pthread_mutex_t lock;
	int64_t *ids;			/* accepted ids, in reply order */
	int nids;
	int next_wait;			/* the next of ids to wait on */
	char error[512];		/* the first error */
	/* stats round trips, ms, one per sample */
	double *lat;
	int nlat;
	int maxlat;
};

/* One thread's share of the connections of one kind. */
struct load_share {
	struct load *load;
	struct triage_client **c;
	int n;
	pthread_t thread;
};

/* Each submits /bin/true as fast as the daemon takes it, LOAD_WINDOW in
 * flight per connection, until load->njobs are claimed and answered. */
void *load_submitter_main(void *share);
/* Each waits on the next id submitted, one at a time per connection, and
 * counts a terminal reply: succeeded, or an error. Until all succeeded or
 * stop. */
void *load_waiter_main(void *share);
/* The healthy client (share->c[0]): a stats call every LOAD_SAMPLE_MS,
 * its round trip into load->lat, until stop. */
void *load_sampler_main(void *share);

/* Notes an error (the first one's message is kept). */
void load_error(struct load *load, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define LOAD_WINDOW 4
/* Often enough that the p99 of a run of 20 s stands on a thousand samples,
 * not on the second worst of 200 (one stall of the shared machine). */
#define LOAD_SAMPLE_MS 20

#endif
