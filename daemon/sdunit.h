/* sdunit.h - what the daemon asks systemd over D-Bus: the scope its jobs run
 * in, apart from its unit, and whether the stop under way is a restart. */
#ifndef TRIAGED_SDUNIT_H
#define TRIAGED_SDUNIT_H

#include <stddef.h>
#include <sys/types.h>

/* A unit's name with room to spare ("triage.service" is 14). */
#define SDUNIT_NAME_MAX 256

/*
 * The scope the jobs of the daemon's unit run in, "STEM-jobs.scope" for
 * unit "STEM.service" (an '@' made '-'), into name. 0, or -1 when the
 * daemon runs in no service unit of systemd's.
 */
int sdunit_scope_name(char *name, size_t size);

/*
 * Starts the scope named name (Delegate=yes, in the daemon's slice, ordered
 * before its unit so that a system shutdown stops the daemon first, with
 * the unit's MemoryMax, MemoryHigh and TasksMax) with process pid in it;
 * one that exists already, which an earlier daemon's running jobs keep,
 * is taken as it is. Its cgroup's path from the cgroup mount goes to
 * cgroup. 0, or -1 with *cause set (allocated; NULL out of memory).
 */
int sdunit_scope_start(const char *name, pid_t pid, char *cgroup,
    size_t size, char **cause);

/*
 * Whether systemd is stopping the daemon's unit to start it again: the
 * unit's job is a restart (systemctl restart or try-restart, a package's
 * upgrade). 1 yes, 0 no, -1 unknown (no systemd, no unit, no answer).
 */
int sdunit_restarting(void);

#endif
