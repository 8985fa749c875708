/* frame.h - where the next request line of a client's bytes ends, and
 * whether it is over max_request: conn.c's framing, pure, to be fuzzed. */
#ifndef TRIAGED_FRAME_H
#define TRIAGED_FRAME_H

#include <stdbool.h>
#include <stddef.h>

enum frame_result {
	FRAME_MORE,		/* no complete line yet: read more */
	FRAME_LINE,		/* a line: *linelen bytes, *used to drain */
	FRAME_TOO_LONG,		/* the next line is over max: refuse it */
};

/*
 * Frames the next line of the len bytes at buf: those before the first
 * '\n', which must be at most max; at eof, the last line may lack its
 * newline. Looks at no more than the first max + 1 bytes, so a caller may
 * pass just those. *linelen and *used are set for FRAME_LINE only.
 */
enum frame_result frame_next(const char *buf, size_t len, size_t max,
    bool eof, size_t *linelen, size_t *used);

#endif
