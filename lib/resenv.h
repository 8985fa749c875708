/* resenv.h - the environment variables that tell a job which units of its
 * resources it was given (protocol v1.2): TRIAGE_<NAME> and the resource's
 * env, each the comma-separated unit names. */
#ifndef TRIAGE_RESENV_H
#define TRIAGE_RESENV_H

#include <stdbool.h>

#include <jansson.h>

#include "config.h"

/* The size of the longest TRIAGE_<NAME>, its NUL included. */
#define RESENV_VAR_MAX (sizeof "TRIAGE_" + CONFIG_RESOURCE_NAME_MAX)

/*
 * The variable that names the units of resource name: TRIAGE_ and the
 * name in upper case, each '-' as '_' ("gpu-a": TRIAGE_GPU_A), into buf
 * (RESENV_VAR_MAX bytes; a longer name is cut).
 */
void resenv_var(const char *name, char *buf);

/*
 * The variables a job's devices give its process (devices: an object of
 * resource name to an array of unit names, as admission grants them; NULL
 * for none): for each resource, TRIAGE_<NAME>=U1,U2 and, when cfg has that
 * resource with an env, ENV=U1,U2 as well. cfg NULL: no env variables.
 * Sets *vars to a new NULL-terminated vector of allocated "K=V" strings
 * (empty for no devices), freed by resenv_free. 0, or -1 with errno
 * (ENOMEM; EINVAL when devices is not of that form) and *vars NULL.
 */
int resenv_vars(const json_t *devices, const struct config *cfg,
    char ***vars);
void resenv_free(char **vars);

/* Whether vars sets the variable of kv ("K=V", or a bare name): a job's
 * own variable of that name must give way to it. */
bool resenv_sets(char *const *vars, const char *kv);

#endif
