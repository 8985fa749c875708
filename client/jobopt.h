/* jobopt.h - the options that describe a job, shared by submit and update:
 * each reads its argument and sets its param, or says what was wrong. */
#ifndef TRIAGE_JOBOPT_H
#define TRIAGE_JOBOPT_H

#include <jansson.h>

#include "cmd.h"

/* What a job uses beside slots, the same options for submit and update:
 * their getopt_long codes (above the commands' own, below cmd.h's
 * CMD_GETOPT_EXIT), their longopts rows, and jobopt_uses. */
#define JOBOPT_MEMORY	0x1f0
#define JOBOPT_MEM	0x1f1
#define JOBOPT_GPUS	0x1f2
#define JOBOPT_RES	0x1f3
#define JOBOPT_USES_LONGOPTS						\
	{ "memory", required_argument, NULL, JOBOPT_MEMORY },		\
	{ "mem", required_argument, NULL, JOBOPT_MEM },			\
	{ "gpus", required_argument, NULL, JOBOPT_GPUS },		\
	{ "res", required_argument, NULL, JOBOPT_RES }

/* The highest nice value a job can be given (nice(2)'s). */
#define JOBOPT_NICE_MAX 19

/*
 * Each sets its param in params from arg, the option's value, and returns
 * CMD_EXIT_OK, or prints a usage error naming the option and the value and
 * returns its status, leaving params as it was.
 */
/* --timeout 30s: "timeout", in seconds (an integer when whole). */
int jobopt_timeout(struct cmd_ctx *ctx, json_t *params, const char *arg);
/* --at TIME or --delay D (opt names which): "begin_at", RFC 3339 with the
 * local offset. */
int jobopt_begin_at(struct cmd_ctx *ctx, json_t *params, const char *opt,
    const char *arg);
/* --nice N: "nice", 0 to JOBOPT_NICE_MAX. */
int jobopt_nice(struct cmd_ctx *ctx, json_t *params, const char *arg);
/* --label K=V: K in the object params' "labels" (made when missing); K
 * as the protocol spells a key. */
int jobopt_label(struct cmd_ctx *ctx, json_t *params, const char *arg);
/* -p PRIO or -n NAME (the option's letter in ch): "priority" or "name". */
int jobopt_string(struct cmd_ctx *ctx, json_t *params, int ch,
    const char *arg);
/* --node NODE: "node", a node name (nodename.h). */
int jobopt_node(struct cmd_ctx *ctx, json_t *params, const char *arg);
/* The option of code ch, one of JOBOPT_USES_LONGOPTS:
 * --memory SIZE or --mem SIZE: "memory", bytes (512MiB, 4GiB: units.h's
 * sizes), at least the protocol's 1MiB;
 * --res NAME=N, or --gpus N (NAME gpu): NAME's count in the object
 * params' "resources" (made when missing), NAME as triage.conf spells a
 * resource's, N at least 1; a NAME given twice is an error. */
int jobopt_uses(struct cmd_ctx *ctx, json_t *params, int ch,
    const char *arg);
/* --retries N: "retries", 0 or more. */
int jobopt_retries(struct cmd_ctx *ctx, json_t *params, const char *arg);

#endif
