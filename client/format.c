/* format.c - how the triage CLI shows times, spans and command lines, and
 * keeps control characters from the daemon out of the user's terminal. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "timefmt.h"
#include "units.h"
#include "xmalloc.h"

char *
format_clean(const char *s)
{
	char *copy = xstrdup(s), *p;

	for (p = copy; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
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

char *
format_argv(const json_t *argv)
{
	const char *arg, *p;
	json_t *v;
	size_t i;
	char *out, *clean;
	size_t len = 0, size = 64;

	out = xmalloc(size);
	out[0] = '\0';
	json_array_foreach(argv, i, v) {
		if ((arg = json_string_value(v)) == NULL)
			continue;
		clean = format_clean(arg);
		/* Each ' becomes '\'' (4 bytes); 2 quotes, a space, the NUL. */
		while (size < len + strlen(clean) * 4 + 4)
			out = xreallocarray(out, size *= 2, 1);
		if (i > 0)
			out[len++] = ' ';
		if (format_plain_word(clean)) {
			strcpy(out + len, clean);
			len += strlen(clean);
		} else {
			out[len++] = '\'';
			for (p = clean; *p != '\0'; p++) {
				if (*p == '\'') {
					memcpy(out + len, "'\\''", 4);
					len += 4;
				} else
					out[len++] = *p;
			}
			out[len++] = '\'';
			out[len] = '\0';
		}
		free(clean);
	}
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
