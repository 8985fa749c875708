/* promtext.c - for the tests of /metrics: a sample's value read from the
 * Prometheus text format, and promtool's verdict on the whole text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "promtext.h"

#define PROMTOOL "/usr/bin/promtool"

/* The start of series' value in text, or NULL. */
static const char *
promtext_find(const char *text, const char *series)
{
	size_t n = strlen(series);
	const char *line;

	for (line = text; line != NULL && *line != '\0';
	    line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, series, n) == 0 && line[n] == ' ')
			return line + n + 1;
	return NULL;
}

bool
promtext_has(const char *text, const char *series)
{
	return promtext_find(text, series) != NULL;
}

double
promtext_value(const char *text, const char *series)
{
	const char *v = promtext_find(text, series);
	char *end;
	double d;

	if (v == NULL)
		fail_msg("no sample %s in:\n%s", series, text);
	d = strtod(v, &end);
	if (end == v || (*end != '\n' && *end != '\0'))
		fail_msg("sample %s: \"%.40s\" is not a number", series, v);
	return d;
}

void
promtext_assert(const char *text, const char *series, double want)
{
	double got = promtext_value(text, series);

	if (got != want)
		fail_msg("%s is %.17g, not %.17g", series, got, want);
}

bool
promtext_have_promtool(void)
{
	if (access(PROMTOOL, X_OK) == 0)
		return true;
	print_message("skipped: no " PROMTOOL " (Debian package prometheus; "
	    "make deps installs it)\n");
	return false;
}

void
promtext_check(const char *dir, const char *text)
{
	char path[256], cmd[512], out[4096];
	size_t n;
	FILE *f, *p;
	int status;

	snprintf(path, sizeof path, "%s/metrics.txt", dir);
	assert_non_null(f = fopen(path, "we"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof cmd, PROMTOOL " check metrics < %s 2>&1", path);
	assert_non_null(p = popen(cmd, "r"));
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	status = pclose(p);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("promtool check metrics (status %d) on %s:\n%s",
		    status, path, out);
	/* It passes, with only warnings, what we want clean. */
	if (n > 0)
		fail_msg("promtool check metrics on %s says:\n%s", path, out);
}
