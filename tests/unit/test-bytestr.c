/* test-bytestr.c - byte strings in JSON: plain strings when UTF-8, else
 * {"base64": ...}, read back to the same bytes; their escaped form. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytestr.h"
#include "jsonw.h"

/* s as bytestr_json dumps it, checked against bytestr_write's text. */
static char *
dumped(const char *s)
{
	struct jsonw w = { 0 };
	json_t *v = bytestr_json(s);
	const char *text;
	char *want;
	size_t len;

	assert_non_null(v);
	want = json_dumps(v, JSONW_DUMP_FLAGS);
	assert_non_null(want);
	bytestr_write(&w, s);
	assert_non_null(text = jsonw_text(&w, &len));
	assert_int_equal(len, strlen(want));
	assert_memory_equal(text, want, len);
	jsonw_free(&w);
	json_decref(v);
	return want;
}

/* The bytes that text (JSON) carries, or NULL with *why. */
static char *
read_back(const char *text, const char **why)
{
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	char *out = NULL;

	assert_non_null(v);
	*why = NULL;
	if (bytestr_from_json(v, &out, why) == -1) {
		assert_int_equal(errno, EINVAL);
		assert_non_null(*why);
		out = NULL;
	}
	json_decref(v);
	return out;
}

static void
utf8_goes_as_a_string(void **state)
{
	const char *why;
	char *s, *back;

	(void)state;
	s = dumped("/home/\xe2\x82\xac/a\"b");
	assert_string_equal(s, "\"/home/\xe2\x82\xac/a\\\"b\"");
	back = read_back(s, &why);
	assert_string_equal(back, "/home/\xe2\x82\xac/a\"b");
	free(back);
	free(s);
	s = dumped("");
	assert_string_equal(s, "\"\"");
	free(s);
}

static void
other_bytes_go_as_base64(void **state)
{
	/* Each length modulo 3, an overlong '/', a surrogate, a lone
	 * continuation byte, a cut sequence. */
	static const struct {
		const char *bytes, *json;
	} cases[] = {
		{ "\xff", "{\"base64\":\"/w==\"}" },
		{ "\xff\xfe", "{\"base64\":\"//4=\"}" },
		{ "a\xff\xfe", "{\"base64\":\"Yf/+\"}" },
		{ "/tmp/\xff\xfe" "d", "{\"base64\":\"L3RtcC///mQ=\"}" },
		{ "\xc0\xaf", "{\"base64\":\"wK8=\"}" },
		{ "\xed\xa0\x80", "{\"base64\":\"7aCA\"}" },
		{ "\x80", "{\"base64\":\"gA==\"}" },
		{ "\xe2\x82", "{\"base64\":\"4oI=\"}" },
	};
	const char *why;
	char *s, *back;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		s = dumped(cases[i].bytes);
		assert_string_equal(s, cases[i].json);
		back = read_back(s, &why);
		assert_non_null(back);
		assert_string_equal(back, cases[i].bytes);
		free(back);
		free(s);
	}
}

static void
base64_of_utf8_is_taken(void **state)
{
	const char *why;
	char *back;

	(void)state;
	back = read_back("{\"base64\":\"aGk=\"}", &why);
	assert_string_equal(back, "hi");
	free(back);
	back = read_back("{\"base64\":\"\"}", &why);
	assert_string_equal(back, "");
	free(back);
}

static void
malformed_forms_are_refused(void **state)
{
	static const char *const bad[] = {
		"42", "null", "[\"a\"]", "{}",
		"{\"base64\":\"/w==\",\"x\":1}", "{\"b64\":\"/w==\"}",
		"{\"base64\":1}", "{\"base64\":\"/w=\"}",
		"{\"base64\":\"/w\"}", "{\"base64\":\"/w==/w==\"}",
		"{\"base64\":\"/w =\"}", "{\"base64\":\"=w==\"}",
		"{\"base64\":\"/==w\"}", "{\"base64\":\"/w==\\n\"}",
		"{\"base64\":\"_w==\"}",
		/* NUL, in either form */
		"\"a\\u0000b\"", "{\"base64\":\"YQBi\"}", "{\"base64\":\"AA==\"}",
	};
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(read_back(bad[i], &why));
	read_back("\"a\\u0000b\"", &why);
	assert_string_equal(why, "holds a NUL byte");
	read_back("{\"base64\":1}", &why);
	assert_string_equal(why, "has a \"base64\" that is not a string");
}

static void
escaped_for_people(void **state)
{
	char *s;

	(void)state;
	s = bytestr_escape("\xff\xfe" "FOO \xe2\x82\xac\t\x1b[1m\xc2\x9b", false);
	assert_string_equal(s, "\\xff\\xfeFOO \xe2\x82\xac\t\x1b[1m\xc2\x9b");
	free(s);
	s = bytestr_escape("\xff\xfe" "FOO \xe2\x82\xac\t\x1b[1m\xc2\x9b\x7f",
	    true);
	assert_string_equal(s,
	    "\\xff\\xfeFOO \xe2\x82\xac\\x09\\x1b[1m\\xc2\\x9b\\x7f");
	free(s);
	/* A bad byte alone: what follows it is read afresh. */
	s = bytestr_escape("\xe2\x82" "a\xe2\x82\xac", true);
	assert_string_equal(s, "\\xe2\\x82a\xe2\x82\xac");
	free(s);
	assert_true(bytestr_utf8("a\xe2\x82\xac", 4));
	assert_false(bytestr_utf8("a\xe2\x82", 3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utf8_goes_as_a_string),
		cmocka_unit_test(other_bytes_go_as_base64),
		cmocka_unit_test(base64_of_utf8_is_taken),
		cmocka_unit_test(malformed_forms_are_refused),
		cmocka_unit_test(escaped_for_people),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
