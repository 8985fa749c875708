/* test-jsonw.c - jsonw_*: the text written by hand is what jansson's compact
 * dump gives for the same value, escapes, reals and refusals included. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytestr.h"
#include "jsonw.h"

/* jansson's text for value (stolen), NUL-terminated, allocated. */
static char *
dumped(json_t *value)
{
	char *s;

	assert_non_null(value);
	s = json_dumps(value, JSONW_DUMP_FLAGS);
	assert_non_null(s);
	json_decref(value);
	return s;
}

/* w's text so far, NUL-terminated, allocated. */
static char *
written(const struct jsonw *w)
{
	const char *text;
	size_t len;
	char *s;

	text = jsonw_text(w, &len);
	assert_non_null(text);
	s = strndup(text, len);
	assert_non_null(s);
	return s;
}

/* w holds what jansson dumps value (stolen) to; w is emptied for the
 * next. */
static void
assert_written(struct jsonw *w, json_t *value)
{
	char *want = dumped(value), *got = written(w);

	assert_string_equal(got, want);
	free(got);
	free(want);
	jsonw_reset(w);
}

static void
assert_string_written(const char *in)
{
	struct jsonw w = { 0 };

	jsonw_string(&w, in);
	assert_written(&w, json_string(in));
	jsonw_free(&w);
}

static void
strings_escape_as_jansson_does(void **state)
{
	char controls[32];
	int i;

	(void)state;
	assert_string_written("");
	assert_string_written("true");
	assert_string_written("/usr/bin/env \"quoted\" back\\slash");
	assert_string_written("tab\there\nnewline\rcr\bbs\fff");
	assert_string_written("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f");
	for (i = 1; i < 32; i++)
		controls[i - 1] = (char)i;
	controls[31] = '\0';
	assert_string_written(controls);
}

static void
strings_not_utf8_fail(void **state)
{
	static const char *const bad[] = {
		"\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", "\xff", "ok\x80",
	};
	struct jsonw w = { 0 };
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		/* jansson refuses them too. */
		assert_null(json_string(bad[i]));
		jsonw_reset(&w);
		jsonw_string(&w, bad[i]);
		assert_null(jsonw_text(&w, &len));
	}
	jsonw_reset(&w);
	jsonw_string(&w, NULL);
	assert_null(jsonw_text(&w, &len));
	jsonw_free(&w);
}

static void
reals_print_as_jansson_prints_them(void **state)
{
	static const double reals[] = {
		0, 0.05, 1, 1.5, 3600, 86400.25, 1e-7, 123456789012345678.0,
		1e300, 2.5e-300, 0.1 + 0.2, 1.0 / 3, 42.001, -0.0, -3, 60,
		999999999999999.0, 1e15, 1e16, -123456789012345.0,
	};
	struct jsonw w = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof reals / sizeof reals[0]; i++) {
		jsonw_real(&w, reals[i]);
		assert_written(&w, json_real(reals[i]));
	}
	jsonw_real(&w, NAN);
	assert_true(w.failed);
	jsonw_free(&w);
}

static void
integers_print_as_jansson_prints_them(void **state)
{
	static const int64_t ints[] = {
		0, 1, -1, 9, 10, 4294967295, -4294967296, INT64_MAX,
		INT64_MIN,
	};
	struct jsonw w = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		jsonw_int(&w, ints[i]);
		assert_written(&w, json_integer((json_int_t)ints[i]));
	}
	jsonw_free(&w);
}

static void
objects_and_arrays_as_jansson_dumps_them(void **state)
{
	static const uint64_t ids[] = { 1, 42, INT64_MAX };
	char sh[] = "sh", c[] = "-c", cmd[] = "echo \"hi\"";
	char *const argv[] = { sh, c, cmd, NULL };
	struct jsonw w = { 0 };
	json_t *labels = json_pack("{ss ss}", "team", "a\"b", "k", "v");
	json_t *o;
	char *want, *got;

	(void)state;
	assert_non_null(labels);
	jsonw_open(&w);
	jsonw_key(&w, "i");
	jsonw_int(&w, -7);
	jsonw_key(&w, "argv");
	bytestr_write_strv(&w, argv);
	jsonw_key(&w, "none");
	bytestr_write_strv(&w, NULL);
	jsonw_key(&w, "ids");
	jsonw_ids(&w, ids, 3);
	jsonw_key(&w, "no_ids");
	jsonw_ids(&w, NULL, 0);
	jsonw_key(&w, "t");
	jsonw_bool(&w, true);
	jsonw_key(&w, "f");
	jsonw_bool(&w, false);
	jsonw_key(&w, "n");
	jsonw_null(&w);
	jsonw_key(&w, "labels");
	jsonw_json(&w, labels);
	jsonw_close(&w);
	got = written(&w);

	o = json_pack("{si s[sss] s[] s[III] s[] sb sb sn sO}", "i", -7,
	    "argv", "sh", "-c", "echo \"hi\"", "none", "ids", (json_int_t)1,
	    (json_int_t)42, (json_int_t)INT64_MAX, "no_ids", "t", 1, "f", 0,
	    "n", "labels", labels);
	want = dumped(o);
	assert_string_equal(got, want);
	free(got);
	free(want);
	json_decref(labels);
	jsonw_free(&w);
}

static void
a_large_text_grows_the_buffer(void **state)
{
	struct jsonw w = { 0 };
	char *big, *want, *got;
	json_t *value;

	(void)state;
	big = malloc(100000);
	assert_non_null(big);
	memset(big, 'x', 99999);
	big[99999] = '\0';
	value = json_pack("{ss}", "big", big);
	assert_non_null(value);
	/* Past the room a fresh buffer has, both ways in. */
	jsonw_string(&w, big);
	jsonw_json(&w, value);
	got = written(&w);
	want = malloc(2 * 100000 + 64);
	assert_non_null(want);
	snprintf(want, 2 * 100000 + 64, "\"%s\"{\"big\":\"%s\"}", big, big);
	assert_string_equal(got, want);
	/* Reset keeps the memory, and forgets the text. */
	jsonw_reset(&w);
	jsonw_int(&w, 1);
	free(got);
	got = written(&w);
	assert_string_equal(got, "1");
	free(got);
	free(want);
	free(big);
	json_decref(value);
	jsonw_free(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strings_escape_as_jansson_does),
		cmocka_unit_test(strings_not_utf8_fail),
		cmocka_unit_test(reals_print_as_jansson_prints_them),
		cmocka_unit_test(integers_print_as_jansson_prints_them),
		cmocka_unit_test(objects_and_arrays_as_jansson_dumps_them),
		cmocka_unit_test(a_large_text_grows_the_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
