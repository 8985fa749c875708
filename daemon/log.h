/* log.h - the daemon's one logging module: stderr, with journald's <N>
 * priority prefixes when stderr is the journal. */
#ifndef TRIAGED_LOG_H
#define TRIAGED_LOG_H

#include <stdarg.h>

/* level is a syslog level; messages less urgent than it are dropped. */
void log_init(int level);
void log_set_level(int level);

void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* log_warn and fatal append strerror(errno); the x forms do not. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

#endif
