/* test-base64.c - base64_encode/decode: RFC 4648's test vectors both ways,
 * every byte value, and the malformed input we refuse. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base64.h"

/* RFC 4648, section 10. */
static const char *const vectors[][2] = {
	{ "", "" },
	{ "f", "Zg==" },
	{ "fo", "Zm8=" },
	{ "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" },
	{ "fooba", "Zm9vYmE=" },
	{ "foobar", "Zm9vYmFy" },
};

static void
rfc_vectors_encode(void **state)
{
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
		s = base64_encode(vectors[i][0], strlen(vectors[i][0]));
		assert_non_null(s);
		assert_string_equal(s, vectors[i][1]);
		free(s);
	}
}

static void
rfc_vectors_decode(void **state)
{
	size_t i, len;
	char *s;

	(void)state;
	for (i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
		s = base64_decode(vectors[i][1], strlen(vectors[i][1]), &len);
		assert_non_null(s);
		assert_int_equal(len, strlen(vectors[i][0]));
		assert_memory_equal(s, vectors[i][0], len);
		assert_int_equal(s[len], '\0');
		free(s);
	}
}

static void
padding_may_be_left_out(void **state)
{
	size_t len;
	char *s;

	(void)state;
	s = base64_decode("Zm9vYg", 6, &len);
	assert_non_null(s);
	assert_int_equal(len, 4);
	assert_memory_equal(s, "foob", 4);
	free(s);
	s = base64_decode("Zm9vYmE", 7, &len);
	assert_non_null(s);
	assert_int_equal(len, 5);
	free(s);
}

static void
every_byte_round_trips(void **state)
{
	unsigned char bytes[256 + 2];
	size_t i, n, len;
	char *text;
	void *back;

	(void)state;
	for (i = 0; i < sizeof bytes; i++)
		bytes[i] = (unsigned char)(255 - i % 256);
	/* Every length mod 3, with NULs and high bytes. */
	for (n = sizeof bytes - 3; n <= sizeof bytes; n++) {
		text = base64_encode(bytes, n);
		assert_non_null(text);
		assert_int_equal(strlen(text), (n + 2) / 3 * 4);
		back = base64_decode(text, strlen(text), &len);
		assert_non_null(back);
		assert_int_equal(len, n);
		assert_memory_equal(back, bytes, n);
		free(back);
		free(text);
	}
}

static void
assert_refused(const char *s)
{
	size_t len = 12345;

	errno = 0;
	if (base64_decode(s, strlen(s), &len) != NULL)
		fail_msg("\"%s\" was accepted", s);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(len, 12345);
}

static void
malformed_is_refused(void **state)
{
	(void)state;
	assert_refused("Z");		/* one character cannot be a byte */
	assert_refused("Zm9vY");
	assert_refused("Zm9v\n");	/* no line breaks */
	assert_refused("Zm 9v");
	assert_refused("Zm9v-_==");	/* the URL alphabet is not ours */
	assert_refused("Zg=");		/* padded, but not to 4 */
	assert_refused("Zg=a");		/* padding inside */
	assert_refused("Z===");
	assert_refused("====");
	assert_refused("=");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc_vectors_encode),
		cmocka_unit_test(rfc_vectors_decode),
		cmocka_unit_test(padding_may_be_left_out),
		cmocka_unit_test(every_byte_round_trips),
		cmocka_unit_test(malformed_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
