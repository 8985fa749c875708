/* method-reload.c - `reload`: the same as SIGHUP, answered once the new
 * config is in force, or with why it was rejected. Admins only. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "method.h"
#include "reload.h"
#include "rpc.h"

/* One string for each line of text; NULL when out of memory. */
static json_t *
reload_lines(const char *text)
{
	const char *p = text, *nl;
	json_t *a;

	if ((a = json_array()) == NULL)
		return NULL;
	while (p != NULL && *p != '\0') {
		nl = strchr(p, '\n');
		if (json_array_append_new(a, json_stringn(p,
		    nl ? (size_t)(nl - p) : strlen(p))) != 0) {
			json_decref(a);
			return NULL;
		}
		p = nl ? nl + 1 : NULL;
	}
	return a;
}

static void
reload_handler(struct rpc_req *req, json_t *params)
{
	char *errors = NULL;
	json_t *lines;

	(void)params;
	if (reload_config(rpc_daemon(req), &errors) == 0) {
		rpc_reply(req, json_object());
		return;
	}
	lines = reload_lines(errors ? errors : "out of memory");
	rpc_error_data(req, RPC_CONFIG_REJECTED,
	    lines ? json_pack("{so}", "errors", lines) : NULL,
	    "config rejected: %s", errors ? errors : "out of memory");
	free(errors);
}

static const struct method_param reload_params[] = {
	{ NULL, 0, false, NULL },
};

const struct method method_reload = {
	.name = "reload",
	.params = reload_params,
	.flags = METHOD_ADMIN,
	.handler = reload_handler,
};
