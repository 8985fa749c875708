/* http-events.c - the state the dashboard shows (stats, running jobs, the
 * head of each queue, recent ends) and the Server-Sent Events that push it. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "http-events.h"
#include "http-private.h"
#include "jobs.h"
#include "log.h"
#include "method.h"
#include "psem.h"
#include "series.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"

/* At most one push per this long, whatever the rate of changes. */
#define HTTP_EVENTS_PUSH_MS 500
/* The head of each queue the page shows, and the ends it remembers. */
#define HTTP_EVENTS_QUEUED 10
#define HTTP_EVENTS_RECENT 20

struct http_sub {
	TAILQ_ENTRY(http_sub) entry;
	struct http_events *e;
	struct evhttp_request *req;
	bool writing;		/* a chunk is on its way */
	bool stale;		/* a newer state came meanwhile */
};
TAILQ_HEAD(http_subs, http_sub);

struct http_events {
	struct triaged *td;
	uint64_t *running;		/* ids, in the order they started */
	size_t nrunning, running_size;
	uint64_t recent[HTTP_EVENTS_RECENT];	/* newest first; 0: none */
	struct http_subs subs;
	struct event *push_ev;
	struct event *tick_ev;
	uint64_t last_push_ms;
	char *text;			/* the last state pushed, as JSON */
};

struct http_events *
http_events_new(struct triaged *td)
{
	struct http_events *e;

	if ((e = calloc(1, sizeof *e)) == NULL)
		return NULL;
	e->td = td;
	TAILQ_INIT(&e->subs);
	return e;
}

static void http_events_push_cb(evutil_socket_t fd, short what, void *arg);
static void http_events_tick_cb(evutil_socket_t fd, short what, void *arg);

void
http_events_free(struct http_events *e)
{
	struct http_sub *s;

	if (e == NULL)
		return;
	while ((s = TAILQ_FIRST(&e->subs)) != NULL) {
		TAILQ_REMOVE(&e->subs, s, entry);
		free(s);
	}
	if (e->push_ev != NULL)
		event_free(e->push_ev);
	if (e->tick_ev != NULL)
		event_free(e->tick_ev);
	free(e->running);
	free(e->text);
	free(e);
}

static const struct job *
http_events_job_of(const struct psem_waiter *w)
{
	return (const struct job *)((const char *)w -
	    offsetof(struct job, waiter));
}

static int
http_events_add_job(struct http_events *e, json_t *array, uint64_t id)
{
	struct job *job = store_get(e->td->store, id);

	if (job == NULL)
		return 0;	/* pruned or removed since */
	return json_array_append_new(array, jobs_json(e->td, job));
}

/* The first jobs of each priority's queue, in the order they will go. */
static json_t *
http_events_queued(struct http_events *e)
{
	const struct config *cfg = e->td->cfg;
	const struct psem_waiter *w;
	json_t *queued, *lane;
	unsigned i, n;

	if ((queued = json_object()) == NULL)
		return NULL;
	for (i = 0; i < cfg->npriorities; i++) {
		if ((lane = json_array()) == NULL ||
		    json_object_set_new(queued, cfg->priorities[i].name,
		    lane) != 0)
			goto fail;
		for (w = psem_first(e->td->sem, i), n = 0;
		    w != NULL && n < HTTP_EVENTS_QUEUED; w = psem_next(w), n++)
			if (json_array_append_new(lane, jobs_json(e->td,
			    http_events_job_of(w))) != 0)
				goto fail;
	}
	return queued;
fail:
	json_decref(queued);
	return NULL;
}

static json_t *
http_events_build(struct http_events *e)
{
	json_t *state, *running, *recent;
	char now[TIMEFMT_RFC3339_LEN];
	const uint64_t *starting;
	size_t i, nstarting;

	timefmt_rfc3339(timefmt_now(), now);
	running = json_array();
	recent = json_array();
	state = json_pack("{s:o,s:o,s:o,s:o,s:o,s:s}", "stats",
	    method_stats_result(e->td), "running", running, "queued",
	    http_events_queued(e), "recent", recent, "series",
	    series_json(e->td), "now", now);
	if (state == NULL)
		return NULL;
	for (i = 0; i < e->nrunning; i++)
		if (http_events_add_job(e, running, e->running[i]) != 0)
			goto fail;
	/* Then those that have their slots and are starting (still queued,
	 * position 0): what the busy slots hold besides the running. */
	nstarting = jobs_starting(e->td, &starting);
	for (i = 0; i < nstarting; i++)
		if (http_events_add_job(e, running, starting[i]) != 0)
			goto fail;
	for (i = 0; i < HTTP_EVENTS_RECENT && e->recent[i] != 0; i++)
		if (http_events_add_job(e, recent, e->recent[i]) != 0)
			goto fail;
	return state;
fail:
	json_decref(state);
	return NULL;
}

void
http_events_state(struct http_events *e, struct evhttp_request *req)
{
	json_t *state = http_events_build(e);

	if (state == NULL) {
		http_error(req, 500, 0, "out of memory");
		return;
	}
	http_reply_json(req, state);
}

static void http_sub_send(struct http_sub *s, const char *event,
    const char *data);

/* A chunk has left: a state that came meanwhile follows it. */
static void
http_sub_sent_cb(struct evhttp_connection *evcon, void *arg)
{
	struct http_sub *s = arg;

	(void)evcon;
	s->writing = false;
	if (s->stale && s->e->text != NULL) {
		s->stale = false;
		http_sub_send(s, "state", s->e->text);
	}
}

static void
http_sub_send(struct http_sub *s, const char *event, const char *data)
{
	struct evbuffer *buf;

	if (s->writing) {
		if (strcmp(event, "state") == 0)
			s->stale = true;
		return;	/* a tick is dropped: the next one will do */
	}
	if ((buf = evbuffer_new()) == NULL)
		return;
	if (evbuffer_add_printf(buf, "event: %s\ndata: %s\n\n", event,
	    data) < 0) {
		evbuffer_free(buf);
		return;
	}
	s->writing = true;
	evhttp_send_reply_chunk_with_cb(s->req, buf, http_sub_sent_cb, s);
	evbuffer_free(buf);
}

/* Ticks run while someone watches and something runs, never else. */
static void
http_events_tick_update(struct http_events *e)
{
	static const struct timeval second = { 1, 0 };
	bool want = e->nrunning > 0 && !TAILQ_EMPTY(&e->subs);

	if (e->tick_ev == NULL) {
		if (!want)
			return;
		e->tick_ev = event_new(e->td->base, -1, EV_PERSIST,
		    http_events_tick_cb, e);
		if (e->tick_ev == NULL)
			return;
	}
	if (want && !evtimer_pending(e->tick_ev, NULL))
		evtimer_add(e->tick_ev, &second);
	else if (!want)
		evtimer_del(e->tick_ev);
}

static void
http_events_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_events *e = arg;
	struct http_sub *s;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(s, &e->subs, entry)
		http_sub_send(s, "tick", "{}");
}

/* Builds the state once and sends it to every stream. */
static void
http_events_push(struct http_events *e)
{
	struct http_sub *s;
	json_t *state;
	char *text;

	e->last_push_ms = timefmt_mono_ms();
	if ((state = http_events_build(e)) == NULL ||
	    (text = json_dumps(state, JSON_COMPACT)) == NULL) {
		json_decref(state);
		log_warnx("http: out of memory for the dashboard's state");
		return;
	}
	json_decref(state);
	free(e->text);
	e->text = text;
	TAILQ_FOREACH(s, &e->subs, entry)
		http_sub_send(s, "state", text);
}

static void
http_events_push_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	http_events_push(arg);
}

/* Something changed: a push now, or when HTTP_EVENTS_PUSH_MS have passed
 * since the last one. */
static void
http_events_changed(struct http_events *e)
{
	uint64_t since = timefmt_mono_ms() - e->last_push_ms, wait_ms;
	struct timeval tv;

	if (TAILQ_EMPTY(&e->subs))
		return;
	if (e->push_ev == NULL && (e->push_ev = evtimer_new(e->td->base,
	    http_events_push_cb, e)) == NULL)
		return;
	if (evtimer_pending(e->push_ev, NULL))
		return;
	wait_ms = since >= HTTP_EVENTS_PUSH_MS ? 0 : HTTP_EVENTS_PUSH_MS -
	    since;
	tv = timefmt_tv(wait_ms);
	evtimer_add(e->push_ev, &tv);
}

static void
http_sub_gone_cb(void *arg)
{
	struct http_sub *s = arg;
	struct http_events *e = s->e;

	http_request_orphaned(s->req);
	TAILQ_REMOVE(&e->subs, s, entry);
	free(s);
	http_events_tick_update(e);
}

void
http_events_subscribe(struct http_events *e, struct evhttp_request *req)
{
	const struct config_http *c = &e->td->cfg->http;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	struct timeval tv = timefmt_tv(c->timeout_ms);
	struct http_sub *s;
	json_t *state;

	if (evcon == NULL || (s = calloc(1, sizeof *s)) == NULL) {
		http_error(req, 500, 0, "out of memory");
		return;
	}
	if ((state = http_events_build(e)) == NULL ||
	    (free(e->text), e->text = json_dumps(state, JSON_COMPACT)) ==
	    NULL) {
		json_decref(state);
		free(s);
		http_error(req, 500, 0, "out of memory");
		return;
	}
	json_decref(state);
	s->e = e;
	s->req = req;
	http_common_headers(req);
	evhttp_add_header(out, "Content-Type", "text/event-stream");
	evhttp_add_header(out, "X-Accel-Buffering", "no");
	evhttp_send_reply_start(req, 200, "OK");
	/* The client sends nothing more: only a reader too slow to take
	 * what is sent times out. */
	bufferevent_set_timeouts(evhttp_connection_get_bufferevent(evcon),
	    NULL, &tv);
	http_conn_watch(e->td->http, req, http_sub_gone_cb, s);
	TAILQ_INSERT_TAIL(&e->subs, s, entry);
	http_sub_send(s, "state", e->text);
	http_events_tick_update(e);
}

static void
http_events_running(struct http_events *e, uint64_t id, bool runs)
{
	uint64_t *grown;
	size_t i, size;

	for (i = 0; i < e->nrunning; i++)
		if (e->running[i] == id)
			break;
	if (!runs) {
		if (i < e->nrunning)
			memmove(&e->running[i], &e->running[i + 1],
			    (--e->nrunning - i) * sizeof *e->running);
		return;
	}
	if (i < e->nrunning)
		return;
	if (e->nrunning == e->running_size) {
		size = e->running_size == 0 ? 16 : e->running_size * 2;
		if ((grown = reallocarray(e->running, size,
		    sizeof *grown)) == NULL)
			return;	/* the page misses it; nothing else does */
		e->running = grown;
		e->running_size = size;
	}
	e->running[e->nrunning++] = id;
}

static void
http_events_ended(struct http_events *e, uint64_t id)
{
	size_t i;

	for (i = 0; i < HTTP_EVENTS_RECENT - 1; i++)
		if (e->recent[i] == id)
			break;
	memmove(&e->recent[1], &e->recent[0], i * sizeof *e->recent);
	e->recent[0] = id;
}

void
http_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	struct http_events *e;
	enum job_state to = ev->view->state;

	(void)arg;
	if (td->http == NULL || (e = td->http->events) == NULL)
		return;
	if (ev->change == NULL && (to == JOB_RUNNING) !=
	    (ev->from == JOB_RUNNING))
		http_events_running(e, ev->view->id, to == JOB_RUNNING);
	if (ev->change == NULL && job_state_terminal(to))
		http_events_ended(e, ev->view->id);
	http_events_changed(e);
	http_events_tick_update(e);
}
