/* bench-machine.c - what the benchmark ran on, printed with its numbers so
 * that results from different machines are not compared blindly. */
#include <sys/utsname.h>
#include <sys/vfs.h>

#include <errno.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-machine.h"

/* The filesystems a state dir is likely to be on; others print as hex. */
static const struct {
	unsigned long magic;
	const char *name;
} bench_machine_fs[] = {
	{ TMPFS_MAGIC, "tmpfs" },
	{ EXT4_SUPER_MAGIC, "ext2/3/4" },
	{ XFS_SUPER_MAGIC, "xfs" },
	{ BTRFS_SUPER_MAGIC, "btrfs" },
	{ F2FS_SUPER_MAGIC, "f2fs" },
	{ OVERLAYFS_SUPER_MAGIC, "overlayfs" },
	{ NFS_SUPER_MAGIC, "nfs" },
	{ FUSE_SUPER_MAGIC, "fuse" },
	{ V9FS_MAGIC, "9p" },
	{ 0x2fc12fc1, "zfs" },
};

int
bench_machine_get(const char *dir, struct bench_machine *m)
{
	struct utsname u;
	struct statfs sf;
	cpu_set_t set;
	size_t i;

	memset(m, 0, sizeof *m);
	if (getloadavg(&m->load, 1) != 1)
		m->load = -1;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		m->cpus = CPU_COUNT(&set);
	else
		m->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (uname(&u) == 0)
		snprintf(m->kernel, sizeof m->kernel, "%s %s %s", u.sysname,
		    u.release, u.machine);
	else
		snprintf(m->kernel, sizeof m->kernel, "unknown kernel");
	if (statfs(dir, &sf) == -1) {
		snprintf(m->fs, sizeof m->fs, "unknown");
		return -1;
	}
	snprintf(m->fs, sizeof m->fs, "0x%lx", (unsigned long)sf.f_type);
	for (i = 0; i < sizeof bench_machine_fs / sizeof bench_machine_fs[0];
	    i++) {
		if ((unsigned long)sf.f_type == bench_machine_fs[i].magic) {
			snprintf(m->fs, sizeof m->fs, "%s",
			    bench_machine_fs[i].name);
			m->fs_tmpfs = sf.f_type == TMPFS_MAGIC;
		}
	}
	return 0;
}
