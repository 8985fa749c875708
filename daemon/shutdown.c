/* shutdown.c - stopping on SIGTERM or SIGINT as the `shutdown` key says:
 * requeue, drain, finish or keep; a second signal stops at once. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "http.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "psem.h"
#include "sdunit.h"
#include "run.h"
#include "server.h"
#include "shutdown.h"
#include "store.h"
#include "triaged.h"
#include "waitstatus.h"

static void shutdown_check(struct triaged *td);

static const char *
shutdown_mode_name(enum config_shutdown mode)
{
	switch (mode) {
	case CONFIG_SHUTDOWN_DRAIN:
		return "drain";
	case CONFIG_SHUTDOWN_FINISH:
		return "finish";
	case CONFIG_SHUTDOWN_KEEP:
		return "keep";
	default:
		return "requeue";
	}
}

/*
 * Every change so far is on disk and published: what is left to write is
 * written, then every client gets its last replies and the loop ends.
 */
static void
shutdown_exit_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	char *why = NULL;

	(void)job;
	(void)cause;
	(void)arg;
	if (store_flush(td->store, &why) != 0) {
		log_err("the last changes could not be stored: %s", why);
		free(why);
	}
	/* Its connection to our rpc would keep the drain waiting. */
	http_stop(td);
	server_drain(td->server);
}

/* After the changes on their way have been published: answers owed for
 * them go out before the connections close. */
static void
shutdown_exit(struct triaged *td)
{
	if (td->exiting)
		return;
	td->exiting = true;
	if (jobs_after_commit(td, shutdown_exit_cb, NULL) != 0)
		shutdown_exit_cb(td, NULL, NULL, NULL);
}

static void
shutdown_recheck_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	(void)job;
	(void)cause;
	(void)arg;
	shutdown_check(td);
}

/* Says which running jobs are frozen: draining or finishing waits for them,
 * as for a paused priority, until they are thawed (the operator's freeze is
 * not undone by a stop). */
static void
shutdown_say_frozen(struct triaged *td, enum config_shutdown mode)
{
	struct job *job;
	uint64_t id = 0;

	while ((job = store_next(td->store, id)) != NULL) {
		id = job->id;
		if (job->frozen && run_has(td->run, job))
			log_notice("job %llu is frozen: %s waits until it is "
			    "thawed (or a second signal)",
			    (unsigned long long)id, mode ==
			    CONFIG_SHUTDOWN_DRAIN ? "draining" : "finishing");
	}
}

void
shutdown_begin(struct triaged *td, int signo)
{
	enum config_shutdown mode = td->cfg->shutdown;
	char name[WAITSTATUS_SIGNAME_MAX];
	struct psem_prio_stats st;
	unsigned i;

	waitstatus_signame(signo, name);
	if (td->stopping_signals++ > 0) {
		log_notice("%s again: stopping now", name);
		shutdown_exit(td);
		return;
	}
	td->phase = TRIAGED_STOPPING;
	/* systemd says nothing of why it stops a unit; its job does. */
	if (mode != CONFIG_SHUTDOWN_KEEP &&
	    td->cfg->restart == CONFIG_RESTART_KEEP &&
	    sdunit_restarting() == 1) {
		log_notice("%s: systemd restarts the daemon: the running jobs "
		    "are kept for the next one (restart = keep)", name);
		mode = CONFIG_SHUTDOWN_KEEP;
	}
	td->shutdown_mode = mode;
	log_notice("%s: stopping (shutdown = %s); submissions are refused",
	    name, shutdown_mode_name(mode));
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
				log_notice("priority %s is paused with %u "
				    "job%s queued: draining waits until it is "
				    "resumed (or a second signal)",
				    td->cfg->priorities[i].name, st.queued,
				    st.queued == 1 ? "" : "s");
		}
	if (mode == CONFIG_SHUTDOWN_REQUEUE)
		jobs_stop_running(td);
	else if (mode == CONFIG_SHUTDOWN_KEEP) {
		/* Nothing to wait for: the workers keep their jobs, and the
		 * next daemon takes them over (pool_leave). */
		log_notice("%u running job%s left to %s workers for the next "
		    "start", run_count(td->run), run_count(td->run) == 1 ?
		    "" : "s", run_count(td->run) == 1 ? "its" : "their");
		shutdown_exit(td);
		return;
	} else
		shutdown_say_frozen(td, mode);
	shutdown_check(td);
}

static void
shutdown_check(struct triaged *td)
{
	if (td->phase != TRIAGED_STOPPING || td->exiting)
		return;
	if (run_count(td->run) > 0)
		return;
	if (td->shutdown_mode == CONFIG_SHUTDOWN_DRAIN) {
		/* Submissions on their way to disk are queued jobs soon. */
		if (jobs_staged(td, -1) > 0) {
			if (jobs_after_commit(td, shutdown_recheck_cb, NULL)
			    != 0)
				log_warnx("out of memory: draining waits for "
				    "the next change");
			return;
		}
		/* Held slots count too: a granted job whose start is on its
		 * way to the disk is as good as running. */
		if (jobs_count(td, -1, JOB_QUEUED) > 0 ||
		    psem_available(td->sem) < psem_permits(td->sem))
			return;
	}
	log_notice("nothing left to wait for: exiting");
	shutdown_exit(td);
}

void
shutdown_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	(void)ev;
	(void)arg;
	shutdown_check(td);
}
