/* cpus.h - how many CPUs this process may really use: its affinity mask,
 * further limited by cgroup v2 cpu.max quotas (a container's CPU limit). */
#ifndef TRIAGE_CPUS_H
#define TRIAGE_CPUS_H

/* Where cgroup v2 is mounted, and where the kernel names our own cgroup. */
#define CPUS_CGROUP_MOUNT "/sys/fs/cgroup"
#define CPUS_PROC_CGROUP "/proc/self/cgroup"

/*
 * Returns the number of CPUs this process may use, at least 1: the CPUs in
 * its affinity mask, limited by the quota of the cgroup v2 cpu.max file at
 * cpu_max_path or, when it is NULL, by the smallest quota of our own cgroup
 * and its ancestors (see cpus_cgroup_quota()). Never fails: what cannot be
 * read imposes no limit.
 */
unsigned cpus_usable(const char *cpu_max_path);

/*
 * Returns the CPUs allowed by one cpu.max file, ceil(QUOTA / PERIOD) and at
 * least 1, or 0 for no limit: "max PERIOD", and also a missing, unreadable
 * or malformed file.
 */
unsigned cpus_quota(const char *cpu_max_path);

/*
 * Returns the smallest cpus_quota() over the cpu.max files of the cgroup
 * named by the "0::PATH" line of proc_cgroup (normally CPUS_PROC_CGROUP) and
 * of each of its ancestors, under mount (normally CPUS_CGROUP_MOUNT); 0 for
 * no limit, including when there is no cgroup v2 line.
 */
unsigned cpus_cgroup_quota(const char *proc_cgroup, const char *mount);

#endif
