/* cgroup.h - cgroup v2 through directory fds: where the hierarchy is, which
 * controllers a cgroup has, and a job's cgroup limited, killed, frozen,
 * measured and removed. */
#ifndef TRIAGE_CGROUP_H
#define TRIAGE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The controllers, as bits of a mask, in the kernel's order of
 * cgroup.controllers. */
enum cgroup_ctl {
	CGROUP_CPUSET	= 0x01,
	CGROUP_CPU	= 0x02,
	CGROUP_IO	= 0x04,
	CGROUP_MEMORY	= 0x08,
	CGROUP_HUGETLB	= 0x10,
	CGROUP_PIDS	= 0x20,
	CGROUP_RDMA	= 0x40,
	CGROUP_MISC	= 0x80,
};
#define CGROUP_NCTL	8
/* What a job's limits need: with all three, a machine is "v2". */
#define CGROUP_JOB_CTLS	(CGROUP_CPU | CGROUP_MEMORY | CGROUP_PIDS)

/* The name of controller bit i (0 to CGROUP_NCTL - 1). */
const char *cgroup_ctl_name(unsigned i);
/* The mask of the names in text (space-separated, as cgroup.controllers
 * has them); names it does not know are left out. */
unsigned cgroup_ctl_parse(const char *text);

/*
 * Where the cgroup2 filesystem is mounted (the first such line of
 * mountinfo, normally /proc/self/mountinfo), into path. 0, or -1 with errno
 * (ENOENT: none is mounted; ENAMETOOLONG).
 */
int cgroup_mount_find(const char *mountinfo, char *path, size_t size);
/*
 * The cgroup v2 path of a process ("/system.slice/x.service"), from the
 * "0::" line of proc_cgroup (/proc/self/cgroup, /proc/PID/cgroup) into
 * path. 0, or -1 with errno (ENOENT: no such line, EPROTO: one that is
 * not a path, ENAMETOOLONG).
 */
int cgroup_path_of(const char *proc_cgroup, char *path, size_t size);

/* Reads a whole interface file of the cgroup at dirfd into buf,
 * NUL-terminated, the trailing newline dropped. Its length, or -1 with
 * errno (EFBIG: it does not fit). */
ssize_t cgroup_read(int dirfd, const char *file, char *buf, size_t size);
/* Writes text to an interface file, in one write as the kernel wants it.
 * 0, or -1 with errno (the kernel's: EBUSY, EINVAL, ...). */
int cgroup_write(int dirfd, const char *file, const char *text);
/* The value of key in a flat keyed file ("populated 1", "oom_kill 2",
 * "usage_usec 1234"). 0, or -1 with errno (ENOENT: no such key). */
int cgroup_read_key(int dirfd, const char *file, const char *key,
    uint64_t *value);
/* The controllers file (cgroup.controllers, cgroup.subtree_control) lists,
 * as a mask. 0, or -1 with errno. */
int cgroup_ctls(int dirfd, const char *file, unsigned *mask);
/*
 * Enables each controller of want in the cgroup's cgroup.subtree_control,
 * one at a time so that one the kernel refuses does not keep the others
 * out. *got is what is enabled afterwards. 0, or -1 with errno when not
 * even the file could be read.
 */
int cgroup_enable(int dirfd, unsigned want, unsigned *got);
/* Disables each controller of mask there, as far as the kernel lets it
 * (not while a child has it enabled below). */
void cgroup_disable(int dirfd, unsigned mask);

/* Moves process pid (0: the caller) into the cgroup. 0, or -1 with
 * errno. */
int cgroup_move(int dirfd, pid_t pid);
/* How many processes the cgroup holds (its cgroup.procs lines; its
 * children's not counted). 0, or -1 with errno. */
int cgroup_count(int dirfd, unsigned *n);
/* 1 when a process is in the cgroup or beneath it, 0 when none, -1 with
 * errno. */
int cgroup_populated(int dirfd);
/* The same from its cgroup.events kept open (events_fd), read again from
 * the start: one read, no open, for a caller that polls it. */
int cgroup_events_populated(int events_fd);
/*
 * SIGKILL to every process in the cgroup and beneath it: cgroup.kill where
 * the kernel has it (5.14), else each process of cgroup.procs in turn
 * until it lists none. Returns once the signals are sent, not when the
 * processes are gone (cgroup_populated says when). 0, or -1 with errno.
 */
int cgroup_kill(int dirfd);
/* Freezes (on) or thaws the cgroup's processes (cgroup.freeze). 0, or -1
 * with errno (ENOENT: a kernel without the freezer, before 5.2). */
int cgroup_freeze(int dirfd, bool on);

/* What a job's cgroup says it used; each field is -1 when unknown. */
struct cgroup_usage {
	int64_t user_usec;	/* cpu.stat: every process, reaped or not */
	int64_t system_usec;
	int64_t peak_bytes;	/* memory.peak: the most at once */
	int64_t oom_kills;	/* memory.events oom_kill */
};
/* Fills *u; the memory fields only where ctls (the cgroup's controllers)
 * has memory. What a kernel or a missing controller does not offer stays
 * -1. Never fails. */
void cgroup_usage(int dirfd, unsigned ctls, struct cgroup_usage *u);

/* The name of the subtree a daemon makes beneath its own cgroup where no
 * systemd manages them ("triaged-" and 16 hex digits): the same for the
 * same state_dir (a restart finds what the last daemon left), another for
 * another (two daemons on one host). */
#define CGROUP_DAEMON_NAME_MAX	32
void cgroup_daemon_name(const char *state_dir, char *buf, size_t size);

/* Opens a cgroup directory relative to dirfd (AT_FDCWD: path absolute or
 * from the cwd), O_DIRECTORY | O_CLOEXEC. The fd, or -1 with errno. */
int cgroup_open(int dirfd, const char *path);

#endif
