/* method.h - a JSON-RPC method as one descriptor: its name, its params, who
 * may call it, and its handler; method.c's table collects them. */
#ifndef TRIAGED_METHOD_H
#define TRIAGED_METHOD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct rpc_req;

/* Accepted JSON types of a param, as a mask. */
#define PARAM_STRING	(1u << JSON_STRING)
#define PARAM_INTEGER	(1u << JSON_INTEGER)
#define PARAM_NUMBER	((1u << JSON_INTEGER) | (1u << JSON_REAL))
#define PARAM_BOOLEAN	((1u << JSON_TRUE) | (1u << JSON_FALSE))
#define PARAM_ARRAY	(1u << JSON_ARRAY)
#define PARAM_OBJECT	(1u << JSON_OBJECT)

struct method_param {
	const char *name;
	unsigned types;
	bool required;
	const char *type_name;	/* for the error: "an integer" */
};

#define METHOD_ADMIN	0x1	/* root, our uid, or admin_group only */

struct method {
	const char *name;
	const struct method_param *params;	/* ends with a NULL name */
	int flags;
	/* Must answer req, now or later (rpc_defer). params is an object
	 * whose keys are all known and of the right types. */
	void (*handler)(struct rpc_req *req, json_t *params);
};

/* How many methods there are. */
size_t method_count(void);
/* The method called name, or NULL. */
const struct method *method_find(const char *name);

/* rpc's dispatcher: finds the method, checks who calls it and its params
 * against its descriptor, and runs its handler, which answers req. */
void method_call(struct rpc_req *req, const char *name, json_t *params);

struct job;

/* The job named by params' "id", or NULL after answering req with the
 * error (-32602 for a bad id, -32001 for no such job). */
struct job *method_job(struct rpc_req *req, json_t *params);
/* True when the caller owns job or is an admin; else answers -32002. */
bool method_may_act(struct rpc_req *req, const struct job *job,
    const char *what);
/* The index of the priority named by params' "priority": -1 when absent,
 * -2 after answering req with -32602 for an unknown name. */
int method_priority(struct rpc_req *req, json_t *params);

/*
 * Answers req with result (stolen) once every change made so far is on
 * disk: what it reports can then never be undone by a crash. At once when
 * nothing waits to be written.
 */
void method_reply_durable(struct rpc_req *req, json_t *result);

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

extern const struct method method_cancel;
extern const struct method method_get;
extern const struct method method_list;
extern const struct method method_output;
extern const struct method method_pause;
extern const struct method method_reload;
extern const struct method method_resume;
extern const struct method method_retry;
extern const struct method method_stats;
extern const struct method method_submit;
extern const struct method method_wait;
extern const struct method method_watch;

#endif
