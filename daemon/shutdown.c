/* shutdown.c - stopping on SIGTERM or SIGINT as the `shutdown` key says:
 * requeue, drain or finish; a second signal stops at once. */
#include <signal.h>
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

void
shutdown_begin(struct triaged *td, int signo)
{
	enum config_shutdown mode = td->cfg->shutdown;
	struct job *job;
	uint64_t id = 0;
	unsigned i;

	if (td->stopping_signals++ > 0) {
		log_notice("SIG%s again: stopping now", sigabbrev_np(signo));
		server_drain(td->server);
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
	if (td->phase != TRIAGED_STOPPING)
		return;
	if (td->running > 0)
		return;
	/* Held slots count too: a job granted them whose start the loop has
	 * not delivered yet is as good as running. */
	if (td->cfg->shutdown == CONFIG_SHUTDOWN_DRAIN && (jobs_queued(td) > 0 ||
	    psem_available(td->sem) < psem_permits(td->sem)))
		return;
	log_notice("nothing left to wait for: exiting");
	server_drain(td->server);
}
