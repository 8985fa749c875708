/* bench-jobs.c - for the benchmarks: many `true` jobs submitted pipelined on
 * one connection, then waited for until each has ended, checked. */
#include <inttypes.h>
#include <string.h>

#include <jansson.h>

#include "bench-jobs.h"

/* Ids per wait request: a short line, and few requests. */
#define BENCH_JOBS_WAIT_IDS	500

int
bench_jobs_submit(struct triage_client *cl, uint64_t n, json_int_t *ids,
    const json_t *params, int reply_ms, struct bench_why *why)
{
	struct triage_error e;
	uint64_t sent = 0, got = 0;
	json_t *res, *id;
	int64_t rid, first = -1, r;

	while (got < n) {
		while (sent < n && sent - got < BENCH_JOBS_WINDOW) {
			if ((r = triage_client_send(cl, "submit", params !=
			    NULL ? json_deep_copy(params) : json_pack("{s[s]}",
			    "argv", "true"), &e)) == -1) {
				bench_why_set(why, "submit: %s", e.message);
				return -1;
			}
			if (first == -1)
				first = r;
			sent++;
		}
		if ((res = triage_client_recv(cl, &rid, reply_ms, &e))
		    == NULL) {
			bench_why_set(why, "submit: %s", e.message);
			return -1;
		}
		id = json_object_get(res, "id");
		if (!json_is_integer(id) || rid < first ||
		    (uint64_t)(rid - first) >= n) {
			json_decref(res);
			bench_why_set(why, "submit replied with something "
			    "other than a job");
			return -1;
		}
		/* Request ids count up, in the order sent. */
		ids[rid - first] = json_integer_value(id);
		json_decref(res);
		got++;
	}
	return 0;
}

int
bench_jobs_wait(struct triage_client *cl, uint64_t n, const json_int_t *ids,
    int reply_ms, bench_jobs_cb each, void *arg, struct bench_why *why)
{
	struct triage_error e;
	uint64_t i, k, sent = 0, ok = 0;
	json_t *a, *res, *job;
	const char *state;
	int64_t rid;
	size_t j;

	for (i = 0; i < n; i += BENCH_JOBS_WAIT_IDS) {
		if ((a = json_array()) == NULL) {
			bench_why_set(why, "out of memory");
			return -1;
		}
		for (k = i; k < n && k < i + BENCH_JOBS_WAIT_IDS; k++)
			json_array_append_new(a, json_integer(ids[k]));
		if (triage_client_send(cl, "wait", json_pack("{so}", "ids", a),
		    &e) == -1) {
			bench_why_set(why, "wait: %s", e.message);
			return -1;
		}
		sent++;
	}
	for (i = 0; i < sent; i++) {
		if ((res = triage_client_recv(cl, &rid, reply_ms, &e))
		    == NULL) {
			bench_why_set(why, "wait: %s", e.message);
			return -1;
		}
		json_array_foreach(json_object_get(res, "jobs"), j, job) {
			state = json_string_value(json_object_get(job,
			    "state"));
			if (state == NULL || strcmp(state, "succeeded") != 0) {
				bench_why_set(why, "job %" JSON_INTEGER_FORMAT
				    " ended %s", json_integer_value(
				    json_object_get(job, "id")),
				    state ? state : "(no state)");
				continue;
			}
			ok++;
			if (each != NULL)
				each(job, arg);
		}
		json_decref(res);
	}
	if (ok != n) {
		bench_why_set(why, "%" PRIu64 " of %" PRIu64 " jobs "
		    "succeeded", ok, n);
		return -1;
	}
	return 0;
}
