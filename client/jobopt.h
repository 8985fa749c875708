/* jobopt.h - the options that describe a job, shared by submit and update:
 * each reads its argument and sets its param, or says what was wrong. */
#ifndef TRIAGE_JOBOPT_H
#define TRIAGE_JOBOPT_H

#include <jansson.h>

#include "cmd.h"

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
/* --memory SIZE or --mem SIZE (opt, as typed, for messages): "memory",
 * bytes (512MiB, 4GiB: units.h's sizes), at least the protocol's 1MiB. */
int jobopt_memory(struct cmd_ctx *ctx, json_t *params, const char *opt,
    const char *arg);
/* --res NAME=N, or --gpus N (opt, as typed, names which; --gpus is
 * NAME gpu): NAME's count in the object params' "resources" (made when
 * missing), NAME as triage.conf spells a resource's, N at least 1; a NAME
 * given twice is an error. */
int jobopt_resource(struct cmd_ctx *ctx, json_t *params, const char *opt,
    const char *arg);
/* --retries N: "retries", 0 or more. */
int jobopt_retries(struct cmd_ctx *ctx, json_t *params, const char *arg);

#endif
