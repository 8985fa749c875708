/* cmd.c - what the triage subcommands share: their option parsing with the
 * common options, error lines, and a connection opened on first use. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "format.h"
#include "xmalloc.h"

void
cmd_error(const char *fmt, ...)
{
	va_list ap;

	fputs("triage: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
cmd_usage(struct cmd_ctx *ctx, const char *fmt, ...)
{
	const char *name = ctx->entry != NULL ? ctx->entry->name : NULL;
	va_list ap;

	fputs("triage: ", stderr);
	if (name != NULL)
		fprintf(stderr, "%s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (name != NULL)
		fprintf(stderr, " (see 'triage %s --help')\n", name);
	else
		fputs(" (see 'triage --help')\n", stderr);
	return CMD_EXIT_USAGE;
}

void
cmd_help(const struct cmd_entry *entry)
{
	printf("usage: triage %s%s%s\n\n%c%s.\n\n", entry->name,
	    entry->args[0] != '\0' ? " " : "", entry->args,
	    toupper((unsigned char)entry->summary[0]), entry->summary + 1);
	if (entry->options != NULL)
		fputs(entry->options, stdout);
	fputs("  -h, --help           show this help\n"
	    "      --json           print JSON, one object per line\n"
	    "      --socket PATH    the daemon's socket (see triage --help)\n",
	    stdout);
	if (entry->notes != NULL)
		printf("\n%s", entry->notes);
}

/* The option as the user wrote it, for an error: "--name" or "-x". */
static void
cmd_option_name(char **argv, char *buf, size_t len)
{
	const char *arg = argv[optind - 1];
	size_t n;

	if (strncmp(arg, "--", 2) == 0) {
		n = strcspn(arg, "=");
		snprintf(buf, len, "%.*s", (int)n, arg);
	} else if (optopt > 0 && optopt < 0x100)
		snprintf(buf, len, "-%c", optopt);
	else
		snprintf(buf, len, "%s", arg);
}

/*
 * Whether -h or --help is among the options, wherever it stands: a pass of
 * getopt over a copy of argv (getopt reorders the one it reads) that minds
 * nothing else. It reads options exactly as the real pass will, so the
 * value of an option ("-p --help") and what follows "--" or, with "+", the
 * first word that is not an option (submit's command) are not asked for
 * help. Leaves optind at 0 for the real pass.
 */
static bool
cmd_wants_help(int argc, char **argv, const char *optstring,
    const struct option *longopts)
{
	char **copy;
	bool help = false;
	int ch;

	copy = xcalloc((size_t)argc + 1, sizeof *copy);
	memcpy(copy, argv, (size_t)argc * sizeof *copy);
	optind = 0;
	while (!help &&
	    (ch = getopt_long(argc, copy, optstring, longopts, NULL)) != -1)
		help = ch == 'h';
	free(copy);
	optind = 0;
	return help;
}

int
cmd_getopt(struct cmd_ctx *ctx, int argc, char **argv, const char *optstring,
    const struct option *longopts)
{
	char name[64];
	int ch;

	opterr = 0;
	/* The first call: --help anywhere wins over everything, errors in
	 * the options before it included, and nothing else is done. */
	if (optind == 0 && cmd_wants_help(argc, argv, optstring, longopts))
		ch = 'h';
	else
		ch = getopt_long(argc, argv, optstring, longopts, NULL);
	switch (ch) {
	case 'h':
		if (ctx->entry == NULL)
			return ch;	/* triage --help: main's own */
		cmd_help(ctx->entry);
		ctx->status = CMD_EXIT_HELP;
		return CMD_GETOPT_EXIT;
	case CMD_OPT_JSON:
		ctx->json = true;
		return cmd_getopt(ctx, argc, argv, optstring, longopts);
	case CMD_OPT_SOCKET:
		/* "" names no socket: most likely a variable that is unset,
		 * which is the user's mistake, not a daemon that is away. */
		if (optarg[0] == '\0') {
			ctx->status = cmd_usage(ctx,
			    "option --socket needs a path, not \"\"");
			return CMD_GETOPT_EXIT;
		}
		ctx->socket_flag = optarg;
		return cmd_getopt(ctx, argc, argv, optstring, longopts);
	case ':':
		cmd_option_name(argv, name, sizeof name);
		ctx->status = cmd_usage(ctx, "option %s needs a value", name);
		return CMD_GETOPT_EXIT;
	case '?':
		cmd_option_name(argv, name, sizeof name);
		if (strncmp(name, "--", 2) == 0 &&
		    strchr(argv[optind - 1], '=') != NULL)
			ctx->status = cmd_usage(ctx,
			    "option %s takes no value, or is unknown", name);
		else
			ctx->status = cmd_usage(ctx, "unknown option %s", name);
		return CMD_GETOPT_EXIT;
	default:
		return ch;
	}
}

int
cmd_getopt_other(struct cmd_ctx *ctx, int ch)
{
	if (ch == CMD_GETOPT_EXIT)
		return ctx->status;
	return cmd_usage(ctx, "unknown option");
}

int
cmd_parse_id(const char *s, int64_t *id)
{
	long long n;
	char *end;

	if (*s < '1' || *s > '9')
		return -1;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*id = n;
	return 0;
}

int
cmd_parse_count(const char *s, long min, long *n)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > INT32_MAX)
		return -1;
	*n = v;
	return 0;
}

/* Says once per outage, on stderr, that the daemon went and came back. */
static void
cmd_outage_cb(const char *path, enum triage_outage what, void *arg)
{
	(void)arg;
	fflush(stdout);
	if (what == TRIAGE_OUTAGE_LOST)
		cmd_error("lost triaged at %s; reconnecting", path);
	else
		cmd_error("reconnected to triaged at %s", path);
}

/*
 * How long a command waits for a daemon that went away to come back:
 * $TRIAGE_RECONNECT seconds (0: not at all), else TRIAGE_RECONNECT_DEFAULT_MS.
 * A value that is not a count of seconds is said and the default taken:
 * a typo must not turn a long wait into a failure at the next restart.
 */
static int
cmd_reconnect_ms(void)
{
	const char *s = getenv("TRIAGE_RECONNECT");
	long secs;

	if (s == NULL || *s == '\0')
		return TRIAGE_RECONNECT_DEFAULT_MS;
	if (cmd_parse_count(s, 0, &secs) == -1 || secs > INT32_MAX / 1000) {
		cmd_error("TRIAGE_RECONNECT='%s' is not a number of seconds: "
		    "taking %d", s, TRIAGE_RECONNECT_DEFAULT_MS / 1000);
		return TRIAGE_RECONNECT_DEFAULT_MS;
	}
	return (int)secs * 1000;
}

struct triage_client *
cmd_client(struct cmd_ctx *ctx)
{
	char *cause;

	if (ctx->client != NULL)
		return ctx->client;
	/* The library reads $TRIAGE_SOCKET and $XDG_RUNTIME_DIR itself, as
	 * any program built on it does: one order for all. */
	if (ctx->socket_path == NULL && (ctx->socket_path =
	    triage_client_socket_path(ctx->socket_flag)) == NULL)
		xoom();
	ctx->client = triage_client_connect(ctx->socket_path, &cause);
	if (ctx->client == NULL) {
		if (cause == NULL)
			xoom();
		cmd_error("%s", cause);
		free(cause);
	} else
		triage_client_reconnect(ctx->client, cmd_reconnect_ms(),
		    cmd_outage_cb, NULL);
	return ctx->client;
}

int
cmd_report(const struct triage_error *err)
{
	cmd_error("%s", err->message);
	if (err->code == TRIAGE_ERR_TRANSPORT)
		return CMD_EXIT_UNREACHABLE;
	return CMD_EXIT_FAILURE;
}

int
cmd_call(struct cmd_ctx *ctx, const char *method, json_t *params,
    json_t **result)
{
	struct triage_error err;
	struct triage_client *c;

	*result = NULL;
	if ((c = cmd_client(ctx)) == NULL) {
		json_decref(params);
		return CMD_EXIT_UNREACHABLE;
	}
	if ((*result = triage_client_call(c, method, params, -1, &err)) == NULL)
		return cmd_report(&err);
	return CMD_EXIT_OK;
}

int
cmd_plain_args(struct cmd_ctx *ctx, int argc, char **argv, int min, int max,
    const char *what)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int ch, n;

	while ((ch = cmd_getopt(ctx, argc, argv, ":h", longopts)) != -1) {
		if (ch == CMD_GETOPT_EXIT)
			return ctx->status;
		return cmd_usage(ctx, "unknown option");
	}
	n = argc - optind;
	if (max == 0 && n > 0)
		return cmd_usage(ctx, "unexpected argument '%s'", argv[optind]);
	if (n < min && max == 1)
		return cmd_usage(ctx, "give one %s", what);
	if (n < min)
		return cmd_usage(ctx, "give at least one %s", what);
	if (max >= 0 && n > max)
		return cmd_usage(ctx, "give %s one %s", min == max ? "only" :
		    "at most", what);
	return CMD_EXIT_OK;
}

int
cmd_check_ids(struct cmd_ctx *ctx, int argc, char **argv)
{
	int64_t id;
	int i;

	for (i = optind; i < argc; i++)
		if (cmd_parse_id(argv[i], &id) == -1)
			return cmd_usage(ctx, "invalid job id '%s'", argv[i]);
	return CMD_EXIT_OK;
}

/* What the protocol names the states, in their order there. */
static const char *const cmd_states[] = {
	"queued", "running", "succeeded", "failed", "timed_out", "canceled",
	"lost", NULL,
};

int
cmd_add_states(struct cmd_ctx *ctx, json_t *states, const char *arg)
{
	const char *const *s;
	char *copy = xstrdup(arg), *word, *next = copy;

	while ((word = strsep(&next, ",")) != NULL) {
		for (s = cmd_states; *s != NULL; s++) {
			if (strcmp(*s, word) == 0)
				break;
		}
		if (*s == NULL) {
			cmd_usage(ctx, "unknown state '%s' (queued, running, "
			    "succeeded, failed, timed_out, canceled, lost)",
			    word);
			free(copy);
			return CMD_EXIT_USAGE;
		}
		json_array_append_new(states, xjson(json_string(*s)));
	}
	free(copy);
	return CMD_EXIT_OK;
}

int
cmd_show_stats(struct cmd_ctx *ctx, int argc, char **argv,
    void (*print)(const json_t *stats))
{
	json_t *stats;
	int rc;

	if ((rc = cmd_plain_args(ctx, argc, argv, 0, 0, NULL)) != CMD_EXIT_OK)
		return rc;
	if ((rc = cmd_call(ctx, "stats", NULL, &stats)) != CMD_EXIT_OK)
		return rc;
	if (ctx->json)
		format_json_line(stats);
	else
		print(stats);
	json_decref(stats);
	return CMD_EXIT_OK;
}
