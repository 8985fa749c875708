/* bare.h - for the daemon tests of connections on a bare loop: a struct
 * triaged with the built-in config and nothing else, no store, no jobs. */
#ifndef TRIAGE_TEST_BARE_H
#define TRIAGE_TEST_BARE_H

struct event_base;
struct triaged;

/* Fills the zeroed td: base, the built-in config (the caller may change
 * its bounds), our uid. Fails the test on error; bare_clear undoes it. */
void bare_init(struct triaged *td, struct event_base *base);
void bare_clear(struct triaged *td);

#endif
