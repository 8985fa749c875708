/* config-parse.h - private to config*.c: one pass over triage.conf with inih,
 * keeping what each section set and where, and every problem found. */
#ifndef TRIAGE_CONFIG_PARSE_H
#define TRIAGE_CONFIG_PARSE_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "config-table.h"

/* Room for a key name in messages; longer ones are cut. */
#define CONFIG_PARSE_NAME_MAX 64

/* A [priority.NAME] section as read, before the whole-file checks. */
struct config_parse_priority {
	struct config_priority p;
	unsigned lines[CONFIG_TABLE_PRIORITY_KEYS];	/* where set; 0: not */
	bool ok[CONFIG_TABLE_PRIORITY_KEYS];		/* set to a good value */
};

/* A [resource.NAME] section as read, before the whole-file checks; what
 * it allocated (units, env) is its own until config-load.c moves it into
 * the config. */
struct config_parse_resource {
	struct config_resource r;
	unsigned lines[CONFIG_TABLE_RESOURCE_KEYS];	/* where set; 0: not */
};

struct config_parse_error {
	unsigned line;		/* 0: about the whole file */
	unsigned seq;		/* keeps one line's problems in order */
	char *text;
};

enum config_parse_section {
	CONFIG_PARSE_NONE,	/* before the first section header */
	CONFIG_PARSE_DAEMON,
	CONFIG_PARSE_PRIORITY,
	CONFIG_PARSE_HTTP,
	CONFIG_PARSE_CLUSTER,
	CONFIG_PARSE_RESOURCE,
	CONFIG_PARSE_IGNORED,	/* a bad header, already reported */
};

struct config_parse {
	const char *path;	/* for messages; NULL: no file */
	struct config *cfg;	/* receives [daemon] */

	/* The line inih is working on, as our reader handed it over. */
	FILE *f;
	char *buf;
	size_t size;
	unsigned lineno;
	bool key_line;		/* the handler may take it as a key */
	int read_errno;

	/* inih's idea of the last key: an indented line continues it. */
	bool after_key;
	unsigned after_key_line;
	char after_key_name[CONFIG_PARSE_NAME_MAX];

	enum config_parse_section section;
	struct config_parse_priority *cur;
	unsigned daemon_line;	/* first [daemon] header; 0: none */
	unsigned daemon_lines[CONFIG_TABLE_DAEMON_KEYS];
	unsigned http_line;	/* the [http] header; 0: none */
	unsigned http_lines[CONFIG_TABLE_HTTP_KEYS];
	unsigned cluster_line;	/* the [cluster] header; 0: none */
	unsigned cluster_lines[CONFIG_TABLE_CLUSTER_KEYS];
	char *default_priority;	/* the name given, resolved at the end */

	struct config_parse_priority *priorities;	/* PRIORITIES_MAX */
	unsigned npriorities;
	struct config_parse_resource *res;	/* the section being read */
	struct config_parse_resource *resources;	/* RESOURCES_MAX */
	unsigned nresources;

	struct config_parse_error *errors;
	size_t nerrors;
	size_t errors_size;
	bool oom;
};

/* Sets up ps to read path into cfg. Returns 0, or -1 when out of memory. */
int config_parse_init(struct config_parse *ps, const char *path,
    struct config *cfg);
/* Frees what ps holds, but not cfg. */
void config_parse_clear(struct config_parse *ps);
/* Frees a resource's units and env, and sets them NULL. */
void config_parse_resource_clear(struct config_resource *r);

/* Reads f to its end, recording values and problems in ps. */
void config_parse_file(struct config_parse *ps, FILE *f);

/*
 * Stores the defaults of the rows in table that have one into base; a
 * default that does not parse is reported as a problem of the program.
 */
void config_parse_defaults(struct config_parse *ps,
    const struct config_key *table, size_t n, void *base);

/* Records "PATH:LINE: " followed by the message (LINE only if not 0). */
void config_parse_error(struct config_parse *ps, unsigned line,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Returns the problems, sorted by line, one per line, allocated; NULL when
 * out of memory. */
char *config_parse_cause(struct config_parse *ps);

#endif
