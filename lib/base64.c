/* base64.c - RFC 4648 base64 encoding and strict decoding: a daemon that
 * sends something else is a bug we want to see, not bytes silently lost. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "base64.h"

static const char base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
base64_encode(const void *in, size_t len)
{
	const unsigned char *p = in;
	char *out, *o;
	size_t i;

	if (len / 3 >= (SIZE_MAX - 1) / 4 - 1) {
		errno = EOVERFLOW;
		return NULL;
	}
	if ((out = malloc((len + 2) / 3 * 4 + 1)) == NULL)
		return NULL;
	o = out;
	for (i = 0; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 |
		    p[i + 2];

		*o++ = base64_alphabet[v >> 18];
		*o++ = base64_alphabet[(v >> 12) & 0x3f];
		*o++ = base64_alphabet[(v >> 6) & 0x3f];
		*o++ = base64_alphabet[v & 0x3f];
	}
	if (i < len) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		*o++ = base64_alphabet[v >> 18];
		*o++ = base64_alphabet[(v >> 12) & 0x3f];
		*o++ = i + 1 < len ? base64_alphabet[(v >> 6) & 0x3f] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* The value of an alphabet character, or -1. */
static int
base64_value(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

void *
base64_decode(const char *in, size_t len, size_t *outlen)
{
	unsigned char *out, *o;
	uint32_t acc = 0;
	size_t i, pad = 0, n = 0;
	int v;

	/* Padding only at the end, at most two, and only to a multiple of 4. */
	while (pad < 2 && pad < len && in[len - pad - 1] == '=')
		pad++;
	if (pad > 0 && len % 4 != 0) {
		errno = EINVAL;
		return NULL;
	}
	len -= pad;
	if (len % 4 == 1) {
		errno = EINVAL;
		return NULL;
	}
	if ((out = malloc(len / 4 * 3 + 3)) == NULL)
		return NULL;
	o = out;
	for (i = 0; i < len; i++) {
		if ((v = base64_value(in[i])) == -1) {
			free(out);
			errno = EINVAL;
			return NULL;
		}
		acc = acc << 6 | (uint32_t)v;
		if (++n == 4) {
			*o++ = (unsigned char)(acc >> 16);
			*o++ = (unsigned char)(acc >> 8);
			*o++ = (unsigned char)acc;
			acc = 0;
			n = 0;
		}
	}
	if (n == 2)
		*o++ = (unsigned char)(acc >> 4);
	else if (n == 3) {
		*o++ = (unsigned char)(acc >> 10);
		*o++ = (unsigned char)(acc >> 2);
	}
	*o = '\0';
	*outlen = (size_t)(o - out);
	return out;
}
