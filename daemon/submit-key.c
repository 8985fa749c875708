/* submit-key.c - idempotent submission: a second submit with the key of a job
 * that is kept gets that job back, marked "existing", and makes nothing. */
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "jobs.h"
#include "log.h"
#include "method.h"
#include "rpc.h"
#include "store.h"
#include "submit-key.h"
#include "triaged.h"

/* A submission with a key, answered once a commit has settled the key. */
struct submit_key_wait {
	struct rpc_req *req;	/* NULL once its client has gone */
	struct triaged *td;
	uid_t uid;
	bool synced;		/* the store has been read again for it */
	char key[];
};

int
submit_key_check(json_t *params, struct method_err *err)
{
	json_t *key = json_object_get(params, "key");
	size_t len = json_string_length(key);

	if (key == NULL)
		return 0;
	if (len == 0 || len > JOB_KEY_MAX)
		return method_fail(err, RPC_INVALID_PARAMS, "key",
		    "\"key\" must be 1 to %d bytes; it has %zu", JOB_KEY_MAX,
		    len);
	return 0;
}

/* The job object, with "existing": true when the submission made none. */
static void
submit_key_reply(struct triaged *td, struct rpc_req *req,
    const struct job *job, bool existing)
{
	json_t *obj = jobs_json(td, job);

	if (obj != NULL && existing &&
	    json_object_set_new(obj, "existing", json_true()) != 0) {
		json_decref(obj);
		obj = NULL;
	}
	rpc_reply(req, obj);
}

static void
submit_key_withdraw_cb(struct rpc_req *req, void *arg)
{
	struct submit_key_wait *w = arg;

	(void)req;
	w->req = NULL;
}

static struct submit_key_wait *
submit_key_wait(struct rpc_req *req, uid_t uid, const char *key)
{
	size_t len = strlen(key) + 1;
	struct submit_key_wait *w;

	if ((w = calloc(1, sizeof *w + len)) == NULL) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		return NULL;
	}
	w->req = req;
	w->td = rpc_daemon(req);
	w->uid = uid;
	memcpy(w->key, key, len);
	rpc_defer(req, submit_key_withdraw_cb, w);
	return w;
}

static void submit_key_synced_cb(const char *, void *);

/*
 * The commit that was to store the key's first job is over: w is answered
 * with the job that has the key now. None, the store is read once more
 * (another node's row may be on its way); still none, the first
 * submission failed (cause, when known), and so does this one: nothing was
 * made, and the submitter may try again.
 */
static void
submit_key_settled(struct submit_key_wait *w, const char *cause)
{
	struct triaged *td = w->td;
	struct job *job;

	if (w->req == NULL)
		goto done;
	if ((job = store_by_key(td->store, w->uid, w->key)) != NULL) {
		submit_key_reply(td, w->req, job, true);
		goto done;
	}
	if (!w->synced && cause == NULL) {
		w->synced = true;
		if (store_sync(td->store, submit_key_synced_cb, w) == 0)
			return;
	}
	rpc_error(w->req, RPC_INTERNAL_ERROR, "key", "the job first "
	    "submitted with this key could not be stored%s%s; nothing was "
	    "made: submit again", cause != NULL ? ": " : "",
	    cause != NULL ? cause : "");
done:
	free(w);
}

static void
submit_key_synced_cb(const char *cause, void *arg)
{
	submit_key_settled(arg, cause);
}

static void
submit_key_committed_cb(struct triaged *td, struct job *job,
    const char *cause, void *arg)
{
	(void)td;
	(void)job;
	submit_key_settled(arg, cause);
}

bool
submit_key_found(struct rpc_req *req, uid_t uid, const char *key)
{
	struct triaged *td = rpc_daemon(req);
	struct submit_key_wait *w;
	struct job *job;

	if ((job = store_by_key(td->store, uid, key)) != NULL) {
		submit_key_reply(td, req, job, true);
		return true;
	}
	if (!jobs_staged_key(td, uid, key))
		return false;
	/* Two at once, in one batch say: the second waits for the first's
	 * commit and gets its job. */
	if ((w = submit_key_wait(req, uid, key)) != NULL &&
	    jobs_after_commit(td, submit_key_committed_cb, w) != 0) {
		rpc_error(req, RPC_INTERNAL_ERROR, NULL, "out of memory");
		free(w);
	}
	return true;
}

void *
submit_key_later(struct rpc_req *req, const struct job *job)
{
	return submit_key_wait(req, job->uid, job->extra->key);
}

void
submit_key_added_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	struct submit_key_wait *w = arg;

	if (cause == store_key_taken) {
		/* Another node's job has the key, and has been read. */
		log_debug("uid %u: key \"%s\" was taken at once by another "
		    "node's job: its job is the answer", (unsigned)w->uid,
		    w->key);
		submit_key_settled(w, NULL);
		return;
	}
	if (w->req != NULL && cause != NULL)
		rpc_error(w->req, RPC_INTERNAL_ERROR, NULL, "the job could not "
		    "be stored: %s", cause);
	else if (w->req != NULL)
		submit_key_reply(td, w->req, job, false);
	free(w);
}
