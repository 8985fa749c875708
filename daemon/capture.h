/* capture.h - a job's capture file (state_dir/output/ID.stdout or .stderr)
 * as its worker leaves it: the bytes kept, and the count dropped before. */
#ifndef TRIAGED_CAPTURE_H
#define TRIAGED_CAPTURE_H

#include <stdint.h>
#include <sys/types.h>

/* A capture file open for reading, as one state: compaction (output_keep
 * = tail) renames a new file over it, never changes the one open. */
struct capture {
	int fd;			/* -1: there is no file */
	off_t size;		/* bytes kept in the file */
	uint64_t dropped;	/* bytes of the stream before its first */
};

/*
 * Opens dir/ID.stream. No file is no error (fd -1, size and dropped 0):
 * the attempt has not made it yet, or wrote nothing. 0, or -1 with errno
 * and *what the step that failed ("open", "read").
 */
int capture_open(struct capture *c, const char *dir, uint64_t id,
    const char *stream, const char **what);
/* Up to len bytes from the file's offset off into buf: the count read,
 * 0 at its end or with no file, -1 with errno. */
ssize_t capture_read(const struct capture *c, void *buf, size_t len,
    off_t off);
void capture_close(struct capture *c);
/*
 * Whether a file made in dir takes the count a keep_tail worker marks on
 * it (POOL_DROPPED_XATTR), asked of a probe file made and removed there.
 * 0, or -1 with errno (ENOTSUP: the file system has no user extended
 * attributes).
 */
int capture_xattr_check(const char *dir);

#endif
