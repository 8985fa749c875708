/* test-client-path.c - client_socket_resolve(): every step of protocol.md's
 * resolution order, from the caller's environment as the caller gives it;
 * and triage_client_socket_path(), libtriage's, from the process's own. */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "caller-env.h"
#include "client.h"

/* A uid that is not root's, whoever runs the tests. */
#define USER_UID 1000

static char runtime_dir[] = "/tmp/test-client-path.XXXXXX";

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(runtime_dir) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	return rmdir(runtime_dir);
}

/* A user's environment: the runtime directory, and TRIAGE_SOCKET if not
 * NULL; nothing else set. */
static struct caller_env
user_env(const char *triage_socket)
{
	struct caller_env env = {
		.euid = USER_UID,
		.xdg_runtime_dir = runtime_dir,
		.triage_socket = triage_socket,
	};

	return env;
}

static void
assert_path(const char *flag, const char *config,
    const struct caller_env *env, bool for_daemon, const char *want)
{
	char *path = client_socket_resolve(flag, config, env, for_daemon);

	assert_non_null(path);
	assert_string_equal(path, want);
	free(path);
}

static void
flag_comes_first(void **state)
{
	struct caller_env env = user_env("/env/sock");

	(void)state;
	assert_path("/flag/sock", "/config/sock", &env, false, "/flag/sock");
	assert_path("relative.sock", NULL, &env, true, "relative.sock");
}

static void
env_comes_before_config(void **state)
{
	struct caller_env env = user_env("/env/sock");

	(void)state;
	assert_path(NULL, "/config/sock", &env, true, "/env/sock");
	assert_path(NULL, NULL, &env, false, "/env/sock");
}

static void
empty_env_counts_as_unset(void **state)
{
	struct caller_env env = user_env("");

	(void)state;
	env.xdg_runtime_dir = NULL;
	assert_path(NULL, "/config/sock", &env, true, "/config/sock");
	assert_path(NULL, NULL, &env, false, TRIAGE_SOCKET_SYSTEM);
}

static void
config_comes_before_runtime_dir(void **state)
{
	struct caller_env env = user_env(NULL);

	(void)state;
	assert_path(NULL, "/config/sock", &env, true, "/config/sock");
}

static void
runtime_dir_for_a_user(void **state)
{
	struct caller_env env = user_env(NULL);
	char want[256], sub[256], slash[256];

	(void)state;
	snprintf(want, sizeof want, "%s/triage/triage.sock", runtime_dir);
	assert_path(NULL, NULL, &env, true, want);

	/* A client: the system daemon until the user's own made triage/. */
	assert_path(NULL, NULL, &env, false, TRIAGE_SOCKET_SYSTEM);
	snprintf(sub, sizeof sub, "%s/triage", runtime_dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_path(NULL, NULL, &env, false, want);
	assert_int_equal(rmdir(sub), 0);

	/* A trailing slash does not double. */
	snprintf(slash, sizeof slash, "%s/", runtime_dir);
	env.xdg_runtime_dir = slash;
	assert_path(NULL, NULL, &env, true, want);
}

static void
runtime_dir_missing_falls_to_system(void **state)
{
	struct caller_env env = user_env(NULL);
	char missing[256];

	(void)state;
	snprintf(missing, sizeof missing, "%s/nonexistent", runtime_dir);
	env.xdg_runtime_dir = missing;
	assert_path(NULL, NULL, &env, true, TRIAGE_SOCKET_SYSTEM);
	env.xdg_runtime_dir = NULL;
	assert_path(NULL, NULL, &env, true, TRIAGE_SOCKET_SYSTEM);
	env.xdg_runtime_dir = "";
	assert_path(NULL, NULL, &env, true, TRIAGE_SOCKET_SYSTEM);
}

static void
runtime_dir_not_a_directory_or_relative(void **state)
{
	struct caller_env env = user_env(NULL);

	(void)state;
	env.xdg_runtime_dir = "/dev/null";
	assert_path(NULL, NULL, &env, true, TRIAGE_SOCKET_SYSTEM);

	/* The XDG spec: a relative path is to be ignored. */
	assert_int_equal(chdir("/"), 0);
	env.xdg_runtime_dir = "tmp";
	assert_path(NULL, NULL, &env, true, TRIAGE_SOCKET_SYSTEM);
}

static void
root_uses_the_system_socket(void **state)
{
	struct caller_env env = user_env(NULL);
	char sub[256];

	(void)state;
	env.euid = 0;
	assert_path(NULL, NULL, &env, true, TRIAGE_SOCKET_SYSTEM);
	snprintf(sub, sizeof sub, "%s/triage", runtime_dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_path(NULL, NULL, &env, false, TRIAGE_SOCKET_SYSTEM);
	assert_int_equal(rmdir(sub), 0);
}

/* Only what the caller passes counts: not our own uid or environment. */
static void
the_process_environment_is_not_read(void **state)
{
	struct caller_env env = { .euid = 0 };
	char want[256];

	(void)state;
	setenv("TRIAGE_SOCKET", "/from/the/process", 1);
	setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
	assert_path(NULL, NULL, &env, true, TRIAGE_SOCKET_SYSTEM);
	env.euid = geteuid() == 0 ? USER_UID : 0;
	env.xdg_runtime_dir = runtime_dir;
	snprintf(want, sizeof want, "%s/triage/triage.sock", runtime_dir);
	assert_path(NULL, NULL, &env, true,
	    env.euid == 0 ? TRIAGE_SOCKET_SYSTEM : want);
	unsetenv("TRIAGE_SOCKET");
	unsetenv("XDG_RUNTIME_DIR");
}

/* triage_client_socket_path(flag) gives want. */
static void
public_path(const char *flag, const char *want)
{
	char *path = triage_client_socket_path(flag);

	assert_non_null(path);
	assert_string_equal(path, want);
	free(path);
}

/* The library's entry reads what the internal one is handed: our own uid
 * and environment, and no config (a client has none). */
static void
the_public_entry_reads_the_environment(void **state)
{
	char sub[256], mine[256];

	(void)state;
	setenv("TRIAGE_SOCKET", "/from/the/process", 1);
	setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
	public_path("/flag/sock", "/flag/sock");
	public_path(NULL, "/from/the/process");

	/* Empty counts as unset; then the user's own daemon, if any. */
	setenv("TRIAGE_SOCKET", "", 1);
	public_path(NULL, TRIAGE_SOCKET_SYSTEM);
	snprintf(sub, sizeof sub, "%s/triage", runtime_dir);
	snprintf(mine, sizeof mine, "%s/triage/triage.sock", runtime_dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	public_path(NULL, geteuid() == 0 ? TRIAGE_SOCKET_SYSTEM : mine);
	assert_int_equal(rmdir(sub), 0);
	unsetenv("TRIAGE_SOCKET");
	unsetenv("XDG_RUNTIME_DIR");
	public_path(NULL, TRIAGE_SOCKET_SYSTEM);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flag_comes_first),
		cmocka_unit_test(env_comes_before_config),
		cmocka_unit_test(empty_env_counts_as_unset),
		cmocka_unit_test(config_comes_before_runtime_dir),
		cmocka_unit_test(runtime_dir_for_a_user),
		cmocka_unit_test(runtime_dir_missing_falls_to_system),
		cmocka_unit_test(runtime_dir_not_a_directory_or_relative),
		cmocka_unit_test(root_uses_the_system_socket),
		cmocka_unit_test(the_process_environment_is_not_read),
		cmocka_unit_test(the_public_entry_reads_the_environment),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
