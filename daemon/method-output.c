/* method-output.c - `output`: a page of a job's captured stdout or stderr,
 * as UTF-8 text when it is, else base64. */
#include <errno.h>
#include <fcntl.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "config.h"
#include "job.h"
#include "method.h"
#include "pool-spec.h"
#include "rpc.h"
#include "run.h"
#include "triaged.h"

#define OUTPUT_DEFAULT_LIMIT 65536
#define OUTPUT_MAX_LIMIT (1 << 20)

/*
 * How many of the len bytes to send so that a UTF-8 character cut by the
 * page's end is left whole for the next page. Only a cut at the very end is
 * forgiven; anything else invalid is for the caller to find.
 */
static size_t
output_utf8_cut(const unsigned char *buf, size_t len)
{
	size_t i, need;

	for (i = len; i > 0 && len - i < 4; i--) {
		if ((buf[i - 1] & 0xc0) == 0x80)
			continue;	/* a continuation byte */
		if (buf[i - 1] >= 0xf0)
			need = 4;
		else if (buf[i - 1] >= 0xe0)
			need = 3;
		else if (buf[i - 1] >= 0xc0)
			need = 2;
		else
			return len;
		return len - (i - 1) < need ? i - 1 : len;
	}
	return len;
}

/* The data member: UTF-8 text, else base64. NULL when out of memory. */
static json_t *
output_data(const unsigned char *buf, size_t len, bool more, size_t *used,
    const char **encoding)
{
	size_t n = more ? output_utf8_cut(buf, len) : len;
	json_t *s;
	char *b64;

	if (n > 0 || len == 0) {
		/* jansson refuses invalid UTF-8: that is the check. */
		if ((s = json_stringn((const char *)buf, n)) != NULL) {
			*used = n;
			*encoding = "utf-8";
			return s;
		}
	}
	if ((b64 = malloc(len / 3 * 4 + 5)) == NULL)
		return NULL;
	if (b64_ntop(buf, len, b64, len / 3 * 4 + 5) < 0) {
		free(b64);
		return NULL;
	}
	s = json_string(b64);
	free(b64);
	*used = len;
	*encoding = "base64";
	return s;
}

/*
 * Which attempt the capture files hold. They are removed when an attempt
 * is handed to a worker, which makes them afresh; until then (a job
 * queued again after a failure or a retry), or when it ended without
 * being handed out (canceled while queued), they still hold the previous
 * attempt's output.
 */
static unsigned
output_attempt(const struct triaged *td, const struct job *job)
{
	bool fresh = (job->run->begun && job->state != JOB_QUEUED) ||
	    run_handed(td->run, job);

	return job->attempt > 1 && !fresh ? job->attempt - 1 : job->attempt;
}

static int
output_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err)
{
	const char *stream = json_string_value(json_object_get(params,
	    "stream"));
	json_t *jlim = json_object_get(params, "limit");

	if (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0)
		return method_fail(err, RPC_INVALID_PARAMS, "stream",
		    "\"stream\" must be \"stdout\" or \"stderr\"");
	if (jlim != NULL && (json_integer_value(jlim) < 1 ||
	    json_integer_value(jlim) > OUTPUT_MAX_LIMIT))
		return method_fail(err, RPC_INVALID_PARAMS, "limit",
		    "\"limit\" must be from 1 to %d", OUTPUT_MAX_LIMIT);
	return method_check_id(ctx, params, err);
}

/*
 * The bytes of the stream no longer stored before the file's first: the
 * job's record once it has ended, else the count the worker marks each
 * capture file with under output_keep = tail (none under head). 0, or -1
 * with errno.
 */
static int
output_dropped(const struct job *job, const char *stream, int fd,
    uint64_t *dropped)
{
	char text[24], *end;
	ssize_t n;

	*dropped = 0;
	if (job_state_terminal(job->state)) {
		*dropped = strcmp(stream, "stdout") == 0 ?
		    job->run->stdout_dropped : job->run->stderr_dropped;
		return 0;
	}
	n = fgetxattr(fd, POOL_DROPPED_XATTR, text, sizeof text - 1);
	if (n == -1)
		return errno == ENODATA || errno == ENOTSUP ? 0 : -1;
	text[n] = '\0';
	errno = 0;
	*dropped = strtoull(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0') {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* A negative offset counts back from the end: from 0 when the stream is
 * shorter. */
static json_int_t
output_offset(json_int_t offset, off_t size)
{
	if (offset >= 0)
		return offset;
	/* size >= 0: no overflow, even from INT64_MIN */
	return size + offset < 0 ? 0 : size + offset;
}

/* A page of a capture file as read. */
struct output_page {
	json_int_t offset;	/* asked for; then where the page starts */
	unsigned char *buf;	/* allocated; NULL when there is no file */
	ssize_t got;
	off_t size;		/* of the stored stream */
	uint64_t dropped;	/* bytes before its first that are gone */
};

/*
 * Reads up to limit bytes of the file at path into pg, from pg->offset
 * (from the end when negative). No file: the attempt has not started
 * (or its worker is about to make the files), and so wrote nothing. 0, or
 * -1 with errno and *what the step that failed.
 */
static int
output_read(const struct job *job, const char *stream, const char *path,
    json_int_t limit, struct output_page *pg, const char **what)
{
	struct stat st;
	int fd, rc = -1;

	*what = "open";
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		pg->offset = output_offset(pg->offset, 0);
		return errno == ENOENT ? 0 : -1;
	}
	*what = "read";
	if (fstat(fd, &st) != 0 ||
	    output_dropped(job, stream, fd, &pg->dropped) != 0)
		goto out;
	pg->size = st.st_size;
	pg->offset = output_offset(pg->offset, st.st_size);
	if ((pg->buf = malloc((size_t)limit)) == NULL ||
	    (pg->got = pread(fd, pg->buf, (size_t)limit, (off_t)pg->offset))
	    < 0)
		goto out;
	rc = 0;
out:
	close(fd);
	return rc;
}

static void
output_handler(struct rpc_req *req, json_t *params)
{
	struct triaged *td = rpc_daemon(req);
	const char *stream = json_string_value(json_object_get(params,
	    "stream"));
	json_t *joff = json_object_get(params, "offset");
	json_t *jlim = json_object_get(params, "limit");
	json_int_t limit = jlim ? json_integer_value(jlim) : OUTPUT_DEFAULT_LIMIT;
	struct output_page pg = { joff ? json_integer_value(joff) : 0, NULL,
	    0, 0, 0 };
	const char *encoding = "utf-8", *what;
	size_t used = 0;
	bool truncated, terminal;
	struct job *job;
	char path[4096];
	json_t *data;

	if ((job = method_job(req, params)) == NULL ||
	    !method_may_act(req, job, "read the output of"))
		return;
	terminal = job_state_terminal(job->state);

	snprintf(path, sizeof path, "%s/%llu.%s", td->output_dir,
	    (unsigned long long)job->id, stream);
	if (output_read(job, stream, path, limit, &pg, &what) != 0) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL,
		    "cannot %s the output of job %llu: %s", what,
		    (unsigned long long)job->id, strerror(errno));
		free(pg.buf);
		return;
	}
	data = output_data(pg.buf ? pg.buf : (const unsigned char *)"",
	    (size_t)pg.got, !terminal || pg.offset + pg.got < pg.size, &used,
	    &encoding);
	free(pg.buf);
	if (terminal)
		truncated = stream[3] == 'o' ? job->run->stdout_truncated :
		    job->run->stderr_truncated;
	else
		truncated = pg.dropped > 0 || (td->cfg->max_output > 0 &&
		    (uint64_t)pg.size >= td->cfg->max_output);
	rpc_reply(req, json_pack("{so ss sI sI sb sb sI sI}",
	    "data", data,
	    "encoding", encoding,
	    "offset", pg.offset,
	    "next_offset", pg.offset + (json_int_t)used,
	    "eof", terminal && pg.offset + (json_int_t)used >= pg.size,
	    "truncated", truncated,
	    "dropped", (json_int_t)pg.dropped,
	    "attempt", (json_int_t)output_attempt(td, job)));
}

static const struct method_param output_params[] = {
	{ "id", PARAM_INTEGER, true, NULL },
	{ "stream", PARAM_STRING, true, NULL },
	{ "offset", PARAM_INTEGER, false, NULL },
	{ "limit", PARAM_INTEGER, false, NULL },
	{ NULL, 0, false, NULL },
};

const struct method method_output = {
	.name = "output",
	.params = output_params,
	.check = output_check,
	.handler = output_handler,
};
