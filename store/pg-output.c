/* pg-output.c - captured output in the cluster's PostgreSQL: chunks of
 * each stream at their absolute offsets, for every daemon to read. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "pg-util.h"
#include "pg-conn.h"
#include "store.h"
#include "pg-private.h"

/* Bytes a row holds at most: a page reads a few rows, a write of a large
 * burst is many small statements rather than one huge one. */
#define PG_OUTPUT_CHUNK 65536

/* The rows of one stream: $1 job, $2 attempt, $3 stream. */
#define PG_OUTPUT_KEY "job = $1 AND attempt = $2 AND stream = $3"

static const struct {
	const char *name;
	const char *sql;
} pg_output_stmts[] = {
	/* A job keeps the output of the latest attempt that wrote any. */
	{ "out_older", "DELETE FROM triage_output WHERE job = $1"
	    " AND attempt < $2" },
	/* The same bytes again (a write whose answer was lost, resent)
	 * change nothing; a longer chunk at the same offset holds them. */
	{ "out_put", "INSERT INTO triage_output (job, attempt, stream, off,"
	    " data) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (job, attempt,"
	    " stream, off) DO UPDATE SET data = EXCLUDED.data"
	    " WHERE length(EXCLUDED.data) > length(triage_output.data)" },
	/* Dropping before $4: whole rows go; the row across $4 keeps its
	 * bytes from $4 on (unless a row starts there already, as a resent
	 * write can leave). Its first offset is then the count dropped. */
	{ "out_drop", "DELETE FROM triage_output WHERE " PG_OUTPUT_KEY
	    " AND off < $4 AND (off + length(data) <= $4 OR EXISTS (SELECT 1"
	    " FROM triage_output o WHERE o.job = $1 AND o.attempt = $2"
	    " AND o.stream = $3 AND o.off = $4))" },
	{ "out_trim", "UPDATE triage_output SET data = substring(data FROM"
	    " ($4 - off + 1)::integer), off = $4 WHERE " PG_OUTPUT_KEY
	    " AND off < $4" },
	/*
	 * A page: the stream's first and last offsets kept (lo, hi), where
	 * the page starts (at: $4 counts from lo, a negative one back from
	 * hi), and the rows across [at, at + $5). Clamped to hi, so that no
	 * offset a client gives can overflow.
	 */
	{ "out_read", "WITH b AS (SELECT coalesce(min(off), 0) AS lo,"
	    " coalesce(max(off + length(data)), 0) AS hi FROM triage_output"
	    " WHERE " PG_OUTPUT_KEY
	        "), f AS (SELECT lo, hi, CASE WHEN $4::bigint"
	    " >= 0 THEN lo + least($4::bigint, hi - lo) ELSE greatest(hi +"
	    " greatest($4::bigint, -hi), lo) END AS at FROM b)"
	    " SELECT f.lo, f.hi, f.at, o.off, o.data FROM f LEFT JOIN"
	    " triage_output o ON o.job = $1 AND o.attempt = $2"
	    " AND o.stream = $3 AND o.off < f.at + $5::bigint"
	    " AND o.off + length(o.data) > f.at ORDER BY o.off" },
};
#define PG_OUTPUT_NSTMTS (sizeof pg_output_stmts / sizeof pg_output_stmts[0])

int
pg_output_prepare(struct pg_conn *c)
{
	size_t i;

	for (i = 0; i < PG_OUTPUT_NSTMTS; i++)
		if (pg_conn_prepare(c, pg_output_stmts[i].name,
		    pg_output_stmts[i].sql)
		    != 0)
			return -1;
	return 0;
}

/* A write on its way, and whom to tell. */
struct pg_output_write {
	store_output_done_cb cb;
	void *arg;
};

/* The first error among a batch's results, on one line, or NULL. */
static const char *
pg_output_error(PGresult *const *res, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (PQresultStatus(res[i]) != PGRES_COMMAND_OK &&
		    PQresultStatus(res[i]) != PGRES_TUPLES_OK)
			return pg_util_message(NULL, res[i]);
	return NULL;
}

static void
pg_output_write_cb(PGresult *const *res, size_t n, const char *cause, void *arg)
{
	struct pg_output_write *w = arg;

	w->cb(cause != NULL ? cause : pg_output_error(res, n), w->arg);
	free(w);
}

/* The text of a stream's key, for statements' values. */
struct pg_output_keytext {
	char job[24];
	char attempt[16];
	char stream[8];
};

static void
pg_output_keytext(struct pg_output_keytext *t, const struct store_output_key *k)
{
	snprintf(t->job, sizeof t->job, "%" PRIu64, k->job);
	snprintf(t->attempt, sizeof t->attempt, "%u", k->attempt);
	snprintf(t->stream, sizeof t->stream, "%d", k->stream);
}

/*
 * One batch, so one transaction: the older attempts forgotten, the drop,
 * then the chunks, each bytea sent in binary. Offsets beyond what a
 * bigint holds cannot come from a file.
 */
int
pg_output_append(struct store *st, const struct store_output_key *k,
    uint64_t offset, const void *data, size_t len, uint64_t drop_before,
    store_output_done_cb cb, void *arg)
{
	static const int chunk_formats[5] = { 0, 0, 0, 0, 1 };
	struct pg_store *s = pg_store(st);
	size_t nchunks = (len + PG_OUTPUT_CHUNK - 1) / PG_OUTPUT_CHUNK, n = 0,
	    i;
	struct pg_conn_stmt *q = NULL;
	struct pg_output_keytext t;
	struct pg_output_write *w = NULL;
	const char **values = NULL;
	int *lengths = NULL;
	char (*offs)[24] = NULL, before[24];
	int rc = -1;

	pg_output_keytext(&t, k);
	snprintf(before, sizeof before, "%" PRIu64, drop_before);
	if ((w = malloc(sizeof *w)) == NULL ||
	    (q = calloc(nchunks + 3, sizeof *q)) == NULL ||
	    (values = calloc(4 * 2 + 5 * nchunks, sizeof *values)) == NULL ||
	    (lengths = calloc(5 * nchunks + 1, sizeof *lengths)) == NULL ||
	    (offs = calloc(nchunks + 1, sizeof *offs)) == NULL) {
		errno = ENOMEM;
		goto out;
	}
	w->cb = cb;
	w->arg = arg;
	values[0] = t.job;
	values[1] = t.attempt;
	q[n++] = (struct pg_conn_stmt){ "out_older", NULL, 2, values, NULL,
	    NULL };
	if (drop_before > 0) {
		values[2] = t.job;
		values[3] = t.attempt;
		values[4] = t.stream;
		values[5] = before;
		q[n++] = (struct pg_conn_stmt){ "out_drop", NULL, 4,
		    &values[2], NULL, NULL };
		q[n++] = (struct pg_conn_stmt){ "out_trim", NULL, 4,
		    &values[2], NULL, NULL };
	}
	for (i = 0; i < nchunks; i++) {
		const char **v = &values[8 + 5 * i];
		int *l = &lengths[5 * i];
		size_t at = i * PG_OUTPUT_CHUNK;

		snprintf(offs[i], sizeof offs[i], "%" PRIu64, offset + at);
		v[0] = t.job;
		v[1] = t.attempt;
		v[2] = t.stream;
		v[3] = offs[i];
		v[4] = (const char *)data + at;
		l[4] = (int)(len - at < PG_OUTPUT_CHUNK ? len - at
		    : PG_OUTPUT_CHUNK);
		q[n++] = (struct pg_conn_stmt){ "out_put", NULL, 5, v, l,
		    chunk_formats };
	}
	if (pg_conn_batch(s->conn, q, n, pg_output_write_cb, w) != 0)
		goto out;
	w = NULL;
	rc = 0;
out:
	free(w);
	free(q);
	free(values);
	free(lengths);
	free(offs);
	return rc;
}

/* A page on its way. */
struct pg_output_read {
	store_output_read_cb cb;
	void *arg;
	int64_t offset;		/* as asked */
	size_t limit;
};

/* A bigint column of a result (0 when NULL). */
static uint64_t
pg_output_int8(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 :
	    strtoull(PQgetvalue(res, row, col), NULL, 10);
}

/*
 * The page from the rows: the bytes from at on, as far as the rows run
 * without a gap (a chunk not yet written ends the page; the next read
 * gets the rest). Results come as text, each chunk's bytea in hex, which
 * libpq decodes. Returns 0, or -1 out of memory.
 */
static int
pg_output_page(const PGresult *res, const struct pg_output_read *r,
    struct store_output_page *pg, unsigned char **buf)
{
	uint64_t lo = pg_output_int8(res, 0, 0), hi = pg_output_int8(res, 0, 1);
	uint64_t at = pg_output_int8(res, 0, 2), off, end, want, from;
	unsigned char *chunk;
	size_t len;
	int i;

	pg->dropped = lo;
	pg->size = hi - lo;
	/* Past the end, the page starts where asked, as with a file. */
	pg->offset = r->offset >= 0 ? (uint64_t)r->offset : at - lo;
	pg->len = 0;
	want = hi - at < r->limit ? hi - at : r->limit;
	if ((*buf = malloc(want + 1)) == NULL)
		return -1;
	pg->data = *buf;
	for (i = 0; i < PQntuples(res) && pg->len < want; i++) {
		if (PQgetisnull(res, i, 3))
			break;
		off = pg_output_int8(res, i, 3);
		from = at + pg->len;
		if (off > from)
			break;		/* a gap */
		if ((chunk = PQunescapeBytea((const unsigned char *)
		    PQgetvalue(res, i, 4), &len)) == NULL)
			return -1;
		end = off + len;
		if (end > at + want)
			end = at + want;
		/* Rows that overlap (a write sent again) hold the same
		 * bytes: only what lies past the page so far is new. */
		if (end > from) {
			memcpy(*buf + pg->len, chunk + (from - off),
			    (size_t)(end - from));
			pg->len += (size_t)(end - from);
		}
		PQfreemem(chunk);
	}
	return 0;
}

static void
pg_output_read_cb(PGresult *const *res, size_t n, const char *cause, void *arg)
{
	struct pg_output_read *r = arg;
	struct store_output_page pg;
	unsigned char *buf = NULL;
	const char *err = cause;

	if (err == NULL && n == 1 &&
	    PQresultStatus(res[0]) != PGRES_TUPLES_OK)
		err = pg_util_message(NULL, res[0]);
	else if (err == NULL && (n != 1 || PQntuples(res[0]) < 1 ||
	    PQnfields(res[0]) != 5))
		err = "PostgreSQL answered a read of output with no rows";
	if (err == NULL && pg_output_page(res[0], r, &pg, &buf) != 0)
		err = "out of memory";
	if (err != NULL)
		r->cb(NULL, err, r->arg);
	else
		r->cb(&pg, NULL, r->arg);
	free(buf);
	free(r);
}

int
pg_output_read(struct store *st, const struct store_output_key *k,
    int64_t offset, size_t limit, store_output_read_cb cb, void *arg)
{
	struct pg_store *s = pg_store(st);
	struct pg_output_keytext t;
	char off[24], lim[24];
	const char *values[5] = { t.job, t.attempt, t.stream, off, lim };
	struct pg_conn_stmt q = { "out_read", NULL, 5, values, NULL, NULL };
	struct pg_output_read *r;

	if ((r = malloc(sizeof *r)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	*r = (struct pg_output_read){ cb, arg, offset, limit };
	pg_output_keytext(&t, k);
	snprintf(off, sizeof off, "%" PRId64, offset);
	snprintf(lim, sizeof lim, "%zu", limit);
	if (pg_conn_batch(s->conn, &q, 1, pg_output_read_cb, r) != 0) {
		free(r);
		return -1;
	}
	return 0;
}
