/* http-events.h - the dashboard's picture of the queue (/api/state) and
 * its live stream (/api/events): pushed when jobs change, never polled. */
#ifndef TRIAGED_HTTP_EVENTS_H
#define TRIAGED_HTTP_EVENTS_H

struct evhttp_request;
struct http_events;
struct jobs_event;
struct triaged;

/* NULL out of memory. */
struct http_events *http_events_new(struct triaged *td);
/* Ends every stream (the connections are evhttp's to close). */
void http_events_free(struct http_events *e);

/* GET /api/state: the picture, once. */
void http_events_state(struct http_events *e, struct evhttp_request *req);
/* GET /api/events: a text/event-stream of the picture, sent now and
 * after changes (coalesced to one every HTTP_EVENTS_PUSH_MS at most),
 * with a tick every second while jobs run. */
void http_events_subscribe(struct http_events *e,
    struct evhttp_request *req);

/* The listener of jobs.h (main.c adds it whether or not [http] is set):
 * keeps the running jobs and the recent ends, and schedules a push. */
void http_job_cb(struct triaged *td, const struct jobs_event *ev,
    void *arg);

#endif
