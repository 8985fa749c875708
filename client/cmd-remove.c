/* cmd-remove.c - triage remove: forgets finished jobs and their output now,
 * rather than after the daemon's keep_finished. */
#include "cmd.h"
#include "selector.h"

const struct cmd_entry cmd_remove_entry = {
	.name = "remove",
	.args = SELECTOR_ARGS,
	.summary = "delete finished jobs and their output",
	.options = SELECTOR_HELP,
	.notes =
	    "A single id of a job that has not finished is refused; with "
	    "several ids or\n"
	    "an option that chooses jobs, those are skipped (each id is "
	    "said on stderr,\n"
	    "status 1), and the ids of the jobs removed are printed, one a "
	    "line. See also\n"
	    "'triage clean'. With --json, prints the daemon's answer, "
	    "{\"ids\": [...]}.\n",
	.exec = selector_exec,
};
