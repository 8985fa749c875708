/* when.h - the start times the CLI takes (--at 14:30, --at an RFC 3339 time,
 * --delay 10m) turned into the RFC 3339 text with a local offset it sends. */
#ifndef TRIAGE_WHEN_H
#define TRIAGE_WHEN_H

#include <stddef.h>
#include <stdint.h>

/* Enough for "2026-11-22T10:00:00.123+01:00" and its NUL. */
#define WHEN_MAX 32

/*
 * Reads a time of day or a date and time: "HH:MM" (or "H:MM") is that time
 * today in the local time zone, or tomorrow when it is not later than
 * now_ms (ms since the epoch); anything else must be RFC 3339 with "Z" or
 * an offset, as timefmt_parse() reads it. Writes the time into out (len
 * bytes, WHEN_MAX suffices) as RFC 3339 with the local offset, with
 * milliseconds only when they are not zero. Returns 0; on error -1 with
 * errno EINVAL (not such a time) or ERANGE (out needs more room, or the
 * year is past 9999), and out unchanged.
 */
int when_at(const char *s, int64_t now_ms, char *out, size_t len);

/*
 * Reads a duration as units_parse_duration() does ("10m", "2h", "90") and
 * writes now_ms plus it into out as when_at() does. Returns 0; on error -1
 * with errno EINVAL (not a duration) or ERANGE (too far ahead), and out
 * unchanged.
 */
int when_delay(const char *s, int64_t now_ms, char *out, size_t len);

/*
 * Writes ms since the epoch into out as RFC 3339 in the local time zone
 * with its offset ("2026-11-22T11:00:00+01:00"), milliseconds only when
 * not zero. Returns 0, or -1 with errno ERANGE (a year outside 0-9999, or
 * len too small) and out unchanged.
 */
int when_format(int64_t ms, char *out, size_t len);

#endif
