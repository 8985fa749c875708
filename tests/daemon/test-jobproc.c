/* test-jobproc.c - the job process of protocol v1.1 through a real triaged:
 * nice and io_class, merge_output, output_keep = tail, output's offsets. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"
#include "tsupport-proc.h"

/* Small, so that a job passes it at once; tail keeps the last ones. */
#define MAX_OUTPUT 1000
/* What the worker reads from a pipe at once: a tail capture file never
 * grows past 2 * MAX_OUTPUT and one such read. */
#define WORKER_READ 65536
/* How often a test's loop looks again at what it waits for. */
#define POLL_MS 10

static struct tdaemon *d;

/* high and normal keep the head of a stream, low its tail; a budget of
 * 4GiB whatever the machine, which huge's jobs would pass by default; a
 * GPU resource of three units and a counted one. */
static int
setup(void **state)
{
	*state = d = tdaemon_start("slots = 2\nkill_grace = 1s\n"
	    "max_output = 1000\nmemory = 4GiB\ndefault_priority = normal\n"
	    "[priority.high]\nrank = 0\n"
	    "[priority.normal]\nrank = 10\nnice = 5\n"
	    "[priority.low]\nrank = 20\nnice = 19\nio_class = idle\n"
	    "max_running = 1\noutput_keep = tail\nmemory = 256MiB\n"
	    "[priority.huge]\nrank = 30\nmemory = 8GiB\n"
	    "[resource.gpu]\nunits = 0,1,2\nshare = 2\n"
	    "env = CUDA_VISIBLE_DEVICES\n"
	    "[resource.licence]\ncount = 5\n");
	return 0;
}

/* A page of output (a new reference); offset may be negative. */
static json_t *
page_at(struct triage_client *c, int64_t id, const char *stream,
    json_int_t offset)
{
	return tcall(c, "output", "{sI ss sI si}", "id", (json_int_t)id,
	    "stream", stream, "offset", offset, "limit", 1 << 20);
}

static bool
jbool(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* Waits for each of the n jobs to end, which must succeed. */
static void
wait_succeeded(struct triage_client *c, const int64_t *ids, size_t n)
{
	json_t *job;
	size_t i;

	for (i = 0; i < n; i++) {
		job = twait(c, ids[i]);
		assert_string_equal(tstate(job), "succeeded");
		json_decref(job);
	}
}

/* Submits sh -c script (with more params from a json_pack format of an
 * object, "{}" for none) and waits for it to end; returns its id. */
static int64_t
run_sh(struct triage_client *c, const char *script, const char *fmt, ...)
{
	json_t *params;
	json_error_t err;
	va_list ap;
	int64_t id;

	va_start(ap, fmt);
	params = json_vpack_ex(&err, 0, fmt, ap);
	va_end(ap);
	if (params == NULL)
		fail_msg("json_pack: %s", err.text);
	json_object_set_new(params, "argv", json_pack("[sss]", "sh", "-c",
	    script));
	id = tsubmit(c, "O", params);
	json_decref(params);
	wait_succeeded(c, &id, 1);
	return id;
}

/* The whole of a short stream of a job that has ended, in buf. */
static void
stream_of(struct triage_client *c, int64_t id, const char *stream, char *buf,
    size_t size)
{
	json_t *page = page_at(c, id, stream, 0);

	assert_true(jbool(page, "eof"));
	snprintf(buf, size, "%s", tjstr(page, "data"));
	json_decref(page);
}

/* The job's stream as seq 1 n prints it. */
static char *
seq_text(long from, long to, size_t *len)
{
	size_t size = (size_t)(to - from + 1) * 12 + 1, n = 0;
	char *s = malloc(size);
	long i;

	assert_non_null(s);
	for (i = from; i <= to; i++)
		n += (size_t)snprintf(s + n, size - n, "%ld\n", i);
	*len = n;
	return s;
}

static const char *
out_path(int64_t id, const char *stream)
{
	static char path[600];

	snprintf(path, sizeof path, "%s/output/%lld.%s", d->state,
	    (long long)id, stream);
	return path;
}

static off_t
file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* d stopped and started again on its state: a new connection to it. */
static struct triage_client *
restarted(struct triage_client *c)
{
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	return tconnect(d);
}

/* method with the params of the JSON text bad, and key set to value
 * (stolen), is -32602 naming field, its message saying message. */
static void
assert_refused(struct triage_client *c, const char *method, const char *bad,
    const char *key, json_t *value, const char *field, const char *message)
{
	struct triage_error e;
	json_t *params = json_loads(bad, 0, NULL);

	assert_non_null(params);
	json_object_set_new(params, key, value);
	assert_int_equal(tcall_error(c, method, &e, "O", params), -32602);
	assert_string_equal(e.field, field);
	if (strstr(e.message, message) == NULL)
		fail_msg("%s %s: \"%s\" does not say \"%s\"", method, bad,
		    e.message, message);
	json_decref(params);
}

/* submit's nice and merge_output: their defaults, what the job object
 * says, what survives a restart, and each bad value. */
static void
test_submit_params(void **state)
{
	static const struct {
		const char *params, *field, *message;
	} bad[] = {
		{ "{\"nice\": 20}", "nice", "\"nice\" must be from 0 to 19" },
		{ "{\"nice\": -1}", "nice", "\"nice\" must be from 0 to 19" },
		{ "{\"nice\": \"19\"}", "nice", "nice" },
		{ "{\"nice\": 1.5}", "nice", "nice" },
		{ "{\"merge_output\": 1}", "merge_output", "merge_output" },
	};
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t id, id2;
	size_t i;

	(void)state;
	id = run_sh(c, "true", "{ss}", "priority", "normal");
	job = tget(c, id);
	assert_int_equal(tjint(job, "nice"), 5);
	assert_false(jbool(job, "merge_output"));
	json_decref(job);
	id2 = run_sh(c, "true", "{ss si sb}", "priority", "normal", "nice", 12,
	    "merge_output", 1);
	/* root is an admin: below the priority's nice is its to ask */
	id = run_sh(c, "true", "{ss si}", "priority", "normal", "nice", 0);
	assert_int_equal(tjint(job = tget(c, id), "nice"), 0);
	json_decref(job);

	c = restarted(c);
	job = tget(c, id2);
	assert_int_equal(tjint(job, "nice"), 12);
	assert_true(jbool(job, "merge_output"));
	json_decref(job);

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_refused(c, "submit", bad[i].params, "argv",
		    json_pack("[s]", "true"), bad[i].field, bad[i].message);
	triage_client_free(c);
}

/* submit's and update's memory (protocol v1.2): the priority's by default,
 * none without; what the job object says, what survives a restart, and each
 * bad value, named. */
static void
test_memory_param(void **state)
{
	static const struct {
		const char *params, *message;
	} bad[] = {
		{ "{\"memory\": 1048575}", "\"memory\" must be bytes, at least "
		  "1048576 (1MiB), not 1048575" },
		{ "{\"memory\": 0}", "at least 1048576 (1MiB), not 0" },
		{ "{\"memory\": -1}", "at least 1048576 (1MiB), not -1" },
		{ "{\"memory\": \"1GiB\"}", "\"memory\" must be an integer "
		  "(bytes)" },
		{ "{\"memory\": 1.5e9}", "\"memory\" must be an integer" },
		{ "{\"memory\": null}", "\"memory\" must be an integer" },
	};
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t none, dflt, own, held;
	size_t i;

	(void)state;
	none = run_sh(c, "true", "{ss}", "priority", "high");
	job = tget(c, none);
	assert_true(json_is_null(json_object_get(job, "memory")));
	json_decref(job);
	dflt = run_sh(c, "true", "{ss}", "priority", "low");
	job = tget(c, dflt);
	assert_int_equal(tjint(job, "memory"), 256 << 20);
	json_decref(job);
	own = run_sh(c, "true", "{ss sI}", "priority", "low", "memory",
	    (json_int_t)1048576);
	held = tsubmit(c, "{s[s] sb sI}", "argv", "true", "hold", 1, "memory",
	    (json_int_t)(128 << 20));
	job = tcall(c, "update", "{sI sI}", "id", held, "memory",
	    (json_int_t)3 << 30);
	assert_int_equal(tjint(job, "memory"), (json_int_t)3 << 30);
	json_decref(job);
	/* A move keeps it: it is a limit the job was given. */
	job = tcall(c, "update", "{sI ss}", "id", held, "priority", "low");
	assert_int_equal(tjint(job, "memory"), (json_int_t)3 << 30);
	json_decref(job);

	c = restarted(c);
	job = tget(c, own);
	assert_int_equal(tjint(job, "memory"), 1048576);
	json_decref(job);
	job = tget(c, held);
	assert_int_equal(tjint(job, "memory"), (json_int_t)3 << 30);
	json_decref(job);

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_refused(c, "submit", bad[i].params, "argv",
		    json_pack("[s]", "true"), "memory", bad[i].message);
		assert_refused(c, "update", bad[i].params, "id",
		    json_integer(held), "memory", bad[i].message);
	}
	json_decref(tcall(c, "cancel", "{sI}", "id", held));
	triage_client_free(c);
}

/* The memory budget (protocol v1.2): what the log says at start, and a
 * job that could never fit it refused at submit and at update, its own
 * memory or its priority's. */
static void
test_memory_budget(void **state)
{
	struct triage_client *c = tconnect(d);
	char *log = tslurp(d->log);
	int64_t held;
	json_t *job;

	(void)state;
	if (strstr(log, "memory budget 4 GiB, state in ") == NULL)
		fail_msg("the ready line does not say the budget:\n%s", log);
	free(log);
	held = tsubmit(c, "{s[s] sb sI}", "argv", "true", "hold", 1, "memory",
	    (json_int_t)4 << 30);
	assert_refused(c, "submit", "{\"memory\": 5368709120}", "argv",
	    json_pack("[s]", "true"), "memory", "memory 5 GiB is more than the memory budget, 4 GiB: it "
	    "could never start");
	assert_refused(c, "submit", "{\"memory\": 4294967297}", "argv",
	    json_pack("[s]", "true"), "memory", "memory 4.1 GiB is more than "
	    "the memory budget, 4 GiB");
	assert_refused(c, "update", "{\"memory\": 5368709120}", "id",
	    json_integer(held), "memory", "memory 5 GiB is more than the "
	    "memory budget, 4 GiB: it could never start");
	assert_refused(c, "submit", "{\"priority\": \"huge\"}", "argv",
	    json_pack("[s]", "true"), "memory", "the memory of priority huge, "
	    "8 GiB, is more than the memory budget, 4 GiB: its jobs could "
	    "never start unless they give a smaller \"memory\"");
	/* With a memory of its own that fits, huge takes it. */
	job = tget(c, tsubmit(c, "{s[s] sb ss sI}", "argv", "true", "hold", 1,
	    "priority", "huge", "memory", (json_int_t)1 << 30));
	assert_int_equal(tjint(job, "memory"), (json_int_t)1 << 30);
	json_decref(tcall(c, "cancel", "{sI}", "id", tjint(job, "id")));
	json_decref(job);
	/* Nothing changed by the refused update. */
	job = tget(c, held);
	assert_int_equal(tjint(job, "memory"), (json_int_t)4 << 30);
	json_decref(job);
	json_decref(tcall(c, "cancel", "{sI}", "id", held));
	triage_client_free(c);
}

/* The job of id's resources and devices, as get and list say them. */
static void
assert_resources(struct triage_client *c, int64_t id, const char *want)
{
	json_t *job = tget(c, id), *list, *w = json_loads(want, 0, NULL);
	size_t i, found = 0;

	assert_non_null(w);
	if (!json_equal(json_object_get(job, "resources"), w))
		fail_msg("job %lld: resources %s, not %s", (long long)id,
		    json_dumps(json_object_get(job, "resources"), 0), want);
	/* Never started: no units given. */
	assert_true(json_is_object(json_object_get(job, "devices")));
	assert_int_equal(json_object_size(json_object_get(job, "devices")),
	    0);
	json_decref(job);
	list = tcall(c, "list", "{}");
	json_array_foreach(json_object_get(list, "jobs"), i, job) {
		if (tjint(job, "id") != id)
			continue;
		assert_true(json_equal(json_object_get(job, "resources"), w));
		found++;
	}
	assert_int_equal(found, 1);
	json_decref(list);
	json_decref(w);
}

/* submit's and update's resources (protocol v1.2): {} by default, what
 * the job object and list say, an update replacing them whole, what
 * survives a restart, and each bad one named by its field. */
static void
test_resources_param(void **state)
{
	static const struct {
		const char *params, *field, *message;
	} bad[] = {
		{ "{\"resources\": [\"gpu\"]}", "resources", "\"resources\" "
		  "must be an object of resource names to counts" },
		{ "{\"resources\": 2}", "resources", "an object" },
		{ "{\"resources\": {\"fpga\": 1}}", "resources.fpga",
		  "unknown resource \"fpga\" in \"resources\" (configured: "
		  "gpu, licence)" },
		{ "{\"resources\": {\"GPU\": 1}}", "resources.GPU",
		  "unknown resource \"GPU\"" },
		{ "{\"resources\": {\"gpu\": 1, \"normal\": 1}}",
		  "resources.normal", "unknown resource \"normal\"" },
		{ "{\"resources\": {\"abcdefghijabcdefghijabcdefghijabcdefghij\": "
		  "1}}", "resources.abcdefghijabcdefghijabcdefghijabcdefghij",
		  "\"resources\" names a resource of 40 bytes, longer than any "
		  "resource's name (configured: gpu, licence)" },
		{ "{\"resources\": {\"gpu\": 0}}", "resources.gpu",
		  "\"resources.gpu\" must be a positive integer, how many of "
		  "its units the job needs" },
		{ "{\"resources\": {\"gpu\": -1}}", "resources.gpu",
		  "must be a positive integer" },
		{ "{\"resources\": {\"gpu\": \"1\"}}", "resources.gpu",
		  "must be a positive integer" },
		{ "{\"resources\": {\"gpu\": 1.0}}", "resources.gpu",
		  "must be a positive integer" },
		{ "{\"resources\": {\"licence\": null}}", "resources.licence",
		  "must be a positive integer" },
		{ "{\"resources\": {\"licence\": true}}",
		  "resources.licence", "must be a positive integer" },
		{ "{\"resources\": {\"gpu\": 4}}", "resources.gpu",
		  "\"resources.gpu\" asks for 4 units, and gpu has 3: the job "
		  "could never start" },
		{ "{\"resources\": {\"licence\": 6}}", "resources.licence",
		  "asks for 6 units, and licence has 5" },
	};
	char name[120], params[200];
	struct triage_client *c = tconnect(d);
	int64_t none, both, counted;
	size_t i;

	(void)state;
	none = tsubmit(c, "{s[s] sb}", "argv", "true", "hold", 1);
	assert_resources(c, none, "{}");
	both = tsubmit(c, "{s[s] sb s{si si}}", "argv", "true", "hold", 1,
	    "resources", "gpu", 3, "licence", 5);
	assert_resources(c, both, "{\"gpu\": 3, \"licence\": 5}");
	counted = tsubmit(c, "{s[s] sb s{si}}", "argv", "true", "hold", 1,
	    "resources", "licence", 1);
	/* {} is none, as at submit. */
	assert_resources(c, tsubmit(c, "{s[s] sb s{}}", "argv", "true",
	    "hold", 1, "resources"), "{}");

	/* update replaces them whole, or leaves them be. */
	json_decref(tcall(c, "update", "{sI s{si}}", "id", both, "resources",
	    "gpu", 1));
	assert_resources(c, both, "{\"gpu\": 1}");
	json_decref(tcall(c, "update", "{sI ss}", "id", both, "name", "b"));
	assert_resources(c, both, "{\"gpu\": 1}");
	json_decref(tcall(c, "update", "{sI s{}}", "id", counted,
	    "resources"));
	assert_resources(c, counted, "{}");
	json_decref(tcall(c, "update", "{sI s{si}}", "id", none, "resources",
	    "licence", 2));

	c = restarted(c);
	assert_resources(c, both, "{\"gpu\": 1}");
	assert_resources(c, counted, "{}");
	assert_resources(c, none, "{\"licence\": 2}");

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_refused(c, "submit", bad[i].params, "argv",
		    json_pack("[s]", "true"), bad[i].field, bad[i].message);
		assert_refused(c, "update", bad[i].params, "id",
		    json_integer(both), bad[i].field, bad[i].message);
	}
	/* A name too long for the field: the field is the object. */
	memset(name, 'x', 100);
	name[100] = '\0';
	snprintf(params, sizeof params, "{\"resources\": {\"%s\": 1}}",
	    name);
	assert_refused(c, "submit", params, "argv", json_pack("[s]", "true"),
	    "resources", "names a resource of 100 bytes");
	/* Refused updates changed nothing. */
	assert_resources(c, both, "{\"gpu\": 1}");
	json_decref(tcall(c, "cancel", "{s{s[s]}}", "filter", "state",
	    "queued"));
	triage_client_free(c);
}

/* The process runs with its nice (the priority's, or its own) and its
 * priority's io_class; where the kernel groups a session's tasks, its
 * group has that nice too. */
static void
test_nice_and_io_class_reach_the_process(void **state)
{
	static const char script[] = "nice; ionice -p $$; "
	    "if [ -e /proc/self/autogroup ]; then "
	    "sed 's/.* nice /autogroup /' /proc/self/autogroup; "
	    "else echo autogroup none; fi";
	struct triage_client *c = tconnect(d);
	bool autogroup = access("/proc/self/autogroup", F_OK) == 0;
	char out[256], want[256];
	int64_t id;

	(void)state;
	id = run_sh(c, script, "{ss}", "priority", "low");
	stream_of(c, id, "stdout", out, sizeof out);
	snprintf(want, sizeof want, "19\nidle\nautogroup %s\n",
	    autogroup ? "19" : "none");
	assert_string_equal(out, want);

	id = run_sh(c, script, "{ss si}", "priority", "high", "nice", 3);
	stream_of(c, id, "stdout", out, sizeof out);
	assert_true(strncmp(out, "3\n", 2) == 0);
	assert_null(strstr(out, "idle"));
	snprintf(want, sizeof want, "autogroup %s\n", autogroup ? "3" : "none");
	assert_non_null(strstr(out, want));

	/* nice 0 leaves a new session's group as it is: at 0 */
	id = run_sh(c, script, "{ss}", "priority", "high");
	stream_of(c, id, "stdout", out, sizeof out);
	assert_true(strncmp(out, "0\n", 2) == 0);
	assert_null(strstr(out, "idle"));
	triage_client_free(c);
}

/* merge_output is 2>&1: both in stdout's capture, in the order written,
 * and stderr's stays empty. */
static void
test_merge_output(void **state)
{
	static const char script[] = "echo out1; echo err >&2; echo out2";
	struct triage_client *c = tconnect(d);
	char out[256];
	int64_t id;
	json_t *page;

	(void)state;
	id = run_sh(c, script, "{sb}", "merge_output", 1);
	stream_of(c, id, "stdout", out, sizeof out);
	assert_string_equal(out, "out1\nerr\nout2\n");
	page = page_at(c, id, "stderr", 0);
	assert_string_equal(tjstr(page, "data"), "");
	assert_true(jbool(page, "eof"));
	assert_false(jbool(page, "truncated"));
	json_decref(page);

	id = run_sh(c, script, "{sb}", "merge_output", 0);
	stream_of(c, id, "stdout", out, sizeof out);
	assert_string_equal(out, "out1\nout2\n");
	stream_of(c, id, "stderr", out, sizeof out);
	assert_string_equal(out, "err\n");
	triage_client_free(c);
}

/* Waits until the running job's stored stream and what it dropped add up
 * to total bytes, and its file is what the page says: the worker may
 * compact it right after the write that completed it. Returns that page. */
static json_t *
page_when_all_read(struct triage_client *c, int64_t id, size_t total)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *page;

	for (;;) {
		page = page_at(c, id, "stdout", 0);
		if ((size_t)(tjint(page, "dropped") +
		    tjint(page, "next_offset")) == total &&
		    file_size(out_path(id, "stdout")) ==
		    (off_t)tjint(page, "next_offset"))
			return page;
		json_decref(page);
		tcheck_deadline(deadline, "job %lld's %zu bytes", (long long)id,
		    total);
		poll(NULL, 0, POLL_MS);
	}
}

/*
 * output_keep = tail: a job writing thousands of times max_output keeps
 * its last max_output bytes, its file never much larger, while it runs
 * and once it has ended, with dropped exact; negative offsets count from
 * the end of what is kept.
 */
static void
test_tail_keeps_the_last_bytes(void **state)
{
	enum { FIRST = 400000, ALL = 500000 };
	struct triage_client *c = tconnect(d);
	size_t len1, len, n;
	char script[1200], *text;
	json_int_t dropped;
	json_t *page;
	int64_t id;

	(void)state;
	text = seq_text(1, ALL, &len);
	len1 = strlen(text) - strlen(strstr(text, "\n400001\n") + 1);
	snprintf(script, sizeof script, "seq 1 %d; %s; seq %d %d", FIRST,
	    tgate_sh(d, "tail-gate"), FIRST + 1, ALL);
	id = tsubmit(c, "{s[sss] ss}", "argv", "sh", "-c", script,
	    "priority", "low");
	trunning_pid(c, id);

	/* While it waits at the gate, the first part read. */
	page = page_when_all_read(c, id, len1);
	dropped = tjint(page, "dropped");
	n = (size_t)tjint(page, "next_offset");
	assert_true(dropped > 0);
	assert_true(n <= 2 * MAX_OUTPUT + WORKER_READ);
	assert_true(file_size(out_path(id, "stdout")) == (off_t)n);
	assert_true(jbool(page, "truncated"));
	assert_false(jbool(page, "eof"));
	assert_int_equal(tjint(page, "attempt"), 1);
	assert_memory_equal(tjstr(page, "data"), text + dropped, n);
	json_decref(page);
	page = page_at(c, id, "stdout", -10);
	assert_int_equal(tjint(page, "offset"), (json_int_t)n - 10);
	assert_memory_equal(tjstr(page, "data"), text + len1 - 10, 10);
	json_decref(page);

	topen_gate(d, "tail-gate");
	wait_succeeded(c, &id, 1);
	page = page_at(c, id, "stdout", 0);
	assert_int_equal(tjint(page, "dropped"), (json_int_t)len - MAX_OUTPUT);
	assert_int_equal(tjint(page, "next_offset"), MAX_OUTPUT);
	assert_memory_equal(tjstr(page, "data"), text + len - MAX_OUTPUT,
	    MAX_OUTPUT);
	assert_true(jbool(page, "truncated"));
	assert_true(jbool(page, "eof"));
	json_decref(page);
	assert_int_equal(file_size(out_path(id, "stdout")), MAX_OUTPUT);
	assert_int_equal(access(out_path(id, "stdout.tmp"), F_OK), -1);

	page = page_at(c, id, "stdout", -100);
	assert_int_equal(tjint(page, "offset"), MAX_OUTPUT - 100);
	assert_int_equal(tjint(page, "next_offset"), MAX_OUTPUT);
	assert_string_equal(tjstr(page, "data"), text + len - 100);
	assert_true(jbool(page, "eof"));
	json_decref(page);
	page = page_at(c, id, "stdout", -5000);
	assert_int_equal(tjint(page, "offset"), 0);
	assert_int_equal(tjint(page, "next_offset"), MAX_OUTPUT);
	json_decref(page);

	/* what stayed under max_output drops nothing */
	page = page_at(c, id, "stderr", 0);
	assert_int_equal(tjint(page, "dropped"), 0);
	assert_false(jbool(page, "truncated"));
	json_decref(page);
	free(text);
	triage_client_free(c);
}

/* Under head, negative offsets count back from the end too, and nothing
 * is dropped before offset 0; a job that wrote nothing, or never ran,
 * reads from 0. */
static void
test_negative_offsets_under_head(void **state)
{
	struct triage_client *c = tconnect(d);
	size_t len;
	char *text = seq_text(1, 1000, &len);
	json_t *page;
	int64_t id;

	(void)state;
	id = run_sh(c, "seq 1 1000", "{}");
	page = page_at(c, id, "stdout", -100);
	assert_int_equal(tjint(page, "offset"), MAX_OUTPUT - 100);
	assert_memory_equal(tjstr(page, "data"), text + MAX_OUTPUT - 100, 100);
	assert_int_equal(tjint(page, "dropped"), 0);
	assert_true(jbool(page, "truncated"));
	assert_true(jbool(page, "eof"));
	json_decref(page);
	page = page_at(c, id, "stdout", INT64_MIN);
	assert_int_equal(tjint(page, "offset"), 0);
	json_decref(page);
	page = page_at(c, id, "stderr", -1);
	assert_int_equal(tjint(page, "offset"), 0);
	assert_string_equal(tjstr(page, "data"), "");
	assert_true(jbool(page, "eof"));
	json_decref(page);

	json_decref(tcall(c, "pause", "{ss}", "priority", "normal"));
	id = tsubmit(c, "{s[s] ss}", "argv", "true", "priority", "normal");
	page = page_at(c, id, "stdout", -7);
	assert_int_equal(tjint(page, "offset"), 0);
	assert_int_equal(tjint(page, "next_offset"), 0);
	assert_int_equal(tjint(page, "dropped"), 0);
	assert_int_equal(tjint(page, "attempt"), 1);
	json_decref(page);
	json_decref(tcall(c, "cancel", "{sI}", "id", (json_int_t)id));
	json_decref(tcall(c, "resume", "{ss}", "priority", "normal"));
	free(text);
	triage_client_free(c);
}

/* What a client following a stream has seen of an attempt. */
struct follow {
	json_int_t attempt;
	json_int_t offset;
	json_int_t dropped;
	char text[256];
};

/* One step of following: the next page; when its attempt is not the one
 * followed, the follower starts again at 0, as protocol.md says. */
static void
follow_step(struct triage_client *c, int64_t id, struct follow *f)
{
	json_t *page = page_at(c, id, "stdout", f->offset);

	if (tjint(page, "attempt") != f->attempt) {
		f->attempt = tjint(page, "attempt");
		f->offset = 0;
		f->text[0] = '\0';
		json_decref(page);
		page = page_at(c, id, "stdout", 0);
	}
	f->dropped = tjint(page, "dropped");
	f->offset = tjint(page, "next_offset");
	if (f->dropped == 0)
		strncat(f->text, tjstr(page, "data"),
		    sizeof f->text - strlen(f->text) - 1);
	json_decref(page);
}

/* Follows until the attempt followed has printed want. */
static void
follow_until(struct triage_client *c, int64_t id, struct follow *f,
    json_int_t attempt, const char *want)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);

	for (;;) {
		follow_step(c, id, f);
		if (f->attempt == attempt && strcmp(f->text, want) == 0)
			return;
		tcheck_deadline(deadline, "attempt %lld to print \"%s\"",
		    (long long)attempt, want);
		poll(NULL, 0, POLL_MS);
	}
}

/* Waits until the running job's stored stdout ends with text; returns
 * that last page. */
static json_t *
page_when_it_ends_with(struct triage_client *c, int64_t id, const char *text)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *page;

	for (;;) {
		page = page_at(c, id, "stdout", -(json_int_t)strlen(text));
		if (strcmp(tjstr(page, "data"), text) == 0)
			return page;
		json_decref(page);
		tcheck_deadline(deadline, "job %lld to print \"%s\"",
		    (long long)id, text);
		poll(NULL, 0, POLL_MS);
	}
}

/*
 * A new attempt starts its streams afresh, with nothing dropped: a
 * client following the output sees attempt change and starts again at 0,
 * where the new attempt's shorter output is.
 */
static void
test_following_output_across_a_retry(void **state)
{
	struct triage_client *c = tconnect(d);
	struct follow f = { 0, 0, 0, "" };
	char script[1500];
	json_t *job, *page;
	int64_t id;

	(void)state;
	snprintf(script, sizeof script, "if [ $TRIAGE_ATTEMPT = 1 ]; then "
	    "seq 1 2000; echo first-attempt; fi; "
	    "echo \"a$TRIAGE_ATTEMPT\"; %s; exit 1",
	    tgate_sh(d, "retry-gate.$TRIAGE_ATTEMPT"));
	id = tsubmit(c, "{s[sss] ss si}", "argv", "sh", "-c", script,
	    "priority", "low", "retries", 1);
	/* attempt 1 printed far more than it keeps: followed from its end */
	page = page_when_it_ends_with(c, id, "first-attempt\na1\n");
	assert_int_equal(tjint(page, "attempt"), 1);
	assert_true(tjint(page, "dropped") > 0);
	f.attempt = 1;
	f.offset = tjint(page, "next_offset");
	json_decref(page);

	topen_gate(d, "retry-gate.1");
	follow_until(c, id, &f, 2, "a2\n");
	assert_int_equal(f.dropped, 0);
	topen_gate(d, "retry-gate.2");
	job = twait(c, id);
	assert_string_equal(tstate(job), "failed");
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	follow_step(c, id, &f);
	assert_int_equal(f.attempt, 2);
	assert_string_equal(f.text, "a2\n");
	triage_client_free(c);
}

/* The CPU time (utime + stime, in clock ticks) and the nice value of a
 * process, from /proc/pid/stat. */
static void
proc_cpu(pid_t pid, long long *ticks, int *nice)
{
	struct tsupport_proc_stat st;

	assert_int_equal(tsupport_proc_stat(pid, &st), 0);
	*ticks = (long long)(st.utime + st.stime);
	*nice = st.nice;
}

/*
 * The scenario: a max_running-capped low priority at nice 19 and
 * io_class idle beside a busy high priority. Both jobs spin on CPU 0 alone
 * (taskset), so that they compete for it whatever the machine's other
 * load; over the window in which the high job takes a second of CPU, the
 * low one must take at most a fifth of that (nice 19 against 0 is a
 * weight of 15 against 1024: about 1/68).
 */
static void
test_low_priority_yields_the_cpu(void **state)
{
	enum { WINDOW_TICKS = 100 };
	struct triage_client *c = tconnect(d);
	long long hi0, lo0, hi, lo;
	int hi_nice, lo_nice;
	char script[800];
	int64_t ids[2], deadline;	/* low, high */
	pid_t pid_lo, pid_hi;

	(void)state;
	snprintf(script, sizeof script, "while [ ! -e %s/cpu-gate ]; do :; "
	    "done", d->dir);
	ids[0] = tsubmit(c, "{s[ssssss] ss}", "argv", "taskset", "-c", "0",
	    "sh", "-c", script, "priority", "low");
	ids[1] = tsubmit(c, "{s[ssssss] ss}", "argv", "taskset", "-c", "0",
	    "sh", "-c", script, "priority", "high");
	pid_lo = trunning_pid(c, ids[0]);
	pid_hi = trunning_pid(c, ids[1]);

	proc_cpu(pid_hi, &hi0, &hi_nice);
	proc_cpu(pid_lo, &lo0, &lo_nice);
	assert_int_equal(hi_nice, 0);
	assert_int_equal(lo_nice, 19);
	deadline = tdeadline(HARNESS_TIMEOUT_MS * 2);
	do {
		tcheck_deadline(deadline, "the high job to use %d ticks of "
		    "CPU", WINDOW_TICKS);
		poll(NULL, 0, POLL_MS * 5);
		proc_cpu(pid_hi, &hi, &hi_nice);
	} while (hi - hi0 < WINDOW_TICKS);
	proc_cpu(pid_lo, &lo, &lo_nice);
	print_message("cpu: high job %lld ticks, low job %lld ticks over the "
	    "same window\n", hi - hi0, lo - lo0);
	assert_true(hi - hi0 >= 5 * (lo - lo0));

	topen_gate(d, "cpu-gate");
	wait_succeeded(c, ids, 2);
	triage_client_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit_params),
		cmocka_unit_test(test_memory_param),
		cmocka_unit_test(test_memory_budget),
		cmocka_unit_test(test_resources_param),
		cmocka_unit_test(test_nice_and_io_class_reach_the_process),
		cmocka_unit_test(test_merge_output),
		cmocka_unit_test(test_tail_keeps_the_last_bytes),
		cmocka_unit_test(test_negative_offsets_under_head),
		cmocka_unit_test(test_following_output_across_a_retry),
		cmocka_unit_test(test_low_priority_yields_the_cpu),
	};

	return cmocka_run_group_tests_name("jobproc", tests, setup,
	    tdaemon_group_teardown);
}
