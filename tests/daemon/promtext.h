/* promtext.h - for the tests of /metrics: a sample's value read from the
 * Prometheus text format, and promtool's verdict on the whole text. */
#ifndef TRIAGE_TEST_PROMTEXT_H
#define TRIAGE_TEST_PROMTEXT_H

#include <stdbool.h>

/*
 * The value of the sample whose name and labels are exactly series
 * ("triage_slots", "triage_jobs_queued{priority=\"high\"}") in text;
 * fails the test when text has no such sample.
 */
double promtext_value(const char *text, const char *series);
/* Fails the test, naming series, unless its value in text is want. */
void promtext_assert(const char *text, const char *series, double want);
/* Whether text has a sample of series. */
bool promtext_has(const char *text, const char *series);

/* Whether promtool (Debian's prometheus) is installed; when not, says so
 * on one line, for the caller to skip. */
bool promtext_have_promtool(void);
/* Fails the test, with promtool's words, unless `promtool check metrics`
 * passes text, which it writes to a file in dir. */
void promtext_check(const char *dir, const char *text);

#endif
