/* test-client-path.c - client_socket_path(): every step of protocol.md's
 * resolution order, with the environment set and unset around each. */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
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

#include "client.h"

/* An unprivileged uid for the non-root cases when the tests run as root. */
#define NOBODY 65534

static char runtime_dir[] = "/tmp/test-client-path.XXXXXX";

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(runtime_dir) == NULL)
		return -1;
	/* The unprivileged child must be able to reach it. */
	return chmod(runtime_dir, 0755);
}

static int
teardown(void **state)
{
	(void)state;
	return rmdir(runtime_dir);
}

static void
clear_env(void)
{
	unsetenv("TRIAGE_SOCKET");
	unsetenv("XDG_RUNTIME_DIR");
}

static void
assert_path(const char *flag, const char *config, const char *want)
{
	char *path = client_socket_path(flag, config, false);

	assert_non_null(path);
	assert_string_equal(path, want);
	free(path);
}

/*
 * client_socket_path(NULL, NULL, for_daemon) as a non-root user: directly
 * when we are not root, else in a child that gives up root first. Returns
 * it allocated.
 */
static char *
path_as_user(bool for_daemon)
{
	char buf[4096];
	ssize_t n;
	size_t len = 0;
	int fds[2], status;
	pid_t pid;
	char *path;

	if (geteuid() != 0)
		return client_socket_path(NULL, NULL, for_daemon);
	assert_int_equal(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		if (setgid(NOBODY) == -1 || setuid(NOBODY) == -1)
			_exit(2);
		if ((path = client_socket_path(NULL, NULL, for_daemon)) == NULL)
			_exit(3);
		if (write(fds[1], path, strlen(path)) != (ssize_t)strlen(path))
			_exit(4);
		_exit(0);
	}
	assert_true(pid > 0);
	close(fds[1]);
	while ((n = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	buf[len] = '\0';
	return strdup(buf);
}

static void
flag_comes_first(void **state)
{
	(void)state;
	clear_env();
	setenv("TRIAGE_SOCKET", "/env/sock", 1);
	setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
	assert_path("/flag/sock", "/config/sock", "/flag/sock");
	assert_path("relative.sock", NULL, "relative.sock");
}

static void
env_comes_before_config(void **state)
{
	(void)state;
	clear_env();
	setenv("TRIAGE_SOCKET", "/env/sock", 1);
	setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
	assert_path(NULL, "/config/sock", "/env/sock");
	assert_path(NULL, NULL, "/env/sock");
}

static void
empty_env_counts_as_unset(void **state)
{
	(void)state;
	clear_env();
	setenv("TRIAGE_SOCKET", "", 1);
	assert_path(NULL, "/config/sock", "/config/sock");
	assert_path(NULL, NULL, CLIENT_SOCKET_SYSTEM);
}

static void
config_comes_before_runtime_dir(void **state)
{
	(void)state;
	clear_env();
	setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
	assert_path(NULL, "/config/sock", "/config/sock");
}

static void
runtime_dir_for_a_user(void **state)
{
	char want[256], sub[256], *path;

	(void)state;
	clear_env();
	setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
	snprintf(want, sizeof want, "%s/triage/triage.sock", runtime_dir);
	path = path_as_user(true);
	assert_string_equal(path, want);
	free(path);

	/* A client: the system daemon until the user's own made triage/. */
	path = path_as_user(false);
	assert_string_equal(path, CLIENT_SOCKET_SYSTEM);
	free(path);
	snprintf(sub, sizeof sub, "%s/triage", runtime_dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	path = path_as_user(false);
	assert_string_equal(path, want);
	free(path);
	assert_int_equal(rmdir(sub), 0);

	/* A trailing slash does not double. */
	snprintf(want, sizeof want, "%s/", runtime_dir);
	setenv("XDG_RUNTIME_DIR", want, 1);
	snprintf(want, sizeof want, "%s/triage/triage.sock", runtime_dir);
	path = path_as_user(true);
	assert_string_equal(path, want);
	free(path);
}

static void
runtime_dir_missing_falls_to_system(void **state)
{
	char missing[256], *path;

	(void)state;
	clear_env();
	snprintf(missing, sizeof missing, "%s/nonexistent", runtime_dir);
	setenv("XDG_RUNTIME_DIR", missing, 1);
	path = path_as_user(true);
	assert_string_equal(path, CLIENT_SOCKET_SYSTEM);
	free(path);

	unsetenv("XDG_RUNTIME_DIR");
	path = path_as_user(true);
	assert_string_equal(path, CLIENT_SOCKET_SYSTEM);
	free(path);

	setenv("XDG_RUNTIME_DIR", "", 1);
	path = path_as_user(true);
	assert_string_equal(path, CLIENT_SOCKET_SYSTEM);
	free(path);
}

static void
runtime_dir_not_a_directory_or_relative(void **state)
{
	char *path;

	(void)state;
	clear_env();
	setenv("XDG_RUNTIME_DIR", "/dev/null", 1);
	path = path_as_user(true);
	assert_string_equal(path, CLIENT_SOCKET_SYSTEM);
	free(path);

	/* The XDG spec: a relative path is to be ignored. */
	assert_int_equal(chdir("/"), 0);
	setenv("XDG_RUNTIME_DIR", "tmp", 1);
	path = path_as_user(true);
	assert_string_equal(path, CLIENT_SOCKET_SYSTEM);
	free(path);
}

static void
root_uses_the_system_socket(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	clear_env();
	setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
	assert_path(NULL, NULL, CLIENT_SOCKET_SYSTEM);
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
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
