/* series.h - the dashboard's last five minutes in steps of 5 s: slots held,
 * jobs started, and waits per priority, kept up from job events. */
#ifndef TRIAGED_SERIES_H
#define TRIAGED_SERIES_H

#include <stdint.h>

#include <jansson.h>

struct triaged;

/* The width of a step, and how many make the window. */
#define SERIES_STEP_MS	5000
#define SERIES_STEPS	60

/*
 * Starts following job events into td->series: after jobs_init, before
 * recovery. No timer: the window moves on when an event comes or
 * series_json is called. 0, or -1 with *cause set (allocated, or NULL out
 * of memory).
 */
int series_init(struct triaged *td, char **cause);
void series_free(struct triaged *td);

/* For a reload that renumbered the priorities, as metrics_reprioritize:
 * the waits of a priority that stays are kept. */
void series_reprioritize(struct triaged *td, unsigned nold, const int *map);

/*
 * The window as of now, a new reference (NULL out of memory):
 * {"step": 5, "end": <Unix seconds at which the last step ends>,
 *  "slots": N, "slots_busy": [60 time-weighted means of the slots held],
 *  "dispatched": [60 counts of jobs started], "wait": {"<priority>":
 *  {"p50": s, "p95": s, "count": n}}}, oldest step first, the last one
 * holding now; p50 and p95 are null when no job of the priority started
 * in the window. Steps before the daemon started are 0.
 */
json_t *series_json(struct triaged *td);
/* The same as of now_ms (ms since the epoch), for tests: a time before the
 * last one seen counts as that one. */
json_t *series_json_at(struct triaged *td, int64_t now_ms);

#endif
