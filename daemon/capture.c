/* capture.c - a job's capture file (state_dir/output/ID.stdout or .stderr)
 * as its worker leaves it: the bytes kept, and the count dropped before. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "capture.h"
#include "pool-spec.h"

/* The count the worker marks a file with under output_keep = tail (none
 * under head). 0, or -1 with errno. */
static int
capture_dropped(int fd, uint64_t *dropped)
{
	char text[24], *end;
	ssize_t n;

	*dropped = 0;
	n = fgetxattr(fd, POOL_DROPPED_XATTR, text, sizeof text - 1);
	if (n == -1)
		return errno == ENODATA || errno == ENOTSUP ? 0 : -1;
	text[n] = '\0';
	errno = 0;
	*dropped = strtoull(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0') {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int
capture_open(struct capture *c, const char *dir, uint64_t id,
    const char *stream, const char **what)
{
	char path[4096];
	struct stat st;
	int saved;

	*c = (struct capture){ -1, 0, 0 };
	*what = "open";
	if ((size_t)snprintf(path, sizeof path, "%s/%llu.%s", dir,
	    (unsigned long long)id, stream) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((c->fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	*what = "read";
	if (fstat(c->fd, &st) != 0 || capture_dropped(c->fd, &c->dropped)
	    != 0) {
		saved = errno;
		capture_close(c);
		errno = saved;
		return -1;
	}
	c->size = st.st_size;
	return 0;
}

ssize_t
capture_read(const struct capture *c, void *buf, size_t len, off_t off)
{
	if (c->fd == -1)
		return 0;
	return pread(c->fd, buf, len, off);
}

void
capture_close(struct capture *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
}

int
capture_xattr_check(const char *dir)
{
	char path[4096];
	int fd, rc, saved;

	if ((size_t)snprintf(path, sizeof path, "%s/.xattr-probe", dir) >=
	    sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1)
		return -1;
	rc = fsetxattr(fd, POOL_DROPPED_XATTR, "0", 1, 0);
	saved = errno;
	close(fd);
	(void)unlink(path);
	errno = saved;
	return rc;
}
