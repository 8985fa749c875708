/* conninfo.c - checks a libpq connection string the way libpq reads it, and
 * hides the parts of s that libpq's reasons quote (a password's, say). */
#include <ctype.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "conninfo.h"

/*
 * libpq quotes what it could not read: an option's name, the word before a
 * missing '=', a percent-escape, even the whole URI, user and password
 * included. Only a lone punctuation character ("=", "]") is syntax, not
 * the user's text: every other quoted part becomes "...".
 */
static char *
conninfo_redact(const char *msg)
{
	const char *p = msg, *open, *close;
	size_t len = strlen(msg), n = 0;
	char *out;

	/* Each "..." replaces two quotes at least: 5 bytes for 2. */
	if ((out = malloc(3 * len + 1)) == NULL)
		return NULL;
	while ((open = strchr(p, '"')) != NULL &&
	    (close = strchr(open + 1, '"')) != NULL) {
		memcpy(out + n, p, (size_t)(open - p));
		n += (size_t)(open - p);
		if (close - open == 2 && ispunct((unsigned char)open[1])) {
			memcpy(out + n, open, 3);
			n += 3;
		} else {
			memcpy(out + n, "\"...\"", 5);
			n += 5;
		}
		p = close + 1;
	}
	len = strlen(p);
	memcpy(out + n, p, len);
	n += len;
	/* libpq ends its messages with a newline. */
	while (n > 0 && isspace((unsigned char)out[n - 1]))
		n--;
	out[n] = '\0';
	return out;
}

int
conninfo_check(const char *s, char **why)
{
	PQconninfoOption *opts;
	char *err = NULL;

	*why = NULL;
	opts = PQconninfoParse(s, &err);
	if (opts != NULL) {
		PQconninfoFree(opts);
		return 0;
	}
	/* No message and no options: libpq ran out of memory. */
	if (err != NULL) {
		*why = conninfo_redact(err);
		PQfreemem(err);
	}
	return -1;
}
