/* oomadj.h - the daemon and its workers made the kernel OOM killer's last
 * choice before any job; a job is put back to where the daemon started. */
#ifndef TRIAGED_OOMADJ_H
#define TRIAGED_OOMADJ_H

/* What the daemon and its workers get: far below any job's, short of
 * -1000, which would make them unkillable even when nothing else is
 * left. */
#define OOMADJ_DAEMON	-900

/*
 * Lowers the calling process's oom_score_adj to OOMADJ_DAEMON when it is
 * above and the process may (CAP_SYS_RESOURCE). Returns what a job's
 * should be: the value the process had, or POOL_OOM_SCORE_ADJ_SAME when
 * nothing changed (a job keeps what it inherits).
 */
int oomadj_lower(void);

#endif
