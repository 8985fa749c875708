/* cmd-freeze.c - triage freeze and triage thaw: stop a running job's
 * processes where they are, and let them go on; only the method differs. */
#include "cmd.h"
#include "selector.h"

const struct cmd_entry cmd_freeze_entry = {
	.name = "freeze",
	.args = SELECTOR_ARGS,
	.summary = "stop running jobs where they are, until thawed",
	.options = SELECTOR_HELP,
	.notes =
	    "A frozen job stays running and keeps its slots, but its "
	    "processes do not\n"
	    "run (a cgroup's freezer, or SIGSTOP without cgroups), and its "
	    "timeout does\n"
	    "not count, until 'triage thaw'. A job named by id that is not "
	    "running is\n"
	    "left as it is, and said to be (status 1); one already frozen is "
	    "not an\n"
	    "error. With several ids or an option that chooses jobs, prints "
	    "the ids of\n"
	    "the jobs frozen, one a line. With --json, prints the daemon's "
	    "answer: the\n"
	    "job, or {\"ids\": [...]}.\n",
	.exec = selector_exec,
};

const struct cmd_entry cmd_thaw_entry = {
	.name = "thaw",
	.args = SELECTOR_ARGS,
	.summary = "let frozen jobs run on",
	.options = SELECTOR_HELP,
	.notes =
	    "A thawed job's processes go on from where they were, and its "
	    "timeout from\n"
	    "what was left of it. Jobs that are not frozen are left as they "
	    "are; one\n"
	    "named by id that has ended is said to be (status 1). With "
	    "several ids or\n"
	    "an option that chooses jobs, prints the ids of the jobs thawed, "
	    "one a line.\n"
	    "With --json, prints the daemon's answer: the job, or {\"ids\": "
	    "[...]}.\n",
	.exec = selector_exec,
};
