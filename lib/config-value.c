/* config-value.c - parses one triage.conf value by its row's type and bounds
 * and stores it; file values and built-in defaults both come through here. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "config.h"
#include "config-table.h"
#include "conninfo.h"
#include "listenaddr.h"
#include "nodename.h"
#include "units.h"

/* The enums of struct config are stored through an int. */
_Static_assert(sizeof(enum config_shutdown) == sizeof(int),
    "enum config_shutdown is not int-sized");
_Static_assert(sizeof(enum config_output_keep) == sizeof(int),
    "enum config_output_keep is not int-sized");
_Static_assert(sizeof(enum config_io_class) == sizeof(int),
    "enum config_io_class is not int-sized");
_Static_assert(sizeof(enum config_cgroups) == sizeof(int),
    "enum config_cgroups is not int-sized");
_Static_assert(sizeof(enum config_memory_kind) == sizeof(int),
    "enum config_memory_kind is not int-sized");

/* getgrnam_r's buffer grows up to this for groups with many members. */
#define CONFIG_VALUE_GROUP_BUF_MAX (1024 * 1024)

struct config_value_bool {
	const char *word;
	bool value;
};

static const struct config_value_bool config_value_bools[] = {
	{ "yes", true }, { "no", false },
	{ "true", true }, { "false", false },
	{ "on", true }, { "off", false },
	{ "1", true }, { "0", false },
	{ NULL, false },
};

/* A whole number in base 10 or 8, digits only; -1 if not, or too large. */
static int
config_value_number(const char *s, unsigned base, uint64_t *n)
{
	uint64_t v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		unsigned digit = (unsigned)(*s - '0');

		if (*s < '0' || digit >= base)
			return -1;
		if (v > (UINT64_MAX - digit) / base)
			return -1;
		v = v * base + digit;
	}
	*n = v;
	return 0;
}

/* "\"a\", \"b\" or \"c\"" from the choices, for the error message. */
static char *
config_value_choices(const struct config_choice *choices)
{
	char *list = NULL, *next;
	const char *sep;
	size_t i;

	for (i = 0; choices[i].word != NULL; i++) {
		if (i == 0)
			sep = "";
		else if (choices[i + 1].word == NULL)
			sep = " or ";
		else
			sep = ", ";
		if (asprintf(&next, "%s%s\"%s\"", list != NULL ? list : "",
		    sep, choices[i].word) == -1) {
			free(list);
			return NULL;
		}
		free(list);
		list = next;
	}
	return list;
}

/* Sets *gid from a group name. Returns 0, or -1 with *why allocated. */
static int
config_value_group(const char *name, gid_t *gid, char **why)
{
	struct group grp, *result;
	size_t size = 1024;
	long hint;
	char *buf;
	int error;

	if (*name == '\0') {
		if (asprintf(why, "expected a group name, not \"\"") == -1)
			*why = NULL;
		return -1;
	}
	hint = sysconf(_SC_GETGR_R_SIZE_MAX);
	if (hint > 0 && (size_t)hint > size)
		size = (size_t)hint;
	for (;;) {
		buf = malloc(size);
		if (buf == NULL) {
			*why = NULL;
			return -1;
		}
		error = getgrnam_r(name, &grp, buf, size, &result);
		if (error != ERANGE || size >= CONFIG_VALUE_GROUP_BUF_MAX)
			break;
		free(buf);
		size *= 2;
	}
	if (error == 0 && result != NULL) {
		*gid = result->gr_gid;
		free(buf);
		return 0;
	}
	free(buf);
	/* getgrnam_r(3): these errors also mean "no such group". */
	if (error == 0 || error == ENOENT || error == ESRCH || error == EBADF ||
	    error == EPERM) {
		if (asprintf(why, "unknown group \"%s\"", name) == -1)
			*why = NULL;
	} else {
		if (asprintf(why, "cannot look up group \"%s\": %s", name,
		    strerror(error)) == -1)
			*why = NULL;
	}
	return -1;
}

/* Sets *why to "expected <form>, not \"<value>\"". */
static int
config_value_bad(char **why, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int
config_value_bad(char **why, const char *value, const char *fmt, ...)
{
	char *form;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&form, fmt, ap);
	va_end(ap);
	if (n == -1) {
		*why = NULL;
		return -1;
	}
	if (asprintf(why, "expected %s, not \"%s\"", form, value) == -1)
		*why = NULL;
	free(form);
	return -1;
}

static int
config_value_duration(const struct config_key *key, const char *value,
    void *dest, char **why)
{
	char lo[UNITS_FORMAT_MAX], hi[UNITS_FORMAT_MAX];
	uint64_t ms;

	if (units_parse_duration(value, &ms) == 0 && ms >= key->min &&
	    ms <= key->max) {
		*(uint64_t *)dest = ms;
		return 0;
	}
	return config_value_bad(why, value, "a duration from %s to %s, such "
	    "as 500ms, 30s, 5m, 2h or 7d",
	    units_format_duration(key->min, lo, sizeof lo),
	    units_format_duration(key->max, hi, sizeof hi));
}

/* A size within the row's bounds into *bytes, or false (*bytes left
 * alone). */
static bool
config_value_size_ok(const struct config_key *key, const char *value,
    uint64_t *bytes)
{
	uint64_t n;

	if (units_parse_size(value, &n) == -1 || n < key->min || n > key->max)
		return false;
	*bytes = n;
	return true;
}

static int
config_value_size(const struct config_key *key, const char *value,
    void *dest, char **why)
{
	char lo[UNITS_FORMAT_MAX], hi[UNITS_FORMAT_MAX];

	if (config_value_size_ok(key, value, dest))
		return 0;
	return config_value_bad(why, value, "a size from %s to %s, such as "
	    "512, 64KiB or 16MiB",
	    units_format_size(key->min, lo, sizeof lo),
	    units_format_size(key->max, hi, sizeof hi));
}

/* CONFIG_TYPE_UNSIGNED into an unsigned, CONFIG_TYPE_COUNT into a
 * uint64_t. */
static int
config_value_whole(const struct config_key *key, const char *value,
    void *dest, char **why)
{
	uint64_t n;

	if (config_value_number(value, 10, &n) == 0 && n >= key->min &&
	    n <= key->max) {
		if (key->type == CONFIG_TYPE_COUNT)
			*(uint64_t *)dest = n;
		else
			*(unsigned *)dest = (unsigned)n;
		return 0;
	}
	return config_value_bad(why, value, "a whole number from %" PRIu64
	    " to %" PRIu64, key->min, key->max);
}

static int
config_value_mode(const struct config_key *key, const char *value,
    void *dest, char **why)
{
	uint64_t n;

	if (config_value_number(value, 8, &n) == 0 && n >= key->min &&
	    n <= key->max) {
		*(mode_t *)dest = (mode_t)n;
		return 0;
	}
	return config_value_bad(why, value, "an octal mode from %#" PRIo64
	    " to %#" PRIo64 " such as 0660", key->min, key->max);
}

/* A copy of value into the char * at dest, freeing what was there. */
static int
config_value_string(const char *value, void *dest, char **why)
{
	char *copy;

	if ((copy = strdup(value)) == NULL) {
		*why = NULL;
		return -1;
	}
	free(*(char **)dest);
	*(char **)dest = copy;
	return 0;
}

static int
config_value_path(const struct config_key *key, const char *value,
    void *dest, char **why)
{
	size_t len = strlen(value);

	if (len < key->min || len > key->max) {
		return config_value_bad(why, value, "a path of %" PRIu64
		    " to %" PRIu64 " bytes", key->min, key->max);
	}
	return config_value_string(value, dest, why);
}

static int
config_value_listen(const char *value, void *dest, char **why)
{
	struct listenaddr addr;
	const char *expected;

	if (listenaddr_parse(value, &addr, &expected) == -1)
		return config_value_bad(why, value, "%s", expected);
	return config_value_string(value, dest, why);
}

/* Unlike every other type, the value is never quoted back: it may hold a
 * password. */
static int
config_value_conninfo(const char *value, void *dest, char **why)
{
	char *reason;

	if (value[0] == '\0') {
		if (asprintf(why, "expected a libpq connection string such as "
		    "\"host=db1 dbname=triage\" or \"service=triage\", not an "
		    "empty value") == -1)
			*why = NULL;
		return -1;
	}
	if (conninfo_check(value, &reason) == -1) {
		if (reason == NULL) {
			*why = NULL;
			return -1;
		}
		if (asprintf(why, "libpq cannot parse this connection string: "
		    "%s (the value is not shown: it may hold a password)",
		    reason) == -1)
			*why = NULL;
		free(reason);
		return -1;
	}
	return config_value_string(value, dest, why);
}

static int
config_value_node(const char *value, void *dest, char **why)
{
	if (!nodename_valid(value))
		return config_value_bad(why, value, "a node name: %s",
		    NODENAME_FORM);
	return config_value_string(value, dest, why);
}

static int
config_value_bool(const char *value, void *dest, char **why)
{
	const struct config_value_bool *b;

	for (b = config_value_bools; b->word != NULL; b++) {
		if (strcmp(value, b->word) == 0) {
			*(bool *)dest = b->value;
			return 0;
		}
	}
	return config_value_bad(why, value,
	    "yes, no, true, false, on, off, 1 or 0");
}

static int
config_value_choice(const struct config_key *key, const char *value,
    void *dest, char **why)
{
	const struct config_choice *c;
	char *list;

	for (c = key->choices; c->word != NULL; c++) {
		if (strcmp(value, c->word) != 0)
			continue;
		if (key->type == CONFIG_TYPE_WORD)
			*(const char **)dest = c->word;
		else if (key->type == CONFIG_TYPE_SWITCH)
			*(bool *)dest = c->value != 0;
		else
			*(int *)dest = c->value;
		return 0;
	}
	list = config_value_choices(key->choices);
	if (list == NULL) {
		*why = NULL;
		return -1;
	}
	config_value_bad(why, value, "%s", list);
	free(list);
	return -1;
}

static int
config_value_auto(const struct config_key *key, const char *value,
    void *dest, bool *is_auto, char **why)
{
	uint64_t n;

	if (strcmp(value, "auto") == 0) {
		*(unsigned *)dest = 0;
		*is_auto = true;
		return 0;
	}
	if (config_value_number(value, 10, &n) == 0 && n >= key->min &&
	    n <= key->max) {
		*(unsigned *)dest = (unsigned)n;
		*is_auto = false;
		return 0;
	}
	return config_value_bad(why, value, "\"auto\" or a whole number from %"
	    PRIu64 " to %" PRIu64, key->min, key->max);
}

/* [daemon] memory: "auto", "N%" (1 to 100) or a size within the row's
 * bounds; the kind goes to *kind, the bytes or percent to dest. */
static int
config_value_budget(const struct config_key *key, const char *value,
    void *dest, enum config_memory_kind *kind, char **why)
{
	char lo[UNITS_FORMAT_MAX], hi[UNITS_FORMAT_MAX], *digits;
	size_t len = strlen(value);
	uint64_t n;

	if (strcmp(value, "auto") == 0) {
		*(uint64_t *)dest = 0;
		*kind = CONFIG_MEMORY_AUTO;
		return 0;
	}
	if (len > 1 && value[len - 1] == '%') {
		if ((digits = strndup(value, len - 1)) == NULL) {
			*why = NULL;
			return -1;
		}
		n = 0;
		if (config_value_number(digits, 10, &n) == 0 && n >= 1 &&
		    n <= 100) {
			free(digits);
			*(uint64_t *)dest = n;
			*kind = CONFIG_MEMORY_PERCENT;
			return 0;
		}
		free(digits);
	} else if (config_value_size_ok(key, value, dest)) {
		*kind = CONFIG_MEMORY_SIZE;
		return 0;
	}
	return config_value_bad(why, value, "\"auto\", a size from %s to %s "
	    "such as 48GiB, or a percentage from 1%% to 100%% such as 80%%",
	    units_format_size(key->min, lo, sizeof lo),
	    units_format_size(key->max, hi, sizeof hi));
}

/* The characters of a unit's name. */
#define CONFIG_VALUE_UNIT_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZ" \
    "abcdefghijklmnopqrstuvwxyz0123456789_.:-"

/* Sets *why to the message (a printf format) and returns -1. */
static int
config_value_why(char **why, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int
config_value_why(char **why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(why, fmt, ap) == -1)
		*why = NULL;
	va_end(ap);
	return -1;
}

/* One unit's name, from start for len bytes, white space around it
 * trimmed, checked against the names before it (v, n of them) and put
 * at v[n]. 0, or -1 with *why. */
static int
config_value_unit(const char *start, size_t len, char **v, unsigned n,
    char **why)
{
	const char *end = start + len;
	unsigned i;

	while (start < end && isspace((unsigned char)*start))
		start++;
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	len = (size_t)(end - start);
	if (len == 0)
		return config_value_why(why, "unit %u has no name: expected "
		    "names separated by commas", n + 1);
	if (len > CONFIG_RESOURCE_UNIT_MAX || strspn(start,
	    CONFIG_VALUE_UNIT_CHARS) < len)
		return config_value_why(why, "expected a unit name of 1 to %d "
		    "of A-Z, a-z, 0-9, _, ., : and -, not \"%.*s\"",
		    CONFIG_RESOURCE_UNIT_MAX, (int)len, start);
	for (i = 0; i < n; i++)
		if (strlen(v[i]) == len && memcmp(v[i], start, len) == 0)
			return config_value_why(why, "unit \"%s\" is named "
			    "twice", v[i]);
	if ((v[n] = strndup(start, len)) == NULL) {
		*why = NULL;
		return -1;
	}
	return 0;
}

/* [resource.NAME] units: names split at commas into a new vector at dest
 * (the old one freed), their number at *count. */
static int
config_value_units(const struct config_key *key, const char *value,
    void *dest, unsigned *count, char **why)
{
	const char *p = value, *comma;
	char **v, **old;
	unsigned n = 0, i;

	if ((v = calloc(key->max + 1, sizeof *v)) == NULL) {
		*why = NULL;
		return -1;
	}
	for (;;) {
		comma = strchrnul(p, ',');
		if (n == key->max) {
			config_value_why(why, "more than %" PRIu64 " units",
			    key->max);
			goto fail;
		}
		if (config_value_unit(p, (size_t)(comma - p), v, n, why) == -1)
			goto fail;
		n++;
		if (*comma == '\0')
			break;
		p = comma + 1;
	}
	if (n < key->min) {
		config_value_why(why, "fewer than %" PRIu64 " units", key->min);
		goto fail;
	}
	old = *(char ***)dest;
	for (i = 0; old != NULL && old[i] != NULL; i++)
		free(old[i]);
	free(old);
	*(char ***)dest = v;
	*count = n;
	return 0;
fail:
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return -1;
}

/* An environment variable's name that a job may be given: of the
 * portable form, and none of triage's own, which the daemon sets. */
static int
config_value_envname(const struct config_key *key, const char *value,
    void *dest, char **why)
{
	size_t len = strlen(value);

	if (len < key->min || len > key->max || !(isalpha(
	    (unsigned char)value[0]) || value[0] == '_') || strspn(value,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_") != len)
		return config_value_bad(why, value, "a variable name of %"
		    PRIu64 " to %" PRIu64 " of A-Z, a-z, 0-9 and _, not "
		    "starting with a digit", key->min, key->max);
	if (strncmp(value, "TRIAGE_", 7) == 0)
		return config_value_why(why, "TRIAGE_* variables are triage's "
		    "own: expected another name, not \"%s\"", value);
	return config_value_string(value, dest, why);
}

int
config_value_set(const struct config_key *key, const char *value, void *base,
    char **why)
{
	void *dest = (char *)base + key->offset;
	void *aux = (char *)base + key->flag_offset;
	bool *flag = aux;
	gid_t gid;

	switch (key->type) {
	case CONFIG_TYPE_DURATION:
		return config_value_duration(key, value, dest, why);
	case CONFIG_TYPE_SIZE:
		return config_value_size(key, value, dest, why);
	case CONFIG_TYPE_UNSIGNED:
	case CONFIG_TYPE_COUNT:
		return config_value_whole(key, value, dest, why);
	case CONFIG_TYPE_MODE:
		return config_value_mode(key, value, dest, why);
	case CONFIG_TYPE_PATH:
		return config_value_path(key, value, dest, why);
	case CONFIG_TYPE_LISTEN:
		return config_value_listen(value, dest, why);
	case CONFIG_TYPE_CONNINFO:
		return config_value_conninfo(value, dest, why);
	case CONFIG_TYPE_NODE:
		return config_value_node(value, dest, why);
	case CONFIG_TYPE_BOOL:
		return config_value_bool(value, dest, why);
	case CONFIG_TYPE_ENUM:
	case CONFIG_TYPE_WORD:
	case CONFIG_TYPE_SWITCH:
		return config_value_choice(key, value, dest, why);
	case CONFIG_TYPE_BUDGET:
		return config_value_budget(key, value, dest, aux, why);
	case CONFIG_TYPE_UNITS:
		return config_value_units(key, value, dest, aux, why);
	case CONFIG_TYPE_ENVNAME:
		return config_value_envname(key, value, dest, why);
	case CONFIG_TYPE_AUTO:
		return config_value_auto(key, value, dest, flag, why);
	case CONFIG_TYPE_GROUP:
		if (config_value_group(value, &gid, why) == -1)
			return -1;
		*(gid_t *)dest = gid;
		*flag = true;
		return 0;
	case CONFIG_TYPE_PRIORITY:
		if (config_table_priority_name(value))
			return 0;
		return config_value_bad(why, value, "a priority name: %" PRIu64
		    " to %" PRIu64 " of a-z, 0-9, _ and -", key->min,
		    key->max);
	}
	*why = NULL;
	errno = EINVAL;
	return -1;
}
