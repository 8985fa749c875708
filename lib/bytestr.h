/* bytestr.h - byte strings (argv, cwd, env values: file names are bytes on
 * Linux) in JSON, which carries UTF-8 only: {"base64": ...} for the rest. */
#ifndef TRIAGE_BYTESTR_H
#define TRIAGE_BYTESTR_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct jsonw;

/* Whether the n bytes at s are UTF-8 that jansson takes. */
bool bytestr_utf8(const char *s, size_t n);

/*
 * The C string s as JSON: a plain string when it is UTF-8, else the object
 * {"base64": "<standard base64, padded>"}. A new reference; NULL when out
 * of memory (or s is NULL).
 */
json_t *bytestr_json(const char *s);
/* The same, written into w (jsonw.h): byte for byte bytestr_json's dump. */
void bytestr_write(struct jsonw *w, const char *s);
/* The object form of s, whatever s holds. */
void bytestr_write_base64(struct jsonw *w, const char *s);

/* An array of the byte strings of a NULL-terminated v (NULL v: []), each
 * as bytestr_write writes it. */
void bytestr_write_strv(struct jsonw *w, char *const *v);

/*
 * The bytes v carries, a plain string or the object form, as an allocated
 * C string in *out (the caller's). A string with a NUL byte, in either
 * form, is refused. 0; or -1 with errno EINVAL and *why a borrowed phrase
 * ("is not a string", "holds a NUL byte", ...), or ENOMEM.
 */
int bytestr_from_json(const json_t *v, char **out, const char **why);

/*
 * The n bytes at s, which may hold NUL bytes (a job's result), as JSON: a
 * plain string when they are UTF-8 without a NUL, else {"base64": ...}
 * (the protocol's strings never carry a NUL). A new reference; NULL when
 * out of memory.
 */
json_t *bytestr_json_bytes(const char *s, size_t n);
/*
 * The bytes v carries, either form, NULs allowed, as an allocated buffer
 * in *out (NUL-terminated past its *len bytes; the caller's); a plain
 * string with a NUL, which bytestr_json_bytes never makes, is refused. 0;
 * or -1 as bytestr_from_json.
 */
int bytestr_bytes_from_json(const json_t *v, char **out, size_t *len,
    const char **why);

/*
 * A copy of s for people: each byte of what is not UTF-8 written \xNN, and
 * with ctl set each control character too (C0, DEL and the C1 range), so
 * that a terminal is never fed raw bytes. Always UTF-8. Allocated; NULL
 * when out of memory.
 */
char *bytestr_escape(const char *s, bool ctl);

#endif
