/* shutdown.c - stopping on SIGTERM or SIGINT as the `shutdown` key says:
 * requeue, drain or finish; a second signal stops at once. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "config.h"
#include "jobs.h"
#include "log.h"
#include "psem.h"
#include "run.h"
#include "server.h"
#include "shutdown.h"
#include "store.h"
#include "triaged.h"

static const char *
shutdown_mode_name(enum config_shutdown mode)
{
	switch (mode) {
	case CONFIG_SHUTDOWN_DRAIN:
		return "drain";
	case CONFIG_SHUTDOWN_FINISH:
		return "finish";
	default:
		return "requeue";
	}
}

/*
 * Submissions still on their way to disk are written first, so that their
 * clients hear how they went; then every client gets its last replies and
 * the loop ends.
 */
static void
shutdown_exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct triaged *td = arg;
	char *cause = NULL;

	(void)fd;
	(void)what;
	if (store_flush(td->store, &cause) != 0) {
		log_err("the last changes could not be stored: %s", cause);
		free(cause);
	}
	server_drain(td->server);
}

/* From the loop, not from inside whatever callback decided it: that one
 * may be answering a batch of clients that must all hear back. */
static void
shutdown_exit(struct triaged *td)
{
	static const struct timeval now = { 0, 0 };

	if (td->exiting)
		return;
	td->exiting = true;
	if (event_base_once(td->base, -1, EV_TIMEOUT, shutdown_exit_cb, td,
	    &now) != 0)
		shutdown_exit_cb(-1, 0, td);
}

/* Submissions staged in the store, not yet queued. */
static unsigned
shutdown_staged(const struct triaged *td)
{
	unsigned i, n = 0;

	for (i = 0; i < td->cfg->npriorities; i++)
		n += td->prio_staged[i];
	return n;
}

void
shutdown_begin(struct triaged *td, int signo)
{
	enum config_shutdown mode = td->cfg->shutdown;
	struct psem_prio_stats st;
	struct job *job;
	uint64_t id = 0;
	unsigned i;

	if (td->stopping_signals++ > 0) {
		log_notice("SIG%s again: stopping now", sigabbrev_np(signo));
		shutdown_exit(td);
		return;
	}
	td->phase = TRIAGED_STOPPING;
	log_notice("SIG%s: stopping (shutdown = %s); submissions are refused",
	    sigabbrev_np(signo), shutdown_mode_name(mode));
	/* Clients keep their connections to hear how their jobs end; only
	 * new ones are refused from now on. */
	server_stop_accepting(td->server);
	if (mode != CONFIG_SHUTDOWN_DRAIN)
		for (i = 0; i < psem_priorities(td->sem); i++)
			psem_pause(td->sem, i);
	else
		for (i = 0; i < psem_priorities(td->sem); i++) {
			psem_prio_stats(td->sem, i, &st);
			if (st.paused && st.queued > 0)
				log_notice("priority %s is paused with %u jobs "
				    "queued: draining waits until it is resumed "
				    "(or a second signal)",
				    td->cfg->priorities[i].name, st.queued);
		}
	if (mode == CONFIG_SHUTDOWN_REQUEUE)
		while ((job = store_next(td->store, id)) != NULL) {
			id = job->id;
			if (job->state == JOB_RUNNING)
				run_stop(job, false, 0);
		}
	shutdown_check(td);
}

void
shutdown_check(struct triaged *td)
{
	if (td->phase != TRIAGED_STOPPING || td->exiting)
		return;
	if (td->running > 0)
		return;
	/* Held slots count too: a job granted them whose start the loop has
	 * not delivered yet is as good as running. */
	if (td->cfg->shutdown == CONFIG_SHUTDOWN_DRAIN && (jobs_queued(td) > 0 ||
	    shutdown_staged(td) > 0 ||
	    psem_available(td->sem) < psem_permits(td->sem)))
		return;
	log_notice("nothing left to wait for: exiting");
	shutdown_exit(td);
}
