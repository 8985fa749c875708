/* cmd.h - the triage command table's entry, and what every subcommand
 * shares: option parsing, the connection, calls that report their errors. */
#ifndef TRIAGE_CMD_H
#define TRIAGE_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "triage/client.h"

/* Exit statuses, as triage(1) documents them under EXIT STATUS. */
#define CMD_EXIT_OK		0
#define CMD_EXIT_FAILURE	1	/* the daemon refused, or we failed */
#define CMD_EXIT_USAGE		2
#define CMD_EXIT_UNREACHABLE	3	/* no daemon, or the connection broke */
#define CMD_EXIT_REJECTED	4	/* reload: the config was rejected */
/* Not an exit status: what a command returns once it has shown its --help
 * and done nothing else; main exits 0. Distinct from CMD_EXIT_OK so that no
 * caller of the parsing helpers mistakes it for "go on". */
#define CMD_EXIT_HELP		(-1)

/* The options every subcommand takes too; their getopt values. */
#define CMD_OPT_JSON	0x100
#define CMD_OPT_SOCKET	0x101
#define CMD_COMMON_LONGOPTS						\
	{ "help", no_argument, NULL, 'h' },				\
	{ "json", no_argument, NULL, CMD_OPT_JSON },			\
	{ "socket", required_argument, NULL, CMD_OPT_SOCKET }
/* cmd_getopt()'s answer when the command must end: see cmd_ctx.status. */
#define CMD_GETOPT_EXIT	0x1ff

struct cmd_ctx;

struct cmd_entry {
	const char *name;
	const char *args;	/* the synopsis after the name */
	const char *summary;	/* one line, for triage --help */
	const char *options;	/* its --help's option lines, or NULL */
	const char *notes;	/* its --help's closing text, or NULL */
	int (*exec)(struct cmd_ctx *ctx, int argc, char **argv);
};

struct cmd_ctx {
	const struct cmd_entry *entry;	/* the command running */
	const char *socket_flag;	/* --socket, or NULL */
	bool json;			/* --json */
	int status;			/* the exit status at CMD_GETOPT_EXIT,
					 * CMD_EXIT_HELP after --help */
	char *socket_path;		/* once resolved */
	struct triage_client *client;		/* once connected */
};

extern const struct cmd_entry *const cmd_table[];

extern const struct cmd_entry cmd_submit_entry;
extern const struct cmd_entry cmd_status_entry;
extern const struct cmd_entry cmd_list_entry;
extern const struct cmd_entry cmd_wait_entry;
extern const struct cmd_entry cmd_cancel_entry;
extern const struct cmd_entry cmd_output_entry;
extern const struct cmd_entry cmd_watch_entry;
extern const struct cmd_entry cmd_stats_entry;
extern const struct cmd_entry cmd_pause_entry;
extern const struct cmd_entry cmd_resume_entry;
extern const struct cmd_entry cmd_reload_entry;
extern const struct cmd_entry cmd_retry_entry;
extern const struct cmd_entry cmd_hold_entry;
extern const struct cmd_entry cmd_release_entry;
extern const struct cmd_entry cmd_freeze_entry;
extern const struct cmd_entry cmd_thaw_entry;
extern const struct cmd_entry cmd_update_entry;
extern const struct cmd_entry cmd_remove_entry;
extern const struct cmd_entry cmd_clean_entry;
extern const struct cmd_entry cmd_priorities_entry;
extern const struct cmd_entry cmd_resources_entry;

/* Prints "triage: MESSAGE" on stderr. */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a usage error with a hint to --help; returns CMD_EXIT_USAGE. */
int cmd_usage(struct cmd_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints the command's --help on stdout. */
void cmd_help(const struct cmd_entry *entry);

/*
 * getopt_long for a subcommand (optind must be 0 on the first call): handles
 * --help, --json and --socket itself, and returns CMD_GETOPT_EXIT with
 * ctx->status set after --help (CMD_EXIT_HELP) or a usage error (printed;
 * 2). optstring must start with ":" (after "+" if wanted) and hold "h".
 * The first call looks for -h or --help among all the options first: when
 * there is one, it wins over every other option, valid or not, and the
 * command is to do nothing but return ctx->status. For main (no entry),
 * it returns 'h' instead.
 */
int cmd_getopt(struct cmd_ctx *ctx, int argc, char **argv,
    const char *optstring, const struct option *longopts);

/* For a value of cmd_getopt() the command does not read itself: the
 * status CMD_GETOPT_EXIT set, or that of an "unknown option" usage error. */
int cmd_getopt_other(struct cmd_ctx *ctx, int ch);

/*
 * For commands with no options of their own: parses the common ones and
 * checks that from min to max arguments are left (max -1: no limit); what
 * names one in a usage error ("job id"). Returns CMD_EXIT_OK with optind at
 * the first argument, else the status to return at once (CMD_EXIT_HELP
 * after --help, or that of a usage error it printed).
 */
int cmd_plain_args(struct cmd_ctx *ctx, int argc, char **argv, int min,
    int max, const char *what);
/* Checks that every argument from optind is a job id; CMD_EXIT_OK, or
 * the usage error's status. */
int cmd_check_ids(struct cmd_ctx *ctx, int argc, char **argv);
/* Appends each state named in arg ("failed" or "failed,lost") to the
 * array states; CMD_EXIT_OK, or the status of the usage error printed. */
int cmd_add_states(struct cmd_ctx *ctx, json_t *states, const char *arg);
/* For commands that show the stats result (stats, priorities): takes no
 * arguments, fetches it, and prints it with print, or as JSON with --json.
 * Returns the exit status, or CMD_EXIT_HELP. */
int cmd_show_stats(struct cmd_ctx *ctx, int argc, char **argv,
    void (*print)(const json_t *stats));
/* Reads a job id (a positive decimal integer); 0, or -1 when it is not. */
int cmd_parse_id(const char *s, int64_t *id);
/* Reads a count of at least min; 0, or -1 when it is not. */
int cmd_parse_count(const char *s, long min, long *n);

/* The connection, opened on first use; NULL after printing why. */
struct triage_client *cmd_client(struct cmd_ctx *ctx);
/*
 * Calls method (params stolen) and sets *result. On error prints it as
 * "triage: MESSAGE" and returns CMD_EXIT_FAILURE (the daemon refused) or
 * CMD_EXIT_UNREACHABLE (no daemon, or the connection broke); else
 * CMD_EXIT_OK.
 */
int cmd_call(struct cmd_ctx *ctx, const char *method, json_t *params,
    json_t **result);
/* Prints err; returns CMD_EXIT_UNREACHABLE for a transport error, else
 * CMD_EXIT_FAILURE. */
int cmd_report(const struct triage_error *err);

/* Every job list matches (params: list's, stolen; paged by after_id);
 * an exit status as cmd_call()'s. *jobs is an array. */
int cmd_list_fetch(struct cmd_ctx *ctx, json_t *params, json_t **jobs);
/* Prints the priorities of a stats result as a table of the fields keys
 * (NULL-terminated, at most 16) names, "name" first. */
void cmd_priorities_table(const json_t *stats, const char *const *keys,
    FILE *f);

#endif
