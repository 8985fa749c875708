/* cgroup.c - cgroup v2 through directory fds: where the hierarchy is, which
 * controllers a cgroup has, and a job's cgroup limited, killed, frozen,
 * measured and removed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

/* A flat keyed file's text: cpu.stat, memory.events, cgroup.events are
 * a few hundred bytes. */
#define CGROUP_TEXT_MAX	4096

static const char *const cgroup_ctl_names[CGROUP_NCTL] = {
	"cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc",
};

const char *
cgroup_ctl_name(unsigned i)
{
	return i < CGROUP_NCTL ? cgroup_ctl_names[i] : NULL;
}

unsigned
cgroup_ctl_parse(const char *text)
{
	unsigned mask = 0, i;
	size_t len;

	for (;;) {
		text += strspn(text, " \n");
		if ((len = strcspn(text, " \n")) == 0)
			return mask;
		for (i = 0; i < CGROUP_NCTL; i++)
			if (strlen(cgroup_ctl_names[i]) == len &&
			    strncmp(text, cgroup_ctl_names[i], len) == 0)
				mask |= 1U << i;
		text += len;
	}
}

/* mountinfo's escapes (\040 for a space, \011, \012, \134) undone in
 * place. */
static void
cgroup_unescape(char *s)
{
	char *out = s;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
			    (s[3] - '0'));
			s += 4;
		} else
			*out++ = *s++;
	}
	*out = '\0';
}

int
cgroup_mount_find(const char *mountinfo, char *path, size_t size)
{
	FILE *f;
	char *line = NULL, *mnt, *sep, *save;
	size_t cap = 0;
	int i, rc = -1, error = ENOENT;

	if ((f = fopen(mountinfo, "re")) == NULL)
		return -1;
	while (rc == -1 && getline(&line, &cap, f) != -1) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - TYPE ... */
		if ((sep = strstr(line, " - ")) == NULL ||
		    strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		*sep = '\0';
		mnt = strtok_r(line, " ", &save);
		for (i = 0; i < 4 && mnt != NULL; i++)
			mnt = strtok_r(NULL, " ", &save);
		if (mnt == NULL)
			continue;
		cgroup_unescape(mnt);
		if (strlen(mnt) >= size) {
			error = ENAMETOOLONG;
			break;
		}
		memcpy(path, mnt, strlen(mnt) + 1);
		rc = 0;
	}
	free(line);
	fclose(f);
	if (rc == -1)
		errno = error;
	return rc;
}

int
cgroup_path_of(const char *proc_cgroup, char *path, size_t size)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0, len;
	ssize_t n;
	int rc = -1, error = ENOENT;

	if ((f = fopen(proc_cgroup, "re")) == NULL)
		return -1;
	while ((n = getline(&line, &cap, f)) != -1) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		len = (size_t)n - 3;
		if (len > 0 && line[3 + len - 1] == '\n')
			len--;
		if (len == 0 || line[3] != '/')
			error = EPROTO;
		else if (len >= size)
			error = ENAMETOOLONG;
		else {
			memcpy(path, line + 3, len);
			path[len] = '\0';
			rc = 0;
		}
		break;
	}
	free(line);
	fclose(f);
	if (rc == -1)
		errno = error;
	return rc;
}

ssize_t
cgroup_read(int dirfd, const char *file, char *buf, size_t size)
{
	size_t have = 0;
	ssize_t n;
	int fd, error;

	if ((fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	for (;;) {
		if (have == size - 1) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
		n = read(fd, buf + have, size - 1 - have);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	error = errno;
	close(fd);
	if (n == -1) {
		errno = error;
		return -1;
	}
	if (have > 0 && buf[have - 1] == '\n')
		have--;
	buf[have] = '\0';
	return (ssize_t)have;
}

int
cgroup_write(int dirfd, const char *file, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, error;

	if ((fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((n = write(fd, text, len)) == -1 && errno == EINTR)
		;
	error = errno;
	close(fd);
	if (n == -1) {
		errno = error;
		return -1;
	}
	if ((size_t)n != len) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* key's value in text, a flat keyed file's ("populated 1\nfrozen 0"). 0,
 * or -1 with errno (ENOENT, EPROTO). */
static int
cgroup_key_in(const char *text, const char *key, uint64_t *value)
{
	size_t klen = strlen(key);
	const char *p;
	char *end;

	for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, key, klen) != 0 || p[klen] != ' ')
			continue;
		errno = 0;
		*value = strtoull(p + klen + 1, &end, 10);
		if (errno != 0 || end == p + klen + 1 ||
		    (*end != '\n' && *end != '\0')) {
			errno = EPROTO;
			return -1;
		}
		return 0;
	}
	errno = ENOENT;
	return -1;
}

int
cgroup_read_key(int dirfd, const char *file, const char *key,
    uint64_t *value)
{
	char text[CGROUP_TEXT_MAX];

	if (cgroup_read(dirfd, file, text, sizeof text) == -1)
		return -1;
	return cgroup_key_in(text, key, value);
}

int
cgroup_events_populated(int events_fd)
{
	char text[256];
	uint64_t v;
	ssize_t n;

	while ((n = pread(events_fd, text, sizeof text - 1, 0)) == -1 &&
	    errno == EINTR)
		;
	if (n < 0)
		return -1;
	text[n] = '\0';
	if (cgroup_key_in(text, "populated", &v) == -1)
		return -1;
	return v != 0;
}

int
cgroup_ctls(int dirfd, const char *file, unsigned *mask)
{
	char text[256];

	if (cgroup_read(dirfd, file, text, sizeof text) == -1)
		return -1;
	*mask = cgroup_ctl_parse(text);
	return 0;
}

/* "+name" or "-name" for each controller of mask, one write each. */
static void
cgroup_subtree(int dirfd, unsigned mask, char sign)
{
	char text[32];
	unsigned i;

	for (i = 0; i < CGROUP_NCTL; i++) {
		if ((mask & (1U << i)) == 0)
			continue;
		snprintf(text, sizeof text, "%c%s", sign, cgroup_ctl_names[i]);
		/* A refusal shows in what the file says afterwards. */
		(void)cgroup_write(dirfd, "cgroup.subtree_control", text);
	}
}

int
cgroup_enable(int dirfd, unsigned want, unsigned *got)
{
	cgroup_subtree(dirfd, want, '+');
	return cgroup_ctls(dirfd, "cgroup.subtree_control", got);
}

void
cgroup_disable(int dirfd, unsigned mask)
{
	cgroup_subtree(dirfd, mask, '-');
}

int
cgroup_move(int dirfd, pid_t pid)
{
	char text[24];

	snprintf(text, sizeof text, "%ld", (long)pid);
	return cgroup_write(dirfd, "cgroup.procs", text);
}

/* Calls fn for each pid of cgroup.procs; 0, or -1 with errno. */
static int
cgroup_each(int dirfd, void (*fn)(pid_t, void *), void *arg)
{
	FILE *f;
	long pid;
	int fd;

	if ((fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return -1;
	}
	while (fscanf(f, "%ld", &pid) == 1)
		fn((pid_t)pid, arg);
	fclose(f);
	return 0;
}

static void
cgroup_count_one(pid_t pid, void *arg)
{
	(void)pid;
	(*(unsigned *)arg)++;
}

int
cgroup_count(int dirfd, unsigned *n)
{
	*n = 0;
	return cgroup_each(dirfd, cgroup_count_one, n);
}

int
cgroup_populated(int dirfd)
{
	uint64_t v;

	if (cgroup_read_key(dirfd, "cgroup.events", "populated", &v) == -1)
		return -1;
	return v != 0;
}

static void
cgroup_kill_one(pid_t pid, void *arg)
{
	(void)kill(pid, SIGKILL);
	*(bool *)arg = true;
}

/* Without cgroup.kill: a process may fork between the read of the list
 * and its kill, so the list is read again until it comes back empty. A
 * killed process leaves the list only once reaped: a bounded number of
 * rounds, which its SIGKILL makes short. */
static int
cgroup_kill_each(int dirfd)
{
	bool any = true;
	int round;

	for (round = 0; any && round < 1000; round++) {
		any = false;
		if (cgroup_each(dirfd, cgroup_kill_one, &any) == -1)
			return -1;
	}
	return 0;
}

int
cgroup_kill(int dirfd)
{
	if (cgroup_write(dirfd, "cgroup.kill", "1") == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	return cgroup_kill_each(dirfd);
}

int
cgroup_freeze(int dirfd, bool on)
{
	return cgroup_write(dirfd, "cgroup.freeze", on ? "1" : "0");
}

/* key's value in text as a signed count, or -1 when it is not there. */
static int64_t
cgroup_count_in(const char *text, const char *key)
{
	uint64_t v;

	if (cgroup_key_in(text, key, &v) == -1 || v > INT64_MAX)
		return -1;
	return (int64_t)v;
}

void
cgroup_usage(int dirfd, unsigned ctls, struct cgroup_usage *u)
{
	char text[CGROUP_TEXT_MAX], *end;
	unsigned long long v;

	u->user_usec = u->system_usec = u->peak_bytes = u->oom_kills = -1;
	if (cgroup_read(dirfd, "cpu.stat", text, sizeof text) != -1) {
		u->user_usec = cgroup_count_in(text, "user_usec");
		u->system_usec = cgroup_count_in(text, "system_usec");
	}
	if ((ctls & CGROUP_MEMORY) == 0)
		return;
	if (cgroup_read(dirfd, "memory.events", text, sizeof text) != -1)
		u->oom_kills = cgroup_count_in(text, "oom_kill");
	if (cgroup_read(dirfd, "memory.peak", text, sizeof text) > 0) {
		errno = 0;
		v = strtoull(text, &end, 10);
		if (errno == 0 && *end == '\0' && v <= INT64_MAX)
			u->peak_bytes = (int64_t)v;
	}
}

void
cgroup_daemon_name(const char *state_dir, char *buf, size_t size)
{
	char real[PATH_MAX];
	const char *p;
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	if (realpath(state_dir, real) != NULL)
		state_dir = real;
	for (p = state_dir; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	snprintf(buf, size, "triaged-%016llx", (unsigned long long)h);
}

int
cgroup_open(int dirfd, const char *path)
{
	return openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}
