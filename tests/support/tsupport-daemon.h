/* tsupport-daemon.h - for tests and benchmarks: a real triaged on a socket
 * and state dir of a temp dir: its config, its readiness, its stop. */
#ifndef TRIAGE_TSUPPORT_DAEMON_H
#define TRIAGE_TSUPPORT_DAEMON_H

#include <sys/types.h>

#include "tsupport-err.h"

/*
 * Writes the config file conf: a [daemon] section with socket sock and
 * state_dir state, then the printf-formatted rest (more [daemon] keys
 * first, then any sections). 0, or -1 with err.
 */
int tsupport_daemon_conf(const char *conf, const char *sock,
    const char *state, struct tsupport_err *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/*
 * Polls, never a fixed sleep, until the triaged of process pid (started
 * with tsupport_child_spawn) answers on sock. 0, or -1 with err when it
 * exits first (left to tsupport_child_reap) or past timeout_ms.
 */
int tsupport_daemon_ready(pid_t pid, const char *sock, int timeout_ms,
    struct tsupport_err *err);
/* SIGTERM to the triaged pid, then waits up to timeout_ms for it to exit
 * (left to tsupport_child_reap). 0, or -1 with err. */
int tsupport_daemon_stop(pid_t pid, int timeout_ms, struct tsupport_err *err);

#endif
