/* test-docs.c - what the docs say about the programs matches them: the
 * README's session is what `make run` prints, triaged --help's defaults,
 * the examples' priorities are the shipped config's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "triage/client.h"
#include "harness.h"

/* make test runs the tests from the top of the repository. */
#define DOCS_README "README.md"
#define DOCS_MAKEFILE "Makefile"

/* The whole of a file or a command's stdout, allocated. */
static char *
docs_read(FILE *f)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);

	assert_non_null(buf);
	for (;;) {
		len += fread(buf + len, 1, cap - 1 - len, f);
		if (len < cap - 1)
			break;
		cap *= 2;
		assert_non_null(buf = realloc(buf, cap));
	}
	buf[len] = '\0';
	return buf;
}

static char *
docs_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;

	if (f == NULL)
		fail_msg("cannot open %s (run from the repository's top)", path);
	text = docs_read(f);
	fclose(f);
	return text;
}

/* Every command of the README's session (its "$ " lines but the export,
 * which names paths make's way) is a line `make run` prints. */
static void
readme_session_is_what_make_run_prints(void **state)
{
	char *readme = docs_file(DOCS_README), *make = docs_file(DOCS_MAKEFILE);
	char *session, *end, *recipe, *line, *next, *p, *q, want[512];
	int n = 0;

	(void)state;
	assert_non_null(session = strstr(readme, "## A short session"));
	assert_non_null(session = strstr(session, "```console\n"));
	assert_non_null(end = strstr(session + 11, "```"));
	*end = '\0';

	/* The run recipe's text, with make's "$$" read as the shell's "$". */
	assert_non_null(recipe = strstr(make, "\nrun: "));
	if ((p = strstr(recipe, "\n\n")) != NULL)
		*p = '\0';
	for (p = q = recipe; *p != '\0'; p++, q++) {
		*q = *p;
		if (p[0] == '$' && p[1] == '$')
			p++;
	}
	*q = '\0';

	for (line = session; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (strncmp(line, "$ ", 2) != 0 ||
		    strncmp(line, "$ export ", 9) == 0)
			continue;
		snprintf(want, sizeof want, "'  %s'", line + 2);
		if (strstr(recipe, want) == NULL)
			fail_msg("make run does not print %s", want);
		n++;
	}
	assert_true(n >= 5);
	free(readme);
	free(make);
}

/* The names of the [priority.NAME] sections of the config file at path,
 * each followed by a space, in their order. */
static void
docs_priorities(const char *path, char *names, size_t size)
{
	char *text = docs_file(path), *p, *end;
	size_t len = 0;

	names[0] = '\0';
	for (p = text; (p = strstr(p, "\n[priority.")) != NULL; p = end) {
		p += strlen("\n[priority.");
		assert_non_null(end = strchr(p, ']'));
		assert_true(len + (size_t)(end - p) + 2 < size);
		len += (size_t)snprintf(names + len, size - len, "%.*s ",
		    (int)(end - p), p);
	}
	free(text);
}

/*
 * Every priority that an example of path names (`-p NAME`, `--priority
 * NAME`, `pause NAME`, `resume NAME`, in roff's "\-p" too) is one that
 * names holds ("a b c "). Returns how many it found.
 */
static int
docs_examples_use(const char *path, const char *names)
{
	static const char *const opts[] = { " -p ", " \\-p ",
	    " --priority ", " \\-\\-priority ", "triage pause ",
	    "triage resume " };
	char *text = docs_file(path), *p, word[64], want[66];
	size_t i, n;
	int found = 0;

	for (i = 0; i < sizeof opts / sizeof opts[0]; i++)
		for (p = text; (p = strstr(p, opts[i])) != NULL; ) {
			p += strlen(opts[i]);
			n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
			/* PRIO, the placeholder of a synopsis, is no name. */
			if (n == 0 || n >= sizeof word)
				continue;
			snprintf(word, sizeof word, "%.*s", (int)n, p);
			snprintf(want, sizeof want, " %s ", word);
			if (strncmp(names, want + 1, strlen(want + 1)) != 0 &&
			    strstr(names, want) == NULL)
				fail_msg("%s: an example names priority '%s', "
				    "which the shipped config/triage.conf "
				    "has not (it has: %s)", path, word, names);
			found++;
		}
	free(text);
	return found;
}

/* What a user copies from the README or triage(1) works with the config
 * the package installs, and `make run`'s config has the same priorities. */
static void
examples_name_the_shipped_priorities(void **state)
{
	char shipped[512], dev[512];

	(void)state;
	docs_priorities("config/triage.conf", shipped, sizeof shipped);
	docs_priorities("config/dev.conf", dev, sizeof dev);
	assert_true(shipped[0] != '\0');
	if (strcmp(shipped, dev) != 0)
		fail_msg("config/dev.conf's priorities (%s) are not those "
		    "of the shipped config/triage.conf (%s)", dev, shipped);
	assert_true(docs_examples_use(DOCS_README, shipped) >= 3);
	assert_true(docs_examples_use("man/triage.1", shipped) >= 3);
}

/* triaged --help names the socket it really takes by default. */
static void
triaged_help_says_the_default_socket(void **state)
{
	char cmd[600], *help;
	FILE *f;

	(void)state;
	snprintf(cmd, sizeof cmd, "%s --help", tbin("triaged"));
	assert_non_null(f = popen(cmd, "r"));
	help = docs_read(f);
	assert_int_equal(pclose(f), 0);
	assert_non_null(strstr(help, "$TRIAGE_SOCKET"));
	assert_non_null(strstr(help, "$XDG_RUNTIME_DIR/triage/triage.sock"));
	assert_non_null(strstr(help, TRIAGE_SOCKET_SYSTEM));
	assert_non_null(strstr(help, "root"));
	free(help);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(readme_session_is_what_make_run_prints),
		cmocka_unit_test(triaged_help_says_the_default_socket),
		cmocka_unit_test(examples_name_the_shipped_priorities),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
