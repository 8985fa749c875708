/* test-job.c - the job object: job_write_json's text, to the byte, and
 * job_to_json's object, which dumps to it, for every field in each form. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "job.h"
#include "jsonw.h"

/* 2026-11-22T10:00:00.000Z */
#define T0 INT64_C(1795341600000)

static char **
strv(const char *a, const char *b, const char *c)
{
	char **v = calloc(4, sizeof *v);

	assert_non_null(v);
	v[0] = a != NULL ? strdup(a) : NULL;
	v[1] = a != NULL && b != NULL ? strdup(b) : NULL;
	v[2] = a != NULL && b != NULL && c != NULL ? strdup(c) : NULL;
	return v;
}

/* Both forms of job agree, or both fail. */
static void
assert_same(const struct job *job, int64_t position, const char *pending)
{
	struct jsonw w = { 0 };
	json_t *o = job_to_json(job, position, pending);
	const char *text;
	char *want, *got;
	size_t len;
	int rc;

	rc = job_write_json(job, position, pending, &w);
	text = jsonw_text(&w, &len);
	if (o == NULL) {
		assert_int_equal(rc, -1);
		assert_null(text);
		jsonw_free(&w);
		return;
	}
	assert_int_equal(rc, 0);
	assert_non_null(text);
	want = json_dumps(o, JSONW_DUMP_FLAGS);
	assert_non_null(want);
	got = strndup(text, len);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	free(want);
	json_decref(o);
	jsonw_free(&w);
}

/* What submit replies with: a job queued a moment ago. */
static struct job *
fresh_job(void)
{
	struct job *job = job_new();

	assert_non_null(job);
	job->id = 1;
	assert_int_equal(job_set_argv(job, strv("true", NULL, NULL)), 0);
	assert_int_equal(job_set_env(job, strv("PATH=/usr/bin:/bin",
	    "HOME=/root", NULL)), 0);
	assert_int_equal(job_set_cwd(job, "/root"), 0);
	assert_int_equal(job_set_priority(job, "normal"), 0);
	job->submitted_at = T0 + 311;
	return job;
}

static void
a_fresh_job(void **state)
{
	struct job *job = fresh_job();

	(void)state;
	assert_same(job, 0, "paused");
	assert_same(job, 12345, "queue");
	assert_same(job, -1, NULL);
	job_free(job);
}

/* A job with every field set, none to its default. */
static struct job *
full_job(void)
{
	struct job_extra *extra;
	struct job *job = fresh_job();
	struct job_run *run;

	job->id = (uint64_t)INT64_MAX;
	assert_int_equal(job_set_argv(job, strv("/bin/sh", "-c",
	    "echo \"$HOME\"\n/tmp")), 0);
	job_set_name(job, strdup("n\"a\\m\te \xc3\xa9\x01"));
	assert_int_equal(job_set_cwd(job, "/home/\xe2\x82\xac/dir"), 0);
	run = job_run_edit(job);
	assert_non_null(run);
	assert_non_null(extra = job_extra_edit(job));
	job->state = JOB_FAILED;
	job->slots = 4;
	job->exclusive = true;
	job->timeout_ms = 1500;
	job->retries = 3;
	extra->after = calloc(3, sizeof *extra->after);
	assert_non_null(extra->after);
	extra->after[0] = 7;
	extra->after[1] = 8;
	extra->after[2] = (uint64_t)INT64_MAX;
	extra->nafter = 3;
	job->uid = 1000;
	job->gid = 4294967294u;
	run->started_at = T0 + 1000;
	run->finished_at = T0 + 86400123;
	run->pid = 4242;
	run->exit_code = 0;
	run->signal = SIGKILL;
	run->reason = strdup("killed: \"timeout\"\nafter 1.5 s");
	job->attempt = 2;
	run->user_time = 0.05;
	run->system_time = 1234.5678;
	run->max_rss_kb = 65536;
	extra->labels = json_pack("{ss ss}", "team", "ops", "q\"uote", "\n");
	assert_non_null(extra->labels);
	job->held = true;
	extra->begin_at = T0 + 5;
	extra->after_any = calloc(1, sizeof *extra->after_any);
	assert_non_null(extra->after_any);
	extra->after_any[0] = 9;
	extra->nafter_any = 1;
	job->nice = 19;
	job->merge_output = true;
	job->memory = (uint64_t)INT64_MAX;
	assert_non_null(extra->resources = json_pack("{si si}", "gpu", 2,
	    "lic\"ence", 1));
	assert_non_null(extra->devices = json_pack("{s[ss]}", "gpu", "1",
	    "nv:3"));
	assert_non_null(extra->key = strdup("order \"17"));
	job->frozen = true;
	run->peak_memory = 2147483648;
	run->oom = true;
	assert_int_equal(job_set_cgroup(job, "triage.slice/j\"ob\\9"), 0);
	assert_int_equal(job_set_node(job, "build-7"), 0);
	assert_int_equal(job_set_pinned_node(job, "n\"ode.\\1"), 0);
	return job;
}

static void
a_job_with_every_field_set(void **state)
{
	struct job_extra *extra;
	struct job *job = full_job();
	struct job_run *run = job_run_edit(job);

	(void)state;
	assert_non_null(run);
	assert_non_null(extra = job_extra_edit(job));
	assert_same(job, -1, NULL);
	assert_same(job, 3, "held");

	/* The other forms of what was set: zero times, a signal and an
	 * exit code unknown, an empty label set, a timeout of a fraction. */
	job->timeout_ms = 1;
	run->user_time = 0;
	run->system_time = -1;
	run->max_rss_kb = 0;
	run->signal = 0;
	run->exit_code = 255;
	json_decref(extra->labels);
	extra->labels = json_object();
	/* v1.2's: no memory, no resources nor devices, a peak of nothing
	 * yet, no cgroup. */
	job->memory = 0;
	json_decref(extra->resources);
	extra->resources = json_object();
	json_decref(extra->devices);
	extra->devices = NULL;
	run->peak_memory = 0;
	assert_int_equal(job_set_cgroup(job, NULL), 0);
	assert_null(job->run->cgroup);
	assert_same(job, -1, NULL);
	job_free(job);
}

/*
 * The object of a full job to the byte, as the two forms gave it when
 * each had a list of the members of its own. The built one's reals are
 * the job's own, which a dump of 17 digits (the HTTP API's) shows: read
 * back from the text's 15 digits, 1 + 95028 / 1e6 would be another.
 */
static void
the_object_of_a_full_job_to_the_byte(void **state)
{
	static const char want[] = "{\"id\":9223372036854775807,"
	    "\"name\":\"n\\\"a\\\\m\\te \xc3\xa9\\u0001\","
	    "\"argv\":[\"/bin/sh\",\"-c\",\"echo \\\"$HOME\\\"\\n/tmp\"],"
	    "\"priority\":\"normal\",\"node\":\"build-7\","
	    "\"pinned_node\":\"n\\\"ode.\\\\1\",\"state\":\"failed\","
	    "\"slots\":4,\"exclusive\":true,\"timeout\":1.5,\"retries\":3,"
	    "\"after\":[7,8,9223372036854775807],"
	    "\"cwd\":\"/home/\xe2\x82\xac/dir\",\"uid\":1000,"
	    "\"gid\":4294967294,\"submitted_at\":\"2026-11-22T10:00:00.311Z\","
	    "\"started_at\":\"2026-11-22T10:00:01.000Z\","
	    "\"finished_at\":\"2026-11-23T10:00:00.123Z\",\"position\":3,"
	    "\"pid\":4242,\"exit_code\":0,\"signal\":\"SIGKILL\","
	    "\"reason\":\"killed: \\\"timeout\\\"\\nafter 1.5 s\","
	    "\"attempt\":2,\"user_time\":1.095028,\"system_time\":1234.5678,"
	    "\"max_rss_kb\":65536,"
	    "\"labels\":{\"team\":\"ops\",\"q\\\"uote\":\"\\n\"},"
	    "\"held\":true,\"begin_at\":\"2026-11-22T10:00:00.005Z\","
	    "\"after_any\":[9],\"nice\":19,\"merge_output\":true,"
	    "\"pending_reason\":\"held\",\"memory\":9223372036854775807,"
	    "\"resources\":{\"gpu\":2,\"lic\\\"ence\":1},"
	    "\"devices\":{\"gpu\":[\"1\",\"nv:3\"]},\"frozen\":true,\"peak_memory\":2147483648,\"oom\":true,"
	    "\"cgroup\":\"triage.slice/j\\\"ob\\\\9\","
	    "\"key\":\"order \\\"17\"}";
	struct job *job = full_job();
	struct jsonw w = { 0 };
	const char *text;
	char *dumped;
	json_t *o;
	size_t len;

	(void)state;
	/* As the worker adds up a rusage's seconds and microseconds. */
	job_run_edit(job)->user_time = (double)1 + (double)95028 / 1e6;
	assert_int_equal(job_write_json(job, 3, "held", &w), 0);
	assert_non_null(text = jsonw_text(&w, &len));
	assert_int_equal(len, strlen(want));
	assert_memory_equal(text, want, len);
	assert_non_null(o = job_to_json(job, 3, "held"));
	assert_non_null(dumped = json_dumps(o, JSONW_DUMP_FLAGS));
	assert_string_equal(dumped, want);
	free(dumped);
	assert_true(json_real_value(json_object_get(o, "user_time")) ==
	    job->run->user_time);
	assert_true(json_real_value(json_object_get(o, "system_time")) ==
	    job->run->system_time);
	json_decref(o);
	jsonw_free(&w);
	job_free(job);
}

/* Where a job runs or ran and where it must: strings or null, right after
 * its priority. */
static void
node_and_pinned_node_follow_priority(void **state)
{
	struct job *job = fresh_job();
	struct jsonw w = { 0 };
	const char *text;
	size_t len;

	(void)state;
	assert_int_equal(job_write_json(job, -1, NULL, &w), 0);
	text = jsonw_text(&w, &len);
	assert_non_null(strstr(text, "\"priority\":\"normal\",\"node\":null,"
	    "\"pinned_node\":null,\"state\":"));
	jsonw_free(&w);

	assert_int_equal(job_set_pinned_node(job, "n1"), 0);
	assert_int_equal(job_set_node(job, "n1"), 0);
	memset(&w, 0, sizeof w);
	assert_int_equal(job_write_json(job, -1, NULL, &w), 0);
	text = jsonw_text(&w, &len);
	assert_non_null(strstr(text, "\"priority\":\"normal\",\"node\":\"n1\","
	    "\"pinned_node\":\"n1\",\"state\":"));
	jsonw_free(&w);
	assert_same(job, -1, NULL);

	/* Shared with every job on that node; NULL lets go of it. */
	assert_ptr_equal(job->node, job->extra->pinned_node);
	assert_int_equal(job_set_pinned_node(job, NULL), 0);
	assert_null(job->extra->pinned_node);
	assert_same(job, -1, NULL);
	job_free(job);
}

static void
the_same_failures(void **state)
{
	struct job *job = fresh_job();

	(void)state;
	/* A name of its own, and argv[0]'s basename when it has none. */
	job_set_name(job, strdup("mine"));
	assert_same(job, 0, "paused");
	assert_int_equal(job_set_argv(job, strv("/usr/bin/env", NULL, NULL)),
	    0);
	job_set_name(job, NULL);
	assert_same(job, 0, "paused");
	/* No argv is an empty one in both. */
	assert_int_equal(job_set_argv(job, NULL), 0);
	assert_same(job, 0, "paused");
	/* What jansson cannot make a string of fails both. */
	job_set_name(job, strdup("bad \xff"));
	assert_same(job, 0, "paused");
	job_set_name(job, NULL);
	assert_int_equal(job_set_cwd(job, NULL), 0);
	assert_same(job, 0, "paused");
	job_free(job);
}

/* The text job_write_json gives job, which must not fail. */
static char *
written(const struct job *job)
{
	struct jsonw w = { 0 };
	const char *text;
	char *copy;
	size_t len;

	assert_int_equal(job_write_json(job, -1, NULL, &w), 0);
	assert_non_null(text = jsonw_text(&w, &len));
	assert_non_null(copy = strndup(text, len));
	jsonw_free(&w);
	return copy;
}

/* argv and cwd that are not UTF-8 (file names are bytes) go as
 * {"base64": ...}; what is UTF-8 stays a plain string. */
static void
bytes_not_utf8_go_as_base64(void **state)
{
	struct job *job = fresh_job();
	char *text;

	(void)state;
	assert_int_equal(job_set_argv(job, strv("printf", "%s", "\xff\xfex")),
	    0);
	assert_int_equal(job_set_cwd(job, "/tmp/\xff\xfe" "d"), 0);
	text = written(job);
	assert_non_null(strstr(text, "\"argv\":[\"printf\",\"%s\","
	    "{\"base64\":\"//54\"}],"));
	assert_non_null(strstr(text, "\"cwd\":{\"base64\":\"L3RtcC///mQ=\"},"));
	free(text);
	assert_same(job, 3, "queue");
	job_free(job);
}

/* The default name of a command whose base name is not UTF-8: each bad
 * byte written \xNN, so that name is always a plain string. */
static void
a_default_name_not_utf8_is_escaped(void **state)
{
	struct job *job = fresh_job();
	char *text;

	(void)state;
	assert_int_equal(job_set_argv(job, strv("/tmp/\xff\xfe/r\xffn",
	    "a", NULL)), 0);
	job_set_name(job, NULL);
	assert_string_equal(job_name(job), "r\\xffn");
	text = written(job);
	assert_non_null(strstr(text, "\"name\":\"r\\\\xffn\","));
	free(text);
	assert_same(job, -1, NULL);
	/* A name of its own stays. */
	job_set_name(job, strdup("mine"));
	assert_string_equal(job_name(job), "mine");
	job_free(job);
}

/* A reason quoting a path that is not UTF-8 (a failed exec or chdir)
 * keeps the job's object writable. */
static void
a_reason_not_utf8_is_escaped(void **state)
{
	struct job *job = fresh_job();

	(void)state;
	assert_int_equal(job_set_reason(job, "chdir %s: %s", "/tmp/\xff",
	    "No such file or directory"), 0);
	assert_string_equal(job->run->reason,
	    "chdir /tmp/\\xff: No such file or directory");
	free(written(job));
	job_free(job);
}

/* A fresh job's v1.2 fields: none of it measured, nothing declared. */
static void
a_fresh_job_has_no_memory_nor_cgroup(void **state)
{
	struct job *job = fresh_job();
	char *text;

	(void)state;
	text = written(job);
	assert_non_null(strstr(text, "\"pending_reason\":null,\"memory\":null,"
	    "\"resources\":{},\"devices\":{},\"frozen\":false,\"peak_memory\":null,\"oom\":false,"
	    "\"cgroup\":null,\"key\":null}"));
	free(text);
	/* Clearing what is not there allocates no run. */
	assert_int_equal(job_set_cgroup(job, NULL), 0);
	assert_ptr_equal(job->run, &job_run_none);
	job_free(job);
}

/* A cgroup, a peak, an OOM kill and the devices are an attempt's: the next
 * one starts without them, and keeps the reason and the resources it asks
 * for, as it always has. A copy of the status leaves the cgroup to the
 * job, as the reason. */
static void
a_new_attempt_clears_the_run_s_cgroup(void **state)
{
	struct job_extra *extra;
	struct job *job = fresh_job();
	struct job_status st;
	struct job_run *run;

	(void)state;
	assert_non_null(run = job_run_edit(job));
	assert_non_null(extra = job_extra_edit(job));
	run->peak_memory = 4096;
	run->oom = true;
	assert_int_equal(job_set_cgroup(job, "/triage/\xff" "1"), 0);
	assert_string_equal(job->run->cgroup, "/triage/\\xff1");
	assert_int_equal(job_set_reason(job, "killed"), 0);
	assert_non_null(extra->resources = json_pack("{si}", "gpu", 1));
	assert_non_null(extra->devices = json_pack("{s[s]}", "gpu", "0"));
	free(written(job));

	job_status_get(job, &st);
	assert_null(st.run.cgroup);
	assert_int_equal(st.run.peak_memory, 4096);
	assert_true(st.run.oom);
	assert_int_equal(job_set_cgroup(job, "other"), 0);
	assert_int_equal(job_status_set(job, &st), 0);
	assert_string_equal(job->run->cgroup, "other");

	job_new_attempt(job);
	assert_int_equal(job->attempt, 2);
	assert_null(job->run->cgroup);
	assert_int_equal(job->run->peak_memory, -1);
	assert_false(job->run->oom);
	assert_string_equal(job->run->reason, "killed");
	assert_true(job_run_is_none(job->run));
	assert_null(extra->devices);
	assert_int_equal(json_integer_value(json_object_get(extra->resources,
	    "gpu")), 1);
	job_free(job);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_fresh_job),
		cmocka_unit_test(a_job_with_every_field_set),
		cmocka_unit_test(the_object_of_a_full_job_to_the_byte),
		cmocka_unit_test(node_and_pinned_node_follow_priority),
		cmocka_unit_test(the_same_failures),
		cmocka_unit_test(bytes_not_utf8_go_as_base64),
		cmocka_unit_test(a_default_name_not_utf8_is_escaped),
		cmocka_unit_test(a_reason_not_utf8_is_escaped),
		cmocka_unit_test(a_fresh_job_has_no_memory_nor_cgroup),
		cmocka_unit_test(a_new_attempt_clears_the_run_s_cgroup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
