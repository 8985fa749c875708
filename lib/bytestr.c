/* bytestr.c - byte strings (argv, cwd, env values: file names are bytes on
 * Linux) in JSON, which carries UTF-8 only: {"base64": ...} for the rest. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytestr.h"
#include "jsonw.h"

static const char bytestr_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool
bytestr_utf8(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t len;

	while (p < end) {
		if (*p < 0x80) {
			p++;
			continue;
		}
		if ((len = jsonw_utf8(p, end)) == 0)
			return false;
		p += len;
	}
	return true;
}

/* The base64 of the n bytes at s, padded, NUL-terminated; NULL when out
 * of memory. */
static char *
bytestr_b64_encode(const unsigned char *s, size_t n)
{
	char *out, *o;
	uint32_t v;
	size_t i;

	if ((out = malloc((n + 2) / 3 * 4 + 1)) == NULL)
		return NULL;
	for (i = 0, o = out; i + 2 < n; i += 3) {
		v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		*o++ = bytestr_b64[v >> 18];
		*o++ = bytestr_b64[(v >> 12) & 63];
		*o++ = bytestr_b64[(v >> 6) & 63];
		*o++ = bytestr_b64[v & 63];
	}
	if (i < n) {
		v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
		*o++ = bytestr_b64[v >> 18];
		*o++ = bytestr_b64[(v >> 12) & 63];
		*o++ = i + 1 < n ? bytestr_b64[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* The value of base64 character c, or -1. */
static int
bytestr_b64_value(char c)
{
	const char *p;

	if (c == '\0' || (p = strchr(bytestr_b64, c)) == NULL)
		return -1;
	return (int)(p - bytestr_b64);
}

/*
 * Standard base64 of n characters, padded, nothing else (no spaces, no
 * missing padding: what is sent is what every encoder writes), into out
 * (room for n / 4 * 3 bytes); the count in *len. 0, or -1 when malformed.
 */
static int
bytestr_b64_decode(const char *s, size_t n, unsigned char *out, size_t *len)
{
	size_t i, j, o = 0;
	int v[4], pad;

	if (n % 4 != 0)
		return -1;
	for (i = 0; i < n; i += 4) {
		pad = 0;
		for (j = 0; j < 4; j++) {
			/* '=' only at the end: the last one or two. */
			if (s[i + j] == '=' && i + 4 == n && j >= 2 &&
			    (j == 3 || s[i + 3] == '=')) {
				v[j] = 0;
				pad++;
			} else if ((v[j] = bytestr_b64_value(s[i + j])) == -1)
				return -1;
		}
		out[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[o++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[o++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
	}
	*len = o;
	return 0;
}

json_t *
bytestr_json(const char *s)
{
	json_t *o;
	char *b64;

	if (s == NULL)
		return NULL;
	if (bytestr_utf8(s, strlen(s)))
		return json_string(s);
	if ((b64 = bytestr_b64_encode((const unsigned char *)s,
	    strlen(s))) == NULL)
		return NULL;
	o = json_pack("{s:s}", "base64", b64);
	free(b64);
	return o;
}

void
bytestr_write(struct jsonw *w, const char *s)
{
	size_t len = w->len;

	/* As a string first: jsonw_string checks the UTF-8 as it goes, and
	 * nearly every string is; what was written of one that is not is
	 * taken back. */
	if (w->failed || s == NULL) {
		jsonw_string(w, s);
		return;
	}
	jsonw_string(w, s);
	if (w->failed) {
		/* Out of memory fails again below. */
		w->failed = false;
		w->len = len;
		bytestr_write_base64(w, s);
	}
}

void
bytestr_write_base64(struct jsonw *w, const char *s)
{
	char *b64;

	if ((b64 = bytestr_b64_encode((const unsigned char *)s,
	    strlen(s))) == NULL) {
		w->failed = true;
		return;
	}
	jsonw_raw(w, "{\"base64\":\"", 11);
	/* Base64 has nothing to escape. */
	jsonw_raw(w, b64, strlen(b64));
	jsonw_raw(w, "\"}", 2);
	free(b64);
}

void
bytestr_write_strv(struct jsonw *w, char *const *v)
{
	jsonw_raw(w, "[", 1);
	for (; v != NULL && *v != NULL; v++) {
		bytestr_write(w, *v);
		if (v[1] != NULL)
			jsonw_raw(w, ",", 1);
	}
	jsonw_raw(w, "]", 1);
}

/* EINVAL with *why; -1. */
static int
bytestr_bad(const char **why, const char *what)
{
	*why = what;
	errno = EINVAL;
	return -1;
}

json_t *
bytestr_json_bytes(const char *s, size_t n)
{
	json_t *o;
	char *b64;

	if (memchr(s, '\0', n) == NULL && bytestr_utf8(s, n))
		return json_stringn(s, n);
	if ((b64 = bytestr_b64_encode((const unsigned char *)s, n)) == NULL)
		return NULL;
	o = json_pack("{s:s}", "base64", b64);
	free(b64);
	return o;
}

int
bytestr_bytes_from_json(const json_t *v, char **out, size_t *len,
    const char **why)
{
	const json_t *b64;
	const char *s;
	size_t n;

	*out = NULL;
	if (json_is_string(v)) {
		s = json_string_value(v);
		n = json_string_length(v);
		if (memchr(s, '\0', n) != NULL)
			return bytestr_bad(why, "holds a NUL byte");
		if ((*out = strdup(s)) == NULL)
			return -1;
		*len = n;
		return 0;
	}
	if (!json_is_object(v))
		return bytestr_bad(why, "is not a string");
	if (json_object_size(v) != 1 ||
	    (b64 = json_object_get(v, "base64")) == NULL)
		return bytestr_bad(why, "is an object other than "
		    "{\"base64\": \"...\"}");
	if (!json_is_string(b64))
		return bytestr_bad(why, "has a \"base64\" that is not a string");
	n = json_string_length(b64);
	if ((*out = malloc(n / 4 * 3 + 1)) == NULL)
		return -1;
	if (bytestr_b64_decode(json_string_value(b64), n,
	    (unsigned char *)*out, len) == -1) {
		free(*out);
		*out = NULL;
		return bytestr_bad(why, "is not valid base64");
	}
	(*out)[*len] = '\0';
	return 0;
}

int
bytestr_from_json(const json_t *v, char **out, const char **why)
{
	size_t len;

	if (bytestr_bytes_from_json(v, out, &len, why) == -1)
		return -1;
	/* A C string ends at its first NUL: it would lose the rest. */
	if (memchr(*out, '\0', len) != NULL) {
		free(*out);
		*out = NULL;
		return bytestr_bad(why, "holds a NUL byte");
	}
	return 0;
}

/* Whether the character of n bytes at p is a control character. */
static bool
bytestr_ctl(const unsigned char *p, size_t n)
{
	if (n == 1)
		return *p < 0x20 || *p == 0x7f;
	/* U+0080 to U+009F: C2 80 to C2 9F. */
	return n == 2 && p[0] == 0xC2 && p[1] < 0xA0;
}

char *
bytestr_escape(const char *s, bool ctl)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end;
	size_t n = strlen(s), len, i;
	char *out, *o;

	end = p + n;
	/* At worst every byte becomes four. */
	if ((out = malloc(n * 4 + 1)) == NULL)
		return NULL;
	for (o = out; p < end; p += len) {
		len = jsonw_utf8(p, end);
		if (len != 0 && !(ctl && bytestr_ctl(p, len))) {
			memcpy(o, p, len);
			o += len;
			continue;
		}
		/* The bytes of the control character, or the one bad byte
		 * (what follows it may start a good sequence). */
		if (len == 0)
			len = 1;
		for (i = 0; i < len; i++) {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[p[i] >> 4];
			*o++ = hex[p[i] & 15];
		}
	}
	*o = '\0';
	return out;
}
