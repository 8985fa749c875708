/* chaos-load.c - the chaos test's clients: on every node a submitter of
 * ledgered jobs and a waiter on some of them, each recording what it was told. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "triage/client.h"
#include "chaos-check.h"
#include "chaos-cluster.h"
#include "chaos-load.h"
#include "harness.h"
#include "tsupport-clock.h"

/* A submission per node this often: about 20 jobs/s over the cluster,
 * about a third of its 9 slots' worth, so that a node's jobs taken over
 * find room elsewhere. */
#define CHAOS_LOAD_EVERY_MS 150
/* A submit or a wait answers within this, or its connection is given up:
 * longer than any fault lasts (a stopped node answers once continued). */
#define CHAOS_LOAD_CALL_MS 30000
/* A wait's own timeout, s: a waiter asked to stop does so within it. */
#define CHAOS_LOAD_WAIT_S 3
/* Between attempts to connect to a node that is away. */
#define CHAOS_LOAD_RETRY_MS 50
/* Ids handed from a submitter to its waiter, at most at once. */
#define CHAOS_LOAD_QUEUE 4096

struct chaos_sub {
	int64_t	id;
	int64_t	ts;
};

struct chaos_outcome {
	int64_t	id;
	int64_t	attempt;
	char	state[16];
};

/* One node's clients: its submitter, and the waiter at the next node on
 * what it was told. */
struct chaos_client {
	struct chaos_load	*load;
	unsigned		 i;
	char			 sock[300];	/* where it submits */
	char			 wait_sock[300];/* where its waiter waits */
	char			 node[2];
	char			 wait_node[2];
	unsigned		 seed;
	pthread_t		 submitter;
	pthread_t		 waiter;
	/* Written by its own thread alone, read once joined. */
	struct chaos_sub	*subs;
	size_t			 nsubs, capsubs;
	struct chaos_outcome	*outs;
	size_t			 nouts, capouts;
	atomic_size_t		 acked, refused, unanswered, outcomes;
	/* Ids to wait on: a ring, under lock. */
	pthread_mutex_t		 lock;
	int64_t			 queue[CHAOS_LOAD_QUEUE];
	size_t			 head, len;
};

struct chaos_load {
	const char		*job;
	const char		*ledger;
	atomic_bool		 stop_submitting;
	atomic_bool		 stop_waiting;
	struct chaos_client	 c[CHAOS_NODES];
};

static const char *const chaos_load_prios[] = { "low", "normal", "high" };

/* p grown for one more of size, when full. Aborts out of memory. */
static void *
chaos_load_grow(void *p, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap == 0 ? 1024 : *cap * 2;
	if ((p = realloc(p, *cap * size)) == NULL)
		abort();
	return p;
}

static void
chaos_load_push(struct chaos_client *c, int64_t id)
{
	pthread_mutex_lock(&c->lock);
	if (c->len < CHAOS_LOAD_QUEUE)
		c->queue[(c->head + c->len++) % CHAOS_LOAD_QUEUE] = id;
	pthread_mutex_unlock(&c->lock);
}

/* The next id to wait on, or 0. */
static int64_t
chaos_load_pop(struct chaos_client *c)
{
	int64_t id = 0;

	pthread_mutex_lock(&c->lock);
	if (c->len > 0) {
		id = c->queue[c->head];
		c->head = (c->head + 1) % CHAOS_LOAD_QUEUE;
		c->len--;
	}
	pthread_mutex_unlock(&c->lock);
	return id;
}

/* A connection to sock, tried again until it comes or stop is set
 * (NULL). */
static struct triage_client *
chaos_load_connect(const char *sock, atomic_bool *stop)
{
	struct triage_client *tc;
	char *cause;

	while (!atomic_load(stop)) {
		if ((tc = triage_client_connect(sock, &cause)) != NULL)
			return tc;
		free(cause);
		tsupport_clock_sleep_ms(CHAOS_LOAD_RETRY_MS);
	}
	return NULL;
}

static json_t *
chaos_load_job(struct chaos_client *c)
{
	char ms[16], code[4];

	snprintf(ms, sizeof ms, "%d", 20 + (int)(rand_r(&c->seed) % 281));
	snprintf(code, sizeof code, "%d", rand_r(&c->seed) % 5 == 0);
	return json_pack("{s[ssss] ss}", "argv", c->load->job,
	    c->load->ledger, ms, code, "priority",
	    chaos_load_prios[rand_r(&c->seed) % 3]);
}

static void *
chaos_load_submitter(void *arg)
{
	struct chaos_client *c = arg;
	struct triage_client *tc = NULL;
	struct triage_error e;
	unsigned n = 0;
	json_t *res;
	int64_t id;

	while (!atomic_load(&c->load->stop_submitting)) {
		if (tc == NULL && (tc = chaos_load_connect(c->sock,
		    &c->load->stop_submitting)) == NULL)
			break;
		res = triage_client_call(tc, "submit", chaos_load_job(c),
		    CHAOS_LOAD_CALL_MS, &e);
		if (res != NULL) {
			id = json_integer_value(json_object_get(res, "id"));
			json_decref(res);
			c->subs = chaos_load_grow(c->subs, c->nsubs,
			    &c->capsubs, sizeof *c->subs);
			c->subs[c->nsubs++] = (struct chaos_sub){ id,
			    tsupport_clock_ns() };
			atomic_fetch_add(&c->acked, 1);
			if (n++ % 3 == 0)
				chaos_load_push(c, id);
		} else if (e.code == TRIAGE_ERR_TRANSPORT) {
			/* Its answer may come to nobody: not acknowledged.
			 * A new connection, so that it is never read. */
			atomic_fetch_add(&c->unanswered, 1);
			triage_client_free(tc);
			tc = NULL;
		} else
			atomic_fetch_add(&c->refused, 1);
		tsupport_clock_sleep_ms(CHAOS_LOAD_EVERY_MS);
	}
	triage_client_free(tc);
	return NULL;
}

static bool
chaos_load_terminal(const char *state)
{
	return strcmp(state, "succeeded") == 0 || strcmp(state, "failed") ==
	    0 || strcmp(state, "timed_out") == 0 || strcmp(state, "canceled") ==
	    0 || strcmp(state, "lost") == 0;
}

static void *
chaos_load_waiter(void *arg)
{
	struct chaos_client *c = arg;
	struct triage_client *tc = NULL;
	struct triage_error e;
	const char *state;
	json_t *job;
	int64_t id;

	while (!atomic_load(&c->load->stop_waiting)) {
		if ((id = chaos_load_pop(c)) == 0) {
			tsupport_clock_sleep_ms(20);
			continue;
		}
		if (tc == NULL && (tc = chaos_load_connect(c->wait_sock,
		    &c->load->stop_waiting)) == NULL)
			break;
		job = triage_client_call(tc, "wait", json_pack("{sIsi}", "id",
		    (json_int_t)id, "timeout", CHAOS_LOAD_WAIT_S),
		    CHAOS_LOAD_CALL_MS, &e);
		state = json_string_value(json_object_get(job, "state"));
		if (job != NULL && state != NULL && chaos_load_terminal(state)) {
			c->outs = chaos_load_grow(c->outs, c->nouts,
			    &c->capouts, sizeof *c->outs);
			c->outs[c->nouts].id = id;
			c->outs[c->nouts].attempt = json_integer_value(
			    json_object_get(job, "attempt"));
			snprintf(c->outs[c->nouts++].state,
			    sizeof c->outs[0].state, "%s", state);
			atomic_fetch_add(&c->outcomes, 1);
		} else {
			/* Not over yet, unknown here yet (the NOTIFY of
			 * another node's submission on its way), or the
			 * node is away: later. */
			chaos_load_push(c, id);
			if (job == NULL && e.code == TRIAGE_ERR_TRANSPORT) {
				triage_client_free(tc);
				tc = NULL;
			} else if (job == NULL)
				tsupport_clock_sleep_ms(CHAOS_LOAD_RETRY_MS);
		}
		json_decref(job);
	}
	triage_client_free(tc);
	return NULL;
}

struct chaos_load *
chaos_load_start(const struct chaos_cluster *cc)
{
	struct chaos_load *load;
	struct chaos_client *c;
	unsigned i, next;

	if ((load = calloc(1, sizeof *load)) == NULL)
		abort();
	load->job = cc->job;
	load->ledger = cc->ledger;
	for (i = 0; i < CHAOS_NODES; i++) {
		c = &load->c[i];
		next = (i + 1) % CHAOS_NODES;
		c->load = load;
		c->i = i;
		c->seed = 1000 + i;
		snprintf(c->sock, sizeof c->sock, "%s", cc->cl->d[i]->sock);
		snprintf(c->wait_sock, sizeof c->wait_sock, "%s",
		    cc->cl->d[next]->sock);
		c->node[0] = (char)('a' + i);
		c->wait_node[0] = (char)('a' + next);
		pthread_mutex_init(&c->lock, NULL);
		if (pthread_create(&c->submitter, NULL, chaos_load_submitter,
		    c) != 0 || pthread_create(&c->waiter, NULL,
		    chaos_load_waiter, c) != 0)
			abort();
	}
	return load;
}

void
chaos_load_stop_submitting(struct chaos_load *load)
{
	unsigned i;

	atomic_store(&load->stop_submitting, true);
	for (i = 0; i < CHAOS_NODES; i++)
		pthread_join(load->c[i].submitter, NULL);
}

void
chaos_load_stop(struct chaos_load *load)
{
	unsigned i;

	atomic_store(&load->stop_waiting, true);
	for (i = 0; i < CHAOS_NODES; i++)
		pthread_join(load->c[i].waiter, NULL);
}

void
chaos_load_counts(struct chaos_load *load, struct chaos_load_counts *n)
{
	unsigned i;

	memset(n, 0, sizeof *n);
	for (i = 0; i < CHAOS_NODES; i++) {
		n->acked += atomic_load(&load->c[i].acked);
		n->refused += atomic_load(&load->c[i].refused);
		n->unanswered += atomic_load(&load->c[i].unanswered);
		n->outcomes += atomic_load(&load->c[i].outcomes);
	}
}

void
chaos_load_feed(const struct chaos_load *load, struct chaos_check *ck)
{
	const struct chaos_client *c;
	unsigned i;
	size_t k;

	for (i = 0; i < CHAOS_NODES; i++) {
		c = &load->c[i];
		for (k = 0; k < c->nsubs; k++)
			chaos_check_submitted(ck, c->subs[k].id, c->subs[k].ts,
			    c->node);
		for (k = 0; k < c->nouts; k++)
			chaos_check_outcome(ck, c->outs[k].id,
			    c->outs[k].state, c->outs[k].attempt,
			    c->wait_node);
	}
}

void
chaos_load_free(struct chaos_load *load)
{
	unsigned i;

	if (load == NULL)
		return;
	for (i = 0; i < CHAOS_NODES; i++) {
		free(load->c[i].subs);
		free(load->c[i].outs);
		pthread_mutex_destroy(&load->c[i].lock);
	}
	free(load);
}
