/* format.c - how the triage CLI shows times, spans and command lines, and
 * keeps control characters and bytes that are not UTF-8 out of the user's
 * terminal. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytestr.h"
#include "format.h"
#include "timefmt.h"
#include "units.h"
#include "xmalloc.h"

char *
format_clean(const char *s)
{
	char *copy;

	if ((copy = bytestr_escape(s, true)) == NULL)
		xoom();
	return copy;
}

size_t
format_width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	}
	return n;
}

/* Whether a shell reads s back as the same word without quotes. */
static int
format_plain_word(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		if (strchr("abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-", *s) ==
		    NULL)
			return 0;
	}
	return 1;
}

/* arg as bash reads $'...' back: \ and ' escaped, and what is not UTF-8
 * or a control character as \xNN (format_clean). Allocated. */
static char *
format_ansi_c(const char *arg)
{
	char *quoted = xmalloc(strlen(arg) * 2 + 1), *q = quoted, *out;
	const char *p;

	for (p = arg; *p != '\0'; p++) {
		if (*p == '\\' || *p == '\'')
			*q++ = '\\';
		*q++ = *p;
	}
	*q = '\0';
	out = format_clean(quoted);
	free(quoted);
	return out;
}

/* arg, to append to a command line: as it is, in '...', or in $'...' when
 * it holds bytes a terminal must not get. Allocated. */
static char *
format_word(const char *arg)
{
	char *clean = format_clean(arg), *out, *o;
	const char *p;

	if (format_plain_word(clean))
		return clean;
	if (strcmp(clean, arg) != 0) {
		free(clean);
		clean = format_ansi_c(arg);
		out = xmalloc(strlen(clean) + 4);
		sprintf(out, "$'%s'", clean);
		free(clean);
		return out;
	}
	/* Each ' becomes '\'' (4 bytes); 2 quotes, the NUL. */
	out = o = xmalloc(strlen(clean) * 4 + 3);
	*o++ = '\'';
	for (p = clean; *p != '\0'; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else
			*o++ = *p;
	}
	*o++ = '\'';
	*o = '\0';
	free(clean);
	return out;
}

char *
format_argv(const json_t *argv)
{
	const char *why;
	char *out, *arg, *word;
	size_t i, len = 0, size = 64;
	json_t *v;

	out = xmalloc(size);
	out[0] = '\0';
	json_array_foreach(argv, i, v) {
		/* A string, or {"base64": ...} for bytes that are not UTF-8. */
		if (bytestr_from_json(v, &arg, &why) == -1) {
			if (errno == ENOMEM)
				xoom();
			continue;
		}
		word = format_word(arg);
		free(arg);
		/* A space, the word, the NUL. */
		while (size < len + strlen(word) + 2)
			out = xreallocarray(out, size *= 2, 1);
		if (i > 0)
			out[len++] = ' ';
		strcpy(out + len, word);
		len += strlen(word);
		free(word);
	}
	return out;
}

char *
format_bytes(const json_t *v)
{
	const char *why;
	char *bytes, *clean;

	if (bytestr_from_json(v, &bytes, &why) == -1) {
		if (errno == ENOMEM)
			xoom();
		return NULL;
	}
	clean = format_clean(bytes);
	free(bytes);
	return clean;
}

char *
format_result(const json_t *v)
{
	const char *why, *p, *end;
	char *bytes, *clean, *out;
	size_t len, n = 0;

	if (bytestr_bytes_from_json(v, &bytes, &len, &why) == -1) {
		if (errno == ENOMEM)
			xoom();
		return NULL;
	}
	if (len > 0 && bytes[len - 1] == '\n')
		bytes[--len] = '\0';
	/* Each cleaned byte takes at most 4: the pieces between NULs, each
	 * NUL as \x00. */
	out = xmalloc(len * 4 + 1);
	for (p = bytes, end = bytes + len; p <= end; p += strlen(p) + 1) {
		clean = format_clean(p);
		memcpy(out + n, clean, strlen(clean));
		n += strlen(clean);
		free(clean);
		if (p + strlen(p) < end) {
			memcpy(out + n, "\\x00", 4);
			n += 4;
		}
	}
	out[n] = '\0';
	free(bytes);
	return out;
}

const char *
format_span(int64_t ms, char *buf, size_t len)
{
	if (ms < 0)
		return "-";
	return timefmt_elapsed(ms, buf, len);
}

const char *
format_time(const json_t *job, const char *key, char *buf, size_t len)
{
	const char *s = json_string_value(json_object_get(job, key));
	int64_t ms;

	if (s == NULL)
		return NULL;
	if (timefmt_parse(s, &ms) == -1)
		return s;
	return timefmt_local(ms, buf, len);
}

const char *
format_seconds(const json_t *v, char *buf, size_t len)
{
	double s;

	if (!json_is_number(v) || (s = json_number_value(v)) < 0 || s > 1e12)
		return "-";
	/* Exact, as triage.conf would write it: "30s", "5m", "1500ms". */
	return units_format_duration((uint64_t)(s * 1000 + 0.5), buf, len);
}

const char *
format_int(const json_t *v, char *buf, size_t len)
{
	if (!json_is_integer(v))
		return "-";
	snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	return buf;
}

void
format_json_line(const json_t *v)
{
	json_dumpf(v, stdout, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	putchar('\n');
}

const char *
format_pending(const json_t *v, char *buf, size_t len)
{
	const char *s = json_string_value(v);

	if (s == NULL || strncmp(s, "node:", 5) != 0)
		return s;
	snprintf(buf, len, "node %s is down", s + 5);
	return buf;
}

const char *
format_reason(const json_t *job, char *buf, size_t len)
{
	if (json_is_true(json_object_get(job, "frozen")))
		return "frozen";
	return format_pending(json_object_get(job, "pending_reason"), buf,
	    len);
}

/* n bytes (at least 1024) to a tenth of the largest unit that is at
 * least 1. */
static const char *
format_size_tenths(json_int_t n, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double d = (double)n / 1024;
	size_t u;

	for (u = 0; u + 1 < sizeof units / sizeof units[0] && d >= 1024; u++)
		d /= 1024;
	snprintf(buf, len, "%.1f%s", d, units[u]);
	return buf;
}

const char *
format_size(const json_t *v, char *buf, size_t len)
{
	json_int_t n = json_integer_value(v);

	if (!json_is_integer(v) || n < 0)
		return "-";
	if (n < 1024 || n % 1024 == 0)
		return units_format_size((uint64_t)n, buf, len);
	return format_size_tenths(n, buf, len);
}

const char *
format_size_about(const json_t *v, char *buf, size_t len)
{
	json_int_t n = json_integer_value(v);

	if (!json_is_integer(v) || n < 0)
		return "-";
	if (n < 1024)
		return units_format_size((uint64_t)n, buf, len);
	return format_size_tenths(n, buf, len);
}

/* The units of one resource ("1,3"), or the count, to f. */
static void
format_units(FILE *f, const json_t *v)
{
	const json_t *u;
	size_t i;

	if (json_is_integer(v)) {
		fprintf(f, "%" PRId64, (int64_t)json_integer_value(v));
		return;
	}
	json_array_foreach(v, i, u)
		fprintf(f, "%s%s", i > 0 ? "," : "",
		    json_is_string(u) ? json_string_value(u) : "?");
}

/* What a memstream gathered, or NULL when it holds nothing. */
static char *
format_closed(FILE *f, char **s)
{
	if (ferror(f) || fclose(f) != 0)
		xoom();
	if (**s == '\0') {
		free(*s);
		return NULL;
	}
	return *s;
}

char *
format_resources(const json_t *obj)
{
	const char *name;
	const json_t *v;
	char *s = NULL;
	size_t len, n = 0;
	FILE *f;

	if ((f = open_memstream(&s, &len)) == NULL)
		xoom();
	json_object_foreach((json_t *)(uintptr_t)obj, name, v) {
		fprintf(f, "%s%s=", n++ > 0 ? " " : "", name);
		format_units(f, v);
	}
	return format_closed(f, &s);
}

char *
format_uses(const json_t *job)
{
	const json_t *memory = json_object_get(job, "memory"), *v, *units;
	const json_t *devices = json_object_get(job, "devices");
	char buf[32], *s = NULL;
	const char *name;
	size_t len, n = 0;
	FILE *f;

	if ((f = open_memstream(&s, &len)) == NULL)
		xoom();
	if (json_is_integer(memory)) {
		fputs(format_size(memory, buf, sizeof buf), f);
		n++;
	}
	json_object_foreach(json_object_get(job, "resources"), name, v) {
		units = json_object_get(devices, name);
		fprintf(f, "%s%s%c", n++ > 0 ? " " : "", name,
		    units != NULL ? ':' : '=');
		format_units(f, units != NULL ? units : v);
	}
	return (s = format_closed(f, &s)) != NULL ? s : xstrdup("-");
}
