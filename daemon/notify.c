/* notify.c - what systemd hears of the daemon (sd_notify): ready, its queue
 * figures, reloading, stopping, and the watchdog's keep-alives. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "job.h"
#include "jobs.h"
#include "log.h"
#include "notify.h"
#include "psem.h"
#include "timefmt.h"
#include "triaged.h"

/* STATUS= at most this often, so that a busy queue costs systemd little. */
#define NOTIFY_STATUS_MS 1000

/* td->notify: NULL outside systemd (no NOTIFY_SOCKET). */
struct notify {
	struct event *status_ev;	/* a STATUS= held back */
	struct event *watchdog_ev;	/* NULL: no WatchdogSec= */
	uint64_t last_ms;		/* when STATUS= was last sent */
	char last[160];			/* what it said */
};

static void
notify_send(const struct triaged *td, const char *state)
{
	int rc;

	if (td->notify != NULL && (rc = sd_notify(0, state)) < 0)
		log_warnx("sd_notify %s: %s", state, strerror(-rc));
}

/* "3 queued, 2 running, 2 of 4 slots busy"; "paused: low" when any is. */
static void
notify_status_text(struct triaged *td, char *buf, size_t size)
{
	struct psem_prio_stats st;
	size_t len;
	unsigned i;
	bool any = false;

	len = (size_t)snprintf(buf, size, "%u queued, %u running, %u of %u "
	    "slots busy", jobs_count(td, -1, JOB_QUEUED),
	    jobs_count(td, -1, JOB_RUNNING),
	    psem_permits(td->sem) - psem_available(td->sem),
	    psem_permits(td->sem));
	for (i = 0; i < psem_priorities(td->sem) && len < size; i++) {
		if (psem_prio_stats(td->sem, i, &st) != 0 || !st.paused)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
		    any ? ", " : "; paused: ", td->cfg->priorities[i].name);
		any = true;
	}
}

static void
notify_status(struct triaged *td)
{
	struct notify *n = td->notify;
	char text[sizeof n->last], msg[sizeof n->last + 8];

	notify_status_text(td, text, sizeof text);
	if (strcmp(text, n->last) == 0)
		return;
	snprintf(msg, sizeof msg, "STATUS=%s", text);
	notify_send(td, msg);
	memcpy(n->last, text, sizeof n->last);
	n->last_ms = timefmt_mono_ms();
}

static void
notify_status_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	notify_status(arg);
}

void
notify_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	(void)ev;
	(void)arg;
	notify_changed(td);
}

void
notify_changed(struct triaged *td)
{
	struct notify *n = td->notify;
	struct timeval tv;
	uint64_t now, since;

	if (n == NULL || evtimer_pending(n->status_ev, NULL))
		return;
	now = timefmt_mono_ms();
	since = now - n->last_ms;
	if (since >= NOTIFY_STATUS_MS) {
		notify_status(td);
		return;
	}
	/* Once, a little later, with the figures as they are then. */
	tv = timefmt_tv(NOTIFY_STATUS_MS - since);
	evtimer_add(n->status_ev, &tv);
}

static void
notify_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	notify_send(arg, "WATCHDOG=1");
}

int
notify_start(struct triaged *td)
{
	uint64_t usec = 0;
	struct timeval tv;
	struct notify *n;

	if (getenv("NOTIFY_SOCKET") == NULL)
		return 0;
	if ((n = calloc(1, sizeof *n)) == NULL)
		return -1;
	td->notify = n;
	if ((n->status_ev = evtimer_new(td->base, notify_status_cb, td))
	    == NULL)
		return -1;
	/* The watchdog's interval, when systemd asks for keep-alives: one
	 * every half of it, as sd_watchdog_enabled(3) advises. */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		tv = timefmt_tv(usec / 2000);
		n->watchdog_ev = event_new(td->base, -1, EV_PERSIST,
		    notify_watchdog_cb, td);
		if (n->watchdog_ev == NULL ||
		    event_add(n->watchdog_ev, &tv) != 0)
			return -1;
		log_info("systemd watchdog: a keep-alive every %llu ms",
		    (unsigned long long)(usec / 2000));
	}
	return 0;
}

void
notify_stop(struct triaged *td)
{
	struct notify *n = td->notify;

	if (n == NULL)
		return;
	if (n->status_ev != NULL)
		event_free(n->status_ev);
	if (n->watchdog_ev != NULL)
		event_free(n->watchdog_ev);
	free(n);
	td->notify = NULL;
}

void
notify_ready(struct triaged *td)
{
	if (td->notify == NULL)
		return;
	notify_send(td, "READY=1");
	td->notify->last[0] = '\0';
	notify_status(td);
}

void
notify_reloading(const struct triaged *td)
{
	char msg[64];

	snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)timefmt_mono_us());
	notify_send(td, msg);
}

void
notify_stopping(const struct triaged *td)
{
	notify_send(td, "STOPPING=1");
}
