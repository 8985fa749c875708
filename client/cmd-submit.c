/* cmd-submit.c - triage submit: queues a command with the caller's working
 * directory and environment, prints its id, and with --wait waits for it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytestr.h"
#include "cmd.h"
#include "exitcode.h"
#include "format.h"
#include "job.h"
#include "jobopt.h"
#include "xmalloc.h"

extern char **environ;

#define CMD_SUBMIT_SLOTS	0x110
#define CMD_SUBMIT_EXCLUSIVE	0x111
#define CMD_SUBMIT_TIMEOUT	0x112
#define CMD_SUBMIT_ENV		0x113
#define CMD_SUBMIT_CLEAN_ENV	0x114
#define CMD_SUBMIT_WAIT		0x115
#define CMD_SUBMIT_RETRIES	0x116
#define CMD_SUBMIT_AFTER	0x117
#define CMD_SUBMIT_LABEL	0x118
#define CMD_SUBMIT_HOLD		0x119
#define CMD_SUBMIT_AT		0x11a
#define CMD_SUBMIT_DELAY	0x11b
#define CMD_SUBMIT_AFTER_ANY	0x11c
#define CMD_SUBMIT_NICE		0x11d
#define CMD_SUBMIT_MERGE	0x11e
#define CMD_SUBMIT_NODE		0x11f
#define CMD_SUBMIT_KEY		0x120

static int cmd_submit_exec(struct cmd_ctx *, int, char **);

const struct cmd_entry cmd_submit_entry = {
	.name = "submit",
	.args = "[-p PRIO] [-n NAME] [--slots N | --exclusive]\n"
	    "           [--timeout T] [--retries N] [--after ID,...]\n"
	    "           [--after-any ID,...] [--at TIME | --delay D] [--hold]\n"
	    "           [--nice N] [--memory SIZE] [--gpus N] [--res NAME=N]...\n"
	    "           [--merge-output] [--node NODE] [--label K=V]...\n"
	    "           [--key KEY]\n"
	    "           [--env K=V]... [--clean-env] [--wait] [--] CMD [ARG...]",
	.summary = "queue a command and print its job id",
	.options =
	    "  -p, --priority PRIO  the priority (default: the daemon's "
	    "default_priority)\n"
	    "  -n, --name NAME      a name to show (default: CMD's base name)\n"
	    "      --slots N        slots the job holds while it runs "
	    "(default 1)\n"
	    "      --exclusive      run alone, holding every slot\n"
	    "      --timeout T      kill the job after T: 500ms, 30s, 5m, 2h, "
	    "7d, or\n"
	    "                       seconds (default: the priority's; 0 = "
	    "none)\n"
	    "      --retries N      run it again up to N times if it fails or "
	    "times out\n"
	    "                       (default: the priority's)\n"
	    "      --after ID,...   start only after these jobs succeeded; if "
	    "one ends\n"
	    "                       otherwise, this job is canceled "
	    "(repeatable)\n"
	    "      --after-any ID,...\n"
	    "                       start only after these jobs ended, however "
	    "they did\n"
	    "                       (repeatable)\n"
	    "      --at TIME        start no sooner than TIME: HH:MM (today, "
	    "or tomorrow\n"
	    "                       once past) or RFC 3339 "
	    "(2026-12-01T08:00:00+01:00)\n"
	    "      --delay D        start no sooner than D from now: 10m, 2h, "
	    "1d\n"
	    "      --hold           queue it held: it starts once 'triage "
	    "release'd\n"
	    "      --nice N         run it at nice value N, 0 to 19 (default: "
	    "the\n"
	    "                       priority's; lower only for admins)\n"
	    "      --memory SIZE, --mem SIZE\n"
	    "                       the memory it may use: 512MiB, 4GiB, at "
	    "least 1MiB;\n"
	    "                       it starts once that fits the daemon's "
	    "budget; with\n"
	    "                       cgroups, its limit (default: the "
	    "priority's)\n"
	    "      --gpus N         N units of the resource gpu, as --res "
	    "gpu=N\n"
	    "      --res NAME=N     N units of the resource NAME, held while "
	    "it runs; it\n"
	    "                       is told which in TRIAGE_NAME "
	    "(repeatable)\n"
	    "      --merge-output   send its stderr to its stdout, as 2>&1 "
	    "does\n"
	    "      --node NODE      run it on that node of the cluster only "
	    "(default: any)\n"
	    "      --label K=V      tag it, to choose it by later "
	    "(repeatable)\n"
	    "      --key KEY        an idempotency key, 1 to 256 bytes: if a "
	    "job of yours\n"
	    "                       with this key is kept, print its id and "
	    "queue nothing\n"
	    "      --env K=V        set K in the job's environment "
	    "(repeatable)\n"
	    "      --clean-env      pass only the --env variables, not this "
	    "environment\n"
	    "      --wait           wait for the job; exit with its exit "
	    "status\n",
	.notes =
	    "The job runs CMD with its ARGs, without a shell, in the current "
	    "directory\n"
	    "and with this environment. Its id is printed alone on stdout:\n"
	    "    id=$(triage submit -p low -- make -j8)\n"
	    "With --json, prints the job object instead (and with --wait, the "
	    "finished\n"
	    "job's too).\n",
	.exec = cmd_submit_exec,
};

/* --key: a string of 1 to JOB_KEY_MAX bytes. */
static int
cmd_submit_key(struct cmd_ctx *ctx, json_t *params, const char *arg)
{
	size_t len = strlen(arg);
	json_t *v;

	if (len == 0 || len > JOB_KEY_MAX)
		return cmd_usage(ctx, "--key must be 1 to %d bytes; '%.20s%s' "
		    "has %zu", JOB_KEY_MAX, arg, len > 20 ? "..." : "", len);
	if ((v = json_string(arg)) == NULL)
		return cmd_usage(ctx, "--key: not valid UTF-8");
	json_object_set_new(params, "key", v);
	return CMD_EXIT_OK;
}

/*
 * Sets key to value in env, a JSON object: the value a byte string
 * (bytestr.h), the name a key of JSON, which must be UTF-8. A variable of
 * our own environment whose name is not is left out with a warning; one the
 * user asked for is a usage error.
 */
static int
cmd_submit_setenv(struct cmd_ctx *ctx, json_t *env, const char *kv,
    bool from_flag)
{
	const char *eq = strchr(kv, '=');
	char *key, *shown;
	int rc = CMD_EXIT_OK;

	if (eq == NULL || eq == kv) {
		if (from_flag)
			return cmd_usage(ctx, "--env needs K=V, not '%s'", kv);
		return CMD_EXIT_OK;	/* not a variable: nothing to pass */
	}
	key = xmalloc((size_t)(eq - kv) + 1);
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	if (bytestr_utf8(key, strlen(key)))
		json_object_set_new(env, key, xjson(bytestr_json(eq + 1)));
	else {
		if ((shown = bytestr_escape(key, true)) == NULL)
			xoom();
		if (from_flag)
			rc = cmd_usage(ctx, "--env: the name \"%s\" is not "
			    "valid UTF-8", shown);
		else
			cmd_error("warning: not sent: environment variable "
			    "\"%s\" (its name is not UTF-8)", shown);
		free(shown);
	}
	free(key);
	return rc;
}

/* Adds the ids of "3,4" to params' array key, for the option opt. */
static int
cmd_submit_after(struct cmd_ctx *ctx, json_t *params, const char *key,
    const char *opt, const char *list)
{
	json_t *after = json_object_get(params, key);
	char *copy = xstrdup(list), *tok, *save = NULL;
	int64_t id;

	if (after == NULL) {
		after = xjson(json_array());
		json_object_set_new(params, key, after);
	}
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (cmd_parse_id(tok, &id) == -1) {
			free(copy);
			return cmd_usage(ctx, "invalid %s '%s' (job ids "
			    "separated by commas)", opt, list);
		}
		json_array_append_new(after, xjson(json_integer(id)));
	}
	free(copy);
	if (json_array_size(after) == 0)
		return cmd_usage(ctx, "%s needs job ids", opt);
	return CMD_EXIT_OK;
}

/* Waits until the job is terminal; returns its exit status, or ours. */
static int
cmd_submit_wait(struct cmd_ctx *ctx, int64_t id, json_t **job)
{
	int rc, code;

	for (;;) {
		rc = cmd_call(ctx, "wait", xjson(json_pack("{s:I}", "id",
		    (json_int_t)id)), job);
		if (rc != CMD_EXIT_OK)
			return rc;
		if ((code = exitcode_of_job(*job)) != -1)
			return code;
		/* Not finished (the daemon gave up waiting): ask again. */
		json_decref(*job);
		*job = NULL;
	}
}

static int
cmd_submit_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "priority", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "slots", required_argument, NULL, CMD_SUBMIT_SLOTS },
		{ "exclusive", no_argument, NULL, CMD_SUBMIT_EXCLUSIVE },
		{ "timeout", required_argument, NULL, CMD_SUBMIT_TIMEOUT },
		{ "env", required_argument, NULL, CMD_SUBMIT_ENV },
		{ "clean-env", no_argument, NULL, CMD_SUBMIT_CLEAN_ENV },
		{ "wait", no_argument, NULL, CMD_SUBMIT_WAIT },
		{ "retries", required_argument, NULL, CMD_SUBMIT_RETRIES },
		{ "after", required_argument, NULL, CMD_SUBMIT_AFTER },
		{ "after-any", required_argument, NULL, CMD_SUBMIT_AFTER_ANY },
		{ "label", required_argument, NULL, CMD_SUBMIT_LABEL },
		{ "hold", no_argument, NULL, CMD_SUBMIT_HOLD },
		{ "at", required_argument, NULL, CMD_SUBMIT_AT },
		{ "delay", required_argument, NULL, CMD_SUBMIT_DELAY },
		{ "nice", required_argument, NULL, CMD_SUBMIT_NICE },
		{ "merge-output", no_argument, NULL, CMD_SUBMIT_MERGE },
		{ "node", required_argument, NULL, CMD_SUBMIT_NODE },
		{ "key", required_argument, NULL, CMD_SUBMIT_KEY },
		JOBOPT_USES_LONGOPTS,
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	json_t *params, *env, *args, *job = NULL;
	char **flags_env, **ep, *cwd;
	size_t nflags_env = 0;
	bool clean_env = false, wait = false, slots = false, exclusive = false;
	int ch, i, rc = CMD_EXIT_OK, starts = 0;
	long n;
	int64_t id;

	params = xjson(json_object());
	flags_env = xcalloc((size_t)argc, sizeof *flags_env);
	/* "+": the first word that is not an option starts the command. */
	while (rc == CMD_EXIT_OK &&
	    (ch = cmd_getopt(ctx, argc, argv, "+:hp:n:", longopts)) != -1) {
		switch (ch) {
		case 'p':
		case 'n':
			rc = jobopt_string(ctx, params, ch, optarg);
			break;
		case CMD_SUBMIT_SLOTS:
			if (cmd_parse_count(optarg, 1, &n) == -1)
				rc = cmd_usage(ctx, "invalid --slots '%s' (a "
				    "count of at least 1)", optarg);
			else
				json_object_set_new(params, "slots",
				    xjson(json_integer(n)));
			slots = true;
			break;
		case CMD_SUBMIT_EXCLUSIVE:
			json_object_set_new(params, "exclusive", json_true());
			exclusive = true;
			break;
		case CMD_SUBMIT_TIMEOUT:
			rc = jobopt_timeout(ctx, params, optarg);
			break;
		case CMD_SUBMIT_ENV:
			flags_env[nflags_env++] = optarg;
			break;
		case CMD_SUBMIT_CLEAN_ENV:
			clean_env = true;
			break;
		case CMD_SUBMIT_WAIT:
			wait = true;
			break;
		case CMD_SUBMIT_RETRIES:
			rc = jobopt_retries(ctx, params, optarg);
			break;
		case CMD_SUBMIT_AFTER:
			rc = cmd_submit_after(ctx, params, "after", "--after",
			    optarg);
			break;
		case CMD_SUBMIT_AFTER_ANY:
			rc = cmd_submit_after(ctx, params, "after_any",
			    "--after-any", optarg);
			break;
		case CMD_SUBMIT_LABEL:
			rc = jobopt_label(ctx, params, optarg);
			break;
		case CMD_SUBMIT_HOLD:
			json_object_set_new(params, "hold", json_true());
			break;
		case CMD_SUBMIT_AT:
		case CMD_SUBMIT_DELAY:
			starts++;
			rc = jobopt_begin_at(ctx, params, ch == CMD_SUBMIT_AT ?
			    "--at" : "--delay", optarg);
			break;
		case CMD_SUBMIT_NICE:
			rc = jobopt_nice(ctx, params, optarg);
			break;
		case CMD_SUBMIT_MERGE:
			json_object_set_new(params, "merge_output",
			    json_true());
			break;
		case CMD_SUBMIT_NODE:
			rc = jobopt_node(ctx, params, optarg);
			break;
		case CMD_SUBMIT_KEY:
			rc = cmd_submit_key(ctx, params, optarg);
			break;
		case JOBOPT_MEMORY:
		case JOBOPT_MEM:
		case JOBOPT_GPUS:
		case JOBOPT_RES:
			rc = jobopt_uses(ctx, params, ch, optarg);
			break;
		case CMD_GETOPT_EXIT:
			rc = ctx->status;
			goto out;
		default:
			rc = cmd_usage(ctx, "unknown option");
			break;
		}
	}
	if (rc != CMD_EXIT_OK)
		goto out;
	if (slots && exclusive) {
		rc = cmd_usage(ctx,
		    "--slots and --exclusive exclude each other");
		goto out;
	}
	if (starts > 1) {
		rc = cmd_usage(ctx, "give one of --at and --delay, once");
		goto out;
	}
	if (optind == argc) {
		rc = cmd_usage(ctx, "no command given");
		goto out;
	}

	args = xjson(json_array());
	json_object_set_new(params, "argv", args);
	/* Bytes that are not UTF-8 (file names) go as {"base64": ...}. */
	for (i = optind; i < argc; i++)
		json_array_append_new(args, xjson(bytestr_json(argv[i])));

	if ((cwd = getcwd(NULL, 0)) == NULL) {
		cmd_error("cannot read the current directory: %s",
		    strerror(errno));
		rc = CMD_EXIT_FAILURE;
		goto out;
	}
	json_object_set_new(params, "cwd", xjson(bytestr_json(cwd)));
	free(cwd);

	env = xjson(json_object());
	json_object_set_new(params, "env", env);
	for (ep = environ; !clean_env && ep != NULL && *ep != NULL; ep++)
		cmd_submit_setenv(ctx, env, *ep, false);
	for (ep = flags_env; rc == CMD_EXIT_OK && *ep != NULL; ep++)
		rc = cmd_submit_setenv(ctx, env, *ep, true);
	if (rc != CMD_EXIT_OK)
		goto out;

	rc = cmd_call(ctx, "submit", params, &job);
	params = NULL;
	if (rc != CMD_EXIT_OK)
		goto out;
	if (!json_is_integer(json_object_get(job, "id"))) {
		cmd_error("the daemon's answer has no job id");
		rc = CMD_EXIT_FAILURE;
		goto out;
	}
	id = json_integer_value(json_object_get(job, "id"));
	if (json_is_true(json_object_get(job, "existing")) && !ctx->json)
		cmd_error("job %lld has this key already: nothing new was "
		    "queued", (long long)id);
	if (ctx->json)
		format_json_line(job);
	else
		printf("%lld\n", (long long)id);
	if (!wait)
		goto out;
	/* Whoever reads the id must have it before the job ends. */
	fflush(stdout);
	json_decref(job);
	job = NULL;
	rc = cmd_submit_wait(ctx, id, &job);
	if (ctx->json && job != NULL)
		format_json_line(job);

out:
	json_decref(params);
	json_decref(job);
	free(flags_env);
	return rc;
}
