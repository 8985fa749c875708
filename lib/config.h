/* config.h - triage.conf: the daemon's settings and its priorities, read with
 * inih and checked against one declarative table (config-table.c). */
#ifndef TRIAGE_CONFIG_H
#define TRIAGE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define CONFIG_DEFAULT_PATH "/etc/triage/triage.conf"
#define CONFIG_PRIORITY_NAME_MAX 32
/* The semaphore keeps one wait list per priority in a 64-bit mask. */
#define CONFIG_PRIORITIES_MAX 64

enum config_shutdown {
	CONFIG_SHUTDOWN_REQUEUE,
	CONFIG_SHUTDOWN_DRAIN,
	CONFIG_SHUTDOWN_FINISH,
	/* Exit at once, the running jobs left to their workers for the
	 * next daemon to take over (issue 26). */
	CONFIG_SHUTDOWN_KEEP,
};

/* What a stop that systemd makes to start the daemon again does. */
enum config_restart {
	CONFIG_RESTART_KEEP,		/* as shutdown = keep */
	CONFIG_RESTART_SHUTDOWN,	/* as the shutdown key says */
};

/* Which bytes of a stream past max_output are kept. */
enum config_output_keep {
	CONFIG_OUTPUT_KEEP_HEAD,
	CONFIG_OUTPUT_KEEP_TAIL,
};

/* The I/O scheduling class of a priority's job processes (ioprio_set). */
enum config_io_class {
	CONFIG_IO_BEST_EFFORT,	/* the kernel's default: left alone */
	CONFIG_IO_IDLE,
};

/* Whether jobs run in cgroups of their own (protocol v1.2). */
enum config_cgroups {
	CONFIG_CGROUPS_AUTO,	/* where the daemon may: see triaged(8) */
	CONFIG_CGROUPS_REQUIRED, /* refuse to start without */
	CONFIG_CGROUPS_OFF,	/* process groups, as in v1 */
};

/* What [daemon] memory gave: how the memory budget (protocol v1.2) is
 * worked out from the memory this process may use. */
enum config_memory_kind {
	CONFIG_MEMORY_AUTO,	/* that memory less 10% and less 512MiB */
	CONFIG_MEMORY_SIZE,	/* memory_value bytes */
	CONFIG_MEMORY_PERCENT,	/* memory_value percent (1 to 100) of it */
};

/* Who may use the HTTP listener beyond /metrics. */
enum config_http_auth {
	CONFIG_HTTP_AUTH_TOKEN,	/* the bearer token of token_file */
	CONFIG_HTTP_AUTH_NONE,	/* anyone who can connect: local only */
};

/* [http]: the optional listener of /metrics and the dashboard. */
struct config_http {
	char *listen;		/* NULL: no HTTP listener */
	enum config_http_auth auth;
	char *token_file;
	unsigned max_connections;
	uint64_t timeout_ms;
	/* Until a connection's request has come whole: at its opening and
	 * after each reply. */
	uint64_t header_timeout_ms;
	unsigned max_connections_per_address;
	char *dashboard_dir;	/* NULL: beside triaged, ../share/... */
};

/* [cluster]: the PostgreSQL database several daemons share their queues
 * through. Without the section, node is still set: a lone daemon is the
 * one node there is. */
struct config_cluster {
	bool enabled;		/* the section is there */
	/* A libpq connection string, NULL without the section. It may hold
	 * a password: no message, log line or reply may show it. */
	char *postgresql;
	char *node;		/* never NULL: the default is filled in */
	uint64_t lease_ms;
};

struct config_priority {
	char name[CONFIG_PRIORITY_NAME_MAX + 1];
	unsigned rank;
	unsigned weight;
	unsigned max_queued;
	unsigned max_running;	/* slots; 0 = no cap */
	uint64_t timeout_ms;	/* 0 = none */
	unsigned retries;
	unsigned nice;		/* 0 to 19 */
	enum config_io_class io_class;
	enum config_output_keep output_keep;	/* unset: the daemon's */
	/* Protocol v1.2, for its jobs' cgroups: the default memory of a
	 * job in bytes, cpu.weight, pids.max; 0 = none. */
	uint64_t memory;
	unsigned cpu_weight;
	unsigned pids_max;
	unsigned line;		/* where its section starts; 0 = built in */
};

#define CONFIG_RESOURCE_NAME_MAX 32
#define CONFIG_RESOURCES_MAX 32
#define CONFIG_RESOURCE_UNITS_MAX 64
/* The longest unit name and env variable name [resource.NAME] takes. */
#define CONFIG_RESOURCE_UNIT_MAX 64
#define CONFIG_RESOURCE_ENV_MAX 128

/* [resource.NAME] (protocol v1.2): something jobs ask for besides slots
 * and memory, either units with names (GPUs: the job is told which it
 * got) or a number of interchangeable ones (licences). */
struct config_resource {
	char name[CONFIG_RESOURCE_NAME_MAX + 1];
	/* Unit-named: nunits names, in file order; NULL for a counted
	 * resource. */
	char **units;
	unsigned nunits;	/* 1 to 64 for unit-named, 0 counted */
	uint64_t count;		/* counted: how many (1 to 2^32-1);
				   unit-named: nunits */
	unsigned share;		/* jobs that may hold one unit at once, 1 to
				   1000 (always 1 for a counted one) */
	/* NULL, or a variable a job is given its units in besides
	 * TRIAGE_<NAME>: [A-Za-z_][A-Za-z0-9_]*, not TRIAGE_*. */
	char *env;
	bool cluster;		/* scope = cluster: counted ones only */
	unsigned line;		/* where its section starts */
};

struct config {
	char *path;		/* the file read, NULL for built-in defaults */

	char *socket;		/* NULL: resolved as protocol.md says */
	mode_t socket_mode;
	bool has_socket_group;
	gid_t socket_gid;
	char *state_dir;	/* never NULL: the default is filled in */
	unsigned slots;		/* resolved: "auto" is already a number */
	bool slots_auto;
	unsigned workers;	/* resolved, never below slots */
	bool workers_auto;
	const char *policy;	/* "strict" or "weighted" */
	unsigned default_priority;	/* index into priorities */
	uint64_t kill_grace_ms;
	enum config_shutdown shutdown;
	enum config_restart restart;
	uint64_t max_request;
	unsigned max_clients;
	unsigned max_batch;	/* requests in one JSON-RPC batch */
	unsigned max_clients_per_user;
	unsigned max_waits;	/* pending waits per connection */
	unsigned max_watches;	/* watches per connection */
	uint64_t max_unread;	/* unsent bytes per connection */
	unsigned max_queued_per_user;
	/* A submission's bounds: argv and env strings, each with its NUL,
	 * and the pointers to them must fit exec's ARG_MAX of 2 MiB. */
	unsigned max_argv;
	uint64_t max_argv_bytes;
	unsigned max_env;
	uint64_t max_env_bytes;
	unsigned max_name;	/* bytes of a job's name */
	unsigned max_labels;	/* labels of a job */
	unsigned max_label_value; /* bytes of one label's value */
	uint64_t max_output;
	/* Bytes of a job's result kept (TRIAGE_RESULT); 0: none asked. */
	uint64_t max_result;
	enum config_output_keep output_keep;
	uint64_t keep_finished_ms;
	bool has_admin_group;
	gid_t admin_gid;
	bool run_as_submitter;
	bool no_new_privs;	/* PR_SET_NO_NEW_PRIVS for jobs */
	int log_level;		/* a syslog level: LOG_DEBUG .. LOG_ERR */
	enum config_cgroups cgroups;	/* fixed until a restart */
	/* [daemon] memory: the budget's kind, and its bytes (SIZE) or
	 * percent (PERCENT); 0 for AUTO. */
	enum config_memory_kind memory_kind;
	uint64_t memory_value;
	bool backfill;		/* protocol.md v1.2, "Admission" */

	struct config_http http;
	struct config_cluster cluster;

	struct config_priority *priorities;	/* sorted by rank, most urgent first */
	unsigned npriorities;
	struct config_resource *resources;	/* in file order; NULL: none */
	unsigned nresources;
};

struct caller_env;

struct config_opts {
	const char *path;	/* the file; NULL: built-in defaults only */
	bool optional;		/* a missing file means the built-in defaults */
	const char *cpu_max;	/* cgroup v2 cpu.max for slots = auto; NULL: our own */
	/* Who loads it, never NULL: euid decides run_as_submitter's default
	 * and whether it may be on, and with xdg_state_home and home, the
	 * default state_dir, and its host name the default node. */
	const struct caller_env *env;
};

/*
 * Reads and checks a config. Returns a new config the caller frees with
 * config_free(). On error returns NULL and sets *cause to an allocated text
 * with one line per problem, each naming the file, the line and the key.
 *
 * Every problem is reported, not just the first, sorted by line, as
 * "PATH:LINE: KEY: what is wrong" ("PATH: what is wrong" for the whole
 * file), joined by '\n' without a trailing one. errno is then EINVAL, the
 * open(2) error when the file cannot be opened, or ENOMEM, and *cause is
 * "out of memory" (NULL if even that could not be allocated). cause may be
 * NULL. Nothing leaks on failure and nothing global changes, so a reload
 * can call it and keep the old config on failure.
 */
struct config *config_load(const struct config_opts *opts, char **cause);
void config_free(struct config *cfg);

/* The config file to read: flag if not NULL, else env->triage_config
 * ($TRIAGE_CONFIG) if not empty, else the default path. Sets *optional to
 * true only for the default path. The result is borrowed from flag, env or
 * a constant. */
const char *config_path(const char *flag, const struct caller_env *env,
    bool *optional);

/* The word triage.conf writes c as ("auto", "required", "off"). Static. */
const char *config_cgroups_name(enum config_cgroups c);

/* Returns the index of the priority called name, or -1. */
int config_priority_find(const struct config *cfg, const char *name);
/* Returns the index of the resource called name, or -1 (NULL too). */
int config_resource_find(const struct config *cfg, const char *name);

#endif
