/* resenv.c - a job's devices as environment variables: the names of the
 * units it was given, so that it uses those and no others. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resenv.h"

void
resenv_var(const char *name, char *buf)
{
	size_t i, len;

	len = (size_t)snprintf(buf, RESENV_VAR_MAX, "TRIAGE_%s", name);
	if (len >= RESENV_VAR_MAX)
		len = RESENV_VAR_MAX - 1;
	for (i = sizeof "TRIAGE_" - 1; i < len; i++)
		buf[i] = buf[i] == '-' ? '_' :
		    (char)toupper((unsigned char)buf[i]);
}

/* "K=" and the unit names of units (an array of strings) joined by
 * commas, allocated; NULL with errno. */
static char *
resenv_join(const char *key, const json_t *units)
{
	size_t i, len = strlen(key) + 2, off;
	const json_t *u;
	char *s;

	json_array_foreach(units, i, u) {
		if (!json_is_string(u) || json_string_length(u) == 0) {
			errno = EINVAL;
			return NULL;
		}
		len += json_string_length(u) + 1;
	}
	if ((s = malloc(len)) == NULL)
		return NULL;
	off = (size_t)snprintf(s, len, "%s=", key);
	json_array_foreach(units, i, u)
		off += (size_t)snprintf(s + off, len - off, "%s%s",
		    i > 0 ? "," : "", json_string_value(u));
	return s;
}

/* A resource's name as config.md has it: 1 to 32 of a-z, 0-9, _ and -. */
static bool
resenv_name_ok(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len <= CONFIG_RESOURCE_NAME_MAX &&
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

int
resenv_vars(const json_t *devices, const struct config *cfg, char ***vars)
{
	char var[RESENV_VAR_MAX], **v;
	const json_t *units;
	const char *name;
	size_t n = 0;
	int i;

	*vars = NULL;
	if (devices != NULL && !json_is_object(devices)) {
		errno = EINVAL;
		return -1;
	}
	/* Two variables at most for each resource. */
	if ((v = calloc(2 * json_object_size(devices) + 1, sizeof *v)) ==
	    NULL)
		return -1;
	json_object_foreach((json_t *)(uintptr_t)devices, name, units) {
		if (!resenv_name_ok(name) || !json_is_array(units) ||
		    json_array_size(units) == 0) {
			errno = EINVAL;
			goto fail;
		}
		resenv_var(name, var);
		if ((v[n] = resenv_join(var, units)) == NULL)
			goto fail;
		n++;
		i = cfg != NULL ? config_resource_find(cfg, name) : -1;
		if (i == -1 || cfg->resources[i].env == NULL)
			continue;
		if ((v[n] = resenv_join(cfg->resources[i].env, units)) ==
		    NULL)
			goto fail;
		n++;
	}
	*vars = v;
	return 0;
fail:
	resenv_free(v);
	return -1;
}

void
resenv_free(char **vars)
{
	char **p;

	if (vars == NULL)
		return;
	for (p = vars; *p != NULL; p++)
		free(*p);
	free(vars);
}

bool
resenv_sets(char *const *vars, const char *kv)
{
	size_t len = strcspn(kv, "=");

	for (; vars != NULL && *vars != NULL; vars++)
		if (strncmp(*vars, kv, len) == 0 && (*vars)[len] == '=')
			return true;
	return false;
}
