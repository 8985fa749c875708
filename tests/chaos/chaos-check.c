/* chaos-check.c - the chaos test's checker: reads what the jobs, the clients
 * and the cluster say, and prints every promise broken, with its evidence. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos-check.h"

#define CHAOS_NODE_MAX 64	/* a socket path, as the ledger has it */
#define CHAOS_NAME_MAX 16	/* a node's or a state's name */
#define CHAOS_NODES 8		/* sockets mapped to names */

enum chaos_mark { CHAOS_START, CHAOS_TICK, CHAOS_END };
static const char *const chaos_marks[] = { "start", "tick", "end" };

struct chaos_line {
	int64_t		id;
	int64_t		attempt;
	int64_t		ts;
	enum chaos_mark	mark;
	char		node[CHAOS_NODE_MAX];
};

struct chaos_sub {
	int64_t	id;
	int64_t	ts;
	char	node[CHAOS_NAME_MAX];
};

/* A wait's outcome, or a final job (node unused). */
struct chaos_job {
	int64_t	id;
	int64_t	attempt;
	char	state[CHAOS_NAME_MAX];
	char	node[CHAOS_NAME_MAX];
};

/* A growing array of items of one type. */
struct chaos_vec {
	void	*v;
	size_t	 n;
	size_t	 cap;
	size_t	 size;		/* of an item */
};

struct chaos_check {
	struct chaos_vec	lines;
	struct chaos_vec	subs;
	struct chaos_vec	outcomes;
	struct chaos_vec	finals;
	char			socket[CHAOS_NODES][CHAOS_NODE_MAX];
	char			name[CHAOS_NODES][CHAOS_NAME_MAX];
	int			nnodes;
	size_t			found[CHAOS_NKINDS];
	size_t			malformed;	/* noted as they come */
	char			first_malformed[128];
};

static const char *const chaos_kinds[CHAOS_NKINDS] = {
	[CHAOS_LOST] = "lost",
	[CHAOS_VANISHED] = "vanished",
	[CHAOS_UNFINISHED] = "unfinished",
	[CHAOS_CONTRADICTED] = "contradicted",
	[CHAOS_OVERLAP] = "overlap",
	[CHAOS_TWICE] = "twice",
	[CHAOS_UNRUN] = "unrun",
	[CHAOS_MALFORMED] = "malformed",
};

static const char *const chaos_terminal[] = {
	"succeeded", "failed", "timed_out", "canceled", "lost", NULL
};

/* A new item at the end of vec, zeroed. Aborts out of memory: the test
 * cannot go on without its records. */
static void *
chaos_vec_push(struct chaos_vec *vec)
{
	void *p;

	if (vec->n == vec->cap) {
		vec->cap = vec->cap == 0 ? 256 : vec->cap * 2;
		if ((p = realloc(vec->v, vec->cap * vec->size)) == NULL)
			abort();
		vec->v = p;
	}
	p = (char *)vec->v + vec->n++ * vec->size;
	memset(p, 0, vec->size);
	return p;
}

struct chaos_check *
chaos_check_new(void)
{
	struct chaos_check *ck;

	if ((ck = calloc(1, sizeof *ck)) == NULL)
		abort();
	ck->lines.size = sizeof(struct chaos_line);
	ck->subs.size = sizeof(struct chaos_sub);
	ck->outcomes.size = sizeof(struct chaos_job);
	ck->finals.size = sizeof(struct chaos_job);
	return ck;
}

void
chaos_check_free(struct chaos_check *ck)
{
	if (ck == NULL)
		return;
	free(ck->lines.v);
	free(ck->subs.v);
	free(ck->outcomes.v);
	free(ck->finals.v);
	free(ck);
}

void
chaos_check_node(struct chaos_check *ck, const char *socket,
    const char *name)
{
	if (ck->nnodes == CHAOS_NODES)
		abort();
	snprintf(ck->socket[ck->nnodes], CHAOS_NODE_MAX, "%s", socket);
	snprintf(ck->name[ck->nnodes++], CHAOS_NAME_MAX, "%s", name);
}

/* The name of a ledger's node field: the socket's node, or the field. */
static const char *
chaos_check_name(const struct chaos_check *ck, const char *socket)
{
	int i;

	for (i = 0; i < ck->nnodes; i++)
		if (strcmp(ck->socket[i], socket) == 0)
			return ck->name[i];
	return socket;
}

void
chaos_check_submitted(struct chaos_check *ck, int64_t id, int64_t ts_ns,
    const char *node)
{
	struct chaos_sub *s = chaos_vec_push(&ck->subs);

	s->id = id;
	s->ts = ts_ns;
	snprintf(s->node, sizeof s->node, "%s", node);
}

static void
chaos_job_set(struct chaos_job *j, int64_t id, const char *state,
    int64_t attempt, const char *node)
{
	j->id = id;
	j->attempt = attempt;
	snprintf(j->state, sizeof j->state, "%s", state);
	snprintf(j->node, sizeof j->node, "%s", node);
}

void
chaos_check_outcome(struct chaos_check *ck, int64_t id, const char *state,
    int64_t attempt, const char *node)
{
	chaos_job_set(chaos_vec_push(&ck->outcomes), id, state, attempt, node);
}

void
chaos_check_final(struct chaos_check *ck, int64_t id, const char *state,
    int64_t attempt)
{
	chaos_job_set(chaos_vec_push(&ck->finals), id, state, attempt, "");
}

int
chaos_check_ledger_line(struct chaos_check *ck, const char *line)
{
	char node[CHAOS_NODE_MAX], mark[8], extra[2];
	long long id, attempt, ts;
	struct chaos_line *l;
	int m;

	if (sscanf(line, "%lld %lld %63s %7s %lld %1s", &id, &attempt, node,
	    mark, &ts, extra) != 5)
		goto bad;
	for (m = CHAOS_START; m <= CHAOS_END; m++)
		if (strcmp(mark, chaos_marks[m]) == 0)
			break;
	if (m > CHAOS_END || id <= 0 || attempt <= 0)
		goto bad;
	l = chaos_vec_push(&ck->lines);
	l->id = id;
	l->attempt = attempt;
	l->ts = ts;
	l->mark = (enum chaos_mark)m;
	memcpy(l->node, node, sizeof l->node);
	return 0;
bad:
	if (ck->malformed++ == 0)
		snprintf(ck->first_malformed, sizeof ck->first_malformed,
		    "%.*s", (int)strcspn(line, "\n"), line);
	return -1;
}

int
chaos_check_ledger_file(struct chaos_check *ck, const char *path)
{
	char line[256];
	int bad = 0;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL)
		return errno == ENOENT ? 0 : -1;	/* no job ran */
	while (fgets(line, sizeof line, f) != NULL)
		bad -= chaos_check_ledger_line(ck, line);
	fclose(f);
	return bad;
}

static int
chaos_cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* Ledger lines by job, attempt, time. */
static int
chaos_line_cmp(const void *a, const void *b)
{
	const struct chaos_line *x = a, *y = b;
	int c;

	if ((c = chaos_cmp_i64(x->id, y->id)) != 0 ||
	    (c = chaos_cmp_i64(x->attempt, y->attempt)) != 0)
		return c;
	return chaos_cmp_i64(x->ts, y->ts);
}

static int
chaos_job_cmp(const void *a, const void *b)
{
	return chaos_cmp_i64(((const struct chaos_job *)a)->id,
	    ((const struct chaos_job *)b)->id);
}

/* The final job id, or NULL when the list lacks it. */
static const struct chaos_job *
chaos_check_final_of(const struct chaos_check *ck, int64_t id)
{
	struct chaos_job key = { .id = id };

	return bsearch(&key, ck->finals.v, ck->finals.n, sizeof key,
	    chaos_job_cmp);
}

/* The ledger lines of job id: *n of them from the returned one on. */
static const struct chaos_line *
chaos_check_lines_of(const struct chaos_check *ck, int64_t id, size_t *n)
{
	const struct chaos_line *l = ck->lines.v;
	size_t lo = 0, hi = ck->lines.n, mid, end;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (l[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < ck->lines.n && l[end].id == id; end++)
		;
	*n = end - lo;
	return l + lo;
}

/* Notes a violation and prints its first line. */
static void
chaos_check_say(struct chaos_check *ck, FILE *out,
    enum chaos_violation kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
chaos_check_say(struct chaos_check *ck, FILE *out,
    enum chaos_violation kind, const char *fmt, ...)
{
	va_list ap;

	ck->found[kind]++;
	fprintf(out, "chaos: VIOLATION %s: ", chaos_kinds[kind]);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

/* A ledger line as evidence, its node by name. */
static void
chaos_check_evidence(const struct chaos_check *ck, FILE *out,
    const struct chaos_line *l)
{
	fprintf(out, "    ledger: %" PRId64 " %" PRId64 " %s %s %" PRId64 "\n",
	    l->id, l->attempt, chaos_check_name(ck, l->node),
	    chaos_marks[l->mark], l->ts);
}

static bool
chaos_terminal_state(const char *state)
{
	const char *const *t;

	for (t = chaos_terminal; *t != NULL; t++)
		if (strcmp(*t, state) == 0)
			return true;
	return false;
}

/* Acknowledged submissions missing from the final list. */
static void
chaos_check_lost(struct chaos_check *ck, FILE *out)
{
	const struct chaos_sub *s = ck->subs.v;
	size_t i;

	for (i = 0; i < ck->subs.n; i++)
		if (chaos_check_final_of(ck, s[i].id) == NULL)
			chaos_check_say(ck, out, CHAOS_LOST, "job %" PRId64
			    " acknowledged by node %s at %" PRId64 " ns is not "
			    "in the final list", s[i].id, s[i].node, s[i].ts);
}

/* Jobs of the ledger missing from the final list (each once). */
static void
chaos_check_vanished(struct chaos_check *ck, FILE *out)
{
	const struct chaos_line *l = ck->lines.v;
	size_t i;

	for (i = 0; i < ck->lines.n; i++) {
		if ((i > 0 && l[i - 1].id == l[i].id) ||
		    chaos_check_final_of(ck, l[i].id) != NULL)
			continue;
		chaos_check_say(ck, out, CHAOS_VANISHED, "job %" PRId64 " ran "
		    "but is not in the final list", l[i].id);
		chaos_check_evidence(ck, out, &l[i]);
	}
}

/* Final jobs not in a final state; succeeded ones that never started. */
static void
chaos_check_finals(struct chaos_check *ck, FILE *out)
{
	const struct chaos_job *f = ck->finals.v;
	const struct chaos_line *l;
	size_t i, k, n;
	bool started;

	for (i = 0; i < ck->finals.n; i++) {
		if (!chaos_terminal_state(f[i].state)) {
			chaos_check_say(ck, out, CHAOS_UNFINISHED, "job %"
			    PRId64 " is %s at attempt %" PRId64, f[i].id,
			    f[i].state, f[i].attempt);
			continue;
		}
		if (strcmp(f[i].state, "succeeded") != 0)
			continue;
		l = chaos_check_lines_of(ck, f[i].id, &n);
		for (started = false, k = 0; k < n && !started; k++)
			started = l[k].attempt == f[i].attempt &&
			    l[k].mark == CHAOS_START;
		if (!started)
			chaos_check_say(ck, out, CHAOS_UNRUN, "job %" PRId64
			    " succeeded at attempt %" PRId64 ", which the "
			    "ledger never saw start", f[i].id, f[i].attempt);
	}
}

/* Wait outcomes the final list or a later attempt denies. */
static void
chaos_check_outcomes(struct chaos_check *ck, FILE *out)
{
	const struct chaos_job *o = ck->outcomes.v, *f;
	const struct chaos_line *l;
	size_t i, k, n;

	for (i = 0; i < ck->outcomes.n; i++) {
		f = chaos_check_final_of(ck, o[i].id);
		if (f != NULL && (f->attempt != o[i].attempt ||
		    strcmp(f->state, o[i].state) != 0))
			chaos_check_say(ck, out, CHAOS_CONTRADICTED, "a wait at "
			    "node %s said job %" PRId64 " %s at attempt %"
			    PRId64 "; the final list says %s at attempt %"
			    PRId64, o[i].node, o[i].id, o[i].state,
			    o[i].attempt, f->state, f->attempt);
		l = chaos_check_lines_of(ck, o[i].id, &n);
		for (k = 0; k < n; k++)
			if (l[k].attempt > o[i].attempt &&
			    l[k].mark == CHAOS_START) {
				chaos_check_say(ck, out, CHAOS_CONTRADICTED,
				    "a wait at node %s said job %" PRId64
				    " %s at attempt %" PRId64 "; a later "
				    "attempt started", o[i].node, o[i].id,
				    o[i].state, o[i].attempt);
				chaos_check_evidence(ck, out, &l[k]);
				break;
			}
	}
}

/*
 * Per job: an attempt started twice; a line of attempt k after the first
 * start of any attempt > k (the earliest such start, over the attempts
 * after k, found from the last attempt down).
 */
static void
chaos_check_attempts(struct chaos_check *ck, FILE *out)
{
	const struct chaos_line *l = ck->lines.v, *job, *later, *first;
	size_t i, n, k, a, b;

	for (i = 0; i < ck->lines.n; i += n) {
		job = chaos_check_lines_of(ck, l[i].id, &n);
		later = NULL;	/* the earliest start after this attempt */
		/* Attempts from the last: [a, b) is one attempt's lines. */
		for (b = n; b > 0; b = a) {
			for (a = b; a > 0 && job[a - 1].attempt ==
			    job[b - 1].attempt; a--)
				;
			first = NULL;
			for (k = a; k < b; k++) {
				if (job[k].mark != CHAOS_START)
					continue;
				if (first != NULL) {
					chaos_check_say(ck, out, CHAOS_TWICE,
					    "job %" PRId64 " attempt %" PRId64
					    " started twice", job[k].id,
					    job[k].attempt);
					chaos_check_evidence(ck, out, first);
					chaos_check_evidence(ck, out, &job[k]);
				} else
					first = &job[k];
			}
			/* The lines are in time order: the last tells. */
			if (later != NULL && job[b - 1].ts > later->ts) {
				for (k = a; job[k].ts <= later->ts; k++)
					;
				chaos_check_say(ck, out, CHAOS_OVERLAP, "job %"
				    PRId64 " attempt %" PRId64 " ran on after "
				    "attempt %" PRId64 " started", job[k].id,
				    job[k].attempt, later->attempt);
				chaos_check_evidence(ck, out, later);
				chaos_check_evidence(ck, out, &job[k]);
			}
			if (first != NULL && (later == NULL ||
			    first->ts < later->ts))
				later = first;
		}
	}
}

/* How many attempts started, or (again) how many jobs started more than
 * one attempt: what the faults made the cluster do. */
static size_t
chaos_check_count(const struct chaos_check *ck, bool again)
{
	const struct chaos_line *l = ck->lines.v;
	size_t i, k, n = 0, starts;

	for (i = 0; i < ck->lines.n; i = k) {
		for (starts = 0, k = i; k < ck->lines.n && l[k].id == l[i].id;
		    k++)
			starts += l[k].mark == CHAOS_START;
		n += again ? starts > 1 : starts;
	}
	return n;
}

size_t
chaos_check_run(struct chaos_check *ck, FILE *out, int rounds, int faults)
{
	size_t total = 0, jobs, i;

	qsort(ck->lines.v, ck->lines.n, ck->lines.size, chaos_line_cmp);
	qsort(ck->finals.v, ck->finals.n, ck->finals.size, chaos_job_cmp);
	ck->found[CHAOS_MALFORMED] = ck->malformed;
	if (ck->malformed > 0)
		fprintf(out, "chaos: VIOLATION malformed: %zu ledger lines do "
		    "not parse, the first: \"%s\"\n", ck->malformed,
		    ck->first_malformed);
	chaos_check_lost(ck, out);
	chaos_check_vanished(ck, out);
	chaos_check_finals(ck, out);
	chaos_check_outcomes(ck, out);
	chaos_check_attempts(ck, out);
	for (i = 0; i < CHAOS_NKINDS; i++)
		total += ck->found[i];
	/* The jobs: those the cluster has, and those it lost. */
	jobs = ck->finals.n + ck->found[CHAOS_LOST] + ck->found[CHAOS_VANISHED];
	fprintf(out, "chaos: %d rounds, %zu jobs (%zu acknowledged, %zu "
	    "outcomes waited for, %zu ledger lines, %zu attempts begun, %zu "
	    "jobs run more than once), %d faults, %zu violations\n", rounds,
	    jobs, ck->subs.n, ck->outcomes.n, ck->lines.n,
	    chaos_check_count(ck, false), chaos_check_count(ck, true), faults,
	    total);
	return total;
}

size_t
chaos_check_found(const struct chaos_check *ck, enum chaos_violation kind)
{
	return ck->found[kind];
}

const char *
chaos_check_kind(enum chaos_violation kind)
{
	return chaos_kinds[kind];
}
