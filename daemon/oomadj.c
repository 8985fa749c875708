/* oomadj.c - the daemon and its workers made the kernel OOM killer's last
 * choice before any job; a job is put back to where the daemon started. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "oomadj.h"
#include "pool-spec.h"

#define OOMADJ_FILE	"/proc/self/oom_score_adj"

int
oomadj_lower(void)
{
	char text[16];
	ssize_t n;
	long was;
	int fd, len;

	if ((fd = open(OOMADJ_FILE, O_RDONLY | O_CLOEXEC)) == -1)
		return POOL_OOM_SCORE_ADJ_SAME;
	n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return POOL_OOM_SCORE_ADJ_SAME;
	text[n] = '\0';
	was = strtol(text, NULL, 10);
	if (was <= OOMADJ_DAEMON)
		return POOL_OOM_SCORE_ADJ_SAME;
	len = snprintf(text, sizeof text, "%d", OOMADJ_DAEMON);
	if ((fd = open(OOMADJ_FILE, O_WRONLY | O_CLOEXEC)) == -1 ||
	    write(fd, text, (size_t)len) != len) {
		/* Without CAP_SYS_RESOURCE (not root, or a root without
		 * it) the kernel lets a process only raise its own. */
		log_notice("oom_score_adj stays %ld for the daemon and its "
		    "jobs: %s (lowering it takes CAP_SYS_RESOURCE)", was,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return POOL_OOM_SCORE_ADJ_SAME;
	}
	close(fd);
	log_debug("oom_score_adj %d for the daemon and its workers, %ld for "
	    "jobs", OOMADJ_DAEMON, was);
	return (int)was;
}
