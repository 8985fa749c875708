/* config-parse.c - one pass over triage.conf: our reader counts lines and
 * sees section headers, inih splits keys from values, the table checks them. */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "config-parse.h"

/* Text as inih would see it, with leading white space skipped. */
static const char *
config_parse_lskip(const char *s)
{
	while (*s != '\0' && isspace((unsigned char)*s))
		s++;
	return s;
}

/* inih's rule: the first of chars, or a ';' comment that follows white
 * space, or the end. */
static const char *
config_parse_find(const char *s, const char *chars)
{
	bool was_space = false;

	while (*s != '\0' && strchr(chars, *s) == NULL &&
	    !(was_space && *s == ';')) {
		was_space = isspace((unsigned char)*s);
		s++;
	}
	return s;
}

void
config_parse_error(struct config_parse *ps, unsigned line, const char *fmt,
    ...)
{
	struct config_parse_error *e;
	char *msg, *text;
	va_list ap;
	size_t size;
	int n;

	if (ps->nerrors == ps->errors_size) {
		size = ps->errors_size == 0 ? 8 : ps->errors_size * 2;
		e = reallocarray(ps->errors, size, sizeof *e);
		if (e == NULL) {
			ps->oom = true;
			return;
		}
		ps->errors = e;
		ps->errors_size = size;
	}
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n == -1) {
		ps->oom = true;
		return;
	}
	if (ps->path == NULL)
		n = asprintf(&text, "%s", msg);
	else if (line == 0)
		n = asprintf(&text, "%s: %s", ps->path, msg);
	else
		n = asprintf(&text, "%s:%u: %s", ps->path, line, msg);
	free(msg);
	if (n == -1) {
		ps->oom = true;
		return;
	}
	e = &ps->errors[ps->nerrors];
	e->line = line;
	e->seq = (unsigned)ps->nerrors;
	e->text = text;
	ps->nerrors++;
}

static int
config_parse_error_cmp(const void *a, const void *b)
{
	const struct config_parse_error *ea = a, *eb = b;

	if (ea->line != eb->line)
		return ea->line < eb->line ? -1 : 1;
	return ea->seq < eb->seq ? -1 : ea->seq > eb->seq;
}

char *
config_parse_cause(struct config_parse *ps)
{
	size_t i, len = 0;
	char *cause, *p;

	qsort(ps->errors, ps->nerrors, sizeof *ps->errors,
	    config_parse_error_cmp);
	for (i = 0; i < ps->nerrors; i++)
		len += strlen(ps->errors[i].text) + 1;
	cause = malloc(len + 1);
	if (cause == NULL)
		return NULL;
	p = cause;
	*p = '\0';
	for (i = 0; i < ps->nerrors; i++) {
		if (i > 0)
			*p++ = '\n';
		len = strlen(ps->errors[i].text);
		memcpy(p, ps->errors[i].text, len + 1);
		p += len;
	}
	return cause;
}

void
config_parse_defaults(struct config_parse *ps, const struct config_key *table,
    size_t n, void *base)
{
	char *why;
	size_t i;

	for (i = 0; i < n; i++) {
		if (table[i].def == NULL)
			continue;
		if (config_value_set(&table[i], table[i].def, base, &why) == 0)
			continue;
		if (why == NULL) {
			ps->oom = true;
			continue;
		}
		config_parse_error(ps, 0, "%s: built-in default: %s",
		    table[i].name, why);
		free(why);
	}
}

int
config_parse_init(struct config_parse *ps, const char *path,
    struct config *cfg)
{
	memset(ps, 0, sizeof *ps);
	ps->path = path;
	ps->cfg = cfg;
	ps->priorities = calloc(CONFIG_PRIORITIES_MAX,
	    sizeof *ps->priorities);
	ps->resources = calloc(CONFIG_RESOURCES_MAX, sizeof *ps->resources);
	if (ps->priorities == NULL || ps->resources == NULL) {
		free(ps->priorities);
		free(ps->resources);
		return -1;
	}
	return 0;
}

void
config_parse_resource_clear(struct config_resource *r)
{
	unsigned i;

	for (i = 0; r->units != NULL && r->units[i] != NULL; i++)
		free(r->units[i]);
	free(r->units);
	free(r->env);
	r->units = NULL;
	r->env = NULL;
}

void
config_parse_clear(struct config_parse *ps)
{
	size_t i;

	for (i = 0; i < ps->nerrors; i++)
		free(ps->errors[i].text);
	free(ps->errors);
	free(ps->priorities);
	for (i = 0; ps->resources != NULL && i < ps->nresources; i++)
		config_parse_resource_clear(&ps->resources[i].r);
	free(ps->resources);
	free(ps->default_priority);
	free(ps->buf);
	memset(ps, 0, sizeof *ps);
}

/* A [priority.NAME] header: a new priority, or the same one again. */
static void
config_parse_priority(struct config_parse *ps, const char *header,
    const char *name)
{
	struct config_parse_priority *pp;
	unsigned i;

	ps->section = CONFIG_PARSE_IGNORED;
	ps->cur = NULL;
	if (!config_table_priority_name(name)) {
		config_parse_error(ps, ps->lineno, "[%s]: bad priority name "
		    "\"%s\": expected 1 to %d of a-z, 0-9, _ and -", header,
		    name, CONFIG_PRIORITY_NAME_MAX);
		return;
	}
	for (i = 0; i < ps->npriorities; i++) {
		pp = &ps->priorities[i];
		if (strcmp(pp->p.name, name) != 0)
			continue;
		config_parse_error(ps, ps->lineno, "[%s]: section given twice, "
		    "first on line %u", header, pp->p.line);
		ps->section = CONFIG_PARSE_PRIORITY;
		ps->cur = pp;
		return;
	}
	if (ps->npriorities == CONFIG_PRIORITIES_MAX) {
		config_parse_error(ps, ps->lineno, "[%s]: more than %d "
		    "priorities", header, CONFIG_PRIORITIES_MAX);
		return;
	}
	pp = &ps->priorities[ps->npriorities++];
	memset(pp, 0, sizeof *pp);
	strcpy(pp->p.name, name);
	pp->p.line = ps->lineno;
	config_parse_defaults(ps, config_table_priority,
	    CONFIG_TABLE_PRIORITY_KEYS, &pp->p);
	ps->section = CONFIG_PARSE_PRIORITY;
	ps->cur = pp;
}

/* A [resource.NAME] header: a new resource, or the same one again. */
static void
config_parse_resource(struct config_parse *ps, const char *header,
    const char *name)
{
	struct config_parse_resource *pr;
	unsigned i;

	ps->section = CONFIG_PARSE_IGNORED;
	ps->res = NULL;
	if (!config_table_resource_name(name)) {
		config_parse_error(ps, ps->lineno, "[%s]: bad resource name "
		    "\"%s\": expected 1 to %d of a-z, 0-9, _ and -", header,
		    name, CONFIG_RESOURCE_NAME_MAX);
		return;
	}
	for (i = 0; i < ps->nresources; i++) {
		pr = &ps->resources[i];
		if (strcmp(pr->r.name, name) != 0)
			continue;
		config_parse_error(ps, ps->lineno, "[%s]: section given twice, "
		    "first on line %u", header, pr->r.line);
		ps->section = CONFIG_PARSE_RESOURCE;
		ps->res = pr;
		return;
	}
	if (ps->nresources == CONFIG_RESOURCES_MAX) {
		config_parse_error(ps, ps->lineno, "[%s]: more than %d "
		    "resources", header, CONFIG_RESOURCES_MAX);
		return;
	}
	pr = &ps->resources[ps->nresources++];
	memset(pr, 0, sizeof *pr);
	strcpy(pr->r.name, name);
	pr->r.line = ps->lineno;
	config_parse_defaults(ps, config_table_resource,
	    CONFIG_TABLE_RESOURCE_KEYS, &pr->r);
	ps->section = CONFIG_PARSE_RESOURCE;
	ps->res = pr;
}

/* The header of a section the file may hold once; *first is where it
 * started, 0 until then. A second one adds to the first. */
static void
config_parse_single(struct config_parse *ps, const char *name,
    enum config_parse_section section, unsigned *first)
{
	ps->section = section;
	ps->cur = NULL;
	if (*first != 0) {
		config_parse_error(ps, ps->lineno, "[%s]: section given twice, "
		    "first on line %u", name, *first);
	} else
		*first = ps->lineno;
}

/* A section header: name is what lies between '[' and ']', rest follows. */
static void
config_parse_section(struct config_parse *ps, const char *name,
    const char *rest)
{
	rest = config_parse_lskip(rest);
	if (*rest != '\0' && *rest != ';' && *rest != '#') {
		config_parse_error(ps, ps->lineno, "[%s]: unexpected \"%s\" "
		    "after the section header", name, rest);
	}
	if (strcmp(name, "daemon") == 0)
		config_parse_single(ps, name, CONFIG_PARSE_DAEMON,
		    &ps->daemon_line);
	else if (strcmp(name, "http") == 0)
		config_parse_single(ps, name, CONFIG_PARSE_HTTP,
		    &ps->http_line);
	else if (strcmp(name, "cluster") == 0)
		config_parse_single(ps, name, CONFIG_PARSE_CLUSTER,
		    &ps->cluster_line);
	else if (strncmp(name, "priority.", 9) == 0)
		config_parse_priority(ps, name, name + 9);
	else if (strncmp(name, "resource.", 9) == 0)
		config_parse_resource(ps, name, name + 9);
	else {
		config_parse_error(ps, ps->lineno, "[%s]: unknown section; "
		    "expected [daemon], [http], [cluster], [priority.NAME] or "
		    "[resource.NAME]", name);
		ps->section = CONFIG_PARSE_IGNORED;
		ps->cur = NULL;
	}
}

/* The key at the start of a line, if it looks like one, for messages about
 * lines too long to parse. */
static void
config_parse_long_line(struct config_parse *ps, const char *s, size_t len,
    int max)
{
	const char *end;
	size_t klen;

	if (*s == '[')
		end = strchr(s, ']') != NULL ? strchr(s, ']') + 1 : s;
	else {
		end = config_parse_find(s, "=:");
		if (*end == '\0')
			end = s;
		while (end > s && isspace((unsigned char)end[-1]))
			end--;
	}
	klen = (size_t)(end - s);
	if (klen > 0 && klen <= CONFIG_PARSE_NAME_MAX) {
		config_parse_error(ps, ps->lineno, "%.*s: line too long: %zu "
		    "characters, at most %d", (int)klen, s, len, max);
	} else {
		config_parse_error(ps, ps->lineno, "line too long: %zu "
		    "characters, at most %d", len, max);
	}
}

/*
 * Decides what inih will make of line (without its newline) the same way
 * inih does, so that the handler knows the line and the section, and
 * reports what inih would only count. Returns 1 to hand the line to inih,
 * 0 to hand it a blank line instead.
 */
static int
config_parse_line(struct config_parse *ps, const char *line, size_t len,
    int max)
{
	const char *s = config_parse_lskip(line), *end;
	bool indented = s > line;
	size_t klen;
	char *name;

	if (*s == '\0' || *s == ';' || *s == '#')
		return 0;	/* blank or comment, whatever its length */
	if (len > (size_t)max) {
		config_parse_long_line(ps, s, len, max);
		/* The keys after a header we cannot read must not land in
		 * the section before it. */
		if (*s == '[' && !(ps->after_key && indented)) {
			ps->section = CONFIG_PARSE_IGNORED;
			ps->cur = NULL;
		}
		return 0;
	}
	if (ps->after_key && indented) {
		config_parse_error(ps, ps->lineno, "%s: this indented line "
		    "continues the value of %s from line %u; values take one "
		    "line, so remove the indentation", ps->after_key_name,
		    ps->after_key_name, ps->after_key_line);
		return 1;
	}
	if (*s == '[') {
		end = config_parse_find(s + 1, "]");
		if (*end != ']') {
			config_parse_error(ps, ps->lineno, "%s: section header "
			    "without \"]\"", s);
			return 0;
		}
		name = strndup(s + 1, (size_t)(end - s - 1));
		if (name == NULL) {
			ps->oom = true;
			return 0;
		}
		ps->after_key = false;
		config_parse_section(ps, name, end + 1);
		free(name);
		return 1;
	}
	end = config_parse_find(s, "=:");
	if (*end != '=' && *end != ':') {
		config_parse_error(ps, ps->lineno, "%s: expected KEY = VALUE",
		    s);
		return 0;
	}
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	klen = (size_t)(end - s);
	if (klen == 0) {
		/* inih forgets the last key here, so follow it. */
		config_parse_error(ps, ps->lineno, "%s: expected KEY = VALUE",
		    s);
		ps->after_key = false;
		return 1;
	}
	ps->after_key = true;
	ps->after_key_line = ps->lineno;
	if (klen >= sizeof ps->after_key_name)
		klen = sizeof ps->after_key_name - 1;
	memcpy(ps->after_key_name, s, klen);
	ps->after_key_name[klen] = '\0';
	ps->key_line = true;
	return 1;
}

/* inih's fgets: reads whole lines with getline, whatever their length,
 * and hands over each line or, for lines inih must not see, a blank one. */
static char *
config_parse_read_cb(char *str, int num, void *stream)
{
	struct config_parse *ps = stream;
	ssize_t got;
	size_t len;
	char *line;

	ps->key_line = false;
	if (num < 3)
		return NULL;
	errno = 0;
	got = getline(&ps->buf, &ps->size, ps->f);
	if (got == -1) {
		if (errno == ENOMEM)
			ps->oom = true;
		else if (ferror(ps->f))
			ps->read_errno = errno != 0 ? errno : EIO;
		return NULL;
	}
	ps->lineno++;
	line = ps->buf;
	len = (size_t)got;
	if (ps->lineno == 1 && strncmp(line, "\xEF\xBB\xBF", 3) == 0) {
		line += 3;
		len -= 3;
	}
	/* inih strips trailing white space too; so do our messages. */
	while (len > 0 && isspace((unsigned char)line[len - 1]))
		line[--len] = '\0';

	if (strlen(line) != len) {
		config_parse_error(ps, ps->lineno, "line contains a NUL byte");
		strcpy(str, "\n");
	} else if (config_parse_line(ps, line, len, num - 3)) {
		memcpy(str, line, len);
		strcpy(str + len, "\n");
	} else
		strcpy(str, "\n");
	return str;
}

/* What a section's header says, before a priority's or a resource's
 * name. */
static const char *const config_parse_section_names[] = {
	[CONFIG_PARSE_NONE] = "",
	[CONFIG_PARSE_DAEMON] = "daemon",
	[CONFIG_PARSE_PRIORITY] = "priority.",
	[CONFIG_PARSE_HTTP] = "http",
	[CONFIG_PARSE_CLUSTER] = "cluster",
	[CONFIG_PARSE_RESOURCE] = "resource.",
	[CONFIG_PARSE_IGNORED] = "",
};

/* A key of a section: the table says what it takes and where it goes. */
static void
config_parse_key(struct config_parse *ps, const struct config_key *table,
    size_t n, unsigned *lines, bool *ok, void *base, const char *name,
    const char *value)
{
	const struct config_key *key;
	char *why;
	int i;

	i = config_table_find(table, n, name);
	if (i == -1) {
		config_parse_error(ps, ps->lineno, "%s: unknown key in [%s%s]",
		    name, config_parse_section_names[ps->section],
		    ps->section == CONFIG_PARSE_PRIORITY ? ps->cur->p.name :
		    ps->section == CONFIG_PARSE_RESOURCE ? ps->res->r.name :
		    "");
		return;
	}
	key = &table[i];
	if (lines[i] != 0) {
		config_parse_error(ps, ps->lineno, "%s: given twice, first on "
		    "line %u", name, lines[i]);
		return;
	}
	lines[i] = ps->lineno;
	if (config_value_set(key, value, base, &why) == -1) {
		if (why == NULL) {
			ps->oom = true;
			return;
		}
		config_parse_error(ps, ps->lineno, "%s: %s", name, why);
		free(why);
		return;
	}
	if (ok != NULL)
		ok[i] = true;
	if (key->type == CONFIG_TYPE_PRIORITY) {
		ps->default_priority = strdup(value);
		if (ps->default_priority == NULL)
			ps->oom = true;
	}
}

static int
config_parse_handle_cb(void *user, const char *section, const char *name,
    const char *value)
{
	struct config_parse *ps = user;

	(void)section;	/* ours is untruncated and knows bad headers */
	if (!ps->key_line)
		return 1;	/* a continuation, already reported */
	switch (ps->section) {
	case CONFIG_PARSE_NONE:
		config_parse_error(ps, ps->lineno, "%s: outside any section; "
		    "keys go under [daemon], [http], [cluster], "
		    "[priority.NAME] or [resource.NAME]", name);
		break;
	case CONFIG_PARSE_DAEMON:
		config_parse_key(ps, config_table_daemon,
		    CONFIG_TABLE_DAEMON_KEYS, ps->daemon_lines, NULL, ps->cfg,
		    name, value);
		break;
	case CONFIG_PARSE_HTTP:
		config_parse_key(ps, config_table_http,
		    CONFIG_TABLE_HTTP_KEYS, ps->http_lines, NULL, ps->cfg,
		    name, value);
		break;
	case CONFIG_PARSE_CLUSTER:
		config_parse_key(ps, config_table_cluster,
		    CONFIG_TABLE_CLUSTER_KEYS, ps->cluster_lines, NULL, ps->cfg,
		    name, value);
		break;
	case CONFIG_PARSE_PRIORITY:
		config_parse_key(ps, config_table_priority,
		    CONFIG_TABLE_PRIORITY_KEYS, ps->cur->lines, ps->cur->ok,
		    &ps->cur->p, name, value);
		break;
	case CONFIG_PARSE_RESOURCE:
		config_parse_key(ps, config_table_resource,
		    CONFIG_TABLE_RESOURCE_KEYS, ps->res->lines, NULL,
		    &ps->res->r, name, value);
		break;
	case CONFIG_PARSE_IGNORED:
		break;
	}
	return 1;
}

void
config_parse_file(struct config_parse *ps, FILE *f)
{
	size_t i;
	int line;

	ps->f = f;
	line = ini_parse_stream(config_parse_read_cb, ps,
	    config_parse_handle_cb, ps);
	ps->f = NULL;
	if (ps->read_errno != 0) {
		config_parse_error(ps, 0, "cannot read: %s",
		    strerror(ps->read_errno));
		return;
	}
	if (line == -2)
		ps->oom = true;
	if (line <= 0)
		return;
	/* Our reader mirrors inih, so this is only a safety net. */
	for (i = 0; i < ps->nerrors; i++) {
		if (ps->errors[i].line == (unsigned)line)
			return;
	}
	config_parse_error(ps, (unsigned)line, "cannot parse this line");
}
