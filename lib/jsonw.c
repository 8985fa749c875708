/* jsonw.c - JSON text written straight into a growable buffer, byte for byte
 * as jansson's compact dump writes it, for replies on hot paths. */
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"

/* Room for n more bytes; false (and w failed) when there is none. */
static bool
jsonw_room(struct jsonw *w, size_t n)
{
	size_t cap;
	char *bigger;

	if (w->failed)
		return false;
	if (w->cap - w->len >= n)
		return true;
	cap = w->cap ? w->cap : 1024;
	while (cap - w->len < n)
		cap *= 2;
	if ((bigger = realloc(w->buf, cap)) == NULL) {
		w->failed = true;
		return false;
	}
	w->buf = bigger;
	w->cap = cap;
	return true;
}

void
jsonw_reset(struct jsonw *w)
{
	w->len = 0;
	w->failed = false;
	w->first = false;
}

void
jsonw_free(struct jsonw *w)
{
	free(w->buf);
	memset(w, 0, sizeof *w);
}

const char *
jsonw_text(const struct jsonw *w, size_t *len)
{
	*len = w->len;
	return w->failed ? NULL : w->buf;
}

void
jsonw_raw(struct jsonw *w, const char *s, size_t n)
{
	if (jsonw_room(w, n)) {
		memcpy(w->buf + w->len, s, n);
		w->len += n;
	}
}

void
jsonw_open(struct jsonw *w)
{
	jsonw_raw(w, "{", 1);
	w->first = true;
}

void
jsonw_close(struct jsonw *w)
{
	jsonw_raw(w, "}", 1);
	w->first = false;
}

void
jsonw_key(struct jsonw *w, const char *key)
{
	size_t n = strlen(key);

	if (!jsonw_room(w, n + 4))
		return;
	if (!w->first)
		w->buf[w->len++] = ',';
	w->first = false;
	w->buf[w->len++] = '"';
	memcpy(w->buf + w->len, key, n);
	w->len += n;
	w->buf[w->len++] = '"';
	w->buf[w->len++] = ':';
}

size_t
jsonw_utf8(const unsigned char *s, const unsigned char *end)
{
	uint32_t cp;
	size_t n, i;

	if (*s < 0x80)
		return 1;
	if (*s < 0xC2)
		return 0;
	if (*s < 0xE0) {
		n = 2;
		cp = *s & 0x1F;
	} else if (*s < 0xF0) {
		n = 3;
		cp = *s & 0x0F;
	} else if (*s < 0xF5) {
		n = 4;
		cp = *s & 0x07;
	} else
		return 0;
	if ((size_t)(end - s) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return n;
}

/* The letter after the backslash of what has a short escape; the other
 * bytes below 0x20 are written \u00XX, in capitals, as jansson does. */
static const char jsonw_escapes[128] = {
	['"'] = '"', ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f',
	['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
};

void
jsonw_string(struct jsonw *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char esc[6] = { '\\', 'u', '0', '0', '0', '0' };
	const unsigned char *p, *end, *run;
	unsigned char c;
	size_t n;

	if (s == NULL) {
		w->failed = true;
		return;
	}
	p = run = (const unsigned char *)s;
	end = p + strlen(s);
	jsonw_raw(w, "\"", 1);
	while (p < end) {
		c = *p;
		/* Plain ASCII, most of every string, one test a byte. */
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			p++;
			continue;
		}
		if (c >= 0x80) {
			if ((n = jsonw_utf8(p, end)) == 0) {
				w->failed = true;
				return;
			}
			p += n;
			continue;
		}
		/* What runs clean goes in one copy. */
		jsonw_raw(w, (const char *)run, (size_t)(p - run));
		if (jsonw_escapes[c] != '\0') {
			esc[1] = jsonw_escapes[c];
			jsonw_raw(w, esc, 2);
		} else {
			esc[1] = 'u';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xF];
			jsonw_raw(w, esc, 6);
		}
		run = ++p;
	}
	jsonw_raw(w, (const char *)run, (size_t)(p - run));
	jsonw_raw(w, "\"", 1);
}

/* The digits of v, as "%" PRId64 writes them, ending at end; returns
 * where they begin. By hand: snprintf costs more than all the rest of a
 * number's way out. */
static char *
jsonw_digits(char *end, int64_t v)
{
	/* Negated as unsigned, INT64_MIN included. */
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		*--end = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--end = '-';
	return end;
}

void
jsonw_int(struct jsonw *w, int64_t v)
{
	char buf[24], *p = jsonw_digits(buf + sizeof buf, v);

	jsonw_raw(w, p, (size_t)(buf + sizeof buf - p));
}

void
jsonw_real(struct jsonw *w, double v)
{
	const char *point = localeconv()->decimal_point;
	char buf[64], *p, *e, *digits;
	int n;

	if (!isfinite(v)) {
		w->failed = true;
		return;
	}
	/* A whole number of fewer digits than the precision prints as its
	 * digits and ".0" (a timeout of 0 or 60 s, say), without snprintf. */
	if (fabs(v) < 1e15 && v == (double)(int64_t)v && !(v == 0 &&
	    signbit(v))) {
		p = jsonw_digits(buf + sizeof buf - 2, (int64_t)v);
		memcpy(buf + sizeof buf - 2, ".0", 2);
		jsonw_raw(w, p, (size_t)(buf + sizeof buf - p));
		return;
	}
	n = snprintf(buf, sizeof buf, "%.*g", JSONW_REAL_PRECISION, v);
	if (n < 0 || (size_t)n >= sizeof buf - 3) {
		w->failed = true;
		return;
	}
	/* The rest is jansson's: '.' whatever the locale, a ".0" so that
	 * the number reads back as a real, no '+' nor leading zeros in the
	 * exponent. */
	if (point[0] != '.' && point[0] != '\0' &&
	    (p = strchr(buf, point[0])) != NULL)
		*p = '.';
	if (strchr(buf, '.') == NULL && strchr(buf, 'e') == NULL) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	if ((e = strchr(buf, 'e')) != NULL) {
		p = e + 1;
		digits = p + 1;
		if (*p == '-')
			p++;
		while (*digits == '0')
			digits++;
		if (digits != p) {
			memmove(p, digits, strlen(digits) + 1);
			n = (int)strlen(buf);
		}
	}
	jsonw_raw(w, buf, (size_t)n);
}

void
jsonw_bool(struct jsonw *w, bool v)
{
	if (v)
		jsonw_raw(w, "true", 4);
	else
		jsonw_raw(w, "false", 5);
}

void
jsonw_null(struct jsonw *w)
{
	jsonw_raw(w, "null", 4);
}

void
jsonw_ids(struct jsonw *w, const uint64_t *ids, size_t n)
{
	size_t i;

	jsonw_raw(w, "[", 1);
	for (i = 0; i < n; i++) {
		if (i > 0)
			jsonw_raw(w, ",", 1);
		jsonw_int(w, (int64_t)ids[i]);
	}
	jsonw_raw(w, "]", 1);
}

void
jsonw_json(struct jsonw *w, const json_t *value)
{
	size_t n;

	if (!jsonw_room(w, 1))
		return;
	/* json_dumpb says how much it needs when the room is short. */
	n = json_dumpb(value, w->buf + w->len, w->cap - w->len,
	    JSONW_DUMP_FLAGS);
	if (n == 0) {
		w->failed = true;
		return;
	}
	if (n > w->cap - w->len) {
		if (!jsonw_room(w, n))
			return;
		n = json_dumpb(value, w->buf + w->len, w->cap - w->len,
		    JSONW_DUMP_FLAGS);
	}
	w->len += n;
}
