/* test-bytes.c - argv, cwd and env values that are not UTF-8 (file names are
 * bytes on Linux) reach the job exactly, over the socket and through triage. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

/* What the jobs write, each to a file of OUT ($1, $V, and "here" in their
 * working directory). */
#define BYTES_SCRIPT							\
	"printf %s \"$1\" >\"$OUT/arg\"; printf %s \"$V\" >\"$OUT/env\"; "	\
	": >here"

/* The directory whose name is the bytes 0xff 0xfe, in d's dir. */
static const char *
bytes_dir(const struct tdaemon *d)
{
	static char path[400];

	snprintf(path, sizeof path, "%s/\xff\xfe", d->dir);
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
	return path;
}

/* The bytes of file name in d's dir, removed after. */
static char *
bytes_file(const struct tdaemon *d, const char *name)
{
	char path[400], *text;

	snprintf(path, sizeof path, "%s/%s", d->dir, name);
	text = tslurp(path);
	assert_int_equal(unlink(path), 0);
	return text;
}

/* What the job wrote: its $1, its $V, and "here" in bytes_dir. */
static void
assert_job_wrote(const struct tdaemon *d, const char *arg, const char *env)
{
	char here[420], *s;

	s = bytes_file(d, "arg");
	assert_string_equal(s, arg);
	free(s);
	s = bytes_file(d, "env");
	assert_string_equal(s, env);
	free(s);
	snprintf(here, sizeof here, "%s/here", bytes_dir(d));
	assert_int_equal(unlink(here), 0);
}

/* The {"base64": ...} of the printf-formatted path. */
static json_t *
b64(const char *fmt, ...)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s;
	char raw[512], out[800], *o = out;
	size_t n, i;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	s = (const unsigned char *)raw;
	n = strlen(raw);
	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 |
		    (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
		    (i + 2 < n ? s[i + 2] : 0);

		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = '\0';
	return json_pack("{ss}", "base64", out);
}

/* v is the JSON text want, compact. */
static void
assert_json(const json_t *v, const char *want)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	assert_non_null(s);
	assert_string_equal(s, want);
	free(s);
}

/* The job's cwd is bytes_dir, in the object form. */
static void
assert_cwd(const json_t *job, const struct tdaemon *d)
{
	json_t *want = b64("%s", bytes_dir(d));

	assert_true(json_equal(json_object_get(job, "cwd"), want));
	json_decref(want);
}

/*
 * A submission with bytes in argv, env and cwd: the job runs with them,
 * the job object gives them back in the same form, and so does the store
 * after a restart; a queued job's environment comes back from it too.
 */
static void
the_job_runs_with_the_exact_bytes(void **state)
{
	struct tdaemon *d = tdaemon_start("");
	struct triage_client *c = tconnect(d);
	json_t *job;
	int64_t id, held;

	(void)state;
	id = tsubmit(c, "{s:[s,s,s,s,o],s:o,s:{s:s,s:o,s:s}}",
	    "argv", "/bin/sh", "-c", BYTES_SCRIPT, "sh", b64("\xff\xfex"),
	    "cwd", b64("%s", bytes_dir(d)),
	    "env", "OUT", d->dir, "V", b64("\xfe\xff"), "PATH", "/bin");
	job = twait(c, id);
	assert_string_equal(tstate(job), "succeeded");
	assert_job_wrote(d, "\xff\xfex", "\xfe\xff");
	assert_json(json_array_get(json_object_get(job, "argv"), 4),
	    "{\"base64\":\"//54\"}");
	json_decref(job);
	job = tget(c, id);
	assert_json(json_array_get(json_object_get(job, "argv"), 3), "\"sh\"");
	assert_cwd(job, d);
	assert_string_equal(tjstr(job, "name"), "sh");
	json_decref(job);

	/* Held across a restart: its environment is read back. */
	held = tsubmit(c, "{s:[s,s,s,s,o],s:o,s:{s:s,s:o,s:s},s:b}",
	    "argv", "/bin/sh", "-c", BYTES_SCRIPT, "sh", b64("a\xff"),
	    "cwd", b64("%s", bytes_dir(d)),
	    "env", "OUT", d->dir, "V", b64("b\xfe"), "PATH", "/bin",
	    "hold", 1);
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_restart(d);
	c = tconnect(d);
	job = tget(c, id);
	assert_int_equal(json_array_size(json_object_get(job, "argv")), 5);
	assert_json(json_array_get(json_object_get(job, "argv"), 4),
	    "{\"base64\":\"//54\"}");
	assert_cwd(job, d);
	json_decref(job);
	json_decref(tcall(c, "release", "{sI}", "id", (json_int_t)held));
	job = twait(c, held);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	assert_job_wrote(d, "a\xff", "b\xfe");
	tdaemon_end(d, c);
}

/* A command whose base name is not UTF-8 is named with \xNN; its failed
 * exec's reason, which quotes the path, too. */
static void
a_name_and_reason_not_utf8_are_escaped(void **state)
{
	struct tdaemon *d = tcli_daemon;
	struct triage_client *c = tconnect(d);
	char *out, *err;
	json_t *job;
	int64_t id;

	(void)state;
	id = tsubmit(c, "{s:[o]}", "argv", b64("/nonexistent/r\xff"));
	job = twait(c, id);
	assert_string_equal(tjstr(job, "name"), "r\\xff");
	assert_string_equal(tstate(job), "failed");
	assert_non_null(strstr(tjstr(job, "reason"), "/nonexistent/r\\xff"));
	json_decref(job);
	triage_client_free(c);
	/* A table shows that name as it is, bytes of a terminal's none. */
	assert_int_equal(cli(&out, &err, "list", "--all", NULL), 0);
	assert_non_null(strstr(out, " r\\xff\n"));
	free(out);
	free(err);
}

/* A malformed byte string is -32602 naming it; so is one whose base64
 * holds a NUL. */
static void
malformed_forms_are_refused(void **state)
{
	static const struct {
		const char *params, *field;
	} cases[] = {
		{ "{\"argv\":[\"true\",{\"base64\":\"/w=\"}]}", "argv[1]" },
		{ "{\"argv\":[\"true\",{\"base64\":\"/w==\",\"x\":1}]}",
		    "argv[1]" },
		{ "{\"argv\":[\"true\",{}]}", "argv[1]" },
		{ "{\"argv\":[\"true\",{\"base64\":7}]}", "argv[1]" },
		{ "{\"argv\":[\"true\",[\"x\"]]}", "argv[1]" },
		{ "{\"argv\":[{\"base64\":\"\"}]}", "argv[0]" },
		{ "{\"argv\":[\"true\",\"a\",{\"base64\":\"YQBi\"}]}",
		    "argv[2]" },
		{ "{\"argv\":[\"true\"],\"cwd\":{\"base64\":1}}", "cwd" },
		{ "{\"argv\":[\"true\"],\"cwd\":{\"base64\":\"eP8=\"}}", "cwd" },
		{ "{\"argv\":[\"true\"],\"cwd\":7}", "cwd" },
		{ "{\"argv\":[\"true\"],\"env\":{\"V\":{\"x\":\"/w==\"}}}",
		    "env.V" },
		{ "{\"argv\":[\"true\"],\"env\":{\"V\":{\"base64\":\"AA==\"}}}",
		    "env.V" },
		{ "{\"argv\":[\"true\"],\"env\":{\"V\":1}}", "env.V" },
	};
	struct triage_client *c = tconnect(tcli_daemon);
	struct triage_error e;
	json_t *params;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		params = json_loads(cases[i].params, JSON_ALLOW_NUL, NULL);
		assert_non_null(params);
		assert_int_equal(tcall_error(c, "submit", &e, "o", params),
		    -32602);
		if (strcmp(e.field, cases[i].field) != 0)
			fail_msg("%s: field %s, not %s", cases[i].params,
			    e.field, cases[i].field);
	}
	/* A plain string with a NUL is no JSON the daemon reads (as any
	 * \u0000 in a request): the line is refused whole. */
	params = json_loads("{\"argv\":[\"true\",\"b\\u0000c\"]}",
	    JSON_ALLOW_NUL, NULL);
	assert_int_equal(tcall_error(c, "submit", &e, "o", params), -32700);
	triage_client_free(c);
}

/*
 * triage submit sends what is not UTF-8 in the object form: the command's
 * arguments, the current directory and environment values; it leaves out
 * a variable whose name is not UTF-8, saying so; and its tables show the
 * bytes as \xNN.
 */
static void
the_cli_sends_the_exact_bytes(void **state)
{
	struct tdaemon *d = tcli_daemon;
	char *out, *err, id[32], cwd[PATH_MAX];
	json_t *job;
	int rc;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(bytes_dir(d)), 0);
	setenv("OUT", d->dir, 1);
	setenv("V", "\xfe\xff", 1);
	setenv("\xff\xfe" "FOO", "1", 1);
	rc = cli(&out, &err, "submit", "--wait", "--", "sh", "-c",
	    BYTES_SCRIPT, "sh", "\xff\xfex", NULL);
	assert_int_equal(chdir(cwd), 0);
	unsetenv("OUT");
	unsetenv("V");
	unsetenv("\xff\xfe" "FOO");
	if (rc != 0)
		fail_msg("triage submit: %d: %s", rc, err);
	assert_string_equal(err, "triage: warning: not sent: environment "
	    "variable \"\\xff\\xfeFOO\" (its name is not UTF-8)\n");
	free(err);
	snprintf(id, sizeof id, "%.*s", (int)strcspn(out, "\n"), out);
	free(out);
	assert_job_wrote(d, "\xff\xfex", "\xfe\xff");

	/* --json gives the wire form; the human views escape. */
	job = tcli_status(d, id);
	assert_json(json_array_get(json_object_get(job, "argv"), 4),
	    "{\"base64\":\"//54\"}");
	assert_cwd(job, d);
	json_decref(job);
	assert_int_equal(cli(&out, &err, "status", id, NULL), 0);
	assert_non_null(strstr(out, "$'\\xff\\xfex'"));
	assert_non_null(strstr(out, "/\\xff\\xfe\n"));
	assert_null(strchr(out, '\xff'));
	free(out);
	free(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_job_runs_with_the_exact_bytes),
		cmocka_unit_test(a_name_and_reason_not_utf8_are_escaped),
		cmocka_unit_test(malformed_forms_are_refused),
		cmocka_unit_test(the_cli_sends_the_exact_bytes),
	};

	return cmocka_run_group_tests(tests, tcli_setup,
	    tdaemon_group_teardown);
}
