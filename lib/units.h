/* units.h - durations and sizes as triage.conf writes them ("30s", "16MiB"):
 * strict parsing into milliseconds and bytes, and the reverse for messages. */
#ifndef TRIAGE_UNITS_H
#define TRIAGE_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Enough for any uint64_t with its unit and the terminating NUL. */
#define UNITS_FORMAT_MAX 24

/*
 * Parses a duration: a whole number and one of the units ms, s, m, h, d, or
 * no unit for seconds ("500ms", "30s", "5m", "2h", "7d", "10"). Nothing else
 * is accepted: no sign, space, fraction or other unit. Returns 0 and sets
 * *ms; on error returns -1 with errno EINVAL (not a duration) or ERANGE (too
 * large for a uint64_t of milliseconds) and leaves *ms alone.
 */
int units_parse_duration(const char *s, uint64_t *ms);

/*
 * Parses a size: a whole number and one of the units B, KiB, MiB, GiB, TiB,
 * or no unit for bytes ("512", "64KiB", "1GiB"). Returns 0 and sets *bytes;
 * on error returns -1 with errno EINVAL or ERANGE and leaves *bytes alone.
 */
int units_parse_size(const char *s, uint64_t *bytes);

/*
 * Writes ms in the largest unit that keeps it exact ("7d", "90s", "500ms";
 * zero is "0") into buf, which units_parse_duration() reads back to the same
 * value. Truncates like snprintf when len is too small (UNITS_FORMAT_MAX
 * always suffices). Returns buf.
 */
char *units_format_duration(uint64_t ms, char *buf, size_t len);

/* The same for a size in bytes: "1GiB", "1536KiB", "512B", "0". Returns buf. */
char *units_format_size(uint64_t bytes, char *buf, size_t len);

#endif
