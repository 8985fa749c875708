/* fdlimit.h - the daemon's descriptor limit: raised at start to what
 * max_clients needs, as far as the hard limit allows. */
#ifndef TRIAGED_FDLIMIT_H
#define TRIAGED_FDLIMIT_H

/*
 * Raises the soft RLIMIT_NOFILE to the hard one, logs (debug) what it got,
 * and warns, naming both numbers, when max_clients connections and the
 * daemon's own descriptors (workers descriptors each) cannot fit in it.
 * Returns the soft limit now in force (0 when it cannot be read).
 */
unsigned long long fdlimit_raise(unsigned max_clients, unsigned workers);

#endif
