/* test-config.c - config_*: built-in defaults, every key read back, every
 * kind of error with its "file:line: key:" prefix, and the whole-file rules. */
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "caller-env.h"
#include "config.h"
#include "tsupport-dir.h"

/* Each test gets a fresh directory for its config files. */
struct fixture {
	char dir[64];
	char conf[128];		/* <dir>/triage.conf */
	char no_limit[128];	/* a cpu.max that sets no limit */
};

static struct fixture *fx;

/* Who loads the config in most tests: a user, not root, with a home and no
 * XDG variables, whoever runs the tests and whatever their environment. */
static const struct caller_env user_env = {
	.euid = 1000,
	.home = "/home/tester",
};
static const struct caller_env root_env = {
	.euid = 0,
	.home = "/root",
};

static int
fixture_setup(void **state)
{
	FILE *f;

	fx = calloc(1, sizeof *fx);
	if (fx == NULL)
		return -1;
	strcpy(fx->dir, "/tmp/test-config-XXXXXX");
	if (mkdtemp(fx->dir) == NULL)
		return -1;
	snprintf(fx->conf, sizeof fx->conf, "%s/triage.conf", fx->dir);
	snprintf(fx->no_limit, sizeof fx->no_limit, "%s/cpu.max", fx->dir);
	f = fopen(fx->no_limit, "w");
	if (f == NULL)
		return -1;
	fputs("max 100000\n", f);
	fclose(f);
	*state = fx;
	return 0;
}

static int
fixture_teardown(void **state)
{
	struct tsupport_err err;
	int rc;

	(void)state;
	rc = tsupport_dir_remove(fx->dir, &err);
	free(fx);
	fx = NULL;
	return rc;
}

/* The CPUs this process may use, as config_load sees them with no quota. */
static unsigned
affinity(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
	return (unsigned)CPU_COUNT(&set);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* Loads text as <dir>/triage.conf for env, which must be good. */
static struct config *
load_ok_as(const char *text, const struct caller_env *env)
{
	struct config_opts opts = { fx->conf, false, fx->no_limit, env };
	struct config *cfg;
	char *cause = NULL;

	write_file(fx->conf, text);
	cfg = config_load(&opts, &cause);
	if (cfg == NULL)
		fail_msg("config refused:\n%s", cause);
	assert_null(cause);
	return cfg;
}

/* Loads text as <dir>/triage.conf for a user, which must be good. */
static struct config *
load_ok(const char *text)
{
	return load_ok_as(text, &user_env);
}

/* Loads text as <dir>/triage.conf for env, which must be refused; returns
 * the cause, which the caller frees. */
static char *
load_bad_as(const char *text, const struct caller_env *env)
{
	struct config_opts opts = { fx->conf, false, fx->no_limit, env };
	struct config *cfg;
	char *cause = NULL;

	write_file(fx->conf, text);
	errno = 0;
	cfg = config_load(&opts, &cause);
	if (cfg != NULL) {
		config_free(cfg);
		fail_msg("config accepted:\n%s", text);
	}
	assert_int_equal(errno, EINVAL);
	assert_non_null(cause);
	assert_true(cause[0] != '\0');
	assert_true(cause[strlen(cause) - 1] != '\n');
	return cause;
}

/* The same for a user. */
static char *
load_bad(const char *text)
{
	return load_bad_as(text, &user_env);
}

static size_t
count_lines(const char *cause)
{
	size_t n = 1;

	for (; *cause != '\0'; cause++)
		n += *cause == '\n';
	return n;
}

/* Asserts that one line of cause is "<conf>:<line>: " followed by text;
 * with a trailing '*', text need only start that line. */
static void
assert_error(const char *cause, unsigned line, const char *text)
{
	const char *p = cause, *eol;
	size_t tlen = strlen(text), plen;
	bool prefix = tlen > 0 && text[tlen - 1] == '*';
	char *want;

	if (prefix)
		tlen--;
	if (line == 0)
		assert_true(asprintf(&want, "%s: %.*s", fx->conf, (int)tlen,
		    text) != -1);
	else
		assert_true(asprintf(&want, "%s:%u: %.*s", fx->conf, line,
		    (int)tlen, text) != -1);
	plen = strlen(want);
	for (;;) {
		eol = strchrnul(p, '\n');
		if ((size_t)(eol - p) >= plen && strncmp(p, want, plen) == 0 &&
		    (prefix || (size_t)(eol - p) == plen)) {
			free(want);
			return;
		}
		if (*eol == '\0')
			break;
		p = eol + 1;
	}
	fail_msg("no line \"%s%s\" in:\n%s", want, prefix ? "..." : "", cause);
}

/* Loads "[daemon]\n" + line and asserts the error on line 2. */
static void
assert_daemon_error(const char *line, const char *text)
{
	char *conf, *cause;

	assert_true(asprintf(&conf, "[daemon]\n%s\n", line) != -1);
	cause = load_bad(conf);
	assert_error(cause, 2, text);
	assert_int_equal(count_lines(cause), 1);
	free(cause);
	free(conf);
}

static void
assert_priority_error(const char *line, const char *text)
{
	char *conf, *cause;

	assert_true(asprintf(&conf, "[priority.p]\nrank = 0\n%s\n", line) !=
	    -1);
	cause = load_bad(conf);
	assert_error(cause, 3, text);
	assert_int_equal(count_lines(cause), 1);
	free(cause);
	free(conf);
}

static void
assert_priority(const struct config_priority *p, const char *name,
    unsigned rank)
{
	assert_string_equal(p->name, name);
	assert_int_equal(p->rank, rank);
}

static void
assert_builtin_priorities(const struct config *cfg)
{
	unsigned i;

	assert_int_equal(cfg->npriorities, 3);
	assert_priority(&cfg->priorities[0], "high", 0);
	assert_priority(&cfg->priorities[1], "normal", 10);
	assert_priority(&cfg->priorities[2], "low", 20);
	assert_int_equal(cfg->default_priority, 1);
	for (i = 0; i < 3; i++) {
		assert_int_equal(cfg->priorities[i].weight, 1);
		assert_int_equal(cfg->priorities[i].max_queued, 100000);
		assert_int_equal(cfg->priorities[i].max_running, 0);
		assert_int_equal(cfg->priorities[i].timeout_ms, 0);
		assert_int_equal(cfg->priorities[i].retries, 0);
		assert_int_equal(cfg->priorities[i].line, 0);
	}
}

static void
builtin_defaults_without_a_file(void **state)
{
	struct config_opts opts = { NULL, false, fx->no_limit, &user_env };
	struct config *cfg;
	char *cause = NULL;

	(void)state;
	cfg = config_load(&opts, &cause);
	assert_non_null(cfg);
	assert_null(cause);
	assert_null(cfg->path);
	assert_null(cfg->socket);
	assert_int_equal(cfg->socket_mode, 0660);
	assert_false(cfg->has_socket_group);
	assert_non_null(cfg->state_dir);
	assert_int_equal(cfg->slots, affinity());
	assert_true(cfg->slots_auto);
	assert_int_equal(cfg->workers, cfg->slots);
	assert_true(cfg->workers_auto);
	assert_string_equal(cfg->policy, "strict");
	assert_int_equal(cfg->kill_grace_ms, 10000);
	assert_int_equal(cfg->shutdown, CONFIG_SHUTDOWN_REQUEUE);
	assert_int_equal(cfg->max_request, 1024 * 1024);
	assert_int_equal(cfg->max_clients, 1024);
	assert_int_equal(cfg->max_output, 16 * 1024 * 1024);
	assert_int_equal(cfg->keep_finished_ms, UINT64_C(7) * 86400000);
	assert_false(cfg->has_admin_group);
	assert_false(cfg->run_as_submitter);	/* not root */
	assert_int_equal(cfg->log_level, LOG_INFO);
	assert_builtin_priorities(cfg);
	config_free(cfg);
}

/* Loads the built-in defaults for env; returns the config (NULL when
 * refused, with *cause set). */
static struct config *
load_defaults_as(const struct caller_env *env, char **cause)
{
	struct config_opts opts = { NULL, false, fx->no_limit, env };

	*cause = NULL;
	return config_load(&opts, cause);
}

static void
state_dir_default_follows_euid_and_xdg(void **state)
{
	struct caller_env env = user_env;
	struct config *cfg;
	char *cause, *want;

	(void)state;
	cfg = load_defaults_as(&root_env, &cause);
	assert_non_null(cfg);
	assert_string_equal(cfg->state_dir, "/var/lib/triage");
	config_free(cfg);

	env.xdg_state_home = fx->dir;
	cfg = load_defaults_as(&env, &cause);
	assert_non_null(cfg);
	assert_true(asprintf(&want, "%s/triage", fx->dir) != -1);
	assert_string_equal(cfg->state_dir, want);
	free(want);
	config_free(cfg);

	/* Root's stays in /var/lib whatever its XDG_STATE_HOME says. */
	env.euid = 0;
	cfg = load_defaults_as(&env, &cause);
	assert_non_null(cfg);
	assert_string_equal(cfg->state_dir, "/var/lib/triage");
	config_free(cfg);
	env.euid = user_env.euid;

	/* A relative XDG_STATE_HOME is ignored, as the XDG spec says, and so
	 * is an empty one: the home's then. */
	env.xdg_state_home = "relative";
	cfg = load_defaults_as(&env, &cause);
	assert_non_null(cfg);
	assert_string_equal(cfg->state_dir, "/home/tester/.local/state/triage");
	config_free(cfg);
	env.xdg_state_home = "";
	cfg = load_defaults_as(&env, &cause);
	assert_non_null(cfg);
	assert_string_equal(cfg->state_dir, "/home/tester/.local/state/triage");
	config_free(cfg);

	/* No home to put it in (none, or not an absolute path). */
	env.xdg_state_home = NULL;
	env.home = NULL;
	assert_null(load_defaults_as(&env, &cause));
	assert_string_equal(cause, "state_dir: not set, and there is no home "
	    "directory to put it in");
	free(cause);
	env.home = "relative/home";
	assert_null(load_defaults_as(&env, &cause));
	assert_non_null(strstr(cause, "no home directory"));
	free(cause);
}

/* Only what the caller passes counts: not our own uid or environment. */
static void
the_process_environment_is_not_read(void **state)
{
	struct caller_env env = user_env;
	const char *old_home = getenv("HOME");
	char *home = old_home != NULL ? strdup(old_home) : NULL;
	struct config *cfg;
	char *cause;
	bool optional;

	(void)state;
	setenv("XDG_STATE_HOME", fx->dir, 1);
	setenv("HOME", "/home/from-the-process", 1);
	setenv("TRIAGE_CONFIG", "/from/the/process.conf", 1);
	cfg = load_defaults_as(&env, &cause);
	assert_non_null(cfg);
	assert_string_equal(cfg->state_dir, "/home/tester/.local/state/triage");
	assert_false(cfg->run_as_submitter);
	config_free(cfg);
	/* Whoever runs the tests, root's defaults are root's. */
	cfg = load_defaults_as(&root_env, &cause);
	assert_non_null(cfg);
	assert_string_equal(cfg->state_dir, "/var/lib/triage");
	assert_true(cfg->run_as_submitter);
	config_free(cfg);
	assert_string_equal(config_path(NULL, &env, &optional),
	    CONFIG_DEFAULT_PATH);
	unsetenv("XDG_STATE_HOME");
	unsetenv("TRIAGE_CONFIG");
	if (home != NULL) {
		setenv("HOME", home, 1);
		free(home);
	} else
		unsetenv("HOME");
}

static void
missing_optional_file_gives_builtin_defaults(void **state)
{
	struct config_opts opts = { fx->conf, true, fx->no_limit, &user_env };
	struct config *cfg;
	char *cause = NULL;

	(void)state;
	cfg = config_load(&opts, &cause);
	assert_non_null(cfg);
	assert_null(cause);
	assert_null(cfg->path);
	assert_builtin_priorities(cfg);
	config_free(cfg);
}

static void
missing_required_file_is_an_error_naming_it(void **state)
{
	struct config_opts opts = { fx->conf, false, fx->no_limit, &user_env };
	char *cause = NULL, *want;

	(void)state;
	errno = 0;
	assert_null(config_load(&opts, &cause));
	assert_int_equal(errno, ENOENT);
	assert_true(asprintf(&want, "%s: cannot open: %s", fx->conf,
	    strerror(ENOENT)) != -1);
	assert_string_equal(cause, want);
	free(want);
	free(cause);
}

static void
unreadable_file_is_an_error_even_if_optional(void **state)
{
	struct config_opts opts = { fx->conf, true, fx->no_limit, &user_env };
	char *cause = NULL, *want;

	(void)state;
	/* A directory opens but cannot be read, even by root. */
	assert_int_equal(mkdir(fx->conf, 0700), 0);
	assert_null(config_load(&opts, &cause));
	assert_true(asprintf(&want, "%s: cannot read: %s", fx->conf,
	    strerror(EISDIR)) != -1);
	assert_string_equal(cause, want);
	free(want);
	free(cause);
}

static void
empty_file_gives_builtin_defaults(void **state)
{
	struct config *cfg = load_ok("");

	(void)state;
	assert_string_equal(cfg->path, fx->conf);
	assert_builtin_priorities(cfg);
	config_free(cfg);
}

static void
every_daemon_key_is_read_back(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok(
	    "[daemon]\n"
	    "socket = /run/triage/test.sock\n"
	    "socket_mode = 0600\n"
	    "socket_group = root\n"
	    "state_dir = /srv/triage\n"
	    "slots = 6\n"
	    "workers = 9\n"
	    "policy = weighted\n"
	    "default_priority = low\n"
	    "kill_grace = 500ms\n"
	    "shutdown = drain\n"
	    "max_request = 64KiB\n"
	    "max_clients = 10\n"
	    "max_output = 2GiB\n"
	    "keep_finished = 2h\n"
	    "admin_group = root\n"
	    "run_as_submitter = no\n"
	    "log_level = debug\n");
	assert_string_equal(cfg->socket, "/run/triage/test.sock");
	assert_int_equal(cfg->socket_mode, 0600);
	assert_true(cfg->has_socket_group);
	assert_int_equal(cfg->socket_gid, 0);
	assert_string_equal(cfg->state_dir, "/srv/triage");
	assert_int_equal(cfg->slots, 6);
	assert_false(cfg->slots_auto);
	assert_int_equal(cfg->workers, 9);
	assert_false(cfg->workers_auto);
	assert_string_equal(cfg->policy, "weighted");
	assert_int_equal(cfg->default_priority, 2);
	assert_string_equal(cfg->priorities[cfg->default_priority].name, "low");
	assert_int_equal(cfg->kill_grace_ms, 500);
	assert_int_equal(cfg->shutdown, CONFIG_SHUTDOWN_DRAIN);
	assert_int_equal(cfg->max_request, 64 * 1024);
	assert_int_equal(cfg->max_clients, 10);
	assert_int_equal(cfg->max_output, UINT64_C(2) << 30);
	assert_int_equal(cfg->keep_finished_ms, 7200000);
	assert_true(cfg->has_admin_group);
	assert_int_equal(cfg->admin_gid, 0);
	assert_false(cfg->run_as_submitter);
	assert_int_equal(cfg->log_level, LOG_DEBUG);
	config_free(cfg);
}

static void
every_priority_key_is_read_back(void **state)
{
	const struct config_priority *p;
	struct config *cfg;

	(void)state;
	cfg = load_ok(
	    "[priority.build_farm-2]\n"
	    "rank = 7\n"
	    "weight = 5\n"
	    "max_queued = 12\n"
	    "max_running = 3\n"
	    "timeout = 90s\n"
	    "retries = 4\n");
	assert_int_equal(cfg->npriorities, 1);
	p = &cfg->priorities[0];
	assert_priority(p, "build_farm-2", 7);
	assert_int_equal(p->weight, 5);
	assert_int_equal(p->max_queued, 12);
	assert_int_equal(p->max_running, 3);
	assert_int_equal(p->timeout_ms, 90000);
	assert_int_equal(p->retries, 4);
	assert_int_equal(p->line, 1);
	assert_int_equal(cfg->default_priority, 0);
	config_free(cfg);
}

static void
assert_job_process(const struct config_priority *p, unsigned nice,
    enum config_io_class io_class, enum config_output_keep keep)
{
	assert_int_equal(p->nice, nice);
	assert_int_equal(p->io_class, io_class);
	assert_int_equal(p->output_keep, keep);
}

/* config.md v1.1: nice, io_class and output_keep, whose per-priority
 * default is the daemon's, given or not. */
static void
job_process_keys_and_their_defaults(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("[priority.a]\nrank = 1\n");
	assert_int_equal(cfg->output_keep, CONFIG_OUTPUT_KEEP_HEAD);
	assert_job_process(&cfg->priorities[0], 0, CONFIG_IO_BEST_EFFORT,
	    CONFIG_OUTPUT_KEEP_HEAD);
	config_free(cfg);

	cfg = load_ok("[daemon]\noutput_keep = tail\n"
	    "[priority.a]\nrank = 1\nnice = 19\nio_class = idle\n"
	    "[priority.b]\nrank = 2\noutput_keep = head\nnice = 0\n"
	    "io_class = best-effort\n");
	assert_int_equal(cfg->output_keep, CONFIG_OUTPUT_KEEP_TAIL);
	assert_job_process(&cfg->priorities[0], 19, CONFIG_IO_IDLE,
	    CONFIG_OUTPUT_KEEP_TAIL);
	assert_job_process(&cfg->priorities[1], 0, CONFIG_IO_BEST_EFFORT,
	    CONFIG_OUTPUT_KEEP_HEAD);
	config_free(cfg);

	/* the built-in priorities follow the daemon's too */
	cfg = load_ok("[daemon]\noutput_keep = tail\n");
	assert_int_equal(cfg->npriorities, 3);
	assert_int_equal(cfg->priorities[2].output_keep,
	    CONFIG_OUTPUT_KEEP_TAIL);
	config_free(cfg);

	assert_daemon_error("output_keep = last",
	    "output_keep: expected \"head\" or \"tail\", not \"last\"");
	assert_priority_error("nice = 20",
	    "nice: expected a whole number from 0 to 19, not \"20\"");
	assert_priority_error("nice = -1",
	    "nice: expected a whole number from 0 to 19, not \"-1\"");
	assert_priority_error("io_class = realtime",
	    "io_class: expected \"best-effort\" or \"idle\", not "
	    "\"realtime\"");
	assert_priority_error("output_keep = middle",
	    "output_keep: expected \"head\" or \"tail\", not \"middle\"");
}

/* config.md v1.2: [daemon] cgroups, and what a priority's jobs' cgroups
 * get: memory (a size, at least 1MiB), cpu_weight (1 to 10000), pids_max
 * (at least 1), none by default; errors name the line and the key. */
static void
cgroup_keys_and_their_defaults(void **state)
{
	const struct config_priority *p;
	struct config *cfg;

	(void)state;
	cfg = load_ok("[priority.a]\nrank = 1\n");
	assert_int_equal(cfg->cgroups, CONFIG_CGROUPS_AUTO);
	p = &cfg->priorities[0];
	assert_int_equal(p->memory, 0);
	assert_int_equal(p->cpu_weight, 0);
	assert_int_equal(p->pids_max, 0);
	config_free(cfg);
	cfg = load_ok("");
	assert_int_equal(cfg->cgroups, CONFIG_CGROUPS_AUTO);
	assert_int_equal(cfg->priorities[0].memory, 0);
	config_free(cfg);

	cfg = load_ok("[daemon]\ncgroups = required\n"
	    "[priority.a]\nrank = 1\nmemory = 1MiB\ncpu_weight = 1\n"
	    "pids_max = 1\n"
	    "[priority.b]\nrank = 2\nmemory = 2GiB\ncpu_weight = 10000\n"
	    "pids_max = 4194304\n");
	assert_int_equal(cfg->cgroups, CONFIG_CGROUPS_REQUIRED);
	p = &cfg->priorities[0];
	assert_int_equal(p->memory, 1048576);
	assert_int_equal(p->cpu_weight, 1);
	assert_int_equal(p->pids_max, 1);
	p = &cfg->priorities[1];
	assert_int_equal(p->memory, UINT64_C(2) << 30);
	assert_int_equal(p->cpu_weight, 10000);
	assert_int_equal(p->pids_max, 4194304);
	config_free(cfg);
	cfg = load_ok("[daemon]\ncgroups = off\n");
	assert_int_equal(cfg->cgroups, CONFIG_CGROUPS_OFF);
	assert_string_equal(config_cgroups_name(cfg->cgroups), "off");
	config_free(cfg);
	assert_string_equal(config_cgroups_name(CONFIG_CGROUPS_AUTO), "auto");
	assert_string_equal(config_cgroups_name(CONFIG_CGROUPS_REQUIRED),
	    "required");

	assert_daemon_error("cgroups = yes",
	    "cgroups: expected \"auto\", \"required\" or \"off\", not "
	    "\"yes\"");
	assert_priority_error("memory = 1048575",
	    "memory: expected a size from 1MiB to 1024TiB, such as 512, "
	    "64KiB or 16MiB, not \"1048575\"");
	assert_priority_error("memory = 1023KiB",
	    "memory: expected a size from 1MiB to 1024TiB*");
	assert_priority_error("memory = 2PiB",
	    "memory: expected a size from 1MiB to 1024TiB*");
	assert_priority_error("memory = lots",
	    "memory: expected a size from 1MiB to 1024TiB*");
	assert_priority_error("cpu_weight = 0",
	    "cpu_weight: expected a whole number from 1 to 10000, not \"0\"");
	assert_priority_error("cpu_weight = 10001",
	    "cpu_weight: expected a whole number from 1 to 10000, not "
	    "\"10001\"");
	assert_priority_error("pids_max = 0",
	    "pids_max: expected a whole number from 1 to 4194304, not \"0\"");
	assert_priority_error("pids_max = max",
	    "pids_max: expected a whole number from 1 to 4194304, not "
	    "\"max\"");
}

/* config.md v1.2: [daemon] memory is auto, a size or a percentage of
 * what the daemon may use; backfill is a boolean, yes by default. */
static void
memory_budget_and_backfill(void **state)
{
	static const struct {
		const char *value;
		enum config_memory_kind kind;
		uint64_t n;
	} good[] = {
		{ "auto", CONFIG_MEMORY_AUTO, 0 },
		{ "48GiB", CONFIG_MEMORY_SIZE, UINT64_C(48) << 30 },
		{ "1MiB", CONFIG_MEMORY_SIZE, UINT64_C(1) << 20 },
		{ "1024TiB", CONFIG_MEMORY_SIZE, UINT64_C(1) << 50 },
		{ "80%", CONFIG_MEMORY_PERCENT, 80 },
		{ "1%", CONFIG_MEMORY_PERCENT, 1 },
		{ "100%", CONFIG_MEMORY_PERCENT, 100 },
	};
	static const char *const bad[] = {
		"0%", "101%", "%", "-5%", "5.5%", "50 %", "x%", "1023KiB",
		"2PiB", "lots", "Auto", "",
	};
	struct config *cfg;
	char line[64], want[160];
	size_t i;

	(void)state;
	cfg = load_ok("");
	assert_int_equal(cfg->memory_kind, CONFIG_MEMORY_AUTO);
	assert_int_equal(cfg->memory_value, 0);
	assert_true(cfg->backfill);
	config_free(cfg);
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		snprintf(line, sizeof line, "[daemon]\nmemory = %s\n",
		    good[i].value);
		cfg = load_ok(line);
		assert_int_equal(cfg->memory_kind, good[i].kind);
		assert_int_equal(cfg->memory_value, good[i].n);
		config_free(cfg);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(line, sizeof line, "memory = %s", bad[i]);
		snprintf(want, sizeof want, "memory: expected \"auto\", a size "
		    "from 1MiB to 1024TiB such as 48GiB, or a percentage from "
		    "1%% to 100%% such as 80%%, not \"%s\"", bad[i]);
		assert_daemon_error(line, want);
	}
	cfg = load_ok("[daemon]\nbackfill = no\n");
	assert_false(cfg->backfill);
	config_free(cfg);
	assert_daemon_error("backfill = sometimes", "backfill: expected yes, "
	    "no, true, false, on, off, 1 or 0, not \"sometimes\"");
}

/* Loads "[resource.r]\n" + lines and asserts the one error, on line. */
static void
assert_resource_error(const char *lines, unsigned line, const char *text)
{
	char *conf, *cause;

	assert_true(asprintf(&conf, "[resource.r]\n%s\n", lines) != -1);
	cause = load_bad(conf);
	assert_error(cause, line, text);
	if (count_lines(cause) != 1)
		fail_msg("more than one error:\n%s", cause);
	free(cause);
	free(conf);
}

/* config.md v1.2: [resource.NAME], unit-named or counted, in file order,
 * each key read back with its defaults; config_resource_find. */
static void
resources_are_read_in_file_order(void **state)
{
	const struct config_resource *r;
	struct config *cfg;

	(void)state;
	cfg = load_ok("");
	assert_int_equal(cfg->nresources, 0);
	assert_null(cfg->resources);
	assert_int_equal(config_resource_find(cfg, "gpu"), -1);
	config_free(cfg);

	cfg = load_ok(
	    "[resource.gpu]\n"
	    "units = 0, 1,2 ,3\n"
	    "share = 2\n"
	    "env = CUDA_VISIBLE_DEVICES\n"
	    "[daemon]\n"
	    "slots = 2\n"
	    "[resource.licence]\n"
	    "count = 5\n"
	    "scope = cluster\n"
	    "[resource.memory]\n"
	    "units = nvidia0:1.2_x-y\n"
	    "scope = node\n"
	    "share = 1000\n"
	    "env = _x9\n"
	    "[resource.slots]\n"
	    "count = 4294967295\n");
	assert_int_equal(cfg->nresources, 4);
	r = &cfg->resources[0];
	assert_string_equal(r->name, "gpu");
	assert_int_equal(r->nunits, 4);
	assert_int_equal(r->count, 4);
	assert_string_equal(r->units[0], "0");
	assert_string_equal(r->units[1], "1");
	assert_string_equal(r->units[2], "2");
	assert_string_equal(r->units[3], "3");
	assert_null(r->units[4]);
	assert_int_equal(r->share, 2);
	assert_string_equal(r->env, "CUDA_VISIBLE_DEVICES");
	assert_false(r->cluster);
	assert_int_equal(r->line, 1);
	r = &cfg->resources[1];
	assert_string_equal(r->name, "licence");
	assert_null(r->units);
	assert_int_equal(r->nunits, 0);
	assert_int_equal(r->count, 5);
	assert_int_equal(r->share, 1);
	assert_null(r->env);
	assert_true(r->cluster);
	assert_int_equal(r->line, 7);
	/* Named like a built-in word: a resource all the same. */
	r = &cfg->resources[2];
	assert_string_equal(r->name, "memory");
	assert_int_equal(r->nunits, 1);
	assert_int_equal(r->count, 1);
	assert_string_equal(r->units[0], "nvidia0:1.2_x-y");
	assert_int_equal(r->share, 1000);
	assert_string_equal(r->env, "_x9");
	assert_false(r->cluster);
	r = &cfg->resources[3];
	assert_string_equal(r->name, "slots");
	assert_int_equal(r->count, UINT32_MAX);
	assert_int_equal(cfg->slots, 2);
	assert_int_equal(config_resource_find(cfg, "gpu"), 0);
	assert_int_equal(config_resource_find(cfg, "licence"), 1);
	assert_int_equal(config_resource_find(cfg, "slots"), 3);
	assert_int_equal(config_resource_find(cfg, "GPU"), -1);
	assert_int_equal(config_resource_find(cfg, "normal"), -1);
	assert_int_equal(config_resource_find(cfg, NULL), -1);
	config_free(cfg);
}

/* units: 1 to 64 names, each 1 to 64 of its characters, none twice. */
static void
resource_units_are_checked(void **state)
{
	char units[64 * 4 + 16], name[80], line[128], *conf;
	struct config *cfg;
	size_t n = 0;
	unsigned i;

	(void)state;
	for (i = 0; i < CONFIG_RESOURCE_UNITS_MAX; i++)
		n += (size_t)snprintf(units + n, sizeof units - n, "%s%u",
		    i > 0 ? "," : "", i);
	assert_true(asprintf(&conf, "[resource.r]\nunits = %s\n", units) !=
	    -1);
	cfg = load_ok(conf);
	assert_int_equal(cfg->resources[0].nunits, 64);
	assert_string_equal(cfg->resources[0].units[63], "63");
	config_free(cfg);
	free(conf);
	assert_true(asprintf(&conf, "units = %s,64", units) != -1);
	assert_resource_error(conf, 2, "units: more than 64 units");
	free(conf);

	memset(name, 'u', 64);
	name[64] = '\0';
	snprintf(line, sizeof line, "[resource.r]\nunits = %s\n", name);
	cfg = load_ok(line);
	assert_string_equal(cfg->resources[0].units[0], name);
	config_free(cfg);
	snprintf(line, sizeof line, "units = a,%su", name);
	assert_resource_error(line, 2, "units: expected a unit name of 1 to "
	    "64 of A-Z, a-z, 0-9, _, ., : and -, not \"uuuu*");

	assert_resource_error("units = 0,,1", 2, "units: unit 2 has no name: "
	    "expected names separated by commas");
	assert_resource_error("units = 0,1,", 2, "units: unit 3 has no "
	    "name*");
	assert_resource_error("units = ,", 2, "units: unit 1 has no name*");
	assert_resource_error("units =", 2, "units: unit 1 has no name*");
	assert_resource_error("units = 0, 1 ,0", 2,
	    "units: unit \"0\" is named twice");
	assert_resource_error("units = gpu/0", 2, "units: expected a unit "
	    "name of 1 to 64 of A-Z, a-z, 0-9, _, ., : and -, not "
	    "\"gpu/0\"");
	assert_resource_error("units = a b", 2, "units: expected a unit name "
	    "*");
}

/* Exactly one of units and count; share, env and scope = cluster only
 * where they make sense; each key's bounds and form. */
static void
resource_keys_are_checked(void **state)
{
	char env[CONFIG_RESOURCE_ENV_MAX + 2], line[200];
	struct config *cfg;
	char *cause;

	(void)state;
	assert_resource_error("", 1, "[resource.r]: neither units nor count: "
	    "give its units' names (units = 0,1) or how many there are "
	    "(count = 4)");
	assert_resource_error("share = 2", 1, "[resource.r]: neither*");
	assert_resource_error("units = 0\ncount = 2", 3, "[resource.r]: both "
	    "units (line 2) and count (line 3): give one");
	assert_resource_error("count = 2\nunits = 0", 3, "[resource.r]: both "
	    "units (line 3) and count (line 2): give one");
	assert_resource_error("count = 2\nshare = 2", 3, "share: only for a "
	    "resource of named units; [resource.r] is counted");
	/* Given, even as the default: it is a mistake all the same. */
	assert_resource_error("share = 1\ncount = 2", 2, "share: only for*");
	assert_resource_error("count = 2\nenv = LICENCES", 3, "env: only for "
	    "a resource of named units; [resource.r] is counted, and no job "
	    "is told which of its units it has");
	assert_resource_error("units = 0\nscope = cluster", 3, "scope: "
	    "cluster is only for a counted resource; [resource.r] has named "
	    "units, which are this node's");
	assert_resource_error("count = 0", 2, "count: expected a whole number "
	    "from 1 to 4294967295, not \"0\"");
	assert_resource_error("count = 4294967296", 2, "count: expected a "
	    "whole number from 1 to 4294967295, not \"4294967296\"");
	assert_resource_error("count = -1", 2, "count: expected*");
	assert_resource_error("count = many", 2, "count: expected*");
	assert_resource_error("units = 0\nshare = 0", 3, "share: expected a "
	    "whole number from 1 to 1000, not \"0\"");
	assert_resource_error("units = 0\nshare = 1001", 3, "share: expected "
	    "a whole number from 1 to 1000, not \"1001\"");
	assert_resource_error("count = 1\nscope = world", 3, "scope: "
	    "expected \"node\" or \"cluster\", not \"world\"");
	assert_resource_error("units = 0\nenv = 1CUDA", 3, "env: expected a "
	    "variable name of 1 to 128 of A-Z, a-z, 0-9 and _, not starting "
	    "with a digit, not \"1CUDA\"");
	assert_resource_error("units = 0\nenv = CUDA-X", 3, "env: expected "
	    "a variable name*");
	assert_resource_error("units = 0\nenv =", 3, "env: expected a "
	    "variable name*");
	assert_resource_error("units = 0\nenv = TRIAGE_GPU", 3, "env: "
	    "TRIAGE_* variables are triage's own: expected another name, not "
	    "\"TRIAGE_GPU\"");
	memset(env, 'E', sizeof env - 1);
	env[sizeof env - 1] = '\0';
	snprintf(line, sizeof line, "units = 0\nenv = %s", env);
	assert_resource_error(line, 3, "env: expected a variable name*");
	env[sizeof env - 2] = '\0';
	snprintf(line, sizeof line, "[resource.r]\nunits = 0\nenv = %s\n",
	    env);
	cfg = load_ok(line);
	assert_string_equal(cfg->resources[0].env, env);
	config_free(cfg);
	assert_resource_error("units = 0\nunit = 1", 3,
	    "unit: unknown key in [resource.r]");
	assert_resource_error("units = 0\nunits = 1", 3,
	    "units: given twice, first on line 2");

	/* Every problem of every section at once, in line order. */
	cause = load_bad("[resource.a]\ncount = 0\nshare = 2\n"
	    "[resource.b]\nunits = 0,0\nscope = cluster\n");
	assert_error(cause, 2, "count: expected*");
	assert_error(cause, 3, "share: only for*");
	assert_error(cause, 5, "units: unit \"0\" is named twice");
	assert_error(cause, 6, "scope: cluster is only for*");
	assert_int_equal(count_lines(cause), 4);
	free(cause);
}

/* Names of [a-z0-9_-]{1,32}, at most 32 sections, each once, and the
 * variables they give a job clash with nothing. */
static void
resource_sections_are_checked(void **state)
{
	char *conf = NULL, *next, *cause;
	struct config *cfg;
	unsigned i;

	(void)state;
	cause = load_bad("[resource.GPU]\ncount = 1\n[resource.g.p]\n"
	    "count = 1\n[resource.]\ncount = 1\n"
	    "[resource.abcdefghijklmnopqrstuvwxyz0123456]\ncount = 1\n");
	assert_error(cause, 1, "[resource.GPU]: bad resource name \"GPU\": "
	    "expected 1 to 32 of a-z, 0-9, _ and -");
	assert_error(cause, 3, "[resource.g.p]: bad resource name*");
	assert_error(cause, 5, "[resource.]: bad resource name \"\"*");
	assert_error(cause, 7, "[resource.abcdefghijklmnopqrstuvwxyz0123456]: "
	    "bad resource name*");
	assert_int_equal(count_lines(cause), 4);
	free(cause);
	cfg = load_ok("[resource.abcdefghijklmnopqrstuvwxyz012345]\n"
	    "count = 1\n[resource.a_-9]\ncount = 1\n");
	assert_int_equal(cfg->nresources, 2);
	config_free(cfg);

	for (i = 0; i <= CONFIG_RESOURCES_MAX; i++) {
		assert_true(asprintf(&next, "%s[resource.r%u]\ncount = %u\n",
		    conf != NULL ? conf : "", i, i + 1) != -1);
		free(conf);
		conf = next;
	}
	cause = load_bad(conf);
	assert_error(cause, 2 * CONFIG_RESOURCES_MAX + 1,
	    "[resource.r32]: more than 32 resources");
	assert_int_equal(count_lines(cause), 1);
	free(cause);
	/* One fewer is fine. */
	*strstr(conf, "[resource.r32]") = '\0';
	cfg = load_ok(conf);
	assert_int_equal(cfg->nresources, CONFIG_RESOURCES_MAX);
	assert_string_equal(cfg->resources[31].name, "r31");
	config_free(cfg);
	free(conf);

	cause = load_bad("[resource.gpu]\nunits = 0\n[resource.gpu]\n"
	    "share = 2\n");
	assert_error(cause, 3, "[resource.gpu]: section given twice, first "
	    "on line 1");
	assert_int_equal(count_lines(cause), 1);
	free(cause);

	cause = load_bad("[resource.gpu-a]\nunits = 0\nenv = CUDA\n"
	    "[resource.gpu_a]\nunits = 1\nenv = CUDA\n"
	    "[resource.job-id]\ncount = 1\n[resource.priority]\ncount = 1\n"
	    "[resource.attempt]\ncount = 1\n[resource.socket]\ncount = 1\n"
	    "[resource.config]\ncount = 1\n");
	assert_error(cause, 4, "[resource.gpu_a]: its units would be given in "
	    "TRIAGE_GPU_A, as those of [resource.gpu-a] on line 1: choose "
	    "another name");
	assert_error(cause, 6, "env: CUDA is already [resource.gpu-a]'s "
	    "(line 3)");
	assert_error(cause, 7, "[resource.job-id]: its units would be given "
	    "in TRIAGE_JOB_ID, which is triage's own: choose another name");
	assert_error(cause, 9, "[resource.priority]: its units would be "
	    "given in TRIAGE_PRIORITY*");
	assert_error(cause, 11, "[resource.attempt]: *");
	assert_error(cause, 13, "[resource.socket]: *");
	assert_error(cause, 15, "[resource.config]: *");
	assert_int_equal(count_lines(cause), 7);
	free(cause);
}

static void
every_shutdown_and_log_level_word_maps(void **state)
{
	static const struct {
		const char *line;
		int shutdown;
		int level;
	} cases[] = {
		{ "shutdown = requeue\nlog_level = info\n",
		  CONFIG_SHUTDOWN_REQUEUE, LOG_INFO },
		{ "shutdown = drain\nlog_level = notice\n",
		  CONFIG_SHUTDOWN_DRAIN, LOG_NOTICE },
		{ "shutdown = finish\nlog_level = warning\n",
		  CONFIG_SHUTDOWN_FINISH, LOG_WARNING },
		{ "shutdown = finish\nlog_level = err\n",
		  CONFIG_SHUTDOWN_FINISH, LOG_ERR },
		{ "shutdown = keep\nlog_level = err\n",
		  CONFIG_SHUTDOWN_KEEP, LOG_ERR },
	};
	struct config *cfg;
	char *conf;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_true(asprintf(&conf, "[daemon]\n%s", cases[i].line) !=
		    -1);
		cfg = load_ok(conf);
		assert_int_equal(cfg->shutdown, cases[i].shutdown);
		assert_int_equal(cfg->log_level, cases[i].level);
		config_free(cfg);
		free(conf);
	}
}

static void
every_boolean_word_is_accepted(void **state)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	struct config *cfg;
	char *conf;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		assert_true(asprintf(&conf, "[daemon]\nrun_as_submitter = %s\n",
		    yes[i]) != -1);
		cfg = load_ok_as(conf, &root_env);
		assert_true(cfg->run_as_submitter);
		config_free(cfg);
		/* Only root can run jobs as someone else. */
		cfg = load_ok(conf);
		assert_false(cfg->run_as_submitter);
		config_free(cfg);
		free(conf);
		assert_true(asprintf(&conf, "[daemon]\nrun_as_submitter = %s\n",
		    no[i]) != -1);
		cfg = load_ok(conf);
		assert_false(cfg->run_as_submitter);
		config_free(cfg);
		free(conf);
	}
	assert_daemon_error("run_as_submitter = Yes",
	    "run_as_submitter: expected yes, no, true, false, on, off, 1 or 0, "
	    "not \"Yes\"");
}

static void
bounds_are_inclusive_and_enforced(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("[daemon]\nmax_request = 1KiB\nmax_output = 0\n"
	    "kill_grace = 1d\nkeep_finished = 1s\nmax_clients = 1000000\n"
	    "slots = 1024\nworkers = 1\nsocket_mode = 0\n"
	    "[priority.a]\nrank = 1000000\nweight = 10000\n"
	    "max_queued = 100000000\nmax_running = 1024\ntimeout = 365d\n"
	    "retries = 1000\n");
	assert_int_equal(cfg->max_request, 1024);
	assert_int_equal(cfg->max_output, 0);
	assert_int_equal(cfg->kill_grace_ms, 86400000);
	assert_int_equal(cfg->keep_finished_ms, 1000);
	assert_int_equal(cfg->slots, 1024);
	assert_int_equal(cfg->workers, 1024);
	assert_int_equal(cfg->priorities[0].rank, 1000000);
	config_free(cfg);
	cfg = load_ok("[daemon]\nmax_request = 1GiB\nmax_output = 1TiB\n"
	    "keep_finished = 3650d\nmax_clients = 1\nkill_grace = 0\n"
	    "[priority.a]\nrank = 0\nweight = 1\nmax_queued = 1\n"
	    "max_running = 0\ntimeout = 0\nretries = 0\n");
	assert_int_equal(cfg->max_request, UINT64_C(1) << 30);
	assert_int_equal(cfg->max_output, UINT64_C(1) << 40);
	config_free(cfg);

	assert_daemon_error("max_request = 1023",
	    "max_request: expected a size from 1KiB to 1GiB, such as 512, "
	    "64KiB or 16MiB, not \"1023\"");
	assert_daemon_error("max_request = 1073741825",
	    "max_request: expected a size from 1KiB to 1GiB*");
	assert_daemon_error("max_output = 1025GiB",
	    "max_output: expected a size from 0 to 1TiB*");
	assert_daemon_error("kill_grace = 86400001ms",
	    "kill_grace: expected a duration from 0 to 1d, such as 500ms, "
	    "30s, 5m, 2h or 7d, not \"86400001ms\"");
	assert_daemon_error("keep_finished = 999ms",
	    "keep_finished: expected a duration from 1s to 3650d*");
	assert_daemon_error("max_clients = 0",
	    "max_clients: expected a whole number from 1 to 1000000, not "
	    "\"0\"");
	assert_daemon_error("max_clients = 1000001",
	    "max_clients: expected a whole number from 1 to 1000000*");
	assert_daemon_error("slots = 0",
	    "slots: expected \"auto\" or a whole number from 1 to 1024, not "
	    "\"0\"");
	assert_daemon_error("workers = 1025",
	    "workers: expected \"auto\" or a whole number from 1 to 1024, not "
	    "\"1025\"");
	assert_priority_error("weight = 0",
	    "weight: expected a whole number from 1 to 10000, not \"0\"");
	assert_priority_error("max_queued = 100000001",
	    "max_queued: expected a whole number from 1 to 100000000*");
	assert_priority_error("max_running = 1025",
	    "max_running: expected a whole number from 0 to 1024*");
	assert_priority_error("timeout = 366d",
	    "timeout: expected a duration from 0 to 365d*");
	assert_priority_error("retries = 1001",
	    "retries: expected a whole number from 0 to 1000*");
}

static void
socket_mode_is_octal_with_or_without_leading_zero(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("[daemon]\nsocket_mode = 660\n");
	assert_int_equal(cfg->socket_mode, 0660);
	config_free(cfg);
	cfg = load_ok("[daemon]\nsocket_mode = 0777\n");
	assert_int_equal(cfg->socket_mode, 0777);
	config_free(cfg);
	assert_daemon_error("socket_mode = 0778",
	    "socket_mode: expected an octal mode from 0 to 0777 such as 0660, "
	    "not \"0778\"");
	assert_daemon_error("socket_mode = 1000",
	    "socket_mode: expected an octal mode*");
	assert_daemon_error("socket_mode = 0o660",
	    "socket_mode: expected an octal mode*");
	assert_daemon_error("socket_mode = rw-rw----",
	    "socket_mode: expected an octal mode*");
}

static void
bad_values_name_the_expected_form(void **state)
{
	char *cause;

	(void)state;
	assert_daemon_error("slots = lots",
	    "slots: expected \"auto\" or a whole number from 1 to 1024, not "
	    "\"lots\"");
	assert_daemon_error("slots = -1",
	    "slots: expected \"auto\" or a whole number*");
	assert_daemon_error("policy = fair",
	    "policy: expected \"strict\" or \"weighted\", not \"fair\"");
	assert_daemon_error("shutdown = now",
	    "shutdown: expected \"requeue\", \"drain\", \"finish\" or "
	    "\"keep\", not \"now\"");
	assert_daemon_error("log_level = warn",
	    "log_level: expected \"debug\", \"info\", \"notice\", \"warning\" "
	    "or \"err\", not \"warn\"");
	assert_daemon_error("kill_grace = 10 s",
	    "kill_grace: expected a duration from 0 to 1d, such as 500ms, "
	    "30s, 5m, 2h or 7d, not \"10 s\"");
	assert_daemon_error("kill_grace = 1.5h",
	    "kill_grace: expected a duration*");
	assert_daemon_error("max_output = 64K",
	    "max_output: expected a size from 0 to 1TiB, such as 512, 64KiB "
	    "or 16MiB, not \"64K\"");
	assert_daemon_error("max_clients = 1e3",
	    "max_clients: expected a whole number*");
	assert_daemon_error("socket =",
	    "socket: expected a path of 1 to 107 bytes, not \"\"");
	assert_daemon_error("socket = /run/triage/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaa.sock",
	    "socket: expected a path of 1 to 107 bytes*");
	assert_daemon_error("state_dir =",
	    "state_dir: expected a path of 1 to 4095 bytes, not \"\"");
	assert_daemon_error("socket_group =",
	    "socket_group: expected a group name, not \"\"");
	assert_daemon_error("default_priority = Normal",
	    "default_priority: expected a priority name: 1 to 32 of a-z, 0-9, "
	    "_ and -, not \"Normal\"");
	cause = load_bad("[priority.p]\nrank = first\n");
	assert_error(cause, 2,
	    "rank: expected a whole number from 0 to 1000000, not \"first\"");
	/* A bad rank is not also a missing one. */
	assert_int_equal(count_lines(cause), 1);
	free(cause);
}

static void
unknown_group_is_an_error_on_its_line(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[daemon]\n\nsocket_group = no-such-group-triage\n"
	    "admin_group = no-such-group-either\n");
	assert_error(cause, 3,
	    "socket_group: unknown group \"no-such-group-triage\"");
	assert_error(cause, 4,
	    "admin_group: unknown group \"no-such-group-either\"");
	free(cause);
}

static void
groups_resolve_by_name(void **state)
{
	struct config *cfg;

	(void)state;
	assert_non_null(getgrnam("root"));
	cfg = load_ok("[daemon]\nsocket_group = root\n");
	assert_true(cfg->has_socket_group);
	assert_int_equal(cfg->socket_gid, 0);
	assert_false(cfg->has_admin_group);
	config_free(cfg);
}

static void
file_without_priorities_gets_the_builtin_three(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("[daemon]\npolicy = weighted\n");
	assert_builtin_priorities(cfg);
	config_free(cfg);
	cfg = load_ok("[daemon]\ndefault_priority = high\n");
	assert_int_equal(cfg->default_priority, 0);
	config_free(cfg);
	assert_daemon_error("default_priority = urgent",
	    "default_priority: no priority called \"urgent\"");
}

static void
priorities_are_sorted_by_rank(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok(
	    "[priority.c]\nrank = 30\n"
	    "[priority.a]\nrank = 5\n"
	    "[priority.d]\nrank = 1000\n"
	    "[priority.b]\nrank = 6\n"
	    "[priority.z]\nrank = 0\n");
	assert_int_equal(cfg->npriorities, 5);
	assert_priority(&cfg->priorities[0], "z", 0);
	assert_priority(&cfg->priorities[1], "a", 5);
	assert_priority(&cfg->priorities[2], "b", 6);
	assert_priority(&cfg->priorities[3], "c", 30);
	assert_priority(&cfg->priorities[4], "d", 1000);
	assert_int_equal(cfg->priorities[3].line, 1);
	assert_int_equal(cfg->priorities[0].line, 9);
	config_free(cfg);
}

static void
default_priority_is_the_middle_rank(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("[priority.only]\nrank = 3\n");
	assert_int_equal(cfg->default_priority, 0);
	config_free(cfg);
	cfg = load_ok("[priority.b]\nrank = 2\n[priority.a]\nrank = 1\n");
	assert_string_equal(cfg->priorities[cfg->default_priority].name, "b");
	config_free(cfg);
	cfg = load_ok("[priority.d]\nrank = 4\n[priority.c]\nrank = 3\n"
	    "[priority.b]\nrank = 2\n[priority.a]\nrank = 1\n");
	assert_int_equal(cfg->default_priority, 2);
	assert_string_equal(cfg->priorities[cfg->default_priority].name, "c");
	config_free(cfg);
	cfg = load_ok("[priority.e]\nrank = 50\n[priority.d]\nrank = 40\n"
	    "[priority.c]\nrank = 30\n[priority.b]\nrank = 20\n"
	    "[priority.a]\nrank = 10\n");
	assert_string_equal(cfg->priorities[cfg->default_priority].name, "c");
	config_free(cfg);
}

static void
default_priority_names_a_configured_priority(void **state)
{
	struct config *cfg;
	char *cause;

	(void)state;
	/* It may come before the priorities it names. */
	cfg = load_ok("[daemon]\ndefault_priority = fast\n"
	    "[priority.slow]\nrank = 2\n[priority.fast]\nrank = 1\n"
	    "[priority.mid]\nrank = 3\n");
	assert_int_equal(cfg->default_priority, 0);
	config_free(cfg);
	cause = load_bad("[daemon]\npolicy = strict\ndefault_priority = normal\n"
	    "[priority.slow]\nrank = 2\n");
	assert_error(cause, 3,
	    "default_priority: no priority called \"normal\"");
	assert_int_equal(count_lines(cause), 1);
	free(cause);
}

static void
workers_are_raised_to_slots(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("[daemon]\nslots = 8\nworkers = 2\n");
	assert_int_equal(cfg->slots, 8);
	assert_int_equal(cfg->workers, 8);
	config_free(cfg);
	cfg = load_ok("[daemon]\nslots = 4\n");
	assert_int_equal(cfg->workers, 4);
	assert_true(cfg->workers_auto);
	config_free(cfg);
	cfg = load_ok("[daemon]\nslots = 4\nworkers = 16\n");
	assert_int_equal(cfg->workers, 16);
	config_free(cfg);
	cfg = load_ok("[daemon]\nworkers = 1\n");
	assert_int_equal(cfg->workers, cfg->slots);
	config_free(cfg);
}

static void
slots_auto_follows_the_cgroup_quota(void **state)
{
	struct config_opts opts = { fx->conf, false, NULL, &user_env };
	struct config *cfg;
	char *cause = NULL, quota[160];
	unsigned want = affinity() < 2 ? affinity() : 2;

	(void)state;
	snprintf(quota, sizeof quota, "%s/quota", fx->dir);
	write_file(quota, "150000 100000\n");
	write_file(fx->conf, "[daemon]\nslots = auto\n");
	opts.cpu_max = quota;
	cfg = config_load(&opts, &cause);
	assert_non_null(cfg);
	assert_true(cfg->slots_auto);
	assert_int_equal(cfg->slots, want);
	assert_int_equal(cfg->workers, want);
	config_free(cfg);

	write_file(quota, "50000 100000\n");
	cfg = config_load(&opts, &cause);
	assert_non_null(cfg);
	assert_int_equal(cfg->slots, 1);
	config_free(cfg);

	write_file(quota, "max 100000\n");
	cfg = config_load(&opts, &cause);
	assert_non_null(cfg);
	assert_int_equal(cfg->slots, affinity());
	config_free(cfg);
}

static void
comments_start_with_semicolon_or_hash(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok(
	    "; a comment\n"
	    "# another\n"
	    "[daemon] ; the daemon\n"
	    "slots = 3 ; three\n"
	    "   ; an indented comment is still a comment\n"
	    "   # and so is this\n"
	    "\n"
	    "workers = 5\t; tabs count as space\n");
	assert_int_equal(cfg->slots, 3);
	assert_int_equal(cfg->workers, 5);
	config_free(cfg);
}

static void
inline_comment_needs_a_space_before_semicolon_and_hash_is_none(void **state)
{
	(void)state;
	assert_daemon_error("slots = 4;four",
	    "slots: expected \"auto\" or a whole number from 1 to 1024, not "
	    "\"4;four\"");
	assert_daemon_error("slots = 4 # four",
	    "slots: expected \"auto\" or a whole number from 1 to 1024, not "
	    "\"4 # four\"");
}

static void
crlf_line_ends_and_colon_separator_are_accepted(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("[daemon]\r\nslots = 3\r\nworkers: 7\r\n");
	assert_int_equal(cfg->slots, 3);
	assert_int_equal(cfg->workers, 7);
	config_free(cfg);
}

static void
byte_order_mark_and_trailing_space_are_ignored(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("\xEF\xBB\xBF[daemon]   \nslots = 3 \t\n"
	    "socket = /run/a=b:c.sock\n");
	assert_int_equal(cfg->slots, 3);
	assert_string_equal(cfg->socket, "/run/a=b:c.sock");
	config_free(cfg);
}

static void
nul_byte_in_a_line_is_an_error(void **state)
{
	struct config_opts opts = { fx->conf, false, fx->no_limit, &user_env };
	static const char text[] = "[daemon]\nslots = 2\0junk\nworkers = 3\n";
	char *cause = NULL;
	FILE *f;

	(void)state;
	f = fopen(fx->conf, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
	fclose(f);
	assert_null(config_load(&opts, &cause));
	assert_error(cause, 2, "line contains a NUL byte");
	assert_int_equal(count_lines(cause), 1);
	free(cause);
}

static void
example_config_from_the_spec_parses(void **state)
{
	struct config *cfg;

	(void)state;
	/* config.md's example, with groups that exist on any machine. */
	cfg = load_ok(
	    "[daemon]\n"
	    "slots = auto\n"
	    "policy = weighted\n"
	    "socket_group = root\n"
	    "admin_group = root\n"
	    "\n"
	    "[priority.interactive]\n"
	    "rank = 0\n"
	    "weight = 8\n"
	    "\n"
	    "[priority.normal]\n"
	    "rank = 10\n"
	    "weight = 3\n"
	    "\n"
	    "[priority.batch]\n"
	    "rank = 20\n"
	    "weight = 1\n"
	    "max_running = 1\n"
	    "timeout = 2h\n");
	assert_string_equal(cfg->policy, "weighted");
	assert_true(cfg->slots_auto);
	assert_int_equal(cfg->slots, affinity());
	assert_true(cfg->has_socket_group);
	assert_true(cfg->has_admin_group);
	assert_int_equal(cfg->npriorities, 3);
	assert_priority(&cfg->priorities[0], "interactive", 0);
	assert_int_equal(cfg->priorities[0].weight, 8);
	assert_priority(&cfg->priorities[1], "normal", 10);
	assert_int_equal(cfg->priorities[1].weight, 3);
	assert_priority(&cfg->priorities[2], "batch", 20);
	assert_int_equal(cfg->priorities[2].max_running, 1);
	assert_int_equal(cfg->priorities[2].timeout_ms, 7200000);
	assert_int_equal(cfg->default_priority, 1);
	config_free(cfg);
}

static void
unknown_section_is_an_error_and_its_keys_are_skipped(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[daemon]\nslots = 2\n[deamon]\nslots = 3\n"
	    "[priority]\nrank = 1\n[resources.gpu]\nunits = 0\n");
	assert_error(cause, 3, "[deamon]: unknown section; expected [daemon], "
	    "[http], [cluster], [priority.NAME] or [resource.NAME]");
	assert_error(cause, 5, "[priority]: unknown section*");
	assert_error(cause, 7, "[resources.gpu]: unknown section*");
	assert_int_equal(count_lines(cause), 3);
	free(cause);
}

static void
unknown_key_is_an_error(void **state)
{
	(void)state;
	assert_daemon_error("slot = 2", "slot: unknown key in [daemon]");
	assert_daemon_error("Slots = 2", "Slots: unknown key in [daemon]");
	assert_daemon_error("rank = 2", "rank: unknown key in [daemon]");
	assert_priority_error("slots = 2", "slots: unknown key in [priority.p]");
}

static void
key_given_twice_names_the_first_line(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[daemon]\nslots = 2\npolicy = strict\nslots = 3\n"
	    "[priority.a]\nrank = 1\n\nrank = 2\n");
	assert_error(cause, 4, "slots: given twice, first on line 2");
	assert_error(cause, 8, "rank: given twice, first on line 6");
	assert_int_equal(count_lines(cause), 2);
	free(cause);
}

static void
indented_line_continuing_a_key_is_an_error(void **state)
{
	char *cause;

	(void)state;
	/* inih reads an indented line as more of the previous value. */
	cause = load_bad("[daemon]\n  slots = 2\n  workers = 4\n");
	assert_error(cause, 3, "slots: this indented line continues the value "
	    "of slots from line 2; values take one line, so remove the "
	    "indentation");
	assert_int_equal(count_lines(cause), 1);
	free(cause);
}

static void
bad_priority_names_are_errors(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[priority.Fast]\nrank = 1\n"
	    "[priority.]\nrank = 2\n"
	    "[priority.a_name_that_is_way_too_long_for_us]\nrank = 3\n"
	    "[priority.sp ace]\nrank = 4\n"
	    "[priority.ok]\nrank = 5\n");
	assert_error(cause, 1, "[priority.Fast]: bad priority name \"Fast\": "
	    "expected 1 to 32 of a-z, 0-9, _ and -");
	assert_error(cause, 3, "[priority.]: bad priority name \"\"*");
	assert_error(cause, 5, "[priority.a_name_that_is_way_too_long_for_us]: "
	    "bad priority name*");
	assert_error(cause, 7, "[priority.sp ace]: bad priority name*");
	assert_int_equal(count_lines(cause), 4);
	free(cause);
}

static void
missing_rank_is_an_error_even_in_an_empty_section(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[priority.a]\nrank = 0\n"
	    "[priority.empty]\n"
	    "[priority.b]\nweight = 2\n");
	assert_error(cause, 3, "rank: missing from [priority.empty]");
	assert_error(cause, 4, "rank: missing from [priority.b]");
	assert_int_equal(count_lines(cause), 2);
	free(cause);
}

static void
duplicate_rank_names_both_priorities(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[priority.a]\nrank = 10\n[priority.b]\nweight = 2\n"
	    "rank = 10\n[priority.c]\nrank = 10\n");
	assert_error(cause, 5, "rank: priority \"b\" has rank 10, like "
	    "priority \"a\" on line 2; ranks must be unique");
	assert_error(cause, 7, "rank: priority \"c\" has rank 10, like "
	    "priority \"a\" on line 2*");
	assert_int_equal(count_lines(cause), 2);
	free(cause);
}

static void
more_than_the_maximum_of_priorities_is_an_error(void **state)
{
	char *conf = NULL, *next, *cause;
	unsigned i;

	(void)state;
	for (i = 0; i <= CONFIG_PRIORITIES_MAX; i++) {
		assert_true(asprintf(&next, "%s[priority.p%u]\nrank = %u\n",
		    conf != NULL ? conf : "", i, i) != -1);
		free(conf);
		conf = next;
	}
	cause = load_bad(conf);
	assert_error(cause, 2 * CONFIG_PRIORITIES_MAX + 1,
	    "[priority.p64]: more than 64 priorities");
	assert_int_equal(count_lines(cause), 1);
	free(cause);
	free(conf);
}

static void
section_given_twice_is_an_error(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[daemon]\nslots = 2\n[priority.a]\nrank = 1\n"
	    "[daemon]\nworkers = 3\n[priority.a]\nweight = 2\n");
	assert_error(cause, 5, "[daemon]: section given twice, first on line 1");
	assert_error(cause, 7, "[priority.a]: section given twice, first on "
	    "line 3");
	assert_int_equal(count_lines(cause), 2);
	free(cause);
}

static void
key_outside_any_section_is_an_error(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("slots = 2\n[daemon]\n");
	assert_error(cause, 1, "slots: outside any section; keys go under "
	    "[daemon], [http], [cluster], [priority.NAME] or "
	    "[resource.NAME]");
	free(cause);
}

static void
http_section_is_optional_and_off_by_default(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("[daemon]\nslots = 2\n");
	assert_null(cfg->http.listen);
	assert_int_equal(cfg->http.auth, CONFIG_HTTP_AUTH_TOKEN);
	assert_int_equal(cfg->http.max_connections, 64);
	assert_int_equal(cfg->http.timeout_ms, 30000);
	assert_int_equal(cfg->http.header_timeout_ms, 10000);
	assert_int_equal(cfg->http.max_connections_per_address, 16);
	assert_null(cfg->http.token_file);
	assert_null(cfg->http.dashboard_dir);
	config_free(cfg);
}

static void
http_keys_are_read(void **state)
{
	struct config *cfg;
	char *cause;

	(void)state;
	cfg = load_ok("[http]\nlisten = [::1]:9187\ntoken_file = /etc/t\n"
	    "max_connections = 8\ntimeout = 5s\ndashboard_dir = /srv/d\n"
	    "header_timeout = 2s\nmax_connections_per_address = 4\n");
	assert_string_equal(cfg->http.listen, "[::1]:9187");
	assert_string_equal(cfg->http.token_file, "/etc/t");
	assert_int_equal(cfg->http.max_connections, 8);
	assert_int_equal(cfg->http.timeout_ms, 5000);
	assert_int_equal(cfg->http.header_timeout_ms, 2000);
	assert_int_equal(cfg->http.max_connections_per_address, 4);
	assert_string_equal(cfg->http.dashboard_dir, "/srv/d");
	config_free(cfg);
	cause = load_bad("[http]\nlisten = /s\nauth = none\n"
	    "header_timeout = 999ms\n");
	assert_error(cause, 4, "header_timeout: expected a duration from 1s "
	    "to 1h*");
	free(cause);
	cause = load_bad("[http]\nlisten = /s\nauth = none\n"
	    "max_connections_per_address = 0\n");
	assert_error(cause, 4, "max_connections_per_address: expected a "
	    "whole number from 1 to 10000, not \"0\"");
	free(cause);
	cfg = load_ok("[http]\nlisten = /run/triage/http.sock\nauth = none\n");
	assert_int_equal(cfg->http.auth, CONFIG_HTTP_AUTH_NONE);
	config_free(cfg);
	cfg = load_ok("[http]\nlisten = 127.0.0.2:0\nauth = none\n");
	config_free(cfg);
}

/* Each of the n values, between before and after, is refused with one
 * error, want, on line. */
static void
assert_each_bad(const char *before, const char *const *values, size_t n,
    const char *after, unsigned line, const char *want)
{
	char text[256], *cause;
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(text, sizeof text, "%s%s%s", before, values[i], after);
		cause = load_bad(text);
		assert_error(cause, line, want);
		assert_int_equal(count_lines(cause), 1);
		free(cause);
	}
}

static void
http_bad_listen_addresses_are_errors(void **state)
{
	static const char *const bad[] = {
		"localhost:9187", "9187", ":9187", "127.0.0.1", "127.0.0.1:",
		"127.0.0.1:65536", "127.0.0.1:x", "::1:9187", "[127.0.0.1]:80",
		"[::1]9187", "relative/path", "1.2.3.4:80x",
	};
	(void)state;
	assert_each_bad("[http]\nlisten = ", bad, sizeof bad / sizeof *bad,
	    "\ntoken_file = /t\n", 2, "listen: expected HOST:PORT with a "
	    "numeric IPv4 or [IPv6] host*");
}

static void
http_needs_a_listen_and_a_credential(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[daemon]\nslots = 2\n[http]\ntimeout = 5s\n");
	assert_error(cause, 3, "listen: missing from [http]*");
	free(cause);
	cause = load_bad("[http]\nlisten = 127.0.0.1:9187\n");
	assert_error(cause, 1, "token_file: missing from [http]: auth = "
	    "token (the default) needs it*");
	free(cause);
	cause = load_bad("[http]\nlisten = 0.0.0.0:9187\nauth = none\n");
	assert_error(cause, 3, "auth: none lets anyone who can connect act "
	    "on every job, and 0.0.0.0:9187 is reachable from other hosts*");
	free(cause);
	cause = load_bad("[http]\nlisten = [::]:9187\nauth = maybe\n");
	assert_error(cause, 3, "auth: expected \"token\" or \"none\", not \"maybe\"");
	free(cause);
	cause = load_bad("[http]\nlisten = /s\n[http]\nnope = 1\n");
	assert_error(cause, 3, "[http]: section given twice, first on line 1");
	assert_error(cause, 4, "nope: unknown key in [http]");
	free(cause);
}


/* A user on a host whose name is host. */
static struct caller_env
host_env(const char *host)
{
	struct caller_env env = user_env;

	env.hostname = host;
	return env;
}

static void
cluster_section_is_optional_and_the_node_is_the_host(void **state)
{
	struct caller_env env = host_env("build-7.example.org");
	struct config *cfg;

	(void)state;
	cfg = load_ok_as("[daemon]\nslots = 2\n", &env);
	assert_false(cfg->cluster.enabled);
	assert_null(cfg->cluster.postgresql);
	assert_string_equal(cfg->cluster.node, "build-7");
	assert_int_equal(cfg->cluster.lease_ms, 30000);
	config_free(cfg);

	/* The built-in defaults, no file, name the node too. */
	env = host_env("solo");
	cfg = load_ok_as("", &env);
	assert_string_equal(cfg->cluster.node, "solo");
	config_free(cfg);

	/* The host's own name when the caller gives none. */
	cfg = load_ok("[daemon]\nslots = 2\n");
	assert_non_null(cfg->cluster.node);
	assert_true(cfg->cluster.node[0] != '\0');
	assert_null(strchr(cfg->cluster.node, '.'));
	config_free(cfg);
}

static void
cluster_keys_are_read(void **state)
{
	struct caller_env env = host_env("db.example.org");
	struct config *cfg;

	(void)state;
	cfg = load_ok_as("[cluster]\npostgresql = host=db1 dbname=triage "
	    "user=triage\nnode = build-7\nlease = 2m\n", &env);
	assert_true(cfg->cluster.enabled);
	assert_string_equal(cfg->cluster.postgresql,
	    "host=db1 dbname=triage user=triage");
	assert_string_equal(cfg->cluster.node, "build-7");
	assert_int_equal(cfg->cluster.lease_ms, 120000);
	config_free(cfg);

	/* A URI, the defaults of node and lease; the bounds of lease. */
	cfg = load_ok_as("[cluster]\npostgresql = postgresql://triage@db1:5433"
	    "/triage?sslmode=require\nlease = 1s\n", &env);
	assert_string_equal(cfg->cluster.postgresql,
	    "postgresql://triage@db1:5433/triage?sslmode=require");
	assert_string_equal(cfg->cluster.node, "db");
	assert_int_equal(cfg->cluster.lease_ms, 1000);
	config_free(cfg);
	cfg = load_ok_as("[cluster]\npostgresql = service=triage\nlease = 1h\n"
	    "node = " "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAA_.-\n", &env);
	assert_int_equal(cfg->cluster.lease_ms, 3600000);
	assert_int_equal(strlen(cfg->cluster.node), 64);
	config_free(cfg);
}

static void
cluster_needs_its_database(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[daemon]\nslots = 2\n[cluster]\nnode = a\n");
	assert_error(cause, 3, "postgresql: missing from [cluster] (a libpq "
	    "connection string*");
	assert_int_equal(count_lines(cause), 1);
	free(cause);
	cause = load_bad("[cluster]\npostgresql =\n");
	assert_error(cause, 2, "postgresql: expected a libpq connection "
	    "string such as \"host=db1 dbname=triage\" or \"service=triage\", "
	    "not an empty value");
	assert_int_equal(count_lines(cause), 1);
	free(cause);
}

/* libpq's reason is given, but nothing of the value: each of these
 * passwords would show in libpq's own message. */
static void
cluster_bad_conninfo_is_an_error_that_hides_the_value(void **state)
{
	static const struct {
		const char *value, *secret, *reason;
	} bad[] = {
		/* Secrets no random temp path could hold by chance. */
		{ "host=db1 password=hunter2 hiddenword", "hiddenword",
		  "missing \"=\" after \"...\" in connection info string" },
		{ "password=hunter2 hiddenopt=y", "hiddenopt",
		  "invalid connection option \"...\"" },
		{ "password='hunter2", "hunter2",
		  "unterminated quoted string in connection info string" },
		{ "postgresql://u:hunter2@[::1/db", "hunter2",
		  "end of string reached when looking for matching \"]\" in "
		  "IPv6 host address in URI: \"...\"" },
		{ "postgresql://u:hunter2%zz@db1/db", "hunter2",
		  "invalid percent-encoded token: \"...\"" },
		{ "postgresql://u:hunter2@db1/db?hunter2", "hunter2",
		  "missing key/value separator \"=\" in URI query parameter: "
		  "\"...\"" },
	};
	char text[256], want[512], *cause;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(text, sizeof text, "[cluster]\nnode = n1\n"
		    "postgresql = %s\n", bad[i].value);
		cause = load_bad(text);
		snprintf(want, sizeof want, "postgresql: libpq cannot parse "
		    "this connection string: %s (the value is not shown: it "
		    "may hold a password)", bad[i].reason);
		assert_error(cause, 3, want);
		assert_int_equal(count_lines(cause), 1);
		if (strstr(cause, bad[i].secret) != NULL ||
		    strstr(cause, "hunter2") != NULL)
			fail_msg("the value shows in: %s", cause);
		free(cause);
	}
}

static void
cluster_bad_node_lease_and_keys_are_errors(void **state)
{
	static const char *const bad_nodes[] = {
		"a b", "node/1", "caf\xc3\xa9", "n:1",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	char *cause;

	(void)state;
	assert_each_bad("[cluster]\npostgresql = dbname=t\nnode = ",
	    bad_nodes, sizeof bad_nodes / sizeof *bad_nodes, "\n", 3, "node: "
	    "expected a node name: 1 to 64 of A-Z, a-z, 0-9, _, . and -, not*");
	cause = load_bad("[cluster]\npostgresql = dbname=t\nnode =\n");
	assert_error(cause, 3, "node: expected a node name*");
	free(cause);
	cause = load_bad("[cluster]\npostgresql = dbname=t\nlease = 999ms\n"
	    "[cluster]\nlease = 2h\nnope = 1\nnode = a\nnode = b\n");
	assert_error(cause, 3, "lease: expected a duration from 1s to 1h*");
	assert_error(cause, 4, "[cluster]: section given twice, first on "
	    "line 1");
	assert_error(cause, 5, "lease: given twice, first on line 3");
	assert_error(cause, 6, "nope: unknown key in [cluster]");
	assert_error(cause, 8, "node: given twice, first on line 7");
	assert_int_equal(count_lines(cause), 5);
	free(cause);
	cause = load_bad("[cluster]\npostgresql = dbname=t\nlease = x\n");
	assert_error(cause, 3, "lease: expected a duration from 1s to 1h, "
	    "such as 500ms, 30s, 5m, 2h or 7d, not \"x\"");
	free(cause);
}

static void
host_name_that_makes_no_node_name(void **state)
{
	struct caller_env env = host_env("my host.example");
	struct config *cfg;
	char *cause;

	(void)state;
	cause = load_bad_as("[cluster]\npostgresql = dbname=t\n", &env);
	assert_error(cause, 1, "node: not set, and the host name \"my "
	    "host.example\" does not make a node name (1 to 64 of A-Z, a-z, "
	    "0-9, _, . and -, up to the first .): set node in [cluster]");
	assert_int_equal(count_lines(cause), 1);
	free(cause);
	env = host_env(".example");
	cause = load_bad_as("[cluster]\npostgresql = dbname=t\n", &env);
	assert_error(cause, 1, "node: not set, and the host name*");
	free(cause);

	/* Set, it needs no host name. */
	cfg = load_ok_as("[cluster]\npostgresql = dbname=t\nnode = n1\n",
	    &env);
	assert_string_equal(cfg->cluster.node, "n1");
	config_free(cfg);
	/* Without a cluster nobody else sees the name. */
	env = host_env("my host");
	cfg = load_ok_as("[daemon]\nslots = 2\n", &env);
	assert_string_equal(cfg->cluster.node, "localhost");
	config_free(cfg);
}

static void
malformed_lines_are_errors(void **state)
{
	char *cause;

	(void)state;
	cause = load_bad("[daemon\nslots 2\n[daemon]\n= 3\n[daemon] junk\n");
	assert_error(cause, 1, "[daemon: section header without \"]\"");
	assert_error(cause, 2, "slots 2: expected KEY = VALUE");
	assert_error(cause, 4, "= 3: expected KEY = VALUE");
	assert_error(cause, 5, "[daemon]: unexpected \"junk\" after the "
	    "section header");
	free(cause);
}

static void
line_too_long_is_an_error_not_a_misparse(void **state)
{
	char *conf, *cause, *value;
	struct config *cfg;

	(void)state;
	value = malloc(301);
	assert_non_null(value);
	memset(value, 'a', 300);
	value[300] = '\0';
	/* Without the check inih would read the rest as "slots = 2". */
	assert_true(asprintf(&conf, "[daemon]\nstate_dir = /%s slots = 2\n"
	    "workers = 3\n", value) != -1);
	cause = load_bad(conf);
	assert_error(cause, 2, "state_dir: line too long: 323 characters, at "
	    "most 197");
	assert_int_equal(count_lines(cause), 1);
	free(cause);
	free(conf);

	/* A long comment is harmless. */
	assert_true(asprintf(&conf, "# %s\n[daemon]\nslots = 2\n", value) !=
	    -1);
	cfg = load_ok(conf);
	assert_int_equal(cfg->slots, 2);
	config_free(cfg);
	free(conf);

	/* 197 characters is the longest line. */
	value[197 - strlen("state_dir = /")] = '\0';
	assert_true(asprintf(&conf, "[daemon]\nstate_dir = /%s\n", value) !=
	    -1);
	cfg = load_ok(conf);
	assert_int_equal(strlen(cfg->state_dir), 197 - strlen("state_dir = "));
	config_free(cfg);
	free(conf);
	free(value);
}

static void
all_errors_are_reported_together_in_line_order(void **state)
{
	const char *text =
	    "[daemon]\n"			/* 1 */
	    "slots = lots\n"			/* 2 */
	    "bogus = 1\n"			/* 3 */
	    "default_priority = nope\n"		/* 4 */
	    "[priority.a]\n"			/* 5 */
	    "rank = 1\n"			/* 6 */
	    "[priority.b]\n"			/* 7 */
	    "rank = 1\n"			/* 8 */
	    "timeout = forever\n"		/* 9 */
	    "[priority.c]\n"			/* 10 */
	    "[nope]\n";				/* 11 */
	const char *p;
	char *cause;
	unsigned last = 0, line;

	(void)state;
	cause = load_bad(text);
	assert_error(cause, 2, "slots: expected*");
	assert_error(cause, 3, "bogus: unknown key in [daemon]");
	assert_error(cause, 8, "rank: priority \"b\" has rank 1*");
	assert_error(cause, 9, "timeout: expected a duration*");
	assert_error(cause, 10, "rank: missing from [priority.c]");
	assert_error(cause, 11, "[nope]: unknown section*");
	assert_error(cause, 4, "default_priority: no priority called \"nope\"");
	assert_int_equal(count_lines(cause), 7);
	for (p = cause; p != NULL; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		assert_int_equal(strncmp(p, fx->conf, strlen(fx->conf)), 0);
		line = (unsigned)strtoul(p + strlen(fx->conf) + 1, NULL, 10);
		assert_true(line >= last);
		last = line;
	}
	free(cause);
}

static void
config_path_prefers_flag_then_environment(void **state)
{
	struct caller_env env = user_env;
	bool optional = true;

	(void)state;
	env.triage_config = "/from/env.conf";
	assert_string_equal(config_path("/from/flag.conf", &env, &optional),
	    "/from/flag.conf");
	assert_false(optional);
	optional = true;
	assert_string_equal(config_path(NULL, &env, &optional),
	    "/from/env.conf");
	assert_false(optional);
	env.triage_config = "";		/* counts as unset */
	assert_string_equal(config_path(NULL, &env, &optional),
	    CONFIG_DEFAULT_PATH);
	assert_true(optional);
	env.triage_config = NULL;
	optional = false;
	assert_string_equal(config_path(NULL, &env, &optional),
	    CONFIG_DEFAULT_PATH);
	assert_true(optional);
}

static void
priority_find_returns_the_sorted_index(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok("[priority.b]\nrank = 2\n[priority.a]\nrank = 1\n");
	assert_int_equal(config_priority_find(cfg, "a"), 0);
	assert_int_equal(config_priority_find(cfg, "b"), 1);
	assert_int_equal(config_priority_find(cfg, "c"), -1);
	assert_int_equal(config_priority_find(cfg, NULL), -1);
	config_free(cfg);
	config_free(NULL);
}

#define T(name) cmocka_unit_test_setup_teardown(name, fixture_setup, \
    fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(builtin_defaults_without_a_file),
		T(state_dir_default_follows_euid_and_xdg),
		T(missing_optional_file_gives_builtin_defaults),
		T(missing_required_file_is_an_error_naming_it),
		T(unreadable_file_is_an_error_even_if_optional),
		T(empty_file_gives_builtin_defaults),
		T(every_daemon_key_is_read_back),
		T(every_priority_key_is_read_back),
		T(every_shutdown_and_log_level_word_maps),
		T(job_process_keys_and_their_defaults),
		T(cgroup_keys_and_their_defaults),
		T(memory_budget_and_backfill),
		T(resources_are_read_in_file_order),
		T(resource_units_are_checked),
		T(resource_keys_are_checked),
		T(resource_sections_are_checked),
		T(every_boolean_word_is_accepted),
		T(bounds_are_inclusive_and_enforced),
		T(socket_mode_is_octal_with_or_without_leading_zero),
		T(bad_values_name_the_expected_form),
		T(unknown_group_is_an_error_on_its_line),
		T(groups_resolve_by_name),
		T(file_without_priorities_gets_the_builtin_three),
		T(priorities_are_sorted_by_rank),
		T(default_priority_is_the_middle_rank),
		T(default_priority_names_a_configured_priority),
		T(workers_are_raised_to_slots),
		T(slots_auto_follows_the_cgroup_quota),
		T(comments_start_with_semicolon_or_hash),
		T(inline_comment_needs_a_space_before_semicolon_and_hash_is_none),
		T(crlf_line_ends_and_colon_separator_are_accepted),
		T(byte_order_mark_and_trailing_space_are_ignored),
		T(nul_byte_in_a_line_is_an_error),
		T(example_config_from_the_spec_parses),
		T(unknown_section_is_an_error_and_its_keys_are_skipped),
		T(unknown_key_is_an_error),
		T(key_given_twice_names_the_first_line),
		T(indented_line_continuing_a_key_is_an_error),
		T(bad_priority_names_are_errors),
		T(missing_rank_is_an_error_even_in_an_empty_section),
		T(duplicate_rank_names_both_priorities),
		T(more_than_the_maximum_of_priorities_is_an_error),
		T(section_given_twice_is_an_error),
		T(key_outside_any_section_is_an_error),
		T(http_section_is_optional_and_off_by_default),
		T(http_keys_are_read),
		T(http_bad_listen_addresses_are_errors),
		T(http_needs_a_listen_and_a_credential),
		T(cluster_section_is_optional_and_the_node_is_the_host),
		T(cluster_keys_are_read),
		T(cluster_needs_its_database),
		T(cluster_bad_conninfo_is_an_error_that_hides_the_value),
		T(cluster_bad_node_lease_and_keys_are_errors),
		T(host_name_that_makes_no_node_name),
		T(malformed_lines_are_errors),
		T(line_too_long_is_an_error_not_a_misparse),
		T(all_errors_are_reported_together_in_line_order),
		T(config_path_prefers_flag_then_environment),
		T(the_process_environment_is_not_read),
		T(priority_find_returns_the_sorted_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
