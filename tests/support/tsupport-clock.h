/* tsupport-clock.h - for tests and benchmarks: the monotonic clock, the one
 * every process of a run shares, in the units their waits and figures use. */
#ifndef TRIAGE_TSUPPORT_CLOCK_H
#define TRIAGE_TSUPPORT_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds, exact: stamps passed between processes. */
int64_t tsupport_clock_ns(void);
/* In whole milliseconds: deadlines. */
int64_t tsupport_clock_ms(void);
/* In milliseconds to the nanosecond: latencies. */
double tsupport_clock_ms_f(void);
/* In seconds: durations and rates. */
double tsupport_clock_s(void);
/* What is left of a deadline of tsupport_clock_ms's, in ms: 0 once it has
 * passed (never the -1 of "for ever"), at most INT_MAX. */
int tsupport_clock_left_ms(int64_t deadline);
/* Sleeps ms milliseconds, the whole of them whatever signals come. */
void tsupport_clock_sleep_ms(long ms);

#endif
