/* test-protocol-doc.c - triage-protocol(7) documents every method, param, job
 * member, stats member, output member, filter member and error code the
 * daemon has, each in its place, and none the daemon lacks. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "caller-env.h"
#include "config.h"
#include "harness.h"
#include "job.h"
#include "jsonw.h"
#include "method.h"
#include "rpc-codes.h"

/* make test runs the tests from the top of the repository. */
#define PDOC_PAGE "man/triage-protocol.7"
#define PDOC_CODES "daemon/rpc-codes.h"

/*
 * The page's structure, which its header comment states too: a method's
 * section is its own ".SS NAME" under ".SH METHODS"; in it, the line
 * "Params:" (or "Result:") opens a list of tagged paragraphs, ".TP" then
 * ".B NAME", which ends at the next ".PP", ".SS" or ".SH". The job and stats
 * objects' members, a filter's members and the error codes are such tagged
 * paragraphs in their ".SH" sections. A name merely mentioned in prose is none of these.
 */
struct pdoc {
	char *text;
	char **lines;
	size_t n;
};

/* A part of the page, lines [from, to). */
struct pdoc_range {
	size_t from, to;
};

static struct pdoc *
pdoc_load(void)
{
	struct pdoc *d = calloc(1, sizeof *d);
	size_t cap = 1024, len = 0;
	char *p, *nl;
	FILE *f;
	long size;

	assert_non_null(d);
	if ((f = fopen(PDOC_PAGE, "r")) == NULL)
		fail_msg("cannot open %s (run from the repository's top)",
		    PDOC_PAGE);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	assert_true((size = ftell(f)) > 0);
	rewind(f);
	assert_non_null(d->text = malloc((size_t)size + 1));
	assert_int_equal(fread(d->text, 1, (size_t)size, f), (size_t)size);
	d->text[size] = '\0';
	fclose(f);
	assert_non_null(d->lines = malloc(cap * sizeof *d->lines));
	for (p = d->text; *p != '\0'; p = nl + 1) {
		if (len == cap)
			assert_non_null(d->lines = realloc(d->lines,
			    (cap *= 2) * sizeof *d->lines));
		d->lines[len++] = p;
		if ((nl = strchr(p, '\n')) == NULL)
			break;
		*nl = '\0';
	}
	d->n = len;
	return d;
}

static void
pdoc_free(struct pdoc *d)
{
	free(d->lines);
	free(d->text);
	free(d);
}

static bool
pdoc_starts(const char *line, const char *prefix)
{
	return strncmp(line, prefix, strlen(prefix)) == 0;
}

/* The heading's text: ".SH METHODS" and ".SH \"THE JOB OBJECT\"" give
 * METHODS and THE JOB OBJECT. */
static bool
pdoc_heading_is(const char *line, const char *macro, const char *title)
{
	size_t m = strlen(macro), t = strlen(title);

	if (strncmp(line, macro, m) != 0 || line[m] != ' ')
		return false;
	line += m + 1;
	if (line[0] == '"')
		return strncmp(line + 1, title, t) == 0 &&
		    strcmp(line + 1 + t, "\"") == 0;
	return strcmp(line, title) == 0;
}

/* The ".SH title" section, up to the next ".SH"; fails when there is
 * none. */
static struct pdoc_range
pdoc_section(const struct pdoc *d, const char *title)
{
	struct pdoc_range r = { 0, 0 };
	size_t i;

	for (i = 0; i < d->n; i++)
		if (pdoc_heading_is(d->lines[i], ".SH", title))
			break;
	if (i == d->n)
		fail_msg("%s has no section .SH %s", PDOC_PAGE, title);
	r.from = i + 1;
	for (r.to = r.from; r.to < d->n && !pdoc_starts(d->lines[r.to],
	    ".SH "); r.to++)
		;
	return r;
}

/* A method's ".SS name" under METHODS, up to the next heading; from == 0
 * when there is none. */
static struct pdoc_range
pdoc_method(const struct pdoc *d, const char *name)
{
	struct pdoc_range m = pdoc_section(d, "METHODS"), r = { 0, 0 };
	size_t i;

	for (i = m.from; i < m.to; i++)
		if (pdoc_heading_is(d->lines[i], ".SS", name))
			break;
	if (i == m.to)
		return r;
	r.from = i + 1;
	for (r.to = r.from; r.to < m.to && !pdoc_starts(d->lines[r.to],
	    ".SS "); r.to++)
		;
	return r;
}

/* The list that the line "label" opens in r ("Params:", "Result:"), up to
 * the next paragraph or heading; from == to when r has none. */
static struct pdoc_range
pdoc_list(const struct pdoc *d, struct pdoc_range r, const char *label)
{
	struct pdoc_range l = { r.from, r.from };
	size_t i;

	for (i = r.from; i < r.to; i++)
		if (pdoc_starts(d->lines[i], label))
			break;
	if (i == r.to)
		return l;
	l.from = i + 1;
	for (l.to = l.from; l.to < r.to; l.to++)
		if (pdoc_starts(d->lines[l.to], ".PP") ||
		    pdoc_starts(d->lines[l.to], ".SS ") ||
		    pdoc_starts(d->lines[l.to], ".SH "))
			break;
	return l;
}

/*
 * Calls cb with each tag of r: the tagged paragraphs ".TP" then ".B tag".
 * nested: also those inside .RS/.RE (the members of the stats object's
 * arrays), else at the outer level only (the job object's pending_reason
 * values are no members).
 */
static void
pdoc_each_tag(const struct pdoc *d, struct pdoc_range r, bool nested,
    void (*cb)(const char *tag, void *arg), void *arg)
{
	int depth = 0;
	size_t i;

	for (i = r.from; i < r.to; i++) {
		if (pdoc_starts(d->lines[i], ".RS"))
			depth++;
		else if (pdoc_starts(d->lines[i], ".RE"))
			depth--;
		else if (strcmp(d->lines[i], ".TP") == 0 && i + 1 < r.to &&
		    (nested || depth == 0) &&
		    pdoc_starts(d->lines[i + 1], ".B "))
			cb(d->lines[i + 1] + 3, arg);
	}
}

struct pdoc_find {
	const char *name;
	bool found;
};

static void
pdoc_find_cb(const char *tag, void *arg)
{
	struct pdoc_find *f = arg;

	f->found |= strcmp(tag, f->name) == 0;
}

/* Whether r has the tag name, as pdoc_each_tag reads them. */
static bool
pdoc_has_tag(const struct pdoc *d, struct pdoc_range r, const char *name,
    bool nested)
{
	struct pdoc_find f = { name, false };

	pdoc_each_tag(d, r, nested, pdoc_find_cb, &f);
	return f.found;
}

/* Every key of o, and of the objects in o's arrays and objects, into
 * keys (an object used as a set). */
static void
pdoc_keys(json_t *keys, json_t *o)
{
	const char *key;
	json_t *v, *e;
	size_t i;

	json_object_foreach(o, key, v) {
		json_object_set_new(keys, key, json_true());
		if (json_is_object(v))
			pdoc_keys(keys, v);
		json_array_foreach(v, i, e)
			if (json_is_object(e))
				pdoc_keys(keys, e);
	}
}

/* A tag must be a key of the set arg: a member the page names that the
 * code does not have fails. */
struct pdoc_stale {
	const json_t *keys;
	const char *where;
	const char *const *conditional;	/* there only in some configs */
};

static void
pdoc_not_stale_cb(const char *tag, void *arg)
{
	const struct pdoc_stale *s = arg;
	const char *const *c;

	if (json_object_get(s->keys, tag) != NULL)
		return;
	for (c = s->conditional; c != NULL && *c != NULL; c++)
		if (strcmp(*c, tag) == 0)
			return;
	fail_msg("%s documents %s \"%s\", which the code does not have",
	    PDOC_PAGE, s->where, tag);
}

/* Each method has its .SS heading, each .SS heading is a method. */
static void
every_method_has_its_section(void **state)
{
	struct pdoc *d = pdoc_load();
	struct pdoc_range m;
	const struct method *meth;
	size_t i;

	(void)state;
	assert_true(method_count() > 0);
	for (i = 0; (meth = method_at(i)) != NULL; i++)
		if (pdoc_method(d, meth->name).from == 0)
			fail_msg("%s has no section \".SS %s\" under METHODS "
			    "for method %s", PDOC_PAGE, meth->name,
			    meth->name);
	m = pdoc_section(d, "METHODS");
	for (i = m.from; i < m.to; i++)
		if (pdoc_starts(d->lines[i], ".SS ") &&
		    method_find(d->lines[i] + 4) == NULL)
			fail_msg("%s documents method \"%s\", which the daemon "
			    "does not have", PDOC_PAGE, d->lines[i] + 4);
	pdoc_free(d);
}

/* Each param of each method is a tagged paragraph of its section's
 * "Params:" list, and each one listed is a param of the method. */
static void
every_param_is_documented(void **state)
{
	struct pdoc *d = pdoc_load();
	const struct method_param *p;
	const struct method *meth;
	struct pdoc_range r, l;
	struct pdoc_stale stale;
	char where[64];
	json_t *keys;
	size_t i;

	(void)state;
	for (i = 0; (meth = method_at(i)) != NULL; i++) {
		if ((r = pdoc_method(d, meth->name)).from == 0)
			fail_msg("%s has no section \".SS %s\" for the params "
			    "of method %s", PDOC_PAGE, meth->name, meth->name);
		l = pdoc_list(d, r, "Params:");
		if (l.from == r.from)
			fail_msg("%s: method %s has no \"Params:\" line",
			    PDOC_PAGE, meth->name);
		assert_non_null(keys = json_object());
		for (p = meth->params; p->name != NULL; p++) {
			if (!pdoc_has_tag(d, l, p->name, false))
				fail_msg("%s: param \"%s\" of method %s is "
				    "not a tagged paragraph (.TP, .B %s) of "
				    "its \"Params:\" list", PDOC_PAGE,
				    p->name, meth->name, p->name);
			json_object_set_new(keys, p->name, json_true());
		}
		snprintf(where, sizeof where, "a param of %s", meth->name);
		stale = (struct pdoc_stale){ keys, where, NULL };
		pdoc_each_tag(d, l, false, pdoc_not_stale_cb, &stale);
		json_decref(keys);
	}
	pdoc_free(d);
}

/* A malloc'd NULL-terminated vector of copies of the strings given. */
static char **
pdoc_strv(const char *first, ...)
{
	char **v = calloc(8, sizeof *v);
	const char *s;
	size_t n = 0;
	va_list ap;

	assert_non_null(v);
	va_start(ap, first);
	for (s = first; s != NULL && n < 7; s = va_arg(ap, const char *))
		assert_non_null(v[n++] = strdup(s));
	va_end(ap);
	return v;
}

/* A job with every member that can be unset set. */
static struct job *
pdoc_full_job(void)
{
	struct job_extra *extra;
	struct job *job = job_new();
	struct job_run *run;

	assert_non_null(job);
	job->id = 42;
	assert_int_equal(job_set_argv(job, pdoc_strv("/bin/sh", "-c", "true",
	    NULL)), 0);
	job_set_name(job, strdup("a name"));
	assert_int_equal(job_set_env(job, pdoc_strv("PATH=/bin", NULL)), 0);
	assert_int_equal(job_set_cwd(job, "/tmp"), 0);
	assert_int_equal(job_set_priority(job, "normal"), 0);
	assert_int_equal(job_set_node(job, "build-7"), 0);
	assert_int_equal(job_set_pinned_node(job, "build-7"), 0);
	assert_int_equal(job_set_user(job, "alice"), 0);
	assert_non_null(run = job_run_edit(job));
	assert_non_null(extra = job_extra_edit(job));
	job->state = JOB_FAILED;
	job->slots = 2;
	job->exclusive = true;
	job->timeout_ms = 1500;
	job->retries = 3;
	assert_non_null(extra->after = calloc(1, sizeof *extra->after));
	extra->after[0] = 7;
	extra->nafter = 1;
	assert_non_null(extra->after_any = calloc(1, sizeof *extra->after_any));
	extra->after_any[0] = 8;
	extra->nafter_any = 1;
	job->uid = 1000;
	job->gid = 1000;
	job->submitted_at = 1795000000000;
	extra->begin_at = 1795000001000;
	run->started_at = 1795000002000;
	run->finished_at = 1795000003000;
	run->pid = 4242;
	run->exit_code = 1;
	run->signal = SIGKILL;
	assert_non_null(run->reason = strdup("exited with status 1"));
	run->user_time = 0.5;
	run->system_time = 0.25;
	run->max_rss_kb = 1024;
	job->attempt = 2;
	assert_non_null(extra->labels = json_pack("{ss}", "team", "ops"));
	job->held = true;
	job->nice = 5;
	job->merge_output = true;
	/* Members there only with a result (v1.3). */
	assert_int_equal(job_set_result(job, "\377", 1, true), 0);
	return job;
}

/* Each member of the job object, as job_to_json builds it and as
 * job_write_json writes it, is a tagged paragraph of THE JOB OBJECT, and
 * each one there is a member. */
static void
every_job_member_is_documented(void **state)
{
	struct pdoc *d = pdoc_load();
	struct pdoc_range r = pdoc_section(d, "THE JOB OBJECT");
	struct job *job = pdoc_full_job();
	struct jsonw w = { 0 };
	json_t *built, *written, *keys;
	struct pdoc_stale stale;
	const char *key, *text;
	json_error_t jerr;
	json_t *v;
	size_t len;

	(void)state;
	assert_non_null(built = job_to_json(job, 3, "queue"));
	assert_int_equal(job_write_json(job, 3, "queue", &w), 0);
	assert_non_null(text = jsonw_text(&w, &len));
	if ((written = json_loadb(text, len, 0, &jerr)) == NULL)
		fail_msg("job_write_json's text is no JSON: %s", jerr.text);
	assert_non_null(keys = json_object());
	json_object_foreach(built, key, v)
		json_object_set_new(keys, key, json_true());
	json_object_foreach(written, key, v)
		json_object_set_new(keys, key, json_true());
	assert_true(json_object_size(keys) >= 30);
	json_object_foreach(keys, key, v)
		if (!pdoc_has_tag(d, r, key, false))
			fail_msg("%s: job member \"%s\" is not a tagged "
			    "paragraph (.TP, .B %s) of THE JOB OBJECT",
			    PDOC_PAGE, key, key);
	stale = (struct pdoc_stale){ keys, "a job member", NULL };
	pdoc_each_tag(d, r, false, pdoc_not_stale_cb, &stale);
	json_decref(keys);
	json_decref(written);
	json_decref(built);
	jsonw_free(&w);
	job_free(job);
	pdoc_free(d);
}

/* Each code rpc-codes.h defines is a tagged paragraph of ERRORS, and each
 * one there is defined. */
static void
every_error_code_is_documented(void **state)
{
	struct pdoc *d = pdoc_load();
	struct pdoc_range r = pdoc_section(d, "ERRORS");
	char line[256], name[64], tag[32];
	struct pdoc_stale stale;
	json_t *keys;
	FILE *f;
	int code, n = 0;

	(void)state;
	if ((f = fopen(PDOC_CODES, "r")) == NULL)
		fail_msg("cannot open %s", PDOC_CODES);
	assert_non_null(keys = json_object());
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "#define RPC_%63s %d", name, &code) != 2)
			continue;
		/* As roff writes it: \-32700. */
		snprintf(tag, sizeof tag, "\\-%d", -code);
		if (!pdoc_has_tag(d, r, tag, false))
			fail_msg("%s: error %d (RPC_%s) is not a tagged "
			    "paragraph (.TP, .B %s) of ERRORS", PDOC_PAGE,
			    code, name, tag);
		json_object_set_new(keys, tag, json_true());
		n++;
	}
	fclose(f);
	assert_true(n >= 11);
	stale = (struct pdoc_stale){ keys, "error code", NULL };
	pdoc_each_tag(d, r, false, pdoc_not_stale_cb, &stale);
	json_decref(keys);
	pdoc_free(d);
}

/* Whether cancel takes key as a member of its filter (the filter's keys
 * are filter.c's own): a value of the key's type, checked as a request
 * is, is refused as a key the filter does not have, or not. */
static bool
pdoc_filter_takes(const struct config *cfg, const char *key)
{
	struct method_ctx ctx = { .cfg = cfg, .uid = 1000, .gid = 1000,
	    .admin = true, .permits = 4 };
	struct method_err err;
	json_t *value, *params;
	bool takes;

	if (strcmp(key, "ids") == 0)
		value = json_pack("[i]", 1);
	else if (strcmp(key, "state") == 0)
		value = json_pack("[s]", "queued");
	else if (strcmp(key, "priority") == 0)
		value = json_string(cfg->priorities[0].name);
	else if (strcmp(key, "labels") == 0)
		value = json_object();
	else if (strcmp(key, "held") == 0)
		value = json_true();
	else
		value = json_string("x");
	assert_non_null(params = json_pack("{s{so}}", "filter", key, value));
	memset(&err, 0, sizeof err);
	takes = method_validate(&ctx, "cancel", params, &err) == 0 ||
	    err.code != RPC_INVALID_PARAMS ||
	    strstr(err.message, "has no key") == NULL;
	json_decref(params);
	return takes;
}

/*
 * Each member documented under SELECTING MANY JOBS is one a filter takes;
 * and each key a filter takes, of those a method could have (list's
 * params, which take the same selections, and ids), is documented there.
 */
static void
every_filter_member_is_documented(void **state)
{
	struct pdoc *d = pdoc_load();
	struct pdoc_range r = pdoc_section(d, "SELECTING MANY JOBS");
	struct caller_env env = { .euid = geteuid(), .home = "/tmp" };
	struct config_opts opts = { .env = &env };
	const struct method_param *p;
	struct config *cfg;
	size_t i;
	int n = 0;

	(void)state;
	assert_non_null(cfg = config_load(&opts, NULL));
	for (i = r.from; i + 1 < r.to; i++)
		if (strcmp(d->lines[i], ".TP") == 0 &&
		    pdoc_starts(d->lines[i + 1], ".B ")) {
			if (!pdoc_filter_takes(cfg, d->lines[i + 1] + 3))
				fail_msg("%s documents a filter member \"%s\", "
				    "which a filter does not take", PDOC_PAGE,
				    d->lines[i + 1] + 3);
			n++;
		}
	assert_false(pdoc_filter_takes(cfg, "no-such-key"));
	if (pdoc_filter_takes(cfg, "ids") && !pdoc_has_tag(d, r, "ids", false))
		fail_msg("%s: filter member \"ids\" is not a tagged paragraph "
		    "of SELECTING MANY JOBS", PDOC_PAGE);
	for (p = method_find("list")->params; p->name != NULL; p++)
		if (pdoc_filter_takes(cfg, p->name) &&
		    !pdoc_has_tag(d, r, p->name, false))
			fail_msg("%s: filter member \"%s\" is not a tagged "
			    "paragraph (.TP, .B %s) of SELECTING MANY JOBS",
			    PDOC_PAGE, p->name, p->name);
	assert_true(n >= 5);
	config_free(cfg);
	pdoc_free(d);
}

/*
 * A daemon's own stats and a job's output, whose members are built where
 * only a daemon has what they say: each is a tagged paragraph of THE STATS
 * OBJECT and of output's "Result:" list, and each one there is a member.
 */
static void
stats_and_output_members_are_documented(void **state)
{
	/* Members a daemon has in another config than the test's: the
	 * cluster's nodes (make test-onenode has them), and the one user
	 * that every job runs as, for a daemon that does not run jobs as
	 * their submitters. */
	static const char *const conditional[] = {
		"nodes", "up", "uid", "user", NULL,
	};
	struct pdoc *d = pdoc_load();
	struct pdoc_range r = pdoc_section(d, "THE STATS OBJECT"), l;
	struct tdaemon *daemon;
	struct pdoc_stale stale;
	struct triage_client *c;
	json_t *stats, *out, *keys, *v;
	const char *key;
	int64_t id;

	(void)state;
	daemon = tdaemon_start("");
	c = tconnect(daemon);
	stats = tcall(c, "stats", "{}");
	assert_non_null(keys = json_object());
	pdoc_keys(keys, stats);
	json_object_foreach(keys, key, v)
		if (!pdoc_has_tag(d, r, key, true))
			fail_msg("%s: stats member \"%s\" is not a tagged "
			    "paragraph (.TP, .B %s) of THE STATS OBJECT",
			    PDOC_PAGE, key, key);
	stale = (struct pdoc_stale){ keys, "a stats member", conditional };
	pdoc_each_tag(d, r, true, pdoc_not_stale_cb, &stale);
	json_decref(keys);
	json_decref(stats);

	id = tsubmit(c, "{s[sss]}", "argv", "sh", "-c", "echo hello");
	json_decref(twait(c, id));
	out = tcall(c, "output", "{sI ss}", "id", (json_int_t)id, "stream",
	    "stdout");
	l = pdoc_list(d, pdoc_method(d, "output"), "Result:");
	assert_true(l.to > l.from);
	json_object_foreach(out, key, v)
		if (!pdoc_has_tag(d, l, key, false))
			fail_msg("%s: output's result member \"%s\" is not a "
			    "tagged paragraph (.TP, .B %s) of its \"Result:\" "
			    "list", PDOC_PAGE, key, key);
	stale = (struct pdoc_stale){ out, "a member of output's result",
	    NULL };
	pdoc_each_tag(d, l, false, pdoc_not_stale_cb, &stale);
	json_decref(out);
	tdaemon_end(daemon, c);
	pdoc_free(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_method_has_its_section),
		cmocka_unit_test(every_param_is_documented),
		cmocka_unit_test(every_job_member_is_documented),
		cmocka_unit_test(every_error_code_is_documented),
		cmocka_unit_test(every_filter_member_is_documented),
		cmocka_unit_test(stats_and_output_members_are_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
