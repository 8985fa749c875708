/* config-table.h - private to config*.c: the declarative rows that describe
 * every key of triage.conf, and the typed values they parse. */
#ifndef TRIAGE_CONFIG_TABLE_H
#define TRIAGE_CONFIG_TABLE_H

#include <stddef.h>
#include <stdint.h>

enum config_type {
	CONFIG_TYPE_DURATION,	/* uint64_t ms; bounds in ms */
	CONFIG_TYPE_SIZE,	/* uint64_t bytes; bounds in bytes */
	CONFIG_TYPE_UNSIGNED,	/* unsigned */
	CONFIG_TYPE_MODE,	/* mode_t, octal */
	CONFIG_TYPE_PATH,	/* char *, allocated; bounds on its length */
	CONFIG_TYPE_BOOL,	/* bool */
	CONFIG_TYPE_ENUM,	/* int, the value of the matching choice */
	CONFIG_TYPE_WORD,	/* const char *, the matching choice's word */
	CONFIG_TYPE_AUTO,	/* unsigned, and bool at flag_offset */
	CONFIG_TYPE_GROUP,	/* gid_t, and bool at flag_offset */
	CONFIG_TYPE_PRIORITY,	/* a priority name, resolved by config.c */
	CONFIG_TYPE_LISTEN,	/* char *, allocated: a listenaddr.h address */
	CONFIG_TYPE_CONNINFO,	/* char *, allocated: a libpq connection
				   string, never repeated in messages */
	CONFIG_TYPE_NODE,	/* char *, allocated: a nodename.h name */
	/* Protocol v1.2. */
	CONFIG_TYPE_BUDGET,	/* "auto", a size or "N%": uint64_t, and the
				   enum config_memory_kind at flag_offset;
				   bounds on the size */
	CONFIG_TYPE_COUNT,	/* uint64_t, a whole number */
	CONFIG_TYPE_UNITS,	/* char **, allocated, NULL-terminated: unit
				   names split at commas, their number at
				   flag_offset (unsigned); bounds on it */
	CONFIG_TYPE_ENVNAME,	/* char *, allocated: an environment
				   variable's name, not TRIAGE_*; bounds on
				   its length */
	CONFIG_TYPE_SWITCH,	/* bool: the matching choice's value, 0 or
				   1 */
};

struct config_choice {
	const char *word;
	int value;
};

struct config_key {
	const char *name;
	enum config_type type;
	uint64_t min;
	uint64_t max;
	const char *def;	/* default in file syntax; NULL: computed */
	size_t offset;		/* of the destination in its struct */
	size_t flag_offset;	/* CONFIG_TYPE_AUTO: "auto" given;
				   CONFIG_TYPE_GROUP: a group is set;
				   CONFIG_TYPE_BUDGET: its kind;
				   CONFIG_TYPE_UNITS: how many */
	const struct config_choice *choices;	/* ends with a NULL word */
	const char *help;
};

/* The rows of [daemon], [http] and [cluster] (into struct config), of
 * [priority.NAME] (into struct config_priority) and of [resource.NAME]
 * (into struct config_resource). The counts size the per-key
 * bookkeeping. */
#define CONFIG_TABLE_DAEMON_KEYS 37
#define CONFIG_TABLE_HTTP_KEYS 8
#define CONFIG_TABLE_CLUSTER_KEYS 3
#define CONFIG_TABLE_PRIORITY_KEYS 12
#define CONFIG_TABLE_RESOURCE_KEYS 5
extern const struct config_key config_table_daemon[CONFIG_TABLE_DAEMON_KEYS];
extern const struct config_key config_table_http[CONFIG_TABLE_HTTP_KEYS];
extern const struct config_key
    config_table_cluster[CONFIG_TABLE_CLUSTER_KEYS];
extern const struct config_key
    config_table_priority[CONFIG_TABLE_PRIORITY_KEYS];
extern const struct config_key
    config_table_resource[CONFIG_TABLE_RESOURCE_KEYS];

/* What [priority.*] holds when the file names no priority at all. */
struct config_table_builtin {
	const char *name;
	unsigned rank;
};
#define CONFIG_TABLE_BUILTINS 3
extern const struct config_table_builtin
    config_table_builtins[CONFIG_TABLE_BUILTINS];

/* Returns the index of the row called name in table (n rows), or -1. */
int config_table_find(const struct config_key *table, size_t n,
    const char *name);

/* Returns 1 if name is a valid priority name: [a-z0-9_-]{1,32}. */
int config_table_priority_name(const char *name);
/* Returns 1 if name is a valid resource name: the same form. */
int config_table_resource_name(const char *name);

/*
 * Parses value as key says and stores it in the struct at base. Returns 0;
 * on a bad value returns -1 with *why set to an allocated explanation
 * ("expected ..., not \"...\""), or to NULL when out of memory, and leaves
 * the destination alone. CONFIG_TYPE_PRIORITY only checks the name.
 */
int config_value_set(const struct config_key *key, const char *value,
    void *base, char **why);

#endif
