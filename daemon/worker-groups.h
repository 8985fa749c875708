/* worker-groups.h - a job user's name and supplementary groups, looked up by
 * the worker once per (uid, gid) and kept, so that no job child asks NSS. */
#ifndef TRIAGED_WORKER_GROUPS_H
#define TRIAGED_WORKER_GROUPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One user's credentials as a job child sets them; borrowed from the
 * cache until the next worker_groups_get(). */
struct worker_groups {
	const char *user;	/* uid's passwd name, NULL when it has none */
	const gid_t *groups;	/* user's groups with gid, as initgroups
				 * would set them; just gid without a name */
	size_t n;
};

/*
 * Fills *g for a job of uid and gid. A lookup made under another epoch is
 * made again (the daemon changes it on a reload); a (uid, gid) not seen
 * yet is looked up now. Returns 0, or -1 with errno and, in err, the
 * failed step as a job's error says it ("getpwuid 1000: ...").
 */
int worker_groups_get(uid_t uid, gid_t gid, uint32_t epoch,
    struct worker_groups *g, char *err, size_t errsize);

/* Forgets every entry (the worker ends). */
void worker_groups_clear(void);

#endif
