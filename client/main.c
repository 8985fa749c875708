/* main.c - triage, the command-line client of triaged: the global options,
 * the command table, and the run of one subcommand. */
#include <sys/auxv.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "version.h"

const struct cmd_entry *const cmd_table[] = {
	&cmd_submit_entry,
	&cmd_status_entry,
	&cmd_list_entry,
	&cmd_wait_entry,
	&cmd_cancel_entry,
	&cmd_retry_entry,
	&cmd_hold_entry,
	&cmd_release_entry,
	&cmd_freeze_entry,
	&cmd_thaw_entry,
	&cmd_update_entry,
	&cmd_remove_entry,
	&cmd_clean_entry,
	&cmd_output_entry,
	&cmd_watch_entry,
	&cmd_stats_entry,
	&cmd_priorities_entry,
	&cmd_resources_entry,
	&cmd_pause_entry,
	&cmd_resume_entry,
	&cmd_reload_entry,
	NULL,
};

static void
main_help(void)
{
	const struct cmd_entry *const *e;

	printf("usage: triage [--socket PATH] [--json] COMMAND [ARG...]\n"
	    "       triage COMMAND --help\n"
	    "\n"
	    "Submits jobs to triaged, the priority job-dispatch daemon, and "
	    "shows them.\n"
	    "\n"
	    "Commands:\n");
	for (e = cmd_table; *e != NULL; e++)
		printf("  %-11s %s\n", (*e)->name, (*e)->summary);
	printf("\n"
	    "Options (before the command, or after it):\n"
	    "      --socket PATH  the daemon's socket; else $TRIAGE_SOCKET, "
	    "else\n"
	    "                     $XDG_RUNTIME_DIR/triage/triage.sock if that\n"
	    "                     directory exists (your own daemon; not for\n"
	    "                     root), else " TRIAGE_SOCKET_SYSTEM "\n"
	    "      --json         print JSON, one object per line\n"
	    "  -h, --help         show this help\n"
	    "  -V, --version      print the version\n"
	    "\n"
	    "Environment:\n"
	    "  TRIAGE_SOCKET      the daemon's socket, without --socket\n"
	    "  TRIAGE_RECONNECT   seconds to wait for a daemon that went away "
	    "(restart,\n"
	    "                     upgrade) before a command that only reads "
	    "gives up;\n"
	    "                     300 unless set, 0: at once\n"
	    "\n"
	    "Exit status:\n"
	    "  0    success\n"
	    "  1    the daemon refused a request, or an id named did nothing\n"
	    "  2    usage error\n"
	    "  3    the daemon cannot be reached, or the connection broke\n"
	    "  4    reload: the daemon rejected the config (the old one "
	    "stays)\n"
	    "  wait, submit --wait: the job's exit code (0 succeeded); 128+N "
	    "killed by\n"
	    "  signal N; 124 timed out; 125 canceled; 126 lost; 127 failed "
	    "without\n"
	    "  running.\n"
	    "\n"
	    "See triage(1).\n");
}

/*
 * Seeds jansson's hash tables from the 16 random bytes the kernel gives every
 * process at exec, before any JSON object exists: otherwise jansson reads
 * /dev/urandom at the first one, three system calls a command pays for
 * nothing better.
 */
static void
main_seed_json(void)
{
	const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
	size_t seed = 0, i;

	if (r == NULL)
		return;		/* jansson seeds itself */
	for (i = 0; i < sizeof seed; i++)
		seed = seed << 8 | r[8 + i % 8];
	json_object_seed(seed != 0 ? seed : 1);
}

static const struct cmd_entry *
main_find(const char *name)
{
	const struct cmd_entry *const *e;

	for (e = cmd_table; *e != NULL; e++) {
		if (strcmp((*e)->name, name) == 0)
			return *e;
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, CMD_OPT_JSON },
		{ "socket", required_argument, NULL, CMD_OPT_SOCKET },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_ctx ctx;
	const struct cmd_entry *entry;
	int ch, status;

	main_seed_json();
	memset(&ctx, 0, sizeof ctx);
	/* "+": the subcommand and everything after it are its own. optind 0:
	 * cmd_getopt's first call, which looks for --help first. */
	optind = 0;
	while ((ch = cmd_getopt(&ctx, argc, argv, "+:hV", longopts)) != -1) {
		switch (ch) {
		case 'h':
			main_help();
			return CMD_EXIT_OK;
		case 'V':
			printf("triage %s\n", TRIAGE_VERSION);
			return CMD_EXIT_OK;
		case CMD_GETOPT_EXIT:
			return ctx.status;
		default:
			return cmd_usage(&ctx, "unknown option");
		}
	}
	if (optind == argc)
		return cmd_usage(&ctx, "no command given");
	argc -= optind;
	argv += optind;

	if (strcmp(argv[0], "help") == 0) {
		if (argc == 1) {
			main_help();
			return CMD_EXIT_OK;
		}
		if ((entry = main_find(argv[1])) == NULL)
			return cmd_usage(&ctx, "unknown command '%s'", argv[1]);
		cmd_help(entry);
		return CMD_EXIT_OK;
	}
	if ((entry = main_find(argv[0])) == NULL)
		return cmd_usage(&ctx, "unknown command '%s'", argv[0]);

	ctx.entry = entry;
	optind = 0;		/* getopt starts afresh on the subcommand */
	status = entry->exec(&ctx, argc, argv);
	if (status == CMD_EXIT_HELP)
		status = CMD_EXIT_OK;

	triage_client_free(ctx.client);
	free(ctx.socket_path);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		cmd_error("cannot write the output: %s", strerror(errno));
		if (status == CMD_EXIT_OK)
			status = CMD_EXIT_FAILURE;
	}
	return status;
}
