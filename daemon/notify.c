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

static bool notify_on;			/* NOTIFY_SOCKET is set */
static struct event *notify_status_ev;	/* a STATUS= held back */
static struct event *notify_watchdog_ev;
static uint64_t notify_last_ms;		/* when STATUS= was last sent */
static char notify_last[160];		/* what it said */

static void
notify_send(const char *state)
{
	int rc;

	if (notify_on && (rc = sd_notify(0, state)) < 0)
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
	char text[sizeof notify_last], msg[sizeof notify_last + 8];

	notify_status_text(td, text, sizeof text);
	if (strcmp(text, notify_last) == 0)
		return;
	snprintf(msg, sizeof msg, "STATUS=%s", text);
	notify_send(msg);
	memcpy(notify_last, text, sizeof notify_last);
	notify_last_ms = timefmt_mono_ms();
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
	struct timeval tv;
	uint64_t now, since;

	if (!notify_on || evtimer_pending(notify_status_ev, NULL))
		return;
	now = timefmt_mono_ms();
	since = now - notify_last_ms;
	if (since >= NOTIFY_STATUS_MS) {
		notify_status(td);
		return;
	}
	/* Once, a little later, with the figures as they are then. */
	tv = timefmt_tv(NOTIFY_STATUS_MS - since);
	evtimer_add(notify_status_ev, &tv);
}

static void
notify_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	notify_send("WATCHDOG=1");
}

int
notify_start(struct triaged *td)
{
	uint64_t usec = 0;
	struct timeval tv;

	notify_on = getenv("NOTIFY_SOCKET") != NULL;
	if (!notify_on)
		return 0;
	if ((notify_status_ev = evtimer_new(td->base, notify_status_cb, td))
	    == NULL)
		return -1;
	/* The watchdog's interval, when systemd asks for keep-alives: one
	 * every half of it, as sd_watchdog_enabled(3) advises. */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		tv = timefmt_tv(usec / 2000);
		notify_watchdog_ev = event_new(td->base, -1, EV_PERSIST,
		    notify_watchdog_cb, NULL);
		if (notify_watchdog_ev == NULL ||
		    event_add(notify_watchdog_ev, &tv) != 0)
			return -1;
		log_info("systemd watchdog: a keep-alive every %llu ms",
		    (unsigned long long)(usec / 2000));
	}
	return 0;
}

void
notify_stop(void)
{
	if (notify_status_ev != NULL)
		event_free(notify_status_ev);
	if (notify_watchdog_ev != NULL)
		event_free(notify_watchdog_ev);
	notify_status_ev = notify_watchdog_ev = NULL;
}

void
notify_ready(struct triaged *td)
{
	notify_send("READY=1");
	notify_last[0] = '\0';
	notify_status(td);
}

void
notify_reloading(void)
{
	char msg[64];

	snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)timefmt_mono_us());
	notify_send(msg);
}

void
notify_stopping(void)
{
	notify_send("STOPPING=1");
}
