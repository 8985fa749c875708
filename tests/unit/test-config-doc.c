/* test-config-doc.c - triage.conf(5) lists exactly the rows of the config
 * table: each key once, as a ".TP" then ".B KEY" entry in its own section. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config-table.h"

/* make test runs the tests from the top of the repository. */
#define DOC_PATH "man/triage.conf.5"

/*
 * The page's key sections are the ones whose .SH title names [daemon],
 * [http], [cluster], [priority.NAME] or [resource.NAME]. In them every .TP starts the entry of a key, so the
 * next line must be ".B KEY"; value lists inside an entry use .IP.
 */
enum doc_section {
	DOC_OTHER = -1,
	DOC_DAEMON,
	DOC_HTTP,
	DOC_CLUSTER,
	DOC_PRIORITY,
	DOC_RESOURCE,
};

static const struct {
	const char *title;	/* found in the .SH line */
	const char *name;	/* for messages */
	const struct config_key *table;
	size_t nkeys;
} doc_sections[] = {
	[DOC_DAEMON] = { "[daemon]", "[daemon]", config_table_daemon,
	    CONFIG_TABLE_DAEMON_KEYS },
	[DOC_HTTP] = { "[http]", "[http]", config_table_http,
	    CONFIG_TABLE_HTTP_KEYS },
	[DOC_CLUSTER] = { "[cluster]", "[cluster]", config_table_cluster,
	    CONFIG_TABLE_CLUSTER_KEYS },
	[DOC_PRIORITY] = { "[priority.", "[priority.NAME]",
	    config_table_priority, CONFIG_TABLE_PRIORITY_KEYS },
	[DOC_RESOURCE] = { "[resource.", "[resource.NAME]",
	    config_table_resource, CONFIG_TABLE_RESOURCE_KEYS },
};

/* The line after a .TP in a key section. */
struct doc_entry {
	enum doc_section section;
	unsigned line;
	char *text;		/* the whole line, newline removed */
};

struct doc {
	struct doc_entry *entries;
	size_t n;
};

static enum doc_section
doc_section_of(const char *sh_line)
{
	if (strstr(sh_line, doc_sections[DOC_DAEMON].title) != NULL)
		return DOC_DAEMON;
	if (strstr(sh_line, doc_sections[DOC_HTTP].title) != NULL)
		return DOC_HTTP;
	if (strstr(sh_line, doc_sections[DOC_CLUSTER].title) != NULL)
		return DOC_CLUSTER;
	if (strstr(sh_line, doc_sections[DOC_PRIORITY].title) != NULL)
		return DOC_PRIORITY;
	if (strstr(sh_line, doc_sections[DOC_RESOURCE].title) != NULL)
		return DOC_RESOURCE;
	return DOC_OTHER;
}

/* Reads the page's key entries; fails the test if the page is missing. */
static void
doc_read(struct doc *doc)
{
	enum doc_section section = DOC_OTHER;
	char *line = NULL;
	size_t size = 0;
	ssize_t len;
	unsigned lineno = 0;
	int after_tp = 0;
	FILE *f;

	memset(doc, 0, sizeof *doc);
	if ((f = fopen(DOC_PATH, "r")) == NULL)
		fail_msg("cannot open %s: %s (the tests run from the top of "
		    "the repository)", DOC_PATH, strerror(errno));
	while ((len = getline(&line, &size, f)) != -1) {
		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (strncmp(line, ".SH", 3) == 0)
			section = doc_section_of(line);
		else if (after_tp && section != DOC_OTHER) {
			doc->entries = realloc(doc->entries,
			    (doc->n + 1) * sizeof *doc->entries);
			assert_non_null(doc->entries);
			doc->entries[doc->n].section = section;
			doc->entries[doc->n].line = lineno;
			doc->entries[doc->n].text = strdup(line);
			assert_non_null(doc->entries[doc->n].text);
			doc->n++;
		}
		after_tp = strcmp(line, ".TP") == 0;
	}
	free(line);
	fclose(f);
}

static void
doc_free(struct doc *doc)
{
	size_t i;

	for (i = 0; i < doc->n; i++)
		free(doc->entries[i].text);
	free(doc->entries);
}

/* Each row of the section's table has exactly one ".B KEY" entry there. */
static void
check_every_key_is_documented_once(enum doc_section section)
{
	const struct config_key *table = doc_sections[section].table;
	char want[128];
	struct doc doc;
	size_t i, k;
	unsigned found, bad = 0;

	doc_read(&doc);
	for (k = 0; k < doc_sections[section].nkeys; k++) {
		snprintf(want, sizeof want, ".B %s", table[k].name);
		found = 0;
		for (i = 0; i < doc.n; i++)
			if (doc.entries[i].section == section &&
			    strcmp(doc.entries[i].text, want) == 0)
				found++;
		if (found != 1) {
			print_error("%s: key \"%s\" has %u \".TP\" / \"%s\" "
			    "entries in the %s section, not 1\n", DOC_PATH,
			    table[k].name, found, want,
			    doc_sections[section].name);
			bad++;
		}
	}
	doc_free(&doc);
	assert_int_equal(bad, 0);
}

static void
every_daemon_key_is_documented_once(void **state)
{
	(void)state;
	check_every_key_is_documented_once(DOC_DAEMON);
}

static void
every_http_key_is_documented_once(void **state)
{
	(void)state;
	check_every_key_is_documented_once(DOC_HTTP);
}

static void
every_cluster_key_is_documented_once(void **state)
{
	(void)state;
	check_every_key_is_documented_once(DOC_CLUSTER);
}

static void
every_priority_key_is_documented_once(void **state)
{
	(void)state;
	check_every_key_is_documented_once(DOC_PRIORITY);
}

static void
every_resource_key_is_documented_once(void **state)
{
	(void)state;
	check_every_key_is_documented_once(DOC_RESOURCE);
}

/* Every entry in a key section is ".B KEY" with a KEY of that section. */
static void
every_documented_key_is_in_the_table(void **state)
{
	const struct doc_entry *e;
	const char *name;
	struct doc doc;
	size_t i, keys = 0;
	unsigned bad = 0;

	(void)state;
	doc_read(&doc);
	for (i = 0; i < doc.n; i++) {
		e = &doc.entries[i];
		name = strncmp(e->text, ".B ", 3) == 0 ? e->text + 3 : NULL;
		if (name != NULL && config_table_find(doc_sections[e->section].
		    table, doc_sections[e->section].nkeys, name) != -1) {
			keys++;
			continue;
		}
		print_error("%s:%u: \"%s\" after .TP in the %s section is not "
		    "\".B KEY\" for a key of lib/config-table.c\n", DOC_PATH,
		    e->line, e->text, doc_sections[e->section].name);
		bad++;
	}
	doc_free(&doc);
	assert_int_equal(bad, 0);
	/* Guards against a page whose section titles no longer match. */
	assert_int_equal(keys, CONFIG_TABLE_DAEMON_KEYS +
	    CONFIG_TABLE_HTTP_KEYS + CONFIG_TABLE_CLUSTER_KEYS +
	    CONFIG_TABLE_PRIORITY_KEYS + CONFIG_TABLE_RESOURCE_KEYS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_daemon_key_is_documented_once),
		cmocka_unit_test(every_http_key_is_documented_once),
		cmocka_unit_test(every_cluster_key_is_documented_once),
		cmocka_unit_test(every_priority_key_is_documented_once),
		cmocka_unit_test(every_resource_key_is_documented_once),
		cmocka_unit_test(every_documented_key_is_in_the_table),
	};

	return cmocka_run_group_tests_name("config-doc", tests, NULL, NULL);
}
