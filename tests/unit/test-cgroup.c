/* test-cgroup.c - cgroup_* on files made to look like a cgroup's (mountinfo,
 * /proc/PID/cgroup, flat keyed files), then on a real cgroup v2 child of our
 * own where this machine has one: a child born in it, frozen, killed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup.h"
#include "clone3.h"
#include "tsupport-dir.h"

#define STACK_SIZE	(64 * 1024)

static char dir[PATH_MAX];

static int
setup(void **state)
{
	struct tsupport_err err;

	(void)state;
	return tsupport_dir_make(dir, sizeof dir, "/tmp", "test-cgroup",
	    &err);
}

static int
teardown(void **state)
{
	struct tsupport_err err;

	(void)state;
	return tsupport_dir_remove(dir, &err);
}

/* Writes text to dir/name. */
static void
put(const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0)
		fail_msg("%s: %s", path, strerror(errno));
}

static const char *
at(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

static void
controllers_parse_and_name(void **state)
{
	(void)state;
	assert_int_equal(cgroup_ctl_parse("cpuset cpu io memory hugetlb pids "
	    "rdma misc\n"), 0xff);
	assert_int_equal(cgroup_ctl_parse("memory pids"),
	    CGROUP_MEMORY | CGROUP_PIDS);
	/* A controller a newer kernel has is left out, not an error. */
	assert_int_equal(cgroup_ctl_parse("cpu dmem  memory"),
	    CGROUP_CPU | CGROUP_MEMORY);
	assert_int_equal(cgroup_ctl_parse(""), 0);
	assert_string_equal(cgroup_ctl_name(3), "memory");
	assert_null(cgroup_ctl_name(CGROUP_NCTL));
}

static void
mount_found_among_others(void **state)
{
	char path[PATH_MAX];

	(void)state;
	put("mountinfo",
	    "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
	    "35 24 0:30 / /sys/fs/cgroup/memory rw shared:9 - cgroup cgroup "
	    "rw,memory\n"
	    "31 24 0:26 / /sys/fs/cgroup/uni\\040fied rw,nosuid shared:5 - "
	    "cgroup2 cgroup2 rw,nsdelegate\n");
	assert_int_equal(cgroup_mount_find(at("mountinfo"), path,
	    sizeof path), 0);
	assert_string_equal(path, "/sys/fs/cgroup/uni fied");
	assert_int_equal(cgroup_mount_find(at("mountinfo"), path, 8), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	put("mountinfo", "22 1 0:21 / /proc rw,nosuid - proc proc rw\n");
	assert_int_equal(cgroup_mount_find(at("mountinfo"), path,
	    sizeof path), -1);
	assert_int_equal(errno, ENOENT);
}

static void
path_of_a_process(void **state)
{
	char path[PATH_MAX];

	(void)state;
	put("cgroup", "4:memory:/x\n1:name=systemd:/\n"
	    "0::/system.slice/triage.service/daemon\n");
	assert_int_equal(cgroup_path_of(at("cgroup"), path, sizeof path), 0);
	assert_string_equal(path, "/system.slice/triage.service/daemon");
	put("cgroup", "0::/\n");
	assert_int_equal(cgroup_path_of(at("cgroup"), path, sizeof path), 0);
	assert_string_equal(path, "/");
	/* v1 alone: no unified line. */
	put("cgroup", "4:memory:/x\n");
	assert_int_equal(cgroup_path_of(at("cgroup"), path, sizeof path), -1);
	assert_int_equal(errno, ENOENT);
	put("cgroup", "0::relative\n");
	assert_int_equal(cgroup_path_of(at("cgroup"), path, sizeof path), -1);
	assert_int_equal(errno, EPROTO);
}

static void
flat_keyed_files_read(void **state)
{
	uint64_t v;
	int fd;

	(void)state;
	put("cpu.stat", "usage_usec 300\nuser_usec 100\nsystem_usec 200\n");
	put("memory.events", "low 0\nhigh 0\nmax 5\noom 1\noom_kill 2\n"
	    "oom_group_kill 1\n");
	put("memory.peak", "67108864\n");
	put("cgroup.events", "populated 0\nfrozen 1\n");
	put("cgroup.procs", "12\n34\n56\n");
	put("cgroup.subtree_control", "cpu memory\n");
	assert_true((fd = cgroup_open(AT_FDCWD, dir)) >= 0);
	assert_int_equal(cgroup_read_key(fd, "cpu.stat", "user_usec", &v), 0);
	assert_int_equal(v, 100);
	/* A key that is the start of another is not it. */
	assert_int_equal(cgroup_read_key(fd, "memory.events", "oom", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(cgroup_read_key(fd, "memory.events", "oom_kill",
	    &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(cgroup_read_key(fd, "cpu.stat", "nr_periods", &v),
	    -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(cgroup_populated(fd), 0);
	{
		unsigned n, mask;
		struct cgroup_usage u;

		assert_int_equal(cgroup_count(fd, &n), 0);
		assert_int_equal(n, 3);
		assert_int_equal(cgroup_ctls(fd, "cgroup.subtree_control",
		    &mask), 0);
		assert_int_equal(mask, CGROUP_CPU | CGROUP_MEMORY);
		cgroup_usage(fd, CGROUP_MEMORY, &u);
		assert_int_equal(u.user_usec, 100);
		assert_int_equal(u.system_usec, 200);
		assert_int_equal(u.peak_bytes, 64 << 20);
		assert_int_equal(u.oom_kills, 2);
		/* Without the memory controller its files are not read. */
		cgroup_usage(fd, CGROUP_CPU | CGROUP_PIDS, &u);
		assert_int_equal(u.user_usec, 100);
		assert_int_equal(u.peak_bytes, -1);
		assert_int_equal(u.oom_kills, -1);
	}
	{
		int ev = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC);

		/* Read again from the start each time, as it changes. */
		assert_int_equal(cgroup_events_populated(ev), 0);
		put("cgroup.events", "populated 1\nfrozen 0\n");
		assert_int_equal(cgroup_events_populated(ev), 1);
		put("cgroup.events", "frozen 0\n");
		assert_int_equal(cgroup_events_populated(ev), -1);
		close(ev);
	}
	/* What the kernel has not: unknown, not an error. */
	unlink(at("memory.peak"));
	unlink(at("memory.events"));
	{
		struct cgroup_usage u;

		cgroup_usage(fd, CGROUP_MEMORY, &u);
		assert_int_equal(u.peak_bytes, -1);
		assert_int_equal(u.oom_kills, -1);
		assert_int_equal(u.user_usec, 100);
	}
	put("cpu.stat", "user_usec 1x\n");
	assert_int_equal(cgroup_read_key(fd, "cpu.stat", "user_usec", &v),
	    -1);
	assert_int_equal(errno, EPROTO);
	close(fd);
}

/* A cgroup of ours under this process's own, or -1 (skip): needs cgroup2
 * and the right to make one there. */
static int
real_cgroup(char *path, size_t size, int *parent)
{
	char mount[PATH_MAX], self[PATH_MAX];
	int n;

	if (cgroup_mount_find("/proc/self/mountinfo", mount,
	    sizeof mount) == -1 || cgroup_path_of("/proc/self/cgroup", self,
	    sizeof self) == -1)
		return -1;
	n = snprintf(path, size, "%s%s", mount, strcmp(self, "/") == 0 ?
	    "" : self);
	if (n < 0 || (size_t)n >= size ||
	    (*parent = cgroup_open(AT_FDCWD, path)) == -1)
		return -1;
	snprintf(path, size, "test-cgroup.%ld", (long)getpid());
	if (mkdirat(*parent, path, 0755) == -1) {
		close(*parent);
		return -1;
	}
	return cgroup_open(*parent, path);
}

/* The child's: in its cgroup from birth, before it ran a thing of its
 * own, which /proc/self/cgroup tells; then a wait to be killed. */
static int
born_child(void *arg)
{
	const int *fds = arg;
	char text[256];
	ssize_t n;
	int fd;

	if ((fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC)) == -1 ||
	    (n = read(fd, text, sizeof text)) <= 0 ||
	    write(fds[1], text, (size_t)n) != n)
		_exit(1);
	close(fds[1]);
	execl("/bin/sleep", "sleep", "1000", (char *)NULL);
	_exit(127);
}

/* Waits for the cgroup to empty (cgroup.events wakes a poller). */
static void
wait_empty(int fd)
{
	struct pollfd pfd;
	int i;

	pfd.fd = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	pfd.events = POLLPRI;
	for (i = 0; i < 100 && cgroup_populated(fd) == 1; i++)
		(void)poll(&pfd, 1, 100);
	close(pfd.fd);
	assert_int_equal(cgroup_populated(fd), 0);
}

static void
child_born_frozen_and_killed_in_a_real_cgroup(void **state)
{
	char name[PATH_MAX], text[256], want[PATH_MAX + 8];
	int parent = -1, fd, fds[2], status;
	unsigned n;
	char *stack;
	ssize_t got;
	pid_t pid;

	(void)state;
	if ((fd = real_cgroup(name, sizeof name, &parent)) == -1)
		skip();
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_STACK, -1, 0);
	assert_true(stack != MAP_FAILED);
	pid = clone3_into(born_child, fds, stack, STACK_SIZE, fd);
	if (pid == -1 && (errno == ENOSYS || errno == EINVAL ||
	    errno == E2BIG)) {
		/* A kernel, or valgrind, without it: triage's worker then
		 * moves the child itself. */
		close(fd);
		unlinkat(parent, name, AT_REMOVEDIR);
		close(parent);
		skip();
	}
	assert_true(pid > 0);
	close(fds[1]);
	got = read(fds[0], text, sizeof text - 1);
	assert_true(got > 0);
	text[got] = '\0';
	snprintf(want, sizeof want, "/%s\n", name);
	assert_non_null(strstr(text, want));
	assert_int_equal(cgroup_count(fd, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cgroup_populated(fd), 1);
	assert_int_equal(cgroup_freeze(fd, true), 0);
	assert_int_equal(cgroup_freeze(fd, false), 0);
	assert_int_equal(cgroup_kill(fd), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	wait_empty(fd);
	close(fd);
	close(fds[0]);
	munmap(stack, STACK_SIZE);
	assert_int_equal(unlinkat(parent, name, AT_REMOVEDIR), 0);
	close(parent);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(controllers_parse_and_name),
		cmocka_unit_test(mount_found_among_others),
		cmocka_unit_test(path_of_a_process),
		cmocka_unit_test(flat_keyed_files_read),
		cmocka_unit_test(child_born_frozen_and_killed_in_a_real_cgroup),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
