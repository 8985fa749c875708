/* cmd-output.c - triage output: the bytes a job wrote to stdout or stderr,
 * as captured, paged by offset; -f follows a running job to its end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <resolv.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "xmalloc.h"

/* How long -f waits for a notification before asking again anyway. */
#define CMD_OUTPUT_POLL_MS 250

#define CMD_OUTPUT_STDERR 0x130

static int cmd_output_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_output_entry = {
	.name = "output",
	.args = "ID [--stderr] [-f]",
	.summary = "print what a job wrote to stdout (or stderr)",
	.options =
	    "      --stderr         the job's stderr instead of its stdout\n"
	    "  -f, --follow         keep printing while the job runs, until "
	    "it ends,\n"
	    "                       through every attempt it retries\n",
	.notes =
	    "The bytes are written as the job wrote them, those of its latest "
	    "attempt\n"
	    "(each attempt starts its output afresh). When a new attempt "
	    "starts, a line\n"
	    "\"--- attempt N ---\" goes to stderr and its output follows. "
	    "With --json,\n"
	    "prints the daemon's output replies instead, one per line.\n",
	.exec = cmd_output_exec,
};

/* Writes the bytes of one output reply to stdout; sets *len to how many.
 * Returns an exit status. */
static int
cmd_output_write(const json_t *result, size_t *len)
{
	const json_t *data = json_object_get(result, "data");
	const char *encoding;
	unsigned char *bytes;
	int n;

	*len = 0;
	if (!json_is_string(data)) {
		cmd_error("the daemon's output reply has no data");
		return CMD_EXIT_FAILURE;
	}
	encoding = json_string_value(json_object_get(result, "encoding"));
	if (encoding == NULL || strcmp(encoding, "utf-8") == 0) {
		/* The length, not strlen: the data may hold NUL bytes. */
		*len = json_string_length(data);
		fwrite(json_string_value(data), 1, *len, stdout);
		return CMD_EXIT_OK;
	}
	if (strcmp(encoding, "base64") != 0) {
		cmd_error("the daemon's output is in an unknown encoding '%s'",
		    encoding);
		return CMD_EXIT_FAILURE;
	}
	/* Three bytes for every four characters, rounded up. */
	bytes = xmalloc(json_string_length(data) / 4 * 3 + 3);
	if ((n = b64_pton(json_string_value(data), bytes,
	    json_string_length(data) / 4 * 3 + 3)) < 0) {
		free(bytes);
		cmd_error("the daemon's output is not valid base64");
		return CMD_EXIT_FAILURE;
	}
	*len = (size_t)n;
	fwrite(bytes, 1, *len, stdout);
	free(bytes);
	return CMD_EXIT_OK;
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

static int
cmd_output_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stderr", no_argument, NULL, CMD_OUTPUT_STDERR },
		{ "follow", no_argument, NULL, 'f' },
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *stream = "stdout";
	bool follow = false, eof = false, truncated = false, progress;
	json_t *result, *next;
	json_int_t offset = 0, attempt, following = 0;
	int64_t id;
	size_t len;
	int ch, rc;

	while ((ch = cmd_getopt(ctx, argc, argv, ":hf", longopts)) != -1) {
		switch (ch) {
		case CMD_OUTPUT_STDERR:
			stream = "stderr";
			break;
		case 'f':
			follow = true;
			break;
		case CMD_GETOPT_EXIT:
			return ctx->status;
		default:
			return cmd_usage(ctx, "unknown option");
		}
	}
	if (argc - optind != 1)
		return cmd_usage(ctx, "give one job id");
	if (cmd_parse_id(argv[optind], &id) == -1)
		return cmd_usage(ctx, "invalid job id '%s'", argv[optind]);

	/* Watch before the first read, so no change can slip between. */
	if (follow) {
		rc = cmd_call(ctx, "watch", xjson(json_pack("{s:[I]}", "ids",
		    (json_int_t)id)), &result);
		if (rc != CMD_EXIT_OK)
			return rc;
		json_decref(result);
	}

	while (!eof) {
		rc = cmd_call(ctx, "output", xjson(json_pack("{s:I,s:s,s:I}",
		    "id", (json_int_t)id, "stream", stream, "offset", offset)),
		    &result);
		if (rc != CMD_EXIT_OK)
			return rc;
		/* Another attempt's capture starts afresh: what was read at
		 * the old offset is not its beginning. (0: a daemon that does
		 * not say.) */
		attempt = json_integer_value(json_object_get(result,
		    "attempt"));
		if (following != 0 && attempt != 0 && attempt != following) {
			fflush(stdout);
			fprintf(stderr, "--- attempt %lld ---\n",
			    (long long)attempt);
			following = attempt;
			offset = 0;
			json_decref(result);
			continue;
		}
		following = attempt;
		if (ctx->json) {
			format_json_line(result);
			len = 0;
		} else if ((rc = cmd_output_write(result, &len)) !=
		    CMD_EXIT_OK) {
			json_decref(result);
			return rc;
		}
		eof = json_is_true(json_object_get(result, "eof"));
		truncated = json_is_true(json_object_get(result, "truncated"));
		next = json_object_get(result, "next_offset");
		if (!json_is_integer(next) ||
		    json_integer_value(next) < offset) {
			cmd_error("the daemon's output reply has a bad "
			    "next_offset");
			json_decref(result);
			return CMD_EXIT_FAILURE;
		}
		/* New bytes: there may be more at once. None: the job has not
		 * written more yet. */
		progress = len > 0 || json_integer_value(next) > offset;
		offset = json_integer_value(next);
		json_decref(result);
		if (eof || progress)
			continue;
		if (!follow)
			break;
		if ((rc = cmd_output_pause(ctx)) != CMD_EXIT_OK)
			return rc;
	}
	if (eof && truncated && !ctx->json)
		cmd_error("job %lld's %s was cut at the daemon's max_output",
		    (long long)id, stream);
	return CMD_EXIT_OK;
}
