/* timefmt.h - the times of the job object (RFC 3339 UTC strings) read into
 * milliseconds, and spans written compactly for tables ("1.2s", "3m04s"). */
#ifndef TRIAGE_TIMEFMT_H
#define TRIAGE_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include <jansson.h>

/* Enough for any timefmt_elapsed() or timefmt_local() text and its NUL. */
#define TIMEFMT_MAX 32

/* Milliseconds since the epoch, by the wall clock as the daemon reads it. */
int64_t timefmt_now(void);
/* Milliseconds of CLOCK_MONOTONIC: for spans, timeouts and uptime. */
uint64_t timefmt_mono_ms(void);
/* The same in microseconds, for what is measured in fractions of a ms. */
uint64_t timefmt_mono_us(void);
/* ms as a struct timeval, for libevent's timers. */
struct timeval timefmt_tv(uint64_t ms);

/* What the protocol writes: RFC 3339 UTC with milliseconds. */
#define TIMEFMT_RFC3339_LEN sizeof("2026-11-22T10:00:00.123Z")
/* Writes ms since the epoch into buf (TIMEFMT_RFC3339_LEN bytes; "" for a
 * year past 9999). Returns buf. */
char *timefmt_rfc3339(int64_t ms, char buf[TIMEFMT_RFC3339_LEN]);

/*
 * Reads an RFC 3339 time: "2026-11-22T10:00:00.123Z", any number of fraction
 * digits (milliseconds are kept, the rest dropped) or none, "Z" or an offset
 * such as "+01:00". Returns 0 and sets *ms since the epoch, or -1 with errno
 * EINVAL and *ms left alone.
 */
int timefmt_parse(const char *s, int64_t *ms);

/*
 * Writes a span compactly, two figures at most: "0.0s" to "59.9s", then
 * "3m04s", "2h05m", "3d04h" (truncated, never rounded up, so a running
 * job's time never jumps ahead). A negative span (clocks disagree) is 0.
 * Truncates like snprintf. Returns buf.
 */
char *timefmt_elapsed(int64_t ms, char *buf, size_t len);

/* Writes ms since the epoch in local time, "2026-11-22 11:00:00".
 * Returns buf. */
char *timefmt_local(int64_t ms, char *buf, size_t len);

/*
 * How long a job object waited in the queue: from submitted_at to
 * started_at, or to finished_at when it never started (canceled while
 * queued), or to now while it is still queued. Returns -1 when it has no
 * valid submitted_at.
 */
int64_t timefmt_waited(const json_t *job, int64_t now);

/* How long a job object ran: from started_at to finished_at, or to now while
 * running. Returns -1 when it never started. */
int64_t timefmt_ran(const json_t *job, int64_t now);

#endif
