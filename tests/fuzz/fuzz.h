/* fuzz.h - what the fuzz targets share: the entry point libFuzzer calls,
 * a check that aborts (so the fuzzer keeps the input), a byte reader. */
#ifndef TRIAGE_FUZZ_H
#define TRIAGE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant broken: a crash for libFuzzer and for the replay alike. */
#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n",	\
		    __FILE__, __LINE__, #cond);				\
		abort();						\
	}								\
} while (0)

/* Where a target keeps its files: $TMPDIR (make fuzz points it at a
 * directory of its own, in memory, and removes it), else /tmp. The replay
 * removes them at exit; libFuzzer may exit without running atexit. */
static inline const char *
fuzz_tmpdir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir != NULL && dir[0] == '/' ? dir : "/tmp";
}

/* The input, consumed from the front; reads past the end give zeros. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t
fuzz_u8(struct fuzz_in *in)
{
	uint8_t v = 0;

	if (in->n > 0) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static inline uint32_t
fuzz_u32(struct fuzz_in *in)
{
	return (uint32_t)fuzz_u8(in) | (uint32_t)fuzz_u8(in) << 8 |
	    (uint32_t)fuzz_u8(in) << 16 | (uint32_t)fuzz_u8(in) << 24;
}

static inline uint64_t
fuzz_u64(struct fuzz_in *in)
{
	return (uint64_t)fuzz_u32(in) | (uint64_t)fuzz_u32(in) << 32;
}

/* A new string of up to max bytes, no NUL inside; the caller frees it. */
static inline char *
fuzz_str(struct fuzz_in *in, size_t max)
{
	size_t len = fuzz_u8(in) % (max + 1), i;
	char *s;

	if (len > in->n)
		len = in->n;
	if ((s = malloc(len + 1)) == NULL)
		abort();
	for (i = 0; i < len; i++)
		s[i] = in->p[i] != '\0' ? (char)in->p[i] : 'x';
	s[len] = '\0';
	in->p += len;
	in->n -= len;
	return s;
}

#endif
