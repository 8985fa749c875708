/* bare.c - for the daemon tests of connections on a bare loop: a struct
 * triaged with the built-in config and nothing else, no store, no jobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "bare.h"
#include "caller-env.h"
#include "config.h"
#include "triaged.h"

void
bare_init(struct triaged *td, struct event_base *base)
{
	struct caller_env caller = { .euid = geteuid(),
	    .home = "/nonexistent" };
	struct config_opts opts = { .env = &caller };
	char *cause = NULL;

	td->base = base;
	td->uid = geteuid();
	td->phase = TRIAGED_RUNNING;
	if ((td->cfg = config_load(&opts, &cause)) == NULL)
		fail_msg("config: %s", cause ? cause : "?");
}

void
bare_clear(struct triaged *td)
{
	config_free(td->cfg);
	td->cfg = NULL;
}
