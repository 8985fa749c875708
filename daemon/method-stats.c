/* method-stats.c - `stats`: slots, workers, each priority's queue, the
 * count of jobs in each state, uptime and version. */
#include "jobs.h"
#include "method.h"
#include "rpc.h"

static void
stats_handler(struct rpc_req *req, json_t *params)
{
	(void)params;
	rpc_reply(req, jobs_stats(rpc_daemon(req)));
}

static const struct method_param stats_params[] = {
	{ NULL, 0, false, NULL },
};

const struct method method_stats = {
	.name = "stats",
	.params = stats_params,
	.handler = stats_handler,
};
