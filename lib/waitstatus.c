/* waitstatus.c - how a process ended, in words: "exited with status 3",
 * "killed by SIGKILL", and signal names, the same everywhere. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "waitstatus.h"

char *
waitstatus_signame(int sig, char buf[WAITSTATUS_SIGNAME_MAX])
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev != NULL)
		snprintf(buf, WAITSTATUS_SIGNAME_MAX, "SIG%s", abbrev);
	else
		snprintf(buf, WAITSTATUS_SIGNAME_MAX, "SIG%d", sig);
	return buf;
}

char *
waitstatus_describe(int status, char *buf, size_t len)
{
	char name[WAITSTATUS_SIGNAME_MAX];

	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d",
		    WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by %s%s",
		    waitstatus_signame(WTERMSIG(status), name),
		    WCOREDUMP(status) ? " (core dumped)" : "");
	else
		snprintf(buf, len, "ended with wait status %#x", status);
	return buf;
}
