/* client-socket.c - where triaged's socket is: one resolution order, shared
 * by the daemon and every client so that both find the same path. */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"

char *
client_socket_path(const char *flag, const char *config_socket)
{
	const char *env, *dir;
	struct stat sb;
	char *path;
	size_t len;

	if (flag != NULL)
		return strdup(flag);
	if ((env = getenv("TRIAGE_SOCKET")) != NULL && *env != '\0')
		return strdup(env);
	if (config_socket != NULL)
		return strdup(config_socket);

	dir = getenv("XDG_RUNTIME_DIR");
	if (geteuid() != 0 && dir != NULL && dir[0] == '/' &&
	    stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		/* "/run/user/1000/" must not give "...//triage". */
		for (len = strlen(dir); len > 1 && dir[len - 1] == '/'; len--)
			continue;
		if (asprintf(&path, "%.*s/triage/triage.sock", (int)len,
		    dir) == -1)
			return NULL;
		return path;
	}
	return strdup(CLIENT_SOCKET_SYSTEM);
}
