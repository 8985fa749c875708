/* bench-load.c - the benchmark's two ways of submitting jobs to triaged:
 * pipelined on one connection, or one at a time on many connections. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bench-load.h"
#include "client.h"

/* A reply slower than this means the daemon is stuck, not slow: even one
 * fsync per job on a busy disk takes far less. */
#define BENCH_LOAD_REPLY_MS 120000

static double
bench_load_now(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC cannot fail with a valid clock id and pointer. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Keeps the first error of a load: the later ones tend to repeat it. */
static void
bench_load_error(struct bench_load_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
bench_load_error(struct bench_load_result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof r->error, fmt, ap);
	va_end(ap);
}

/*
 * The request of every submission as a client that submits many would send
 * it: a line made once, its id the only change. params is its params' JSON
 * text. Returns the line's length (it fits in the room
 * bench_load_request_max gives).
 */
static size_t
bench_load_request(char *buf, size_t size, uint64_t id, const char *params)
{
	return (size_t)snprintf(buf, size, "{\"jsonrpc\":\"2.0\",\"id\":%"
	    PRIu64 ",\"method\":\"submit\",\"params\":%s}\n", id, params);
}

/* Room for one request line around params: the rest is short. */
static size_t
bench_load_request_max(const char *params)
{
	return strlen(params) + 96;
}

/* The cheapest job there is. The daemon still validates it and fills in
 * the defaults (cwd, env, name). */
#define BENCH_LOAD_PARAMS "{\"argv\":[\"true\"]}"

/* Counts one reply: a job still queued is a success; a job already running
 * means the pause did not hold, which the caller reports. */
static void
bench_load_count(struct bench_load_result *r, json_t *job)
{
	const json_t *id = json_object_get(job, "id");
	const char *state = json_string_value(json_object_get(job, "state"));

	if (!json_is_integer(id) || json_integer_value(id) <= 0 ||
	    state == NULL) {
		r->errors++;
		bench_load_error(r, "submit replied with something other than "
		    "a job");
		return;
	}
	r->ok++;
	if (strcmp(state, "queued") != 0)
		r->not_queued++;
}

static void
bench_load_failed(struct bench_load_result *r, const struct triage_error *e)
{
	r->errors++;
	if (e->code == TRIAGE_ERR_TRANSPORT)
		bench_load_error(r, "%s", e->message);
	else
		bench_load_error(r, "submit: error %d: %s", e->code,
		    e->message);
}

static void
bench_load_lost(struct bench_load_result *r, struct triage_error *e,
    const char *what)
{
	e->code = TRIAGE_ERR_TRANSPORT;
	snprintf(e->message, sizeof e->message, "%s: %s", what,
	    strerror(errno));
	bench_load_failed(r, e);
}

int
bench_load_pipelined(const char *path, uint64_t n, unsigned window,
    struct bench_load_result *r)
{
	return bench_load_pipelined_params(path, n, window, NULL, r);
}

int
bench_load_pipelined_params(const char *path, uint64_t n, unsigned window,
    const json_t *each, struct bench_load_result *r)
{
	struct triage_error e;
	struct triage_client *c;
	uint64_t sent = 0, received = 0;
	char *cause = NULL, *batch = NULL, *params;
	size_t len, reqmax;
	json_t *res;
	int64_t id;
	int timeout;
	double t0;

	memset(r, 0, sizeof *r);
	r->jobs = n;
	params = each != NULL ? json_dumps(each, JSON_COMPACT) :
	    strdup(BENCH_LOAD_PARAMS);
	if (params == NULL || (batch = malloc((size_t)window *
	    (reqmax = bench_load_request_max(params)))) == NULL) {
		bench_load_error(r, "out of memory");
		free(params);
		return -1;
	}
	if ((c = triage_client_connect(path, &cause)) == NULL) {
		bench_load_error(r, "%s", cause ? cause : "out of memory");
		free(cause);
		free(batch);
		free(params);
		return -1;
	}
	t0 = bench_load_now();
	while (received < n) {
		/* The window bounds what is in flight, so that neither the
		 * sockets nor the daemon's buffers grow with n; what it
		 * allows goes in one write. */
		for (len = 0; sent < n && sent - received < window; sent++)
			len += bench_load_request(batch + len, reqmax,
			    sent + 1, params);
		if (len > 0 && client_send_raw(c, batch, len) == -1) {
			bench_load_lost(r, &e, "cannot send");
			goto lost;
		}
		/* One reply at least, then those already in, before the
		 * next write. */
		for (timeout = BENCH_LOAD_REPLY_MS; received < sent;
		    timeout = 0) {
			res = triage_client_recv(c, &id, timeout, &e);
			if (res == NULL && e.code == TRIAGE_ERR_TRANSPORT) {
				if (timeout == 0 && errno == ETIMEDOUT)
					break;
				bench_load_failed(r, &e);
				goto lost;
			}
			received++;
			if (res == NULL)
				bench_load_failed(r, &e);
			else
				bench_load_count(r, res);
			json_decref(res);
		}
	}
	r->seconds = bench_load_now() - t0;
	triage_client_free(c);
	free(batch);
	free(params);
	return 0;

lost:
	/* Nothing more will come on this connection: whatever has no reply
	 * failed, including what was never sent. */
	r->seconds = bench_load_now() - t0;
	r->errors += n - received - 1;
	triage_client_free(c);
	free(batch);
	free(params);
	return 0;
}

/* All connections start at once: go turns 1 to run, -1 to give up. */
struct bench_load_start {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go;
};

/* One connection of bench_load_parallel(), in its own thread. */
struct bench_load_worker {
	pthread_t thread;
	struct triage_client *c;
	uint64_t n;
	struct bench_load_start *start;
	struct bench_load_result r;
};

static void *
bench_load_worker_cb(void *arg)
{
	struct bench_load_worker *w = arg;
	char line[128];
	struct triage_error e;
	json_t *res;
	int64_t id;
	uint64_t i;
	size_t len;
	int go;

	pthread_mutex_lock(&w->start->lock);
	while ((go = w->start->go) == 0)
		pthread_cond_wait(&w->start->cond, &w->start->lock);
	pthread_mutex_unlock(&w->start->lock);
	if (go < 0)
		return NULL;

	for (i = 0; i < w->n; i++) {
		len = bench_load_request(line, sizeof line, i + 1,
		    BENCH_LOAD_PARAMS);
		if (client_send_raw(w->c, line, len) == -1) {
			bench_load_lost(&w->r, &e, "cannot send");
			w->r.errors += w->n - i - 1;
			break;
		}
		res = triage_client_recv(w->c, &id, BENCH_LOAD_REPLY_MS, &e);
		if (res != NULL) {
			bench_load_count(&w->r, res);
			json_decref(res);
			continue;
		}
		bench_load_failed(&w->r, &e);
		if (e.code == TRIAGE_ERR_TRANSPORT) {
			/* The connection is gone: the rest fail too. */
			w->r.errors += w->n - i - 1;
			break;
		}
	}
	return NULL;
}

/* Adds w's counts to r; r keeps the first error found. */
static void
bench_load_merge(struct bench_load_result *r,
    const struct bench_load_worker *w)
{
	r->ok += w->r.ok;
	r->errors += w->r.errors;
	r->not_queued += w->r.not_queued;
	if (w->r.error[0] != '\0')
		bench_load_error(r, "%s", w->r.error);
}

int
bench_load_parallel(const char *path, uint64_t n, unsigned nconn,
    struct bench_load_result *r)
{
	struct bench_load_start start = {
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0
	};
	struct bench_load_worker *w;
	char *cause = NULL;
	unsigned i, made = 0;
	int rc = 0, err;
	double t0;

	memset(r, 0, sizeof *r);
	r->jobs = n;
	if (nconn == 0 || (w = calloc(nconn, sizeof *w)) == NULL) {
		bench_load_error(r, "cannot start %u connections", nconn);
		return -1;
	}
	/* Connected before the clock starts: a client connects once and
	 * submits many times. */
	for (i = 0; i < nconn; i++) {
		w[i].n = n / nconn + (i < n % nconn ? 1 : 0);
		w[i].start = &start;
		if ((w[i].c = triage_client_connect(path, &cause)) == NULL) {
			bench_load_error(r, "%s", cause ? cause :
			    "out of memory");
			free(cause);
			rc = -1;
			goto out;
		}
	}
	for (made = 0; made < nconn; made++) {
		if ((err = pthread_create(&w[made].thread, NULL,
		    bench_load_worker_cb, &w[made])) != 0) {
			bench_load_error(r, "cannot start a thread: %s",
			    strerror(err));
			rc = -1;
			break;
		}
	}

	pthread_mutex_lock(&start.lock);
	start.go = rc == 0 ? 1 : -1;
	t0 = bench_load_now();
	pthread_cond_broadcast(&start.cond);
	pthread_mutex_unlock(&start.lock);
	for (i = 0; i < made; i++) {
		if ((err = pthread_join(w[i].thread, NULL)) != 0) {
			bench_load_error(r, "pthread_join: %s", strerror(err));
			rc = -1;
		}
	}
	r->seconds = bench_load_now() - t0;
	if (rc == 0) {
		for (i = 0; i < nconn; i++)
			bench_load_merge(r, &w[i]);
	}

out:
	for (i = 0; i < nconn; i++)
		triage_client_free(w[i].c);
	free(w);
	return rc;
}
