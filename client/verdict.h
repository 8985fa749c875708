/* verdict.h - why cancel, retry, hold, release, freeze, thaw or remove left
 * a job named by id as it was: a line on stderr, and whether that is a
 * failure. */
#ifndef TRIAGE_VERDICT_H
#define TRIAGE_VERDICT_H

#include <stdbool.h>

#include <jansson.h>

#include "cmd.h"

/*
 * For method's answer about one job given by id (job: as the daemon
 * returned it; retry and remove are the daemon's to refuse): a hold of a
 * job that is not queued, a freeze of one that is not running, or a
 * release or thaw of one that has ended, did nothing, which is said on stderr ("job 12 is
 * running: only a queued job can be held"); a cancel of a job that had
 * ended is said as a note. Returns CMD_EXIT_FAILURE when method could
 * not act on the job, else CMD_EXIT_OK.
 */
int verdict_one(const char *method, const json_t *job);

/*
 * For method called with a filter of ids only: says why each id of named
 * that is not among acted (the daemon's "ids") was left as it was, from
 * what get tells of it (no such job, its state, not the caller's).
 * Returns CMD_EXIT_FAILURE when any of them could not be acted on,
 * CMD_EXIT_UNREACHABLE without the daemon, else CMD_EXIT_OK.
 */
int verdict_skipped(struct cmd_ctx *ctx, const char *method,
    const json_t *named, const json_t *acted);

#endif
