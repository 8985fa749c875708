/* log.c - the daemon's one logging module: a line per message on stderr,
 * prefixed "<N>" for journald when JOURNAL_STREAM says stderr is the journal. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

static int log_level = LOG_INFO;
static bool log_journal;

/* JOURNAL_STREAM is "DEV:INODE" of the journal's stream; it only counts if
 * stderr is that very stream, not inherited by a child that redirected it. */
static bool
log_to_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) != 0)
		return false;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void
log_init(int level)
{
	log_level = level;
	log_journal = log_to_journal();
}

void
log_set_level(int level)
{
	log_level = level;
}

/* One write per message, so lines never interleave. */
static void
log_vwrite(int prio, int errnum, const char *fmt, va_list ap)
{
	char msg[4096], line[4200];

	if (prio > log_level)
		return;
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (log_journal)
		snprintf(line, sizeof line, "<%d>%s%s%s\n", prio, msg,
		    errnum ? ": " : "", errnum ? strerror(errnum) : "");
	else
		snprintf(line, sizeof line, "triaged: %s%s%s\n", msg,
		    errnum ? ": " : "", errnum ? strerror(errnum) : "");
	fputs(line, stderr);
}

#define LOG_FN(fn, prio, with_errno)					\
void									\
fn(const char *fmt, ...)						\
{									\
	int errnum = (with_errno) ? errno : 0;				\
	va_list ap;							\
									\
	va_start(ap, fmt);						\
	log_vwrite(prio, errnum, fmt, ap);				\
	va_end(ap);							\
}

LOG_FN(log_debug, LOG_DEBUG, 0)
LOG_FN(log_info, LOG_INFO, 0)
LOG_FN(log_notice, LOG_NOTICE, 0)
LOG_FN(log_warn, LOG_WARNING, 1)
LOG_FN(log_warnx, LOG_WARNING, 0)
LOG_FN(log_err, LOG_ERR, 0)

void
fatal(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_CRIT, errnum, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_CRIT, 0, fmt, ap);
	va_end(ap);
	exit(1);
}
