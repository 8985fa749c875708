/* verdict.c - why cancel, retry, hold, release, freeze, thaw or remove left a
 * job named by id as it was, said in the words of the daemon's own
 * refusals. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "verdict.h"
#include "xmalloc.h"

/* What each method needs of a job, and says when the job is not so. */
struct verdict_rule {
	const char *method;
	unsigned states;	/* bits 1 << JOB_*: where it acts */
	const char *only;	/* after "job 12 is running: " */
};

#define VERDICT_BIT(s) (1u << (s))
#define VERDICT_ENDED (VERDICT_BIT(JOB_SUCCEEDED) | VERDICT_BIT(JOB_FAILED) | \
	VERDICT_BIT(JOB_TIMED_OUT) | VERDICT_BIT(JOB_CANCELED) |	\
	VERDICT_BIT(JOB_LOST))

static const struct verdict_rule verdict_rules[] = {
	/* An ended job is left as it is, as the protocol says: a note. */
	{ "cancel", VERDICT_BIT(JOB_QUEUED) | VERDICT_BIT(JOB_RUNNING), NULL },
	{ "retry", VERDICT_ENDED & ~VERDICT_BIT(JOB_SUCCEEDED),
	  "only a job that failed, timed out, was canceled or was lost can "
	  "be retried" },
	{ "hold", VERDICT_BIT(JOB_QUEUED), "only a queued job can be held" },
	/* A running job is not held: what release asks for already. */
	{ "release", VERDICT_BIT(JOB_QUEUED) | VERDICT_BIT(JOB_RUNNING),
	  "only a queued job can be released" },
	{ "freeze", VERDICT_BIT(JOB_RUNNING), "only a running job can be "
	  "frozen" },
	/* A queued job is not frozen: what thaw asks for already. */
	{ "thaw", VERDICT_BIT(JOB_QUEUED) | VERDICT_BIT(JOB_RUNNING),
	  "only a running job can be thawed" },
	{ "remove", VERDICT_ENDED,
	  "only a job that has ended can be removed (cancel it first)" },
};

static const struct verdict_rule *
verdict_rule(const char *method)
{
	size_t i;

	for (i = 0; i < sizeof verdict_rules / sizeof verdict_rules[0]; i++) {
		if (strcmp(verdict_rules[i].method, method) == 0)
			return &verdict_rules[i];
	}
	return NULL;
}

/*
 * Says why the job was left as it was, if its state is why; returns
 * CMD_EXIT_FAILURE after saying so, CMD_EXIT_OK after a note or nothing.
 * *fits is set when the state is one the method acts on.
 */
static int
verdict_state(const struct verdict_rule *r, const json_t *job, bool *fits)
{
	json_int_t id = json_integer_value(json_object_get(job, "id"));
	const char *name, *phrase, *space;
	int state = -1;

	if ((name = json_string_value(json_object_get(job, "state"))) != NULL)
		state = job_state_parse(name);
	*fits = state >= 0 && (r->states & VERDICT_BIT(state)) != 0;
	if (*fits || state < 0)
		return CMD_EXIT_OK;
	phrase = job_state_phrase((enum job_state)state);
	if (r->only != NULL) {
		cmd_error("job %" JSON_INTEGER_FORMAT " %s: %s", id, phrase,
		    r->only);
		return CMD_EXIT_FAILURE;
	}
	/* "has succeeded" becomes "has already succeeded". */
	space = strchr(phrase, ' ');
	cmd_error("job %" JSON_INTEGER_FORMAT " %.*s already%s: nothing to %s",
	    id, (int)(space - phrase), phrase, space, r->method);
	return CMD_EXIT_OK;
}

int
verdict_one(const char *method, const json_t *job)
{
	const struct verdict_rule *r = verdict_rule(method);
	const char *state = json_string_value(json_object_get(job, "state"));
	bool fits;

	/* retry and remove are refused by the daemon, and answer with the
	 * job as it is after the change. A job canceled now looks as one
	 * canceled before: no note. */
	if (r == NULL || strcmp(method, "retry") == 0 ||
	    strcmp(method, "remove") == 0 || (strcmp(method, "cancel") == 0 &&
	    state != NULL && strcmp(state, "canceled") == 0))
		return CMD_EXIT_OK;
	return verdict_state(r, job, &fits);
}

/* Whether acted holds id. */
static bool
verdict_acted(const json_t *acted, const json_t *id)
{
	const json_t *v;
	size_t i;

	json_array_foreach(acted, i, v) {
		if (json_equal(v, id))
			return true;
	}
	return false;
}

/* Why the daemon skipped a job whose state the method acts on: it is
 * already as asked, or it is not the caller's. */
static int
verdict_owner(const char *method, const json_t *job)
{
	bool held = json_is_true(json_object_get(job, "held"));
	bool frozen = json_is_true(json_object_get(job, "frozen"));
	json_int_t uid = json_integer_value(json_object_get(job, "uid"));

	if ((strcmp(method, "hold") == 0 && held) ||
	    (strcmp(method, "release") == 0 && !held) ||
	    (strcmp(method, "freeze") == 0 && frozen) ||
	    (strcmp(method, "thaw") == 0 && !frozen) ||
	    uid == (json_int_t)geteuid())
		return CMD_EXIT_OK;
	/* As the daemon refuses one id that is not the caller's. */
	cmd_error("job %" JSON_INTEGER_FORMAT " belongs to uid %"
	    JSON_INTEGER_FORMAT ": only its owner or an admin may %s it",
	    json_integer_value(json_object_get(job, "id")), uid, method);
	return CMD_EXIT_FAILURE;
}

int
verdict_skipped(struct cmd_ctx *ctx, const char *method, const json_t *named,
    const json_t *acted)
{
	const struct verdict_rule *r = verdict_rule(method);
	struct triage_error err;
	json_t *id, *job;
	size_t i;
	int rc = CMD_EXIT_OK, one;
	bool fits;

	if (r == NULL)
		return CMD_EXIT_OK;
	json_array_foreach(named, i, id) {
		if (verdict_acted(acted, id))
			continue;
		if ((job = triage_client_call(ctx->client, "get",
		    xjson(json_pack("{s:O}", "id", id)), -1, &err)) == NULL) {
			if ((one = cmd_report(&err)) == CMD_EXIT_UNREACHABLE)
				return one;
			rc = one;
			continue;
		}
		one = verdict_state(r, job, &fits);
		if (fits)
			one = verdict_owner(method, job);
		if (one != CMD_EXIT_OK)
			rc = one;
		json_decref(job);
	}
	return rc;
}
