/* chaos-check.h - the chaos test's checker: from the jobs' ledger, the
 * clients' records and the final job list, every broken promise found. */
#ifndef TRIAGE_CHAOS_CHECK_H
#define TRIAGE_CHAOS_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct chaos_check;

/* What the checker fails on, each with its evidence. */
enum chaos_violation {
	CHAOS_LOST,		/* an acknowledged submission not in the
				 * final list */
	CHAOS_VANISHED,		/* a job that ran (in the ledger) not in
				 * the final list */
	CHAOS_UNFINISHED,	/* a job not in a final state */
	CHAOS_CONTRADICTED,	/* a wait's outcome the final job or the
				 * ledger (a later attempt) denies */
	CHAOS_OVERLAP,		/* a line of attempt k after the start of an
				 * attempt > k of the same job */
	CHAOS_TWICE,		/* two starts of one (id, attempt) */
	CHAOS_UNRUN,		/* succeeded at an attempt that never
				 * started */
	CHAOS_MALFORMED,	/* a ledger line that does not parse */
	CHAOS_NKINDS
};

/* An empty checker; aborts when out of memory (as every call below). */
struct chaos_check *chaos_check_new(void);
/* The ledger's node field socket (a job's $TRIAGE_SOCKET) is node name
 * in what the checker prints. Both are copied. */
void chaos_check_node(struct chaos_check *ck, const char *socket,
    const char *name);
/* A client was told id for a submission to node at ts_ns (the monotonic
 * clock): it must be in the final list. */
void chaos_check_submitted(struct chaos_check *ck, int64_t id, int64_t ts_ns,
    const char *node);
/* A wait at node reported the job ended in state at attempt: nothing
 * later may say otherwise. */
void chaos_check_outcome(struct chaos_check *ck, int64_t id,
    const char *state, int64_t attempt, const char *node);
/* The job as the final list has it. */
void chaos_check_final(struct chaos_check *ck, int64_t id, const char *state,
    int64_t attempt);
/*
 * One ledger line, "ID ATTEMPT NODE start|tick|end TIMESTAMP_NS" with or
 * without its newline. Returns 0, or -1 when it does not parse (noted as a
 * CHAOS_MALFORMED violation).
 */
int chaos_check_ledger_line(struct chaos_check *ck, const char *line);
/* Every line of the ledger file path. Returns how many lines did not
 * parse, or -1 with errno when it cannot be read. */
int chaos_check_ledger_file(struct chaos_check *ck, const char *path);
/*
 * Checks everything given so far, prints each violation with its evidence
 * to out, then the summary line ("chaos: R rounds, J jobs, F faults, V
 * violations"). Returns the number of violations. Run it once.
 */
size_t chaos_check_run(struct chaos_check *ck, FILE *out, int rounds,
    int faults);
/* How many violations of kind the run found. */
size_t chaos_check_found(const struct chaos_check *ck,
    enum chaos_violation kind);
/* The kind's name, as the report prints it. */
const char *chaos_check_kind(enum chaos_violation kind);
/* Frees ck; NULL is a no-op. */
void chaos_check_free(struct chaos_check *ck);

#endif
