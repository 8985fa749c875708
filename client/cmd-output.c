/* cmd-output.c - triage output: the bytes a job wrote to stdout or stderr,
 * as captured, paged by offset; -f follows a running job to its end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <resolv.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "format.h"
#include "xmalloc.h"

/* How long -f waits for a notification before asking again anyway. */
#define CMD_OUTPUT_POLL_MS 250
/* The first window --tail reads back from the end; doubled until it holds
 * the lines asked for. */
#define CMD_OUTPUT_TAIL_WINDOW 4096

#define CMD_OUTPUT_STDERR	0x130
#define CMD_OUTPUT_TAIL		0x131
#define CMD_OUTPUT_BOTH		0x132

static int cmd_output_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_output_entry = {
	.name = "output",
	.args = "[ID] [--stderr | --both] [--tail N] [-f]",
	.summary = "print what a job wrote to stdout (or stderr)",
	.options =
	    "      --stderr         the job's stderr instead of its stdout\n"
	    "      --both           its stdout, then its stderr (when they "
	    "were not merged)\n"
	    "      --tail N         only the last N lines\n"
	    "  -f, --follow         keep printing while the job runs, until "
	    "it ends,\n"
	    "                       through every attempt it retries\n",
	.notes =
	    "Without ID, your most recent job. The bytes are written as the "
	    "job wrote\n"
	    "them, those of its latest attempt (each attempt starts its "
	    "output afresh).\n"
	    "When a new attempt starts, a line \"--- attempt N ---\" goes to "
	    "stderr and\n"
	    "its output follows. With --json, prints the daemon's output "
	    "replies instead,\n"
	    "one per line.\n",
	.exec = cmd_output_exec,
};

/* What one stream's reading asks for and has reached. */
struct cmd_output {
	json_int_t id;
	const char *stream;
	bool follow;
	long tail;		/* lines; 0: all */
	json_int_t offset;	/* where the next read starts */
	json_int_t attempt;	/* the attempt being read; 0: none yet */
	json_int_t dropped;	/* the last reply's */
	bool eof, truncated;
};

/* The bytes of one output reply, allocated, their count in *len; NULL
 * after saying why. */
static char *
cmd_output_decode(const json_t *result, size_t *len)
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
cmd_output_pause(struct cmd_ctx *ctx)
{
	struct client_error err;
	json_t *msg;
	int timeout = CMD_OUTPUT_POLL_MS;

	fflush(stdout);
	/* One notification is enough; take the others already here too. */
	while ((msg = client_notification(ctx->client, timeout, &err)) !=
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
cmd_output_get(struct cmd_ctx *ctx, struct cmd_output *o, json_t **result)
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
cmd_output_tail_start(const char *buf, size_t len, json_int_t start,
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
cmd_output_tail(struct cmd_ctx *ctx, struct cmd_output *o)
{
	json_int_t window = CMD_OUTPUT_TAIL_WINDOW, start;
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
			if ((rc = cmd_output_get(ctx, o, &result)) !=
			    CMD_EXIT_OK)
				goto out;
			if (start == -1)
				start = json_integer_value(json_object_get(
				    result, "offset"));
			o->attempt = json_integer_value(json_object_get(result,
			    "attempt"));
			if ((bytes = cmd_output_decode(result, &n)) == NULL) {
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
		from = cmd_output_tail_start(buf, len, start, o->tail);
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

/* Prints one stream of the job, from o->offset on, as the options say. */
static int
cmd_output_stream(struct cmd_ctx *ctx, struct cmd_output *o)
{
	json_t *result;
	json_int_t attempt, next;
	char *bytes;
	size_t len;
	bool progress;
	int rc;

	if (o->tail > 0) {
		if ((rc = cmd_output_tail(ctx, o)) != CMD_EXIT_OK)
			return rc;
		if (!o->follow)
			return CMD_EXIT_OK;
	}
	while (!o->eof) {
		if ((rc = cmd_output_get(ctx, o, &result)) != CMD_EXIT_OK)
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
		else if ((bytes = cmd_output_decode(result, &len)) == NULL) {
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
		if ((rc = cmd_output_pause(ctx)) != CMD_EXIT_OK)
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

/* The id of the caller's most recent job; an exit status. */
static int
cmd_output_latest(struct cmd_ctx *ctx, json_int_t *id)
{
	json_t *jobs, *job;
	size_t i;
	int rc;

	if ((rc = cmd_list_fetch(ctx, xjson(json_object()), &jobs)) !=
	    CMD_EXIT_OK)
		return rc;
	*id = 0;
	json_array_foreach(jobs, i, job) {
		if (json_integer_value(json_object_get(job, "uid")) ==
		    (json_int_t)geteuid())
			*id = json_integer_value(json_object_get(job, "id"));
	}
	json_decref(jobs);
	if (*id != 0)
		return CMD_EXIT_OK;
	cmd_error("you have no jobs the daemon keeps: give an id");
	return CMD_EXIT_FAILURE;
}

/* --both: whether the job's stderr went into its stdout. */
static int
cmd_output_merged(struct cmd_ctx *ctx, json_int_t id, bool *merged)
{
	json_t *job;
	int rc;

	if ((rc = cmd_call(ctx, "get", xjson(json_pack("{s:I}", "id", id)),
	    &job)) != CMD_EXIT_OK)
		return rc;
	*merged = json_is_true(json_object_get(job, "merge_output"));
	json_decref(job);
	return CMD_EXIT_OK;
}

static int
cmd_output_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stderr", no_argument, NULL, CMD_OUTPUT_STDERR },
		{ "both", no_argument, NULL, CMD_OUTPUT_BOTH },
		{ "tail", required_argument, NULL, CMD_OUTPUT_TAIL },
		{ "follow", no_argument, NULL, 'f' },
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_output o = { .stream = "stdout" };
	bool both = false, merged = false;
	json_t *result;
	int64_t id;
	int ch, rc;

	while ((ch = cmd_getopt(ctx, argc, argv, ":hf", longopts)) != -1) {
		switch (ch) {
		case CMD_OUTPUT_STDERR:
			o.stream = "stderr";
			break;
		case CMD_OUTPUT_BOTH:
			both = true;
			break;
		case CMD_OUTPUT_TAIL:
			if (cmd_parse_count(optarg, 1, &o.tail) == -1)
				return cmd_usage(ctx, "invalid --tail '%s' (a "
				    "count of lines, at least 1)", optarg);
			break;
		case 'f':
			o.follow = true;
			break;
		case CMD_GETOPT_EXIT:
			return ctx->status;
		default:
			return cmd_usage(ctx, "unknown option");
		}
	}
	if (both && strcmp(o.stream, "stderr") == 0)
		return cmd_usage(ctx, "--both and --stderr exclude each other");
	if (both && o.follow)
		return cmd_usage(ctx, "--both and -f exclude each other: follow "
		    "one stream");
	if (argc - optind > 1)
		return cmd_usage(ctx, "give one job id, or none for your most "
		    "recent job");
	if (argc - optind == 1) {
		if (cmd_parse_id(argv[optind], &id) == -1)
			return cmd_usage(ctx, "invalid job id '%s'",
			    argv[optind]);
		o.id = id;
	} else if ((rc = cmd_output_latest(ctx, &o.id)) != CMD_EXIT_OK)
		return rc;
	if (both && (rc = cmd_output_merged(ctx, o.id, &merged)) !=
	    CMD_EXIT_OK)
		return rc;

	/* Watch before the first read, so no change can slip between. */
	if (o.follow) {
		rc = cmd_call(ctx, "watch", xjson(json_pack("{s:[I]}", "ids",
		    o.id)), &result);
		if (rc != CMD_EXIT_OK)
			return rc;
		json_decref(result);
	}
	if ((rc = cmd_output_stream(ctx, &o)) != CMD_EXIT_OK || !both ||
	    merged)
		return rc;
	fflush(stdout);
	o = (struct cmd_output){ .id = o.id, .stream = "stderr",
	    .tail = o.tail };
	return cmd_output_stream(ctx, &o);
}
