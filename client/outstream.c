/* outstream.c - a job's captured output read through the daemon: pages by
 * offset, windows back from the end for --tail, attempts followed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <resolv.h>
#include <string.h>

#include "format.h"
#include "outstream.h"
#include "xmalloc.h"

/* How long -f waits for a notification before asking again anyway. */
#define OUTSTREAM_POLL_MS 250
/* The first window --tail reads back from the end; doubled until it holds
 * the lines asked for. */
#define OUTSTREAM_TAIL_WINDOW 4096

/* The bytes of one output reply, allocated, their count in *len; NULL
 * after saying why. */
static char *
outstream_decode(const json_t *result, size_t *len)
{
	const json_t *data = json_object_get(result, "data");
	const char *encoding;
	char *bytes;
	int n;

	if (!json_is_string(data)) {
		cmd_error("the daemon's output reply has no data");
		return NULL;
	}
	encoding = json_string_value(json_object_get(result, "encoding"));
	if (encoding == NULL || strcmp(encoding, "utf-8") == 0) {
		/* The length, not strlen: the data may hold NUL bytes. */
		*len = json_string_length(data);
		bytes = xmalloc(*len + 1);
		memcpy(bytes, json_string_value(data), *len);
		return bytes;
	}
	if (strcmp(encoding, "base64") != 0) {
		cmd_error("the daemon's output is in an unknown encoding '%s'",
		    encoding);
		return NULL;
	}
	/* Three bytes for every four characters, rounded up. */
	bytes = xmalloc(json_string_length(data) / 4 * 3 + 3);
	if ((n = b64_pton(json_string_value(data), (unsigned char *)bytes,
	    json_string_length(data) / 4 * 3 + 3)) < 0) {
		free(bytes);
		cmd_error("the daemon's output is not valid base64");
		return NULL;
	}
	*len = (size_t)n;
	return bytes;
}

/* Waits until the daemon says the job changed, or a while. */
static int
outstream_pause(struct cmd_ctx *ctx)
{
	struct triage_error err;
	json_t *msg;
	int timeout = OUTSTREAM_POLL_MS;

	fflush(stdout);
	/* One notification is enough; take the others already here too. */
	while ((msg = triage_client_notification(ctx->client, timeout, &err)) !=
	    NULL) {
		json_decref(msg);
		timeout = 0;
	}
	if (errno == ETIMEDOUT)
		return CMD_EXIT_OK;
	return cmd_report(&err);
}

/* One output request from o->offset (negative: back from the end); its
 * reply in *result. Returns an exit status. */
static int
outstream_get(struct cmd_ctx *ctx, struct outstream *o, json_t **result)
{
	json_t *next;
	int rc;

	if ((rc = cmd_call(ctx, "output", xjson(json_pack("{s:I,s:s,s:I}",
	    "id", o->id, "stream", o->stream, "offset", o->offset)),
	    result)) != CMD_EXIT_OK)
		return rc;
	next = json_object_get(*result, "next_offset");
	if (!json_is_integer(next) || json_integer_value(next) <
	    json_integer_value(json_object_get(*result, "offset"))) {
		cmd_error("the daemon's output reply has a bad next_offset");
		json_decref(*result);
		*result = NULL;
		return CMD_EXIT_FAILURE;
	}
	o->eof = json_is_true(json_object_get(*result, "eof"));
	o->truncated = json_is_true(json_object_get(*result, "truncated"));
	o->dropped = json_integer_value(json_object_get(*result, "dropped"));
	return CMD_EXIT_OK;
}

/*
 * Where the last o->tail lines start in buf (len bytes read from absolute
 * offset start), or -1 when the window may not hold them all yet (it does
 * not reach back to the stream's start).
 */
static long
outstream_tail_start(const char *buf, size_t len, json_int_t start,
    long tail)
{
	size_t i = len;
	long lines = 0;

	/* A last line without its newline counts as a line too. */
	if (len > 0 && buf[len - 1] == '\n')
		i--;
	for (; i > 0; i--) {
		if (buf[i - 1] == '\n' && ++lines == tail)
			return (long)i;
	}
	return start == 0 ? 0 : -1;
}

/*
 * --tail: reads a window back from the end, twice as large each time it
 * holds fewer than the lines asked for, and prints its last o->tail lines
 * (or, with --json, the replies that read the window). Leaves o->offset at
 * the end it reached, for -f.
 */
static int
outstream_tail(struct cmd_ctx *ctx, struct outstream *o)
{
	json_int_t window = OUTSTREAM_TAIL_WINDOW, start;
	json_t *result, *replies = NULL;
	char *buf = NULL, *bytes;
	size_t len, n;
	long from = -1;
	int rc = CMD_EXIT_OK;

	while (from == -1) {
		json_decref(replies);
		replies = xjson(json_array());
		free(buf);
		buf = NULL;
		len = 0;
		o->offset = -window;
		start = -1;
		/* A reply holds at most the daemon's default limit: read on
		 * until the window is read, or the end. */
		for (;;) {
			if ((rc = outstream_get(ctx, o, &result)) !=
			    CMD_EXIT_OK)
				goto out;
			if (start == -1)
				start = json_integer_value(json_object_get(
				    result, "offset"));
			o->attempt = json_integer_value(json_object_get(result,
			    "attempt"));
			if ((bytes = outstream_decode(result, &n)) == NULL) {
				json_decref(result);
				rc = CMD_EXIT_FAILURE;
				goto out;
			}
			buf = xreallocarray(buf, len + n + 1, 1);
			memcpy(buf + len, bytes, n);
			len += n;
			free(bytes);
			o->offset = json_integer_value(json_object_get(result,
			    "next_offset"));
			json_array_append_new(replies, result);
			if (n == 0 || o->eof || o->offset - start >= window)
				break;
		}
		from = outstream_tail_start(buf, len, start, o->tail);
		window *= 2;
	}
	if (ctx->json) {
		json_array_foreach(replies, n, result)
			format_json_line(result);
	} else
		fwrite(buf + from, 1, len - (size_t)from, stdout);
out:
	json_decref(replies);
	free(buf);
	return rc;
}

int
outstream_print(struct cmd_ctx *ctx, struct outstream *o)
{
	json_t *result;
	json_int_t attempt, next;
	char *bytes;
	size_t len;
	bool progress;
	int rc;

	if (o->tail > 0) {
		if ((rc = outstream_tail(ctx, o)) != CMD_EXIT_OK)
			return rc;
		if (!o->follow)
			return CMD_EXIT_OK;
	}
	while (!o->eof) {
		if ((rc = outstream_get(ctx, o, &result)) != CMD_EXIT_OK)
			return rc;
		/* Another attempt's capture starts afresh: what was read at
		 * the old offset is not its beginning. (0: a daemon that does
		 * not say.) */
		attempt = json_integer_value(json_object_get(result,
		    "attempt"));
		if (o->attempt != 0 && attempt != 0 && attempt != o->attempt) {
			fflush(stdout);
			fprintf(stderr, "--- attempt %lld ---\n",
			    (long long)attempt);
			o->attempt = attempt;
			o->offset = 0;
			o->eof = false;
			json_decref(result);
			continue;
		}
		o->attempt = attempt;
		len = 0;
		if (ctx->json)
			format_json_line(result);
		else if ((bytes = outstream_decode(result, &len)) == NULL) {
			json_decref(result);
			return CMD_EXIT_FAILURE;
		} else {
			fwrite(bytes, 1, len, stdout);
			free(bytes);
		}
		next = json_integer_value(json_object_get(result,
		    "next_offset"));
		/* New bytes: there may be more at once. None: the job has not
		 * written more yet. */
		progress = len > 0 || next > o->offset;
		o->offset = next;
		json_decref(result);
		if (o->eof || progress)
			continue;
		if (!o->follow)
			break;
		if ((rc = outstream_pause(ctx)) != CMD_EXIT_OK)
			return rc;
	}
	if (o->eof && o->truncated && !ctx->json) {
		if (o->dropped > 0 && o->tail == 0)
			cmd_error("job %lld's %s lost its first %lld bytes to "
			    "the daemon's output_keep", (long long)o->id,
			    o->stream, (long long)o->dropped);
		else if (o->dropped == 0)
			cmd_error("job %lld's %s was cut at the daemon's "
			    "max_output", (long long)o->id, o->stream);
	}
	return CMD_EXIT_OK;
}
