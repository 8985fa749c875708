/* jsonw.h - JSON text written straight into a growable buffer, byte for byte
 * as jansson's compact dump writes it, for replies on hot paths. */
#ifndef TRIAGE_JSONW_H
#define TRIAGE_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The digits of a real, as the daemon's dumps give them (JSON_COMPACT |
 * JSON_REAL_PRECISION(JSONW_REAL_PRECISION)): 0.05 prints as 0.05. */
#define JSONW_REAL_PRECISION 15
#define JSONW_DUMP_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY | \
	JSON_REAL_PRECISION(JSONW_REAL_PRECISION))

/*
 * A buffer being written. All zero is an empty one. Writers append, and
 * once one fails (out of memory, a string that is not UTF-8) the buffer
 * stays failed until jsonw_reset(): a caller checks once, at the end.
 * Commas are the caller's (jsonw_key writes one before every key but the
 * first of an object).
 */
struct jsonw {
	char *buf;
	size_t len;
	size_t cap;
	bool failed;
	bool first;		/* the next key is its object's first */
};

/* Empties w (keeping its memory for the next text) and clears failed. */
void jsonw_reset(struct jsonw *w);
void jsonw_free(struct jsonw *w);
/* The text so far (not NUL-terminated), or NULL once failed. */
const char *jsonw_text(const struct jsonw *w, size_t *len);

void jsonw_raw(struct jsonw *w, const char *s, size_t n);
/* "{" and "}"; keys of the object with jsonw_key. */
void jsonw_open(struct jsonw *w);
void jsonw_close(struct jsonw *w);
/* ,"key": (key is ASCII without anything to escape). */
void jsonw_key(struct jsonw *w, const char *key);
/*
 * The length of the UTF-8 sequence at s (before end), 0 when it is not one
 * jansson would take: no overlong forms, no surrogates, nothing past
 * U+10FFFF. Assumes s < end.
 */
size_t jsonw_utf8(const unsigned char *s, const unsigned char *end);
/* A string, escaped as jansson escapes it; s NULL or not UTF-8 fails w. */
void jsonw_string(struct jsonw *w, const char *s);
void jsonw_int(struct jsonw *w, int64_t v);
/* A finite real as jansson prints it (a NaN or infinity fails w). */
void jsonw_real(struct jsonw *w, double v);
void jsonw_bool(struct jsonw *w, bool v);
void jsonw_null(struct jsonw *w);
/* An array of ids. */
void jsonw_ids(struct jsonw *w, const uint64_t *ids, size_t n);
/* Any JSON value, through jansson's own dump. */
void jsonw_json(struct jsonw *w, const json_t *value);

#endif
