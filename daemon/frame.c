/* frame.c - where the next request line of a client's bytes ends, and
 * whether it is over max_request: conn.c's framing, pure, to be fuzzed. */
#include <string.h>

#include "frame.h"

enum frame_result
frame_next(const char *buf, size_t len, size_t max, bool eof,
    size_t *linelen, size_t *used)
{
	/* A newline further on than max + 1 would end a line too long. */
	size_t window = max < len ? max + 1 : len;
	const char *nl;

	if (len == 0)
		return FRAME_MORE;
	if ((nl = memchr(buf, '\n', window)) != NULL) {
		*linelen = (size_t)(nl - buf);
		*used = *linelen + 1;
		return FRAME_LINE;
	}
	if (len > max)
		return FRAME_TOO_LONG;
	if (!eof)
		return FRAME_MORE;
	*linelen = len;
	*used = len;
	return FRAME_LINE;
}
