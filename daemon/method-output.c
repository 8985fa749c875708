/* method-output.c - `output`: a page of a job's captured stdout or stderr,
 * as UTF-8 text when it is, else base64; from this node's capture files, or
 * from the cluster's database for a job that runs or ran on another node. */
#include <errno.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster-output.h"
#include "config.h"
#include "job.h"
#include "method.h"
#include "rpc.h"
#include "run.h"
#include "store.h"
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

/* What a reply says of the job, taken when the request came: a page read
 * from the database comes later, and the job may have changed (or gone)
 * meanwhile. An ended job's output was all stored before its end was. */
struct output_job {
	uint64_t id;
	unsigned attempt;
	bool terminal;
	bool truncated;		/* the job's record, once terminal */
	uint64_t dropped;	/* the same */
	uint64_t max_output;
};

static void
output_job_take(struct output_job *oj, const struct triaged *td,
    const struct job *job, const char *stream)
{
	bool out = strcmp(stream, "stdout") == 0;

	oj->id = job->id;
	oj->attempt = run_output_attempt(td->run, job);
	oj->terminal = job_state_terminal(job->state);
	oj->truncated = out ? job->run->stdout_truncated :
	    job->run->stderr_truncated;
	oj->dropped = out ? job->run->stdout_dropped :
	    job->run->stderr_dropped;
	oj->max_output = td->cfg->max_output;
}

/* A page of a stream, from a capture file or the database. */
struct output_page {
	json_int_t offset;	/* where the page starts */
	const unsigned char *buf;
	size_t got;
	uint64_t size;		/* of the stored stream */
	uint64_t dropped;	/* bytes before its first that are gone */
};

static void
output_reply(struct rpc_req *req, const struct output_job *oj,
    const struct output_page *pg)
{
	const char *encoding = "utf-8";
	size_t used = 0;
	bool truncated;
	json_t *data;

	data = output_data(pg->buf != NULL ? pg->buf :
	    (const unsigned char *)"", pg->got, !oj->terminal ||
	    (uint64_t)pg->offset + pg->got < pg->size, &used, &encoding);
	if (oj->terminal)
		truncated = oj->truncated;
	else
		truncated = pg->dropped > 0 || (oj->max_output > 0 &&
		    pg->size >= oj->max_output);
	rpc_reply(req, json_pack("{so ss sI sI sb sb sI sI}",
	    "data", data,
	    "encoding", encoding,
	    "offset", pg->offset,
	    "next_offset", pg->offset + (json_int_t)used,
	    "eof", oj->terminal &&
	    (uint64_t)pg->offset + used >= pg->size,
	    "truncated", truncated,
	    "dropped", (json_int_t)pg->dropped,
	    "attempt", (json_int_t)oj->attempt));
}

/*
 * The page from this daemon's capture file, answered at once. Once the job
 * has ended, its record says what was dropped; while it runs, the file.
 */
static void
output_local(struct rpc_req *req, const struct output_job *oj,
    const char *stream, json_int_t offset, json_int_t limit)
{
	struct triaged *td = rpc_daemon(req);
	struct run_output_page rp;
	struct output_page pg;
	const char *what;

	if (run_output_read(td->run, oj->id, stream, offset, (size_t)limit,
	    &rp, &what) != 0) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL,
		    "cannot %s the output of job %llu: %s", what,
		    (unsigned long long)oj->id, strerror(errno));
		return;
	}
	pg = (struct output_page){ rp.offset, rp.buf, rp.got, rp.size,
	    oj->terminal ? oj->dropped : rp.dropped };
	output_reply(req, oj, &pg);
	free(rp.buf);
}

/* A read of another node's job, in the database; req NULL once its
 * client has gone. */
struct output_later {
	struct rpc_req *req;
	struct output_job oj;
};

static void
output_withdraw_cb(struct rpc_req *req, void *arg)
{
	struct output_later *l = arg;

	(void)req;
	l->req = NULL;
}

static void
output_read_cb(const struct store_output_page *page, const char *cause,
    void *arg)
{
	struct output_later *l = arg;
	struct output_page pg;

	if (l->req != NULL && page == NULL)
		rpc_error(l->req, RPC_INTERNAL_ERROR, NULL, "cannot read the "
		    "output of job %llu from the cluster's database: %s",
		    (unsigned long long)l->oj.id, cause);
	else if (l->req != NULL) {
		pg = (struct output_page){ (json_int_t)page->offset,
		    page->data, page->len, page->size, page->dropped };
		output_reply(l->req, &l->oj, &pg);
	}
	free(l);
}

/* The page from the cluster's database, where the node that runs the job
 * stores its output: answered later. */
static void
output_remote(struct rpc_req *req, const struct output_job *oj,
    const char *stream, json_int_t offset, json_int_t limit)
{
	struct triaged *td = rpc_daemon(req);
	struct store_output_key k = { oj->id, oj->attempt,
	    strcmp(stream, "stdout") == 0 ? 0 : 1 };
	struct output_later *l;

	if ((l = malloc(sizeof *l)) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return;
	}
	l->req = req;
	l->oj = *oj;
	if (store_output_read(td->store, &k, offset, (size_t)limit,
	    output_read_cb, l) != 0) {
		free(l);
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "cannot read the "
		    "output of job %llu: %s", (unsigned long long)oj->id,
		    strerror(errno));
		return;
	}
	rpc_defer(req, output_withdraw_cb, l);
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
	json_int_t offset = joff ? json_integer_value(joff) : 0;
	struct output_job oj;
	struct job *job;

	if ((job = method_job(req, params)) == NULL ||
	    !method_may_act(req, job, "read the output of"))
		return;
	output_job_take(&oj, td, job, stream);
	if (cluster_output_elsewhere(td, job))
		output_remote(req, &oj, stream, offset, limit);
	else
		output_local(req, &oj, stream, offset, limit);
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
