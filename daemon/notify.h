/* notify.h - what systemd hears of the daemon (sd_notify): ready, its queue
 * figures, reloading, stopping, and the watchdog's keep-alives. */
#ifndef TRIAGED_NOTIFY_H
#define TRIAGED_NOTIFY_H

struct jobs_event;
struct triaged;

/*
 * What systemd is told, into td->notify, and the watchdog's keep-alives
 * when systemd asks for them (WatchdogSec=). Does nothing outside
 * systemd (no NOTIFY_SOCKET): td->notify stays NULL, and so does every
 * other function here. 0, or -1 out of memory. notify_stop frees it.
 */
int notify_start(struct triaged *td);
void notify_stop(struct triaged *td);

/* READY=1 and the first STATUS=: listening, and the jobs recovered. */
void notify_ready(struct triaged *td);
/* RELOADING=1 with MONOTONIC_USEC=, before a reload; notify_ready after. */
void notify_reloading(const struct triaged *td);
/* STOPPING=1: the stop has begun. */
void notify_stopping(const struct triaged *td);

/* STATUS= with the queue figures, at most once a second and only when
 * they changed; no timer runs while nothing does. */
void notify_changed(struct triaged *td);
/* The listener of jobs.h: notify_changed on every change of a job. */
void notify_job_cb(struct triaged *td, const struct jobs_event *ev,
    void *arg);

#endif
