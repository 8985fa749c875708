/* format.h - how the triage CLI shows things to people: times, spans,
 * command lines, and text made safe for a terminal. */
#ifndef TRIAGE_FORMAT_H
#define TRIAGE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* A copy of s (allocated) with control characters and bytes that are not
 * UTF-8 shown as \xNN. */
char *format_clean(const char *s);
/* The columns s takes on a terminal: its UTF-8 characters, counted. */
size_t format_width(const char *s);
/* argv (a JSON array of byte strings: strings, or {"base64": ...}) as
 * bash would read it back, quoting what needs it, in $'...' with \xNN what
 * is not UTF-8 or a control character. Allocated. */
char *format_argv(const json_t *argv);
/* A byte string (a job's cwd) cleaned as format_clean does; NULL when v is
 * none. Allocated. */
char *format_bytes(const json_t *v);
/* A job's result (a byte string that may hold NULs) for people: one final
 * newline left out, as a shell's $(...) leaves it, the rest cleaned as
 * format_clean does, a NUL as \x00; NULL when v is not a byte string.
 * Allocated. */
char *format_result(const json_t *v);
/* A span in ms as timefmt_elapsed() writes it, or "-" when ms < 0. */
const char *format_span(int64_t ms, char *buf, size_t len);
/* The job's field key (an RFC 3339 time) in local time, or NULL when null.
 * Unreadable times are shown as they came. */
const char *format_time(const json_t *job, const char *key, char *buf,
    size_t len);
/* A JSON number of seconds, exactly, as triage.conf writes a duration
 * ("30s", "5m", "1500ms"); "-" when it is not a number >= 0. */
const char *format_seconds(const json_t *v, char *buf, size_t len);
/* A job's pending_reason for people: "node:NAME" as "node NAME is down",
 * the rest as it is; NULL for a non-string. */
const char *format_pending(const json_t *v, char *buf, size_t len);
/* Why a job does not go on, for people: its pending_reason as
 * format_pending says it, or "frozen" for a frozen one; NULL for none. */
const char *format_reason(const json_t *job, char *buf, size_t len);
/* A JSON integer of bytes as triage.conf writes a size when it is exact
 * ("64MiB"), else to a tenth of its unit ("11.8MiB"); "-" for anything but
 * an integer >= 0. */
const char *format_size(const json_t *v, char *buf, size_t len);
/* The same to a tenth of its unit even when exact in a smaller one: for
 * a measure ("23.1GiB" of the kernel's MemAvailable, counted in KiB). */
const char *format_size_about(const json_t *v, char *buf, size_t len);
/* A job's resources or devices (protocol v1.2: objects of a resource's
 * name to a count, or to its unit names) as "gpu=2 licence=1" or
 * "gpu=1,3"; NULL for none ({}, or not an object). Allocated. */
char *format_resources(const json_t *obj);
/* What a job asks for and holds, for a column: its memory ("4GiB"), then
 * each resource as NAME=N or, once its attempt was given units of it,
 * NAME:U1,U2; "-" for none. Allocated. */
char *format_uses(const json_t *job);
/* A JSON integer, or "-" for anything else. */
const char *format_int(const json_t *v, char *buf, size_t len);
/* Prints v on one line of compact JSON to stdout. */
void format_json_line(const json_t *v);

#endif
