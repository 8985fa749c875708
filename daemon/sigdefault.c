/* sigdefault.c - a forked child's way back to a fresh process's signal
 * state, for the worker and for the job it runs. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "sigdefault.h"

int
sigdefault_reset(const char **step)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		/* EINVAL: the signals glibc keeps for itself */
		if (sigaction(sig, &sa, NULL) == -1 && errno != EINVAL) {
			*step = "sigaction";
			return -1;
		}
	}
	if (sigemptyset(&none) == -1 ||
	    sigprocmask(SIG_SETMASK, &none, NULL) == -1) {
		*step = "sigprocmask";
		return -1;
	}
	return 0;
}
