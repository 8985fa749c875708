/* fdlimit.c - the daemon's descriptor limit: raised at start to what
 * max_clients needs, as far as the hard limit allows. */
#include <sys/resource.h>

#include "fdlimit.h"
#include "log.h"

/* Descriptors the daemon holds besides its clients: the loop, its signal
 * pipe, the socket, the database and its journal, the state dir's lock, a
 * job's files being opened, with room to spare; and a socket or two per
 * worker. */
#define FDLIMIT_OWN 32
#define FDLIMIT_PER_WORKER 2

unsigned long long
fdlimit_raise(unsigned max_clients, unsigned workers)
{
	unsigned long long need;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		log_warn("getrlimit(RLIMIT_NOFILE)");
		return 0;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			log_warn("cannot raise the descriptor limit to %llu",
			    (unsigned long long)rl.rlim_max);
			if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
				return 0;
		}
	}
	log_debug("descriptor limit: %llu (hard limit %llu)",
	    (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
	need = (unsigned long long)max_clients + FDLIMIT_OWN +
	    (unsigned long long)workers * FDLIMIT_PER_WORKER;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
		log_warnx("max_clients is %u but the descriptor limit is %llu "
		    "(%llu needed with the daemon's own): beyond about %llu "
		    "clients new connections wait; raise LimitNOFILE= (or "
		    "ulimit -n) or lower max_clients", max_clients,
		    (unsigned long long)rl.rlim_cur, need,
		    rl.rlim_cur > need - max_clients ?
		    (unsigned long long)rl.rlim_cur - (need - max_clients) : 0);
	return (unsigned long long)rl.rlim_cur;
}
