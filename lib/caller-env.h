/* caller-env.h - who runs triage or triaged and what its environment says,
 * gathered by the program's main and handed in: lib/ reads neither. */
#ifndef TRIAGE_CALLER_ENV_H
#define TRIAGE_CALLER_ENV_H

#include <sys/types.h>

/*
 * The values the socket path, the config path and the config's defaults
 * depend on. Each string is NULL when the variable is unset; lib/ treats
 * an empty one as unset and, as the XDG spec says, ignores a relative
 * $XDG_*. The strings are borrowed: they must outlive the call.
 */
struct caller_env {
	uid_t euid;			/* geteuid(): 0 is root */
	const char *home;		/* $HOME if absolute, else the password
					 * database's (passwd_lookup); NULL:
					 * none */
	const char *xdg_state_home;	/* $XDG_STATE_HOME */
	const char *xdg_runtime_dir;	/* $XDG_RUNTIME_DIR */
	const char *triage_socket;	/* $TRIAGE_SOCKET */
	const char *triage_config;	/* $TRIAGE_CONFIG */
	const char *hostname;		/* the default [cluster] node's source;
					 * NULL: gethostname(2)'s */
};

#endif
