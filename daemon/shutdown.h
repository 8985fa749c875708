/* shutdown.h - stopping on SIGTERM or SIGINT as the `shutdown` key says:
 * requeue, drain or finish; a second signal stops at once. */
#ifndef TRIAGED_SHUTDOWN_H
#define TRIAGED_SHUTDOWN_H

struct triaged;

/* A stop signal arrived. */
void shutdown_begin(struct triaged *td, int signo);
/* Leaves the loop once what the mode waits for is done; cheap to call. */
void shutdown_check(struct triaged *td);

#endif
