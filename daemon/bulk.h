/* bulk.h - methods that act on one job ("id") or on every job a filter
 * selects ("filter"): one path for cancel, retry, remove, hold, release,
 * freeze and thaw. */
#ifndef TRIAGED_BULK_H
#define TRIAGED_BULK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

struct bulk;
struct job;
struct method_ctx;
struct method_err;
struct rpc_req;
struct triaged;

/* What an action did with one job. */
enum bulk_verdict {
	BULK_ACTED,	/* done: it is one of the result's ids */
	BULK_SKIPPED,	/* makes no sense for it: see bulk_op.act */
	BULK_PENDING,	/* under way: bulk_settle will say */
	BULK_FAILED,	/* err says why; nothing more is done */
};

struct bulk_op {
	const char *verb;	/* for -32002: "only its owner may VERB it" */
	/*
	 * Acts on job, which the caller may act on. Returns a verdict: for
	 * SKIPPED, err is the id form's error, or err->code 0 when the id
	 * form answers with the job as it is (cancel of a job that ended);
	 * for PENDING, bulk_settle(token) is called once later, from the
	 * loop; for FAILED, err is the error. err->code is 0 on entry.
	 */
	enum bulk_verdict (*act)(struct bulk *b, struct job *job,
	    struct method_err *err);
	/* The id form's result: the job object, or else {"ids": [id]}. */
	bool id_gives_job;
	/*
	 * What the action did, for an action whose write another daemon's
	 * change may refuse, undoing it ("held"): such a job is left out of
	 * the answer (the id form's is -32005). NULL for an action that is
	 * done again instead (cancel), or never refused (remove).
	 */
	const char *done;
};

/* A check for {id | filter} params: exactly one of the two, each valid
 * ("id" a positive integer, "filter" as filter_check says). */
int bulk_check(const struct method_ctx *ctx, json_t *params,
    struct method_err *err);

/*
 * Runs op on the job params' "id" names, answering as v1 did (-32001 no
 * such job, -32002 not the caller's, op's own errors, else the job or
 * {"ids": [id]}); or on every job params' "filter" matches (the caller's
 * own only, unless an admin), a slice per turn of the loop, answering
 * {"ids": [...]} ascending, the jobs acted on, once every change is on
 * disk (without those whose write was refused: op->done). Jobs submitted
 * after the request are left out. A failure stops the filter form: the
 * error's data.ids lists what was done before it.
 * params has passed bulk_check; req is answered, now or later.
 */
void bulk_start(struct rpc_req *req, json_t *params,
    const struct bulk_op *op);

/* For an action: the daemon, the caller's uid, and the request's params
 * (valid as long as the bulk). */
struct triaged *bulk_daemon(const struct bulk *b);
uid_t bulk_uid(const struct bulk *b);
json_t *bulk_params(const struct bulk *b);

/* For a PENDING action: which job, at which attempt, the settle is for. */
struct bulk_token {
	struct bulk *bulk;
	uint64_t id;
	unsigned attempt;
	uint16_t refused;	/* the job's refused writes then */
};
/* A token for job; NULL out of memory (the action then fails). */
struct bulk_token *bulk_token(struct bulk *b, const struct job *job);
/* The action of token is over: ACTED, SKIPPED or FAILED, with err as for
 * act (NULL when there is nothing to say). Frees token. */
void bulk_settle(struct bulk_token *token, enum bulk_verdict v,
    const struct method_err *err);

#endif
