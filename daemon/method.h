/* method.h - a JSON-RPC method as one descriptor: its name, its params, who
 * may call it, and its handler; method.c's table collects them. */
#ifndef TRIAGED_METHOD_H
#define TRIAGED_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

struct config;
struct rpc_req;

/* Accepted JSON types of a param, as a mask. */
#define PARAM_STRING	(1u << JSON_STRING)
#define PARAM_INTEGER	(1u << JSON_INTEGER)
#define PARAM_NUMBER	((1u << JSON_INTEGER) | (1u << JSON_REAL))
#define PARAM_BOOLEAN	((1u << JSON_TRUE) | (1u << JSON_FALSE))
#define PARAM_ARRAY	(1u << JSON_ARRAY)
#define PARAM_OBJECT	(1u << JSON_OBJECT)
#define PARAM_NULL	(1u << JSON_NULL)

struct method_param {
	const char *name;
	unsigned types;
	bool required;
	const char *type_name;	/* for the error: "an integer" */
};

#define METHOD_ADMIN	0x1	/* root, our uid, or admin_group only */

/* All a check may look at: nothing that changes while it runs, so that a
 * check can be run (and fuzzed) without a daemon. */
struct method_ctx {
	const struct config *cfg;
	uid_t uid;		/* the caller's */
	gid_t gid;
	bool admin;		/* root, the daemon's uid, or admin_group */
	unsigned permits;	/* the semaphore's slots in all */
	/* The memory budget (membudget.h), which no job may declare more
	 * than; 0: none known (a check without a daemon), no bound. */
	uint64_t memory_budget;
};

/* Why params were refused: what the client gets as its error. */
struct method_err {
	int code;		/* RPC_* */
	/* The param at fault (NULL: none): a constant, or a key of the
	 * params checked, valid as long as they are. */
	const char *field;
	char field_buf[80];	/* for a field named on the fly */
	char message[1024];	/* rpc.c cuts its messages at the same size */
};

struct method {
	const char *name;
	const struct method_param *params;	/* ends with a NULL name */
	int flags;
	/* Validates params completely (ranges, formats, array contents,
	 * lengths, exclusive combinations) once the table has checked their
	 * names and types: 0, or -1 with err filled. NULL: nothing to check
	 * beyond the table. Whatever needs the store is the handler's. */
	int (*check)(const struct method_ctx *ctx, json_t *params,
	    struct method_err *err);
	/* Must answer req, now or later (rpc_defer). params has passed the
	 * table and check: the handler checks them no further. */
	void (*handler)(struct rpc_req *req, json_t *params);
};

/* How many methods there are. */
size_t method_count(void);
/* The method called name, or NULL. */
const struct method *method_find(const char *name);
/* The table's i-th method, or NULL past its end: for whoever must try each
 * one (the fuzz target). */
const struct method *method_at(size_t i);

/*
 * Everything method_call checks before a handler runs, with no daemon: the
 * name, who calls (ctx->admin), the params' names and types, then the
 * method's check. params may be NULL (none sent). 0, or -1 with err filled.
 */
int method_validate(const struct method_ctx *ctx, const char *name,
    json_t *params, struct method_err *err);
/* Fills err, returns -1: for checks. */
int method_fail(struct method_err *err, int code, const char *field,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* rpc's dispatcher: finds the method, checks who calls it and its params
 * against its descriptor, and runs its handler, which answers req. */
void method_call(struct rpc_req *req, const char *name, json_t *params);

struct job;

/* A check: params' "id", when there, is a positive integer. */
int method_check_id(const struct method_ctx *ctx, json_t *params,
    struct method_err *err);
/* The job named by params' "id" (checked by method_check_id), or NULL
 * after answering req with -32001: no such job. */
struct job *method_job(struct rpc_req *req, json_t *params);
/* True when the caller owns job or is an admin; else answers -32002. */
bool method_may_act(struct rpc_req *req, const struct job *job,
    const char *what);
/* A check: params' "priority", when there, names a configured priority. */
int method_check_priority(const struct method_ctx *ctx, json_t *params,
    struct method_err *err);
/* A job's bounds, at submit and update. */
#define METHOD_RETRIES_MAX 1000
/* Ten years: anything longer is a mistake, and fits a timer easily. */
#define METHOD_TIMEOUT_MAX (10.0 * 365 * 86400)
/* Checks: params' "name", when there, is 1 to max_name bytes; "timeout"
 * seconds from 0 to METHOD_TIMEOUT_MAX; "retries" 0 to METHOD_RETRIES_MAX. */
int method_check_name(const struct config *cfg, json_t *params,
    struct method_err *err);
int method_check_timeout(json_t *params, struct method_err *err);
int method_check_retries(json_t *params, struct method_err *err);
/* The least memory a job may declare (protocol v1.2): 1 MiB. */
#define METHOD_MEMORY_MIN 1048576
/* A check: params' "memory", when there, is bytes, at least
 * METHOD_MEMORY_MIN, and no more than the memory budget; without it, the
 * memory of p (the priority a submission goes to; NULL: none to check) is
 * within the budget. */
struct config_priority;
int method_check_memory(const struct method_ctx *ctx, json_t *params,
    const struct config_priority *p, struct method_err *err);
/* A check: params' "resources", when there (an object), names configured
 * resources, each with a count from 1 to what it has (count, or its
 * number of units); the field at fault is "resources.NAME". */
int method_check_resources(const struct method_ctx *ctx, json_t *params,
    struct method_err *err);
/* The job's copy of params' "resources" (checked) into *resources: NULL
 * when absent or {}. 0, or -1 out of memory. */
int method_resources(json_t *params, json_t **resources);
/* A check: params' "begin_at", when a string, is an RFC 3339 time with an
 * offset, of a date that exists (null is the param table's to allow). */
int method_check_begin_at(json_t *params, struct method_err *err);
/* nice (a param's value, NULL for none): 0 to 19, and no less than p's
 * unless admin asks, since a lower nice takes the CPU from the priorities
 * above (p NULL: the range alone). */
int method_check_nice(bool admin, json_t *nice,
    const struct config_priority *p, struct method_err *err);
/* The index of the priority named by params' "priority", which
 * method_check_priority has passed; -1 when absent. */
int method_priority(const struct config *cfg, json_t *params);

/*
 * Answers req with result (stolen) once every change made so far is on
 * disk: what it reports can then never be undone by a crash. At once when
 * nothing waits to be written.
 */
void method_reply_durable(struct rpc_req *req, json_t *result);

/*
 * The answer to an edit of job, done saying what it did ("held",
 * "updated"): the job object once the edit is on disk, or -32005 when the
 * database refused the write, another daemon sharing it having changed the
 * job first (a claim in the same instant): then the edit was not made.
 */
void method_reply_edit(struct rpc_req *req, struct job *job,
    const char *done);
/* The message of that -32005, for err. */
void method_fail_refused(struct method_err *err, const struct job *job,
    const char *done);

/*
 * A request answered later by method_later_done_cb, a jobs_done_cb: with
 * the job object, or -32603 "WHAT could not be stored: CAUSE". Returns it
 * (req is deferred), or NULL after answering req with an error.
 */
struct method_later;
struct triaged;
struct method_later *method_later(struct rpc_req *req, const char *what);
void method_later_done_cb(struct triaged *td, struct job *job,
    const char *cause, void *arg);

/* The `stats` result object (method-stats.c), which pause and resume answer
 * with too, and the dashboard shows; a new reference. */
json_t *method_stats_result(struct triaged *td);

extern const struct method method_cancel;
extern const struct method method_freeze;
extern const struct method method_get;
extern const struct method method_hold;
extern const struct method method_list;
extern const struct method method_output;
extern const struct method method_pause;
extern const struct method method_release;
extern const struct method method_reload;
extern const struct method method_remove;
extern const struct method method_resume;
extern const struct method method_retry;
extern const struct method method_stats;
extern const struct method method_submit;
extern const struct method method_thaw;
extern const struct method method_update;
extern const struct method method_wait;
extern const struct method method_watch;

#endif
