/* outstream.h - one stream of a job's captured output, read through the
 * daemon and written out: paged, from the end for --tail, or followed. */
#ifndef TRIAGE_OUTSTREAM_H
#define TRIAGE_OUTSTREAM_H

#include <stdbool.h>

#include <jansson.h>

#include "cmd.h"

/* What one stream's reading asks for and has reached. */
struct outstream {
	json_int_t id;
	const char *stream;	/* "stdout" or "stderr" */
	bool follow;		/* -f: on until the job ends */
	long tail;		/* lines; 0: all */
	json_int_t offset;	/* where the next read starts */
	json_int_t attempt;	/* the attempt being read; 0: none yet */
	json_int_t dropped;	/* the last reply's */
	bool eof, truncated;
};

/*
 * Writes the stream o names to stdout (with --json, the daemon's replies)
 * from o->offset on, or its last o->tail lines; with o->follow, on until
 * the job has ended, starting again at each new attempt, which a line on
 * stderr announces (the caller watches the job first). Says on stderr when
 * the daemon dropped bytes of it. Returns an exit status.
 */
int outstream_print(struct cmd_ctx *ctx, struct outstream *o);

#endif
