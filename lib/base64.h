/* base64.h - RFC 4648 base64 (the standard alphabet, with padding), as the
 * output method sends captured bytes that are not UTF-8. */
#ifndef TRIAGE_BASE64_H
#define TRIAGE_BASE64_H

#include <stddef.h>

/*
 * Encodes len bytes of in. Returns an allocated NUL-terminated string the
 * caller frees, or NULL with errno ENOMEM (or EOVERFLOW for a len too large).
 */
char *base64_encode(const void *in, size_t len);

/*
 * Decodes len characters of in; the padding may be left out, nothing else
 * (no space, no newline, no other alphabet) is accepted. Returns an allocated
 * buffer of *outlen bytes (plus a NUL byte, not counted, so text can be used
 * as a string) that the caller frees; or NULL with errno EINVAL (not base64)
 * or ENOMEM, and *outlen left alone.
 */
void *base64_decode(const char *in, size_t len, size_t *outlen);

#endif
