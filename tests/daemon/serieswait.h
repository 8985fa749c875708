/* serieswait.h - for the tests of series_json: what a priority's waits in
 * the window must look like. */
#ifndef TRIAGE_TEST_SERIESWAIT_H
#define TRIAGE_TEST_SERIESWAIT_H

#include <jansson.h>

/* Fails the test unless series' wait of prio has count starts, with p50
 * and p95 numbers (p50 <= p95) when there are any, null when none. */
void serieswait_assert(const json_t *series, const char *prio,
    json_int_t count);

#endif
