/* load-clients.c - the clients of make test-load, each kind a thread over
 * many connections: submitters, waiters, and the stats sampler. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "triage/client.h"
#include "harness.h"
#include "load-clients.h"
#include "tsupport-clock.h"

/* A wait's own timeout, seconds: a reply with the job not yet terminal
 * then comes, and the wait is issued again, so that no call of the
 * client library blocks for long whatever the daemon does. */
#define LOAD_WAIT_TIMEOUT_S 30
/* How long a thread with nothing to do sleeps in poll before it looks for
 * new ids or the end. */
#define LOAD_IDLE_MS 20

void
load_error(struct load *load, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&load->lock);
	if (atomic_fetch_add(&load->errors, 1) == 0) {
		va_start(ap, fmt);
		vsnprintf(load->error, sizeof load->error, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&load->lock);
}

/* True once recv says nothing more is there now (ETIMEDOUT at 0 ms). */
static bool
load_drained(const struct triage_error *e)
{
	return e->code == TRIAGE_ERR_TRANSPORT && errno == ETIMEDOUT;
}

static void
load_add_id(struct load *load, int64_t id)
{
	pthread_mutex_lock(&load->lock);
	load->ids[load->nids++] = id;
	pthread_mutex_unlock(&load->lock);
}

/* The next id to wait on, or 0 when none is there yet. */
static int64_t
load_take_id(struct load *load)
{
	int64_t id = 0;

	pthread_mutex_lock(&load->lock);
	if (load->next_wait < load->nids)
		id = load->ids[load->next_wait++];
	pthread_mutex_unlock(&load->lock);
	return id;
}

void *
load_submitter_main(void *arg)
{
	struct load_share *sh = arg;
	struct load *load = sh->load;
	struct pollfd *pfd = calloc((size_t)sh->n, sizeof *pfd);
	int *out = calloc((size_t)sh->n, sizeof *out), i, busy;
	struct triage_error e;
	int64_t id;
	json_t *res;

	if (pfd == NULL || out == NULL) {
		load_error(load, "submitter: out of memory");
		goto done;
	}
	while (!atomic_load(&load->stop)) {
		busy = 0;
		for (i = 0; i < sh->n; i++) {
			while (out[i] < LOAD_WINDOW &&
			    atomic_fetch_add(&load->claimed, 1) <
			    load->njobs) {
				if (triage_client_send(sh->c[i], "submit",
				    json_pack("{s[s]}", "argv", "/bin/true"),
				    &e) < 0) {
					load_error(load, "submit: %s",
					    e.message);
					goto done;
				}
				out[i]++;
			}
			pfd[i].fd = out[i] > 0 ?
			    triage_client_fd(sh->c[i]) : -1;
			pfd[i].events = POLLIN;
			busy += out[i] > 0;
		}
		if (busy == 0)
			break;	/* every submission answered */
		if (poll(pfd, (nfds_t)sh->n, LOAD_IDLE_MS) < 0 &&
		    errno != EINTR) {
			load_error(load, "poll: %s", strerror(errno));
			break;
		}
		for (i = 0; i < sh->n; i++) {
			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			while ((res = triage_client_recv(sh->c[i], &id, 0, &e))
			    != NULL) {
				out[i]--;
				id = json_integer_value(json_object_get(res,
				    "id"));
				json_decref(res);
				if (id <= 0) {
					load_error(load, "submit: no id");
					goto done;
				}
				load_add_id(load, id);
				atomic_fetch_add(&load->submitted, 1);
			}
			if (!load_drained(&e)) {
				load_error(load, "submit: %s", e.message);
				goto done;
			}
		}
	}
done:
	free(pfd);
	free(out);
	return NULL;
}

static int
load_send_wait(struct load *load, struct triage_client *c, int64_t id)
{
	struct triage_error e;

	if (triage_client_send(c, "wait", json_pack("{sIsi}", "id",
	    (json_int_t)id, "timeout", LOAD_WAIT_TIMEOUT_S), &e) < 0) {
		load_error(load, "wait %lld: %s", (long long)id, e.message);
		return -1;
	}
	return 0;
}

/* A wait's reply: 1 when the job is terminal (and counted), 0 when not
 * yet, -1 on an error. */
static int
load_waited(struct load *load, int64_t id, json_t *job)
{
	const char *state = json_string_value(json_object_get(job, "state"));

	if (state == NULL) {
		load_error(load, "wait %lld: no state", (long long)id);
		return -1;
	}
	if (strcmp(state, "queued") == 0 || strcmp(state, "running") == 0)
		return 0;
	if (strcmp(state, "succeeded") != 0) {
		load_error(load, "job %lld ended %s", (long long)id, state);
		return -1;
	}
	atomic_fetch_add(&load->succeeded, 1);
	return 1;
}

void *
load_waiter_main(void *arg)
{
	struct load_share *sh = arg;
	struct load *load = sh->load;
	struct pollfd *pfd = calloc((size_t)sh->n, sizeof *pfd);
	int64_t *waiting = calloc((size_t)sh->n, sizeof *waiting), got;
	struct triage_error e;
	json_t *res;
	int i, rc;

	if (pfd == NULL || waiting == NULL) {
		load_error(load, "waiter: out of memory");
		goto done;
	}
	while (!atomic_load(&load->stop) &&
	    atomic_load(&load->succeeded) < load->njobs) {
		for (i = 0; i < sh->n; i++) {
			if (waiting[i] == 0 &&
			    (waiting[i] = load_take_id(load)) != 0 &&
			    load_send_wait(load, sh->c[i], waiting[i]) != 0)
				goto done;
			pfd[i].fd = waiting[i] != 0 ?
			    triage_client_fd(sh->c[i]) : -1;
			pfd[i].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)sh->n, LOAD_IDLE_MS) < 0 &&
		    errno != EINTR) {
			load_error(load, "poll: %s", strerror(errno));
			break;
		}
		for (i = 0; i < sh->n; i++) {
			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			while ((res = triage_client_recv(sh->c[i], &got, 0, &e))
			    != NULL) {
				rc = load_waited(load, waiting[i], res);
				json_decref(res);
				if (rc < 0)
					goto done;
				if (rc == 0 && load_send_wait(load, sh->c[i],
				    waiting[i]) != 0)
					goto done;
				if (rc == 1)
					waiting[i] = 0;
			}
			if (!load_drained(&e)) {
				load_error(load, "wait %lld: %s",
				    (long long)waiting[i], e.message);
				goto done;
			}
		}
	}
done:
	free(pfd);
	free(waiting);
	return NULL;
}

void *
load_sampler_main(void *arg)
{
	struct load_share *sh = arg;
	struct load *load = sh->load;
	struct timespec pace = { 0, LOAD_SAMPLE_MS * 1000000L };
	struct triage_error e;
	json_t *res;
	double t;

	while (!atomic_load(&load->stop) && load->nlat < load->maxlat) {
		t = tsupport_clock_ms_f();
		if ((res = triage_client_call(sh->c[0], "stats", NULL, 10000,
		    &e)) == NULL) {
			load_error(load, "stats: %s", e.message);
			break;
		}
		json_decref(res);
		load->lat[load->nlat++] = tsupport_clock_ms_f() - t;
		nanosleep(&pace, NULL);
	}
	return NULL;
}
