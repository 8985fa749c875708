/* client-socket.c - where triaged's socket is: one resolution order, shared
 * by the daemon and every client so that both find the same path. */
#include <sys/stat.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caller-env.h"
#include "client.h"

static bool
client_socket_is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

char *
client_socket_resolve(const char *flag, const char *config_socket,
    const struct caller_env *env, bool for_daemon)
{
	const char *dir = env->xdg_runtime_dir;
	char *path, *sub;
	size_t len;
	bool mine;

	if (flag != NULL)
		return strdup(flag);
	if (env->triage_socket != NULL && env->triage_socket[0] != '\0')
		return strdup(env->triage_socket);
	if (config_socket != NULL)
		return strdup(config_socket);

	if (env->euid != 0 && dir != NULL && dir[0] == '/' &&
	    client_socket_is_dir(dir)) {
		/* "/run/user/1000/" must not give "...//triage". */
		for (len = strlen(dir); len > 1 && dir[len - 1] == '/'; len--)
			continue;
		if (asprintf(&sub, "%.*s/triage", (int)len, dir) == -1)
			return NULL;
		/* A client goes there only if the user's own daemon made it:
		 * every login has a runtime directory, and without a daemon
		 * of one's own the system daemon is the one meant. */
		mine = for_daemon || client_socket_is_dir(sub);
		if (mine && asprintf(&path, "%s/triage.sock", sub) == -1)
			path = NULL;
		free(sub);
		if (mine)
			return path;
	}
	return strdup(TRIAGE_SOCKET_SYSTEM);
}

/*
 * The library's entry to the order above reads the environment itself:
 * inside triage's own programs lib/ reads none (their mains gather it into
 * a struct caller_env), but a program using libtriage has no such struct to
 * give, and a client has no config file.
 */
char *
triage_client_socket_path(const char *flag)
{
	const struct caller_env env = {
		.euid = geteuid(),
		.xdg_runtime_dir = getenv("XDG_RUNTIME_DIR"),
		.triage_socket = getenv("TRIAGE_SOCKET"),
	};

	return client_socket_resolve(flag, NULL, &env, false);
}
