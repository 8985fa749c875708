/* selector.c - jobs chosen by ids or by what they are, for the commands that
 * act on many at once: one request with the protocol's filter, not a loop. */
#include <stdio.h>

#include "cmd.h"
#include "format.h"
#include "jobopt.h"
#include "selector.h"
#include "verdict.h"
#include "xmalloc.h"

void
selector_init(struct selector *sel)
{
	sel->filter = xjson(json_object());
	sel->chosen = false;
}

void
selector_free(struct selector *sel)
{
	json_decref(sel->filter);
	sel->filter = NULL;
}

json_t *
selector_filter(const struct selector *sel)
{
	return sel->filter;
}

/* Reads one selector option; CMD_EXIT_OK, or the usage error's status. */
static int
selector_option(struct cmd_ctx *ctx, struct selector *sel, int ch,
    const char *arg)
{
	json_t *states;
	int rc = CMD_EXIT_OK;

	switch (ch) {
	case 'p':
	case SELECTOR_NAME:
		rc = jobopt_string(ctx, sel->filter, ch == 'p' ? 'p' : 'n',
		    arg);
		break;
	case SELECTOR_STATE:
		if ((states = json_object_get(sel->filter, "state")) == NULL) {
			states = xjson(json_array());
			json_object_set_new(sel->filter, "state", states);
		}
		rc = cmd_add_states(ctx, states, arg);
		break;
	case SELECTOR_LABEL:
		rc = jobopt_label(ctx, sel->filter, arg);
		break;
	default:
		break;
	}
	sel->chosen = true;
	return rc;
}

int
selector_getopt(struct cmd_ctx *ctx, struct selector *sel, int argc,
    char **argv, const struct option *longopts)
{
	int ch;

	while ((ch = cmd_getopt(ctx, argc, argv, ":hp:", longopts)) != -1) {
		switch (ch) {
		case 'p':
		case SELECTOR_STATE:
		case SELECTOR_LABEL:
		case SELECTOR_NAME:
		case SELECTOR_ALL:
			if ((ctx->status = selector_option(ctx, sel, ch,
			    optarg)) != CMD_EXIT_OK)
				return CMD_GETOPT_EXIT;
			break;
		default:
			return ch;
		}
	}
	return -1;
}

int
selector_check(struct cmd_ctx *ctx, const struct selector *sel, int argc,
    char **argv)
{
	int rc;

	if ((rc = cmd_check_ids(ctx, argc, argv)) != CMD_EXIT_OK)
		return rc;
	if (optind == argc && !sel->chosen)
		return cmd_usage(ctx, "give job ids, or choose jobs with -p, "
		    "--state, --label, --name or --all");
	return CMD_EXIT_OK;
}

int
selector_params(struct cmd_ctx *ctx, struct selector *sel, int argc,
    char **argv, json_t **params, bool *bulk)
{
	json_t *ids;
	int64_t id;
	int i, rc;

	*params = NULL;
	*bulk = false;
	if ((rc = selector_check(ctx, sel, argc, argv)) != CMD_EXIT_OK)
		return rc;
	if (optind == argc - 1 && !sel->chosen) {
		cmd_parse_id(argv[optind], &id);
		*params = xjson(json_pack("{s:I}", "id", (json_int_t)id));
		return CMD_EXIT_OK;
	}
	if (optind < argc) {
		ids = xjson(json_array());
		for (i = optind; i < argc; i++) {
			cmd_parse_id(argv[i], &id);
			json_array_append_new(ids, xjson(json_integer(id)));
		}
		json_object_set_new(sel->filter, "ids", ids);
	}
	*params = xjson(json_pack("{s:O}", "filter", sel->filter));
	*bulk = true;
	return CMD_EXIT_OK;
}

int
selector_call(struct cmd_ctx *ctx, const char *method, json_t *params,
    bool bulk)
{
	const json_t *filter = json_object_get(params, "filter");
	json_t *result, *id, *named = NULL;
	size_t i;
	int rc;

	/* Ids alone name jobs, which must each be accounted for; options
	 * choose, and what they leave out is not an error. */
	if (bulk && json_object_size(filter) == 1)
		named = json_incref(json_object_get(filter, "ids"));
	if ((rc = cmd_call(ctx, method, params, &result)) != CMD_EXIT_OK) {
		json_decref(named);
		return rc;
	}
	if (ctx->json)
		format_json_line(result);
	else if (bulk) {
		json_array_foreach(json_object_get(result, "ids"), i, id)
			printf("%" JSON_INTEGER_FORMAT "\n",
			    json_integer_value(id));
	}
	fflush(stdout);
	if (named != NULL)
		rc = verdict_skipped(ctx, method, named,
		    json_object_get(result, "ids"));
	else if (!bulk)
		rc = verdict_one(method, result);
	json_decref(named);
	json_decref(result);
	return rc;
}

int
selector_parse(struct cmd_ctx *ctx, struct selector *sel, int argc,
    char **argv)
{
	static const struct option longopts[] = {
		SELECTOR_LONGOPTS,
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	if ((ch = selector_getopt(ctx, sel, argc, argv, longopts)) == -1)
		return CMD_EXIT_OK;
	return cmd_getopt_other(ctx, ch);
}

int
selector_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	const char *method = ctx->entry->name;
	struct selector sel;
	json_t *params;
	bool bulk;
	int rc;

	selector_init(&sel);
	if ((rc = selector_parse(ctx, &sel, argc, argv)) == CMD_EXIT_OK)
		rc = selector_params(ctx, &sel, argc, argv, &params, &bulk);
	selector_free(&sel);
	if (rc != CMD_EXIT_OK)
		return rc;
	return selector_call(ctx, method, params, bulk);
}
