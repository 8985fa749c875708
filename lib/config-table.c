/* config-table.c - every key of triage.conf in one table: type, bounds,
 * default, destination and help. triage.conf(5) lists the same rows. */
#include <stddef.h>
#include <string.h>
#include <syslog.h>

#include "config.h"
#include "config-table.h"
#include "nodename.h"

#define KIB (UINT64_C(1) << 10)
#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)
#define TIB (UINT64_C(1) << 40)
#define DAY_MS UINT64_C(86400000)
#define HOUR_MS UINT64_C(3600000)

/* sizeof(((struct sockaddr_un *)0)->sun_path) - 1: a longer path cannot be
 * bound, so it is refused here rather than at start. */
#define CONFIG_SOCKET_PATH_MAX 107
#define CONFIG_PATH_MAX 4095

static const struct config_choice config_table_policies[] = {
	{ "strict", 0 },
	{ "weighted", 1 },
	{ NULL, 0 },
};

static const struct config_choice config_table_shutdowns[] = {
	{ "requeue", CONFIG_SHUTDOWN_REQUEUE },
	{ "drain", CONFIG_SHUTDOWN_DRAIN },
	{ "finish", CONFIG_SHUTDOWN_FINISH },
	{ "keep", CONFIG_SHUTDOWN_KEEP },
	{ NULL, 0 },
};

static const struct config_choice config_table_restarts[] = {
	{ "keep", CONFIG_RESTART_KEEP },
	{ "shutdown", CONFIG_RESTART_SHUTDOWN },
	{ NULL, 0 },
};

static const struct config_choice config_table_log_levels[] = {
	{ "debug", LOG_DEBUG },
	{ "info", LOG_INFO },
	{ "notice", LOG_NOTICE },
	{ "warning", LOG_WARNING },
	{ "err", LOG_ERR },
	{ NULL, 0 },
};

static const struct config_choice config_table_output_keeps[] = {
	{ "head", CONFIG_OUTPUT_KEEP_HEAD },
	{ "tail", CONFIG_OUTPUT_KEEP_TAIL },
	{ NULL, 0 },
};

static const struct config_choice config_table_io_classes[] = {
	{ "best-effort", CONFIG_IO_BEST_EFFORT },
	{ "idle", CONFIG_IO_IDLE },
	{ NULL, 0 },
};

static const struct config_choice config_table_cgroups[] = {
	{ "auto", CONFIG_CGROUPS_AUTO },
	{ "required", CONFIG_CGROUPS_REQUIRED },
	{ "off", CONFIG_CGROUPS_OFF },
	{ NULL, 0 },
};

static const struct config_choice config_table_scopes[] = {
	{ "node", 0 },
	{ "cluster", 1 },
	{ NULL, 0 },
};

static const struct config_choice config_table_http_auths[] = {
	{ "token", CONFIG_HTTP_AUTH_TOKEN },
	{ "none", CONFIG_HTTP_AUTH_NONE },
	{ NULL, 0 },
};

#define D(field) offsetof(struct config, field)
#define P(field) offsetof(struct config_priority, field)
#define R(field) offsetof(struct config_resource, field)

const struct config_key config_table_daemon[CONFIG_TABLE_DAEMON_KEYS] = {
	{ "socket", CONFIG_TYPE_PATH, 1, CONFIG_SOCKET_PATH_MAX, NULL,
	  D(socket), 0, NULL,
	  "listening socket path, at most 107 bytes; unset: as protocol.md "
	  "says; ignored under socket activation" },
	{ "socket_mode", CONFIG_TYPE_MODE, 0, 0777, "0660",
	  D(socket_mode), 0, NULL,
	  "octal permissions of the socket, 0 to 0777" },
	{ "socket_group", CONFIG_TYPE_GROUP, 0, 0, NULL,
	  D(socket_gid), D(has_socket_group), NULL,
	  "group owning the socket; unset: the daemon's own" },
	{ "state_dir", CONFIG_TYPE_PATH, 1, CONFIG_PATH_MAX, NULL,
	  D(state_dir), 0, NULL,
	  "job database and output; unset: /var/lib/triage as root, else "
	  "$XDG_STATE_HOME/triage or ~/.local/state/triage" },
	{ "slots", CONFIG_TYPE_AUTO, 1, 1024, "auto",
	  D(slots), D(slots_auto), NULL,
	  "semaphore size, 1 to 1024, or auto: the CPUs we may use "
	  "(affinity and cgroup cpu.max)" },
	{ "workers", CONFIG_TYPE_AUTO, 1, 1024, "auto",
	  D(workers), D(workers_auto), NULL,
	  "worker processes, 1 to 1024, or auto: as many as slots; "
	  "raised to slots if lower" },
	{ "policy", CONFIG_TYPE_WORD, 0, 0, "strict",
	  D(policy), 0, config_table_policies,
	  "strict: most urgent first; weighted: shared by weight" },
	{ "default_priority", CONFIG_TYPE_PRIORITY, 1, CONFIG_PRIORITY_NAME_MAX,
	  NULL, D(default_priority), 0, NULL,
	  "priority of a submission that names none; unset: the middle one "
	  "by rank" },
	{ "kill_grace", CONFIG_TYPE_DURATION, 0, DAY_MS, "10s",
	  D(kill_grace_ms), 0, NULL,
	  "SIGTERM to SIGKILL delay for cancel and timeout, 0 to 1d" },
	{ "shutdown", CONFIG_TYPE_ENUM, 0, 0, "requeue",
	  D(shutdown), 0, config_table_shutdowns,
	  "on SIGTERM: requeue running jobs, drain the queues, finish "
	  "the running jobs, or keep them running for the next start" },
	{ "restart", CONFIG_TYPE_ENUM, 0, 0, "keep",
	  D(restart), 0, config_table_restarts,
	  "on a stop that systemd makes to start the daemon again "
	  "(systemctl restart, an upgrade): keep the running jobs for the "
	  "new daemon, or do as shutdown says" },
	{ "max_request", CONFIG_TYPE_SIZE, KIB, GIB, "1MiB",
	  D(max_request), 0, NULL,
	  "longest request line, 1KiB to 1GiB" },
	{ "max_clients", CONFIG_TYPE_UNSIGNED, 1, 1000000, "1024",
	  D(max_clients), 0, NULL,
	  "simultaneous connections, 1 to 1000000" },
	{ "max_batch", CONFIG_TYPE_UNSIGNED, 1, 100000, "1000",
	  D(max_batch), 0, NULL,
	  "requests in one JSON-RPC batch, 1 to 100000" },
	{ "max_clients_per_user", CONFIG_TYPE_UNSIGNED, 1, 1000000, "512",
	  D(max_clients_per_user), 0, NULL,
	  "simultaneous connections of one uid, 1 to 1000000" },
	{ "max_waits", CONFIG_TYPE_UNSIGNED, 1, 1000000, "1024",
	  D(max_waits), 0, NULL,
	  "pending waits of one connection, 1 to 1000000" },
	{ "max_watches", CONFIG_TYPE_UNSIGNED, 1, 100000, "64",
	  D(max_watches), 0, NULL,
	  "watches of one connection, 1 to 100000" },
	{ "max_unread", CONFIG_TYPE_SIZE, 64 * KIB, GIB, "64MiB",
	  D(max_unread), 0, NULL,
	  "unread output a client may fall behind by before it is "
	  "disconnected, 64KiB to 1GiB" },
	{ "max_queued_per_user", CONFIG_TYPE_UNSIGNED, 1, 100000000, "50000",
	  D(max_queued_per_user), 0, NULL,
	  "queued jobs of one uid over all priorities, 1 to 100000000" },
	/* The most of all four fills 16384 * 8 * 2 bytes of pointers and
	 * 768KiB * 2 of strings: 1.75MiB, under exec's ARG_MAX of 2MiB with
	 * room for the TRIAGE_* variables, so that no job fails on E2BIG. */
	{ "max_argv", CONFIG_TYPE_UNSIGNED, 1, 16384, "4096",
	  D(max_argv), 0, NULL,
	  "argv elements of a submission, 1 to 16384" },
	{ "max_argv_bytes", CONFIG_TYPE_SIZE, KIB, 768 * KIB, "512KiB",
	  D(max_argv_bytes), 0, NULL,
	  "bytes of a submission's argv, each string's NUL counted, 1KiB "
	  "to 768KiB" },
	{ "max_env", CONFIG_TYPE_UNSIGNED, 0, 16384, "1024",
	  D(max_env), 0, NULL,
	  "environment variables of a submission, 0 to 16384" },
	{ "max_env_bytes", CONFIG_TYPE_SIZE, KIB, 768 * KIB, "512KiB",
	  D(max_env_bytes), 0, NULL,
	  "bytes of a submission's env as K=V strings, each NUL counted, "
	  "1KiB to 768KiB" },
	{ "max_name", CONFIG_TYPE_UNSIGNED, 1, 4096, "256",
	  D(max_name), 0, NULL,
	  "bytes of a job's name, 1 to 4096" },
	{ "max_labels", CONFIG_TYPE_UNSIGNED, 0, 1024, "16",
	  D(max_labels), 0, NULL,
	  "labels of a job, 0 to 1024" },
	{ "max_label_value", CONFIG_TYPE_UNSIGNED, 1, 65536, "256",
	  D(max_label_value), 0, NULL,
	  "bytes of one label's value, 1 to 65536" },
	{ "max_output", CONFIG_TYPE_SIZE, 0, TIB, "16MiB",
	  D(max_output), 0, NULL,
	  "captured bytes per stream per job, 0 to 1TiB" },
	/* Held in the worker's memory and the job's row: a value, not a
	 * second output. */
	{ "max_result", CONFIG_TYPE_SIZE, 0, 16 * MIB, "64KiB",
	  D(max_result), 0, NULL,
	  "bytes of a job's result (TRIAGE_RESULT) kept per attempt, 0 to "
	  "16MiB; 0: no TRIAGE_RESULT" },
	{ "output_keep", CONFIG_TYPE_ENUM, 0, 0, "head",
	  D(output_keep), 0, config_table_output_keeps,
	  "which bytes of a stream past max_output are kept: head (the "
	  "first) or tail (the last)" },
	{ "keep_finished", CONFIG_TYPE_DURATION, 1000, 3650 * DAY_MS, "7d",
	  D(keep_finished_ms), 0, NULL,
	  "how long finished jobs and their output are kept, 1s to 3650d" },
	{ "admin_group", CONFIG_TYPE_GROUP, 0, 0, NULL,
	  D(admin_gid), D(has_admin_group), NULL,
	  "members may act on any job and pause/resume; unset: nobody "
	  "but root and the daemon's user" },
	{ "run_as_submitter", CONFIG_TYPE_BOOL, 0, 0, NULL,
	  D(run_as_submitter), 0, NULL,
	  "run each job as its submitter; unset: yes as root; always no "
	  "when not root" },
	{ "no_new_privs", CONFIG_TYPE_BOOL, 0, 0, "no",
	  D(no_new_privs), 0, NULL,
	  "yes: jobs run with PR_SET_NO_NEW_PRIVS, so setuid programs "
	  "gain nothing (sudo, su, ping stop working)" },
	{ "log_level", CONFIG_TYPE_ENUM, 0, 0, "info",
	  D(log_level), 0, config_table_log_levels,
	  "least important message logged: debug, info, notice, warning "
	  "or err" },
	{ "cgroups", CONFIG_TYPE_ENUM, 0, 0, "auto",
	  D(cgroups), 0, config_table_cgroups,
	  "auto: each job in a cgroup of its own where the daemon may (see "
	  "triaged(8)); required: refuse to start without; off: process "
	  "groups only; a change needs a restart" },
	/* Protocol v1.2: what admission counts declared memory against,
	 * and whether it backfills. */
	{ "memory", CONFIG_TYPE_BUDGET, MIB, 1024 * TIB, "auto",
	  D(memory_value), D(memory_kind), NULL,
	  "the memory budget jobs' declared memory is counted against: a "
	  "size (1MiB to 1024TiB), a percentage (1% to 100%) of the memory "
	  "the daemon may use (MemTotal, limited by its cgroup's "
	  "memory.max), or auto: that less 10% and 512MiB, at least 256MiB" },
	{ "backfill", CONFIG_TYPE_BOOL, 0, 0, "yes",
	  D(backfill), 0, NULL,
	  "yes: a job behind one that waits for units may use them when it "
	  "ends, by its timeout, before that one could start" },
};

const struct config_key config_table_http[CONFIG_TABLE_HTTP_KEYS] = {
	{ "listen", CONFIG_TYPE_LISTEN, 0, 0, NULL,
	  D(http.listen), 0, NULL,
	  "HOST:PORT (numeric IPv4 or [IPv6]) or a Unix socket path; "
	  "required in [http]" },
	{ "auth", CONFIG_TYPE_ENUM, 0, 0, "token",
	  D(http.auth), 0, config_table_http_auths,
	  "token: everything but /metrics needs the token of token_file; "
	  "none: no credential, for a Unix socket or loopback only" },
	{ "token_file", CONFIG_TYPE_PATH, 1, CONFIG_PATH_MAX, NULL,
	  D(http.token_file), 0, NULL,
	  "file whose first line is the bearer token; owned by the "
	  "daemon's user, no access for group or others" },
	{ "max_connections", CONFIG_TYPE_UNSIGNED, 1, 10000, "64",
	  D(http.max_connections), 0, NULL,
	  "HTTP connections at once, 1 to 10000; beyond it new ones wait" },
	{ "timeout", CONFIG_TYPE_DURATION, 1000, DAY_MS, "30s",
	  D(http.timeout_ms), 0, NULL,
	  "a request not read or a reply not taken in this time closes "
	  "its connection, 1s to 1d" },
	{ "header_timeout", CONFIG_TYPE_DURATION, 1000, HOUR_MS, "10s",
	  D(http.header_timeout_ms), 0, NULL,
	  "a connection that has not sent a whole request this long after "
	  "it opened or after its last reply is closed, 1s to 1h" },
	{ "max_connections_per_address", CONFIG_TYPE_UNSIGNED, 1, 10000,
	  "16", D(http.max_connections_per_address), 0, NULL,
	  "HTTP connections at once from one client address, 1 to 10000; "
	  "beyond it its oldest idle one is closed" },
	{ "dashboard_dir", CONFIG_TYPE_PATH, 1, CONFIG_PATH_MAX, NULL,
	  D(http.dashboard_dir), 0, NULL,
	  "the dashboard's files; unset: ../share/triage/dashboard from "
	  "triaged's directory" },
};

const struct config_key config_table_cluster[CONFIG_TABLE_CLUSTER_KEYS] = {
	{ "postgresql", CONFIG_TYPE_CONNINFO, 0, 0, NULL,
	  D(cluster.postgresql), 0, NULL,
	  "libpq connection string (key=value pairs or a postgresql:// "
	  "URI) of the cluster's database; required in [cluster]; never "
	  "shown, since it may hold a password" },
	{ "node", CONFIG_TYPE_NODE, 1, NODENAME_MAX, NULL,
	  D(cluster.node), 0, NULL,
	  "this daemon's name in the cluster, 1 to 64 of A-Z, a-z, 0-9, _, "
	  ". and -; unset: the host name up to its first ." },
	{ "lease", CONFIG_TYPE_DURATION, 1000, 3600 * 1000, "30s",
	  D(cluster.lease_ms), 0, NULL,
	  "how long the cluster waits for a silent node before its running "
	  "jobs run elsewhere, 1s to 1h" },
};

const struct config_key config_table_priority[CONFIG_TABLE_PRIORITY_KEYS] = {
	{ "rank", CONFIG_TYPE_UNSIGNED, 0, 1000000, NULL,
	  P(rank), 0, NULL,
	  "required, unique, 0 to 1000000; smaller is more urgent" },
	{ "weight", CONFIG_TYPE_UNSIGNED, 1, 10000, "1",
	  P(weight), 0, NULL,
	  "share of dispatches under policy = weighted, 1 to 10000" },
	{ "max_queued", CONFIG_TYPE_UNSIGNED, 1, 100000000, "100000",
	  P(max_queued), 0, NULL,
	  "waiting jobs beyond which submit fails, 1 to 100000000" },
	{ "max_running", CONFIG_TYPE_UNSIGNED, 0, 1024, "0",
	  P(max_running), 0, NULL,
	  "slots this priority may hold at once, 0 (no cap) to 1024" },
	{ "timeout", CONFIG_TYPE_DURATION, 0, 365 * DAY_MS, "0",
	  P(timeout_ms), 0, NULL,
	  "default job timeout, 0 (none) to 365d" },
	{ "retries", CONFIG_TYPE_UNSIGNED, 0, 1000, "0",
	  P(retries), 0, NULL,
	  "default retries of a failing job, 0 to 1000" },
	{ "nice", CONFIG_TYPE_UNSIGNED, 0, 19, "0",
	  P(nice), 0, NULL,
	  "nice value of its jobs' processes, 0 to 19" },
	{ "io_class", CONFIG_TYPE_ENUM, 0, 0, "best-effort",
	  P(io_class), 0, config_table_io_classes,
	  "I/O scheduling class of its jobs' processes: best-effort or idle" },
	/* No default of its own: the daemon's, filled in once the whole
	 * file is read. */
	{ "output_keep", CONFIG_TYPE_ENUM, 0, 0, NULL,
	  P(output_keep), 0, config_table_output_keeps,
	  "head or tail, as [daemon] output_keep; unset: the daemon's" },
	/* Protocol v1.2: what its jobs' cgroups get. */
	{ "memory", CONFIG_TYPE_SIZE, MIB, 1024 * TIB, NULL,
	  P(memory), 0, NULL,
	  "default memory of its jobs, 1MiB to 1024TiB: with cgroups, "
	  "their limit; unset: none" },
	{ "cpu_weight", CONFIG_TYPE_UNSIGNED, 1, 10000, NULL,
	  P(cpu_weight), 0, NULL,
	  "cgroup cpu.weight of its jobs, 1 to 10000; unset: the "
	  "kernel's (100)" },
	{ "pids_max", CONFIG_TYPE_UNSIGNED, 1, 4194304, NULL,
	  P(pids_max), 0, NULL,
	  "most processes and threads one of its jobs may have, 1 to "
	  "4194304; unset: no limit" },
};

/* [resource.NAME]; exactly one of units and count, checked once the
 * section is whole (config-load.c). */
const struct config_key config_table_resource[CONFIG_TABLE_RESOURCE_KEYS] = {
	{ "units", CONFIG_TYPE_UNITS, 1, CONFIG_RESOURCE_UNITS_MAX, NULL,
	  R(units), R(nunits), NULL,
	  "comma-separated names of its units (GPU indices: 0,1,2,3), 1 to "
	  "64 of them, each 1 to 64 of A-Z, a-z, 0-9, _, ., : and -; a job "
	  "is told which it got" },
	{ "count", CONFIG_TYPE_COUNT, 1, UINT32_MAX, NULL,
	  R(count), 0, NULL,
	  "a counted resource (licences, connections): how many units "
	  "there are, 1 to 4294967295" },
	{ "share", CONFIG_TYPE_UNSIGNED, 1, 1000, "1",
	  R(share), 0, NULL,
	  "how many jobs may hold one named unit at once, 1 to 1000" },
	{ "env", CONFIG_TYPE_ENVNAME, 1, CONFIG_RESOURCE_ENV_MAX, NULL,
	  R(env), 0, NULL,
	  "a variable a job is given its units in besides TRIAGE_<NAME> "
	  "(CUDA_VISIBLE_DEVICES); unset: none" },
	{ "scope", CONFIG_TYPE_SWITCH, 0, 0, "node",
	  R(cluster), 0, config_table_scopes,
	  "node, or cluster: the count is shared by every node of a "
	  "cluster (counted resources only)" },
};

/* The priorities of a config with no [priority.*] section at all, no file
 * or a file without one: as if they were written there. default_priority
 * then falls on the middle one, normal. */
const struct config_table_builtin config_table_builtins[CONFIG_TABLE_BUILTINS] = {
	{ "high", 0 },
	{ "normal", 10 },
	{ "low", 20 },
};

const char *
config_cgroups_name(enum config_cgroups c)
{
	const struct config_choice *ch;

	for (ch = config_table_cgroups; ch->word != NULL; ch++)
		if (ch->value == (int)c)
			return ch->word;
	return "?";
}

int
config_table_find(const struct config_key *table, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(table[i].name, name) == 0)
			return (int)i;
	}
	return -1;
}

/* A section's name: 1 to max of a-z, 0-9, _ and -. */
static int
config_table_name(const char *name, size_t max)
{
	size_t len = strlen(name);

	if (len == 0 || len > max)
		return 0;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

int
config_table_priority_name(const char *name)
{
	return config_table_name(name, CONFIG_PRIORITY_NAME_MAX);
}

int
config_table_resource_name(const char *name)
{
	return config_table_name(name, CONFIG_RESOURCE_NAME_MAX);
}
