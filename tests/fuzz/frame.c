/* frame.c - fuzz target: conn.c's line framing (frame_next) fed arbitrary
 * chunks, checked against a plain split of the whole stream at '\n'. */
#include <stdbool.h>

#include "frame.h"
#include "fuzz.h"

/*
 * Input: max - 1 (one byte), then chunk sizes (one byte each, until a 0),
 * then the stream. The chunks arrive one by one, as reads would; after the
 * last one comes EOF.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	size_t max = (size_t)fuzz_u8(&in) + 1, sizes[64], nsizes = 0;
	size_t have = 0, fed = 0, off = 0, linelen, used, k, ref;
	const char *stream;
	enum frame_result r;
	bool eof = false, refused = false;
	uint8_t b;
	char *buf;

	while (nsizes < 64 && (b = fuzz_u8(&in)) != 0)
		sizes[nsizes++] = b;
	stream = (const char *)in.p;
	if ((buf = malloc(in.n + 1)) == NULL)
		return 0;
	/* buf[off .. have) is what the connection holds. */
	for (k = 0; !refused; k++) {
		if (fed < in.n) {
			size_t chunk = k < nsizes ? sizes[k] : in.n - fed;

			if (chunk > in.n - fed)
				chunk = in.n - fed;
			memcpy(buf + have, stream + fed, chunk);
			have += chunk;
			fed += chunk;
		} else
			eof = true;
		while ((r = frame_next(buf + off, have - off, max, eof,
		    &linelen, &used)) == FRAME_LINE) {
			FUZZ_ASSERT(linelen <= max);
			FUZZ_ASSERT(used == linelen || used == linelen + 1);
			FUZZ_ASSERT(used <= have - off && used > 0);
			FUZZ_ASSERT(memchr(buf + off, '\n', linelen) == NULL);
			if (used == linelen + 1)
				FUZZ_ASSERT(buf[off + linelen] == '\n');
			else
				FUZZ_ASSERT(eof && used == have - off);
			off += used;
		}
		if (r == FRAME_TOO_LONG) {
			/* The next line really is longer than max. */
			const char *nl = memchr(buf + off, '\n', have - off);

			ref = nl ? (size_t)(nl - (buf + off)) : have - off;
			FUZZ_ASSERT(ref > max);
			refused = true;
		}
		if (eof)
			break;
	}
	/* Everything was framed but a line refused. */
	if (!refused)
		FUZZ_ASSERT(off == in.n);
	free(buf);
	return 0;
}
