/* submit-key.h - a submission's idempotency key: its form, the job it already
 * names, and the answer that says whether the job is new. */
#ifndef TRIAGED_SUBMIT_KEY_H
#define TRIAGED_SUBMIT_KEY_H

#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

struct job;
struct method_err;
struct rpc_req;
struct triaged;

/* params' "key", if any: 1 to JOB_KEY_MAX bytes (a NUL cannot come:
 * the request parser refuses \u0000). 0, or -1 with err (field "key"). */
int submit_key_check(json_t *params, struct method_err *err);

/*
 * Whether uid's key already names a job, stored or on its way to the disk:
 * then req is answered (now with the stored job, marked "existing", or
 * once the commit under way is over) and true is returned; false when the
 * key is free and the submission goes on.
 */
bool submit_key_found(struct rpc_req *req, uid_t uid, const char *key);

/*
 * Defers req, the submission of job (which has its key set), to be
 * answered by submit_key_added_cb, the jobs_done_cb to give jobs_submit
 * with what this returns: with the job, or with another node's job that
 * took the key first ("existing"). NULL after answering req (out of
 * memory).
 */
void *submit_key_later(struct rpc_req *req, const struct job *job);
void submit_key_added_cb(struct triaged *td, struct job *job,
    const char *cause, void *arg);

#endif
