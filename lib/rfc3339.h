/* rfc3339.h - timestamps as the protocol writes them: RFC 3339, UTC, with
 * milliseconds ("2026-11-22T10:00:00.123Z"), and the clock they are read from. */
#ifndef TRIAGE_RFC3339_H
#define TRIAGE_RFC3339_H

#include <stddef.h>
#include <stdint.h>

#define RFC3339_LEN sizeof("2026-11-22T10:00:00.123Z")

/* Milliseconds since the epoch, from the real-time clock. */
int64_t rfc3339_now_ms(void);
/* Writes ms as RFC 3339 UTC into buf (RFC3339_LEN bytes); returns buf. */
char *rfc3339_format(int64_t ms, char buf[RFC3339_LEN]);
/* Reads what rfc3339_format writes (fraction optional, "Z" or an offset).
 * Returns 0, or -1 with EINVAL and *ms unchanged. */
int rfc3339_parse(const char *s, int64_t *ms);

#endif
