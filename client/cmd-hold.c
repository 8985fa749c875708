/* cmd-hold.c - triage hold and triage release: keep queued jobs from
 * starting, and let them go again; one file, as only the method differs. */
#include "cmd.h"
#include "selector.h"

const struct cmd_entry cmd_hold_entry = {
	.name = "hold",
	.args = SELECTOR_ARGS,
	.summary = "keep queued jobs from starting until released",
	.options = SELECTOR_HELP,
	.notes =
	    "A held job stays queued, in its place, but does not start until "
	    "'triage\n"
	    "release'. A job named by id that is not queued is left as it is, "
	    "and said\n"
	    "to be (status 1); one already held is not an error. With several "
	    "ids or an\n"
	    "option that chooses jobs, prints the ids of the jobs held, one a "
	    "line. With\n"
	    "--json, prints the daemon's answer: the job, or {\"ids\": "
	    "[...]}.\n",
	.exec = selector_exec,
};

const struct cmd_entry cmd_release_entry = {
	.name = "release",
	.args = SELECTOR_ARGS,
	.summary = "let held jobs start again",
	.options = SELECTOR_HELP,
	.notes =
	    "A released job starts from the place it kept in its queue. "
	    "Jobs that are not\n"
	    "held are left as they are; one named by id that has ended is "
	    "said to be\n"
	    "(status 1). With several ids or an option that chooses jobs, "
	    "prints the ids\n"
	    "of the jobs released, one a line. With --json, prints the "
	    "daemon's answer:\n"
	    "the job, or {\"ids\": [...]}.\n",
	.exec = selector_exec,
};
