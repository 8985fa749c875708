/* selector.h - the options that choose jobs by what they are (-p, --state,
 * --label, --name, --all) beside ids, and the protocol's filter they make. */
#ifndef TRIAGE_SELECTOR_H
#define TRIAGE_SELECTOR_H

#include <stdbool.h>

#include <jansson.h>

#include "cmd.h"

#define SELECTOR_STATE	0x140
#define SELECTOR_LABEL	0x141
#define SELECTOR_NAME	0x142
#define SELECTOR_ALL	0x143

/* For a command's longopts. */
#define SELECTOR_LONGOPTS						\
	{ "priority", required_argument, NULL, 'p' },			\
	{ "state", required_argument, NULL, SELECTOR_STATE },		\
	{ "label", required_argument, NULL, SELECTOR_LABEL },		\
	{ "name", required_argument, NULL, SELECTOR_NAME },		\
	{ "all", no_argument, NULL, SELECTOR_ALL }
/* A command's usage line with them. */
#define SELECTOR_ARGS							\
	"[-p PRIO] [--state S] [--label K=V]... [--name NAME] [--all]\n"	\
	"           [ID...]"
/* Their --help lines. */
#define SELECTOR_HELP							\
	"  -p, --priority PRIO  the jobs of this priority\n"		\
	"      --state S        the jobs in state S (repeatable, or S,S)\n" \
	"      --label K=V      the jobs with this label (repeatable: "	\
	"all of them)\n"						\
	"      --name NAME      the jobs of this name\n"		\
	"      --all            every job you may act on\n"

struct selector {
	json_t *filter;		/* the protocol's filter, but ids */
	bool chosen;		/* an option chose jobs (--all included) */
};

void selector_init(struct selector *sel);
void selector_free(struct selector *sel);
/*
 * cmd_getopt for a command with the selector options among longopts
 * (optstring ":hp:"): reads those itself and returns the command's own
 * options, -1 at the end, or CMD_GETOPT_EXIT with ctx->status set (after
 * --help, or a usage error it printed).
 */
int selector_getopt(struct cmd_ctx *ctx, struct selector *sel, int argc,
    char **argv, const struct option *longopts);

/* The options of a command that has only the selector's and the common
 * ones; CMD_EXIT_OK, or the status to return (CMD_EXIT_HELP included). */
int selector_parse(struct cmd_ctx *ctx, struct selector *sel, int argc,
    char **argv);

/* After the options: that the arguments from optind are job ids, and that
 * there are some or a selector; CMD_EXIT_OK, or the usage error's status. */
int selector_check(struct cmd_ctx *ctx, const struct selector *sel, int argc,
    char **argv);

/*
 * After the options, with the job ids from optind: the params of a method
 * that takes an id or a filter. One id and no selector: {"id": ID} (v1's
 * form); else {"filter": ...} with the ids as its "ids", and *bulk set.
 * Neither ids nor a selector is a usage error. Returns CMD_EXIT_OK with
 * *params set (the caller's), or the usage error's status.
 */
int selector_params(struct cmd_ctx *ctx, struct selector *sel, int argc,
    char **argv, json_t **params, bool *bulk);

/* The filter (borrowed), for a command that lists what it selects. */
json_t *selector_filter(const struct selector *sel);

/*
 * Calls method with params (stolen). Prints, with --json, the result; else
 * for bulk the ids it acted on, one a line, and nothing for a single id.
 * Returns an exit status as cmd_call's.
 */
int selector_call(struct cmd_ctx *ctx, const char *method, json_t *params,
    bool bulk);

/* A whole command made of the selector options and ids, calling the
 * method of the command's name (hold, release, freeze, thaw, retry,
 * remove): a cmd_entry's exec. Returns an exit status, or CMD_EXIT_HELP. */
int selector_exec(struct cmd_ctx *ctx, int argc, char **argv);

#endif
