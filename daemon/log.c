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

/*
 * Names, argv, paths and reasons come from clients and jobs: a control
 * byte in them must not reach a terminal, nor a newline forge a second log
 * line. Every control byte (C0, DEL, and the C1 range as UTF-8 encodes it)
 * and the backslash are written as C escapes, so the line says exactly
 * what it was given.
 */
static void
log_escape(const char *in, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)in;
	size_t n = 0;
	unsigned c;

	for (; *p != '\0' && n + 8 < size; p++) {
		c = *p;
		if (c == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			c = *++p;	/* U+0080..U+009F: show the code */
		else if (c >= 0x20 && c != 0x7f && c != '\\') {
			out[n++] = (char)c;
			continue;
		}
		out[n++] = '\\';
		switch (c) {
		case '\n':
			out[n++] = 'n';
			break;
		case '\t':
			out[n++] = 't';
			break;
		case '\r':
			out[n++] = 'r';
			break;
		case '\\':
			out[n++] = '\\';
			break;
		default:
			out[n++] = c >= 0x80 ? 'u' : 'x';
			if (c >= 0x80) {
				out[n++] = '0';
				out[n++] = '0';
			}
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 0xf];
			break;
		}
	}
	out[n] = '\0';
}

/* One write per message, so lines never interleave. */
static void log_vwrite(int prio, int errnum, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void
log_vwrite(int prio, int errnum, const char *fmt, va_list ap)
{
	char raw[4096], msg[4096], line[4200];

	if (prio > log_level)
		return;
	vsnprintf(raw, sizeof raw, fmt, ap);
	log_escape(raw, msg, sizeof msg);
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
